import APNSEmulator
import Foundation
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL

/// A minimal HTTP/2 client on an inline `NIOHTTP2Handler`, writing frames itself.
public final class TestClient: Sendable {
    public let channel: Channel
    private let handler: NIOLoopBound<ClientFrameHandler>

    private init(channel: Channel, handler: NIOLoopBound<ClientFrameHandler>) {
        self.channel = channel
        self.handler = handler
    }

    /// `burst` is written as soon as the channel is active, in the TLS client's first flight, so it
    /// reaches the server before the client could have seen the server's SETTINGS.
    /// `identity` presents a client certificate (certificate-based authentication, apns.md B.4).
    public static func connect(
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
        // The handler is taken as it is installed: looked up later, it may already be gone with
        // a connection the server closed quickly (an idle timeout under a loaded test run).
        let (channel, handler) = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: emulator.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let ssl = try NIOSSLClientHandler(context: context, serverHostname: "localhost")
                    let frames = ClientFrameHandler(burst: burst)
                    try channel.pipeline.syncOperations.addHandler(ssl)
                    // NIO's defences against abusive servers count each REFUSED_STREAM; a test that
                    // has a few hundred streams refused after a GOAWAY must not trip them.
                    var stream = NIOHTTP2Handler.StreamConfiguration()
                    stream.streamResetFrameRateLimit.maximumCount = 100_000
                    var connection = NIOHTTP2Handler.ConnectionConfiguration()
                    connection.maximumRecentlyResetStreams = 4_096
                    try channel.pipeline.syncOperations.addHandler(
                        NIOHTTP2Handler(mode: .client, connectionConfiguration: connection, streamConfiguration: stream))
                    try channel.pipeline.syncOperations.addHandler(frames)
                    return (channel, NIOLoopBound(frames, eventLoop: channel.eventLoop))
                }
            }
        return TestClient(channel: channel, handler: handler)
    }

    /// Writes all requests in one flush, then waits for every answer.
    public func send(_ requests: [TestRequest]) async throws -> [TestResponse] {
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
    public func sendInterleaved(_ requests: [TestRequest]) async throws -> [TestResponse] {
        let handler = self.handler
        let futures = try await channel.eventLoop.submit { handler.value.sendInterleaved(requests) }.get()
        var responses: [TestResponse] = []
        for future in futures { responses.append(try await future.get()) }
        return responses
    }

    /// Opens `held` first but sends its body only after each of `others`, whole: the server
    /// completes the others first. Answers in that order, `held`'s first.
    public func sendHoldingBody(of held: TestRequest, around others: [TestRequest]) async throws -> [TestResponse] {
        let handler = self.handler
        let futures = try await channel.eventLoop.submit { handler.value.sendHoldingBody(of: held, around: others) }.get()
        var responses: [TestResponse] = []
        for future in futures { responses.append(try await future.get()) }
        return responses
    }

    /// Answers to the `burst` given to `connect`.
    public func burstResponses() async throws -> [TestResponse] {
        let handler = self.handler
        let futures = try await channel.eventLoop.submit { handler.value.burstFutures }.get()
        var responses: [TestResponse] = []
        for future in futures { responses.append(try await future.get()) }
        return responses
    }

    public func send(_ request: TestRequest) async throws -> TestResponse {
        try await send([request])[0]
    }

    /// Starts a request and returns its future without waiting.
    public func start(_ request: TestRequest) async throws -> EventLoopFuture<TestResponse> {
        let handler = self.handler
        return try await channel.eventLoop.submit { handler.value.send(request) }.get()
    }

    /// MAX_CONCURRENT_STREAMS values the server sent, in order.
    public var maxConcurrentStreamsReceived: [Int] {
        get async throws {
            let handler = self.handler
            return try await channel.eventLoop.submit { handler.value.maxStreams }.get()
        }
    }

    public var goAway: (lastStreamID: Int, code: HTTP2ErrorCode, debug: String)? {
        get async throws {
            let handler = self.handler
            return try await channel.eventLoop.submit { handler.value.goAway }.get()
        }
    }

    /// Waits (bounded) until `condition` holds on the handler's recorded state.
    public func waitFor(_ what: String, timeout: Duration = .seconds(5), _ condition: @escaping @Sendable (ClientFrameHandler) -> Bool) async throws {
        let handler = self.handler
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await channel.eventLoop.submit({ condition(handler.value) }).get() { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw TestClientError.timedOut(what)
    }

    public var isActive: Bool { channel.isActive }

    public func close() async {
        try? await channel.close()
    }
}

public enum TestClientError: Error {
    case timedOut(String)
}

/// The client's frame handler; `TestClient.waitFor` conditions read its recorded state.
public final class ClientFrameHandler: ChannelInboundHandler {
    public typealias InboundIn = HTTP2Frame
    public typealias OutboundOut = HTTP2Frame

    private var context: ChannelHandlerContext?
    private var nextStreamID = 1
    private var pending: [HTTP2StreamID: (EventLoopPromise<TestResponse>, TestResponse)] = [:]
    public private(set) var maxStreams: [Int] = []
    public private(set) var goAway: (lastStreamID: Int, code: HTTP2ErrorCode, debug: String)?
    public private(set) var closed = false

    private let burst: [TestRequest]
    private(set) var burstFutures: [EventLoopFuture<TestResponse>] = []

    init(burst: [TestRequest] = []) { self.burst = burst }

    public func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    public func channelActive(context: ChannelHandlerContext) {
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

    func sendHoldingBody(of held: TestRequest, around others: [TestRequest]) -> [EventLoopFuture<TestResponse>] {
        let context = self.context!
        let heldID = HTTP2StreamID(nextStreamID)
        nextStreamID += 2
        let promise = context.eventLoop.makePromise(of: TestResponse.self)
        pending[heldID] = (promise, TestResponse())
        let headers = HTTP2Frame.FramePayload.Headers(headers: .init(held.headers), endStream: false)
        context.write(wrapOutboundOut(HTTP2Frame(streamID: heldID, payload: .headers(headers))), promise: nil)
        let rest = others.map { send($0) }  // Each flushes; the held body follows them.
        let buffer = context.channel.allocator.buffer(bytes: held.body)
        context.write(wrapOutboundOut(HTTP2Frame(streamID: heldID, payload: .data(.init(data: .byteBuffer(buffer), endStream: true)))), promise: nil)
        context.flush()
        return [promise.futureResult] + rest
    }

    public func sendInterleaved(_ requests: [TestRequest]) -> [EventLoopFuture<TestResponse>] {
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

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
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

    public func channelInactive(context: ChannelHandlerContext) {
        closed = true
        for id in Array(pending.keys) { complete(id, end: .closed) }
        context.fireChannelInactive()
    }

    public func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }
}
