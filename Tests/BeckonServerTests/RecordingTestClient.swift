import Hummingbird
import HummingbirdTesting
import NIOCore
import TestCapture

/// A test client that hands every answer to `ResponseCapture`, so the answers the tests see are
/// checked against `openapi.yaml` too (scripts/check-responses.py).
struct RecordingTestClient: TestClientProtocol {
    let base: any TestClientProtocol

    var port: Int? { base.port }

    func executeRequest(
        uri: String, method: HTTPRequest.Method, headers: HTTPFields, body: ByteBuffer?
    ) async throws -> TestResponse {
        let response = try await base.executeRequest(uri: uri, method: method, headers: headers, body: body)
        ResponseCapture.record(
            method: method.rawValue, uri: uri, status: response.status.code, contentType: response.headers[.contentType],
            body: Array(response.body.readableBytesView))
        return response
    }
}

/// The same for a live listener's client (`SyncTestServer.http`): its calls, recorded.
struct RecordingLiveClient: Sendable {
    let base: TestClient

    func execute(_ request: TestClient.Request) async throws -> TestClient.Response {
        let response = try await base.execute(request)
        ResponseCapture.record(
            method: request.head.method.rawValue, uri: request.head.path ?? "", status: response.status.code,
            contentType: response.headers[.contentType], body: response.body.map { Array($0.readableBytesView) } ?? [])
        return response
    }

    func get(_ uri: String, headers: HTTPFields = [:]) async throws -> TestClient.Response {
        try await execute(TestClient.Request(uri, method: .get, headers: headers))
    }

    func post(_ uri: String, headers: HTTPFields = [:], body: ByteBuffer) async throws -> TestClient.Response {
        try await execute(TestClient.Request(uri, method: .post, headers: headers, body: body))
    }

    func put(_ uri: String, headers: HTTPFields = [:], body: ByteBuffer) async throws -> TestClient.Response {
        try await execute(TestClient.Request(uri, method: .put, headers: headers, body: body))
    }

    func delete(_ uri: String, headers: HTTPFields = [:], body: ByteBuffer) async throws -> TestClient.Response {
        try await execute(TestClient.Request(uri, method: .delete, headers: headers, body: body))
    }
}
