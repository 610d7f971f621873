import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// POSTs to one receiver over a kept-alive HTTP/1.1 connection (TLS for https, verified against
/// the system's roots), opened on first use and again after it closes or fails.
public actor WebhookHTTPClient: WebhookTransport {
    private let url: WebhookURL
    private let timeout: TimeInterval
    private let tls: NIOSSLContext?
    private var channel: (any Channel)?

    public init(url: WebhookURL, timeout: TimeInterval, trustRoots: NIOSSLTrustRoots = .default) throws {
        self.url = url
        self.timeout = timeout
        if url.tls {
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.trustRoots = trustRoots
            tls = try NIOSSLContext(configuration: configuration)
        } else {
            tls = nil
        }
    }

    public func post(body: [UInt8], headers: [(name: String, value: String)]) async throws -> Int {
        let channel = try await connected()
        var head = HTTPRequestHead(version: .http1_1, method: .POST, uri: url.target)
        head.headers.add(name: "Host", value: url.hostHeader)
        head.headers.add(name: "Content-Type", value: "application/json")
        head.headers.add(name: "Content-Length", value: String(body.count))
        head.headers.add(name: "User-Agent", value: "Beckon-Webhooks")
        for header in headers { head.headers.add(name: header.name, value: header.value) }
        let answer = channel.eventLoop.makePromise(of: Int.self)
        let timeout = timeout
        let timer = channel.eventLoop.scheduleTask(in: .milliseconds(Int64(timeout * 1000))) {
            answer.fail(WebhookTransportError.timedOut(seconds: timeout))
        }
        let exchange = WebhookExchange(head: head, body: channel.allocator.buffer(bytes: body), answer: answer)
        channel.writeAndFlush(exchange).whenFailure { answer.fail($0) }
        do {
            let status = try await answer.futureResult.get()
            timer.cancel()
            return status
        } catch {
            timer.cancel()
            // Whatever half-exchange is on it, the connection is not used again.
            self.channel = nil
            channel.close(promise: nil)
            throw error
        }
    }

    public func shutdown() async {
        try? await channel?.close()
        channel = nil
    }

    private func connected() async throws -> any Channel {
        if let channel, channel.isActive { return channel }
        let url = url, tls = tls
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.milliseconds(Int64(timeout * 1000)))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: tls, serverHostname: url.serverName))
                    }
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(WebhookExchangeHandler())
                }
            }
            .connect(host: url.host, port: url.port).get()
        self.channel = channel
        return channel
    }
}
