import Hummingbird

/// The API's answers: JSON bodies and empty ones.
enum APIResponse {
    static func json(_ status: HTTPResponse.Status, _ value: some Encodable) -> Response {
        json(status, bytes: APIJSON.encode(value))
    }

    static func json(_ status: HTTPResponse.Status, bytes: [UInt8]) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    static func noContent() -> Response { Response(status: .noContent) }
}
