import APNSCore
import Crypto
import Foundation
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL

@testable import APNSEmulator

/// A request as the test writes it: pseudo-headers and headers in order, and a body.
struct TestRequest: Sendable {
    var headers: [(String, String)]
    var body: [UInt8]

    init(headers: [(String, String)], body: [UInt8]) {
        self.headers = headers
        self.body = body
    }

    /// A valid alert push unless modified.
    static func push(
        token: String,
        topic: String? = "com.example.app",
        jwt: String?,
        pushType: String? = "alert",
        extra: [(String, String)] = [],
        body: String = #"{"aps":{"alert":"hi"}}"#,
        method: String = "POST",
        path: String? = nil
    ) -> TestRequest {
        var headers: [(String, String)] = [
            (":method", method), (":scheme", "https"), (":path", path ?? "/3/device/\(token)"),
            (":authority", "localhost"),
        ]
        if let jwt { headers.append(("authorization", "bearer \(jwt)")) }
        if let topic { headers.append(("apns-topic", topic)) }
        if let pushType { headers.append(("apns-push-type", pushType)) }
        headers += extra
        return TestRequest(headers: headers, body: Array(body.utf8))
    }
}

struct TestResponse: Sendable {
    enum End: Sendable, Equatable {
        case complete
        case reset(HTTP2ErrorCode)
        case goAway
        case closed
    }
    var end: End = .complete
    var status: Int?
    var headers: [String: String] = [:]
    var body: [UInt8] = []

    var bodyString: String { String(decoding: body, as: UTF8.self) }
    var json: [String: Any] { ((try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]) ?? [:] }
    var reason: String? { json["reason"] as? String }
}

/// A minimal HTTP/2 client on an inline `NIOHTTP2Handler`, writing frames itself.
final class TestClient: Sendable {
    let channel: Channel
    private let handler: NIOLoopBound<ClientFrameHandler>

    private init(channel: Channel, handler: NIOLoopBound<ClientFrameHandler>) {
        self.channel = channel
        self.handler = handler
    }

    /// `burst` is written as soon as the channel is active, in the TLS client's first flight, so it
    /// reaches the server before the client could have seen the server's SETTINGS.
    /// `identity` presents a client certificate (certificate-based authentication, apns.md B.4).
    static func connect(
        to emulator: APNSEmulator, alpn: [String] = ["h2"], burst: [TestRequest] = [],
        identity: APNSEmulatorClientIdentity? = nil
    ) async throws -> TestClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(emulator.caCertificatePEM!.utf8)))
        tls.applicationProtocols = alpn
        if let identity {
            tls.certificateChain = try NIOSSLCertificate.fromPEMBytes(Array(identity.certificatePEM.utf8)).map { .certificate($0) }
            tls.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: Array(identity.privateKeyPEM.utf8), format: .pem))
        }
        let context = try NIOSSLContext(configuration: tls)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let ssl = try NIOSSLClientHandler(context: context, serverHostname: "localhost")
                    try channel.pipeline.syncOperations.addHandler(ssl)
                    try channel.pipeline.syncOperations.addHandler(NIOHTTP2Handler(mode: .client))
                    try channel.pipeline.syncOperations.addHandler(ClientFrameHandler(burst: burst))
                }
            }
            .connect(host: "127.0.0.1", port: emulator.port).get()
        let handler = try await channel.eventLoop.submit {
            NIOLoopBound(try channel.pipeline.syncOperations.handler(type: ClientFrameHandler.self), eventLoop: channel.eventLoop)
        }.get()
        return TestClient(channel: channel, handler: handler)
    }

    /// Writes all requests in one flush, then waits for every answer.
    func send(_ requests: [TestRequest]) async throws -> [TestResponse] {
        let handler = self.handler
        let futures = try await channel.eventLoop.submit {
            requests.map { handler.value.send($0) }
        }.get()
        var responses: [TestResponse] = []
        for future in futures { responses.append(try await future.get()) }
        return responses
    }

    /// Opens every stream (all HEADERS) before sending any body, as a client running requests
    /// concurrently does.
    func sendInterleaved(_ requests: [TestRequest]) async throws -> [TestResponse] {
        let handler = self.handler
        let futures = try await channel.eventLoop.submit { handler.value.sendInterleaved(requests) }.get()
        var responses: [TestResponse] = []
        for future in futures { responses.append(try await future.get()) }
        return responses
    }

    /// Answers to the `burst` given to `connect`.
    func burstResponses() async throws -> [TestResponse] {
        let handler = self.handler
        let futures = try await channel.eventLoop.submit { handler.value.burstFutures }.get()
        var responses: [TestResponse] = []
        for future in futures { responses.append(try await future.get()) }
        return responses
    }

    func send(_ request: TestRequest) async throws -> TestResponse {
        try await send([request])[0]
    }

    /// Starts a request and returns its future without waiting.
    func start(_ request: TestRequest) async throws -> EventLoopFuture<TestResponse> {
        let handler = self.handler
        return try await channel.eventLoop.submit { handler.value.send(request) }.get()
    }

    /// MAX_CONCURRENT_STREAMS values the server sent, in order.
    var maxConcurrentStreamsReceived: [Int] {
        get async throws {
            let handler = self.handler
            return try await channel.eventLoop.submit { handler.value.maxStreams }.get()
        }
    }

    var goAway: (lastStreamID: Int, code: HTTP2ErrorCode, debug: String)? {
        get async throws {
            let handler = self.handler
            return try await channel.eventLoop.submit { handler.value.goAway }.get()
        }
    }

    /// Waits (bounded) until `condition` holds on the handler's recorded state.
    func waitFor(_ what: String, timeout: Duration = .seconds(5), _ condition: @escaping @Sendable (ClientFrameHandler) -> Bool) async throws {
        let handler = self.handler
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await channel.eventLoop.submit({ condition(handler.value) }).get() { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw TestClientError.timedOut(what)
    }

    var isActive: Bool { channel.isActive }

    func close() async {
        try? await channel.close()
    }
}

enum TestClientError: Error {
    case timedOut(String)
}

final class ClientFrameHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private var context: ChannelHandlerContext?
    private var nextStreamID = 1
    private var pending: [HTTP2StreamID: (EventLoopPromise<TestResponse>, TestResponse)] = [:]
    private(set) var maxStreams: [Int] = []
    private(set) var goAway: (lastStreamID: Int, code: HTTP2ErrorCode, debug: String)?
    private(set) var closed = false

    private let burst: [TestRequest]
    private(set) var burstFutures: [EventLoopFuture<TestResponse>] = []

    init(burst: [TestRequest] = []) { self.burst = burst }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func channelActive(context: ChannelHandlerContext) {
        if !burst.isEmpty { burstFutures = sendInterleaved(burst) }
        context.fireChannelActive()
    }

    func send(_ request: TestRequest) -> EventLoopFuture<TestResponse> {
        let context = self.context!
        let promise = context.eventLoop.makePromise(of: TestResponse.self)
        if closed {
            promise.succeed(TestResponse(end: .closed))
            return promise.futureResult
        }
        let id = HTTP2StreamID(nextStreamID)
        nextStreamID += 2
        pending[id] = (promise, TestResponse())
        let headers = HTTP2Frame.FramePayload.Headers(headers: .init(request.headers), endStream: request.body.isEmpty)
        context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .headers(headers))), promise: nil)
        if !request.body.isEmpty {
            let buffer = context.channel.allocator.buffer(bytes: request.body)
            context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(buffer), endStream: true)))), promise: nil)
        }
        context.flush()
        return promise.futureResult
    }

    func sendInterleaved(_ requests: [TestRequest]) -> [EventLoopFuture<TestResponse>] {
        let context = self.context!
        var ids: [HTTP2StreamID] = []
        var futures: [EventLoopFuture<TestResponse>] = []
        for request in requests {
            let promise = context.eventLoop.makePromise(of: TestResponse.self)
            let id = HTTP2StreamID(nextStreamID)
            nextStreamID += 2
            pending[id] = (promise, TestResponse())
            ids.append(id)
            futures.append(promise.futureResult)
            let headers = HTTP2Frame.FramePayload.Headers(headers: .init(request.headers), endStream: false)
            context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .headers(headers))), promise: nil)
        }
        for (id, request) in zip(ids, requests) {
            let buffer = context.channel.allocator.buffer(bytes: request.body)
            context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(buffer), endStream: true)))), promise: nil)
        }
        context.flush()
        return futures
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .headers(let headers):
            guard var entry = pending[frame.streamID] else { return }
            for (name, value, _) in headers.headers {
                if name == ":status" { entry.1.status = Int(value) } else { entry.1.headers[name] = value }
            }
            pending[frame.streamID] = entry
            if headers.endStream { complete(frame.streamID) }
        case .data(let payload):
            guard var entry = pending[frame.streamID] else { return }
            if case .byteBuffer(let buffer) = payload.data { entry.1.body += buffer.readableBytesView }
            pending[frame.streamID] = entry
            if payload.endStream { complete(frame.streamID) }
        case .rstStream(let code):
            complete(frame.streamID, end: .reset(code))
        case .settings(.settings(let settings)):
            for setting in settings where setting.parameter == .maxConcurrentStreams { maxStreams.append(setting.value) }
        case .goAway(let last, let code, let opaque):
            goAway = (Int(last), code, opaque.map { String(buffer: $0) } ?? "")
            for id in pending.keys where id > last { complete(id, end: .goAway) }
        default:
            break
        }
    }

    private func complete(_ id: HTTP2StreamID, end: TestResponse.End = .complete) {
        guard let (promise, response) = pending.removeValue(forKey: id) else { return }
        var finished = response
        finished.end = end
        promise.succeed(finished)
    }

    func channelInactive(context: ChannelHandlerContext) {
        closed = true
        for id in Array(pending.keys) { complete(id, end: .closed) }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }
}

/// A provider key and its tokens.
struct TestKey: Sendable {
    let keyID: String
    let teamID: String
    let privateKeyRaw: Data

    init(keyID: String = "KEY1234567", teamID: String = "TEAM123456") {
        self.keyID = keyID
        self.teamID = teamID
        privateKeyRaw = P256.Signing.PrivateKey().rawRepresentation
    }

    var privateKey: P256.Signing.PrivateKey { try! .init(rawRepresentation: privateKeyRaw) }

    func authKey(environment: APNSEnvironment? = nil, bundleIDs: Set<String>? = nil, relatedKeyID: String? = nil) -> APNSEmulatorAuthKey {
        APNSEmulatorAuthKey(keyID: keyID, teamID: teamID, publicKey: privateKey.publicKey,
                            environment: environment, bundleIDs: bundleIDs, relatedKeyID: relatedKeyID)
    }

    func token(issuedAt: Date = Date(), alg: String = "ES256", kid: String? = nil, iss: String? = nil, iatJSON: String? = nil) -> String {
        let header = Base64URL.encode(Array(#"{"alg":"\#(alg)","kid":"\#(kid ?? keyID)"}"#.utf8))
        let iat = iatJSON ?? String(Int(issuedAt.timeIntervalSince1970))
        let claims = Base64URL.encode(Array(#"{"iss":"\#(iss ?? teamID)","iat":\#(iat)}"#.utf8))
        let input = header + "." + claims
        let signature = try! privateKey.signature(for: Data(input.utf8)).rawRepresentation
        return input + "." + Base64URL.encode(signature)
    }
}

/// A clock tests move by hand.
final class TestClock: Sendable {
    private let current = Locked(Date(timeIntervalSince1970: 1_750_000_000))
    var now: Date { current.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { current.withLock { $0 += seconds } }
    var function: @Sendable () -> Date { { self.now } }
}

let tokenA = String(repeating: "ab", count: 32)
let tokenB = String(repeating: "cd", count: 32)
let tokenC = String(repeating: "ef", count: 32)
