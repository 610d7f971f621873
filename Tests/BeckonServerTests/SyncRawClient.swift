@testable import BeckonDelivery
@testable import BeckonServer
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A device's sync connection at the byte level, over a plain NIO TCP channel: it writes the
/// upgrade request and masked frames by hand and collects what comes back as text, and it can
/// do what a WebSocket library will not: stay silent to pings, or vanish with a TCP reset.
final class SyncRawClient: Sendable {
    let channel: any Channel
    private let state: NIOLockedValueBox<(received: String, closed: Bool)>

    private init(channel: any Channel, state: NIOLockedValueBox<(received: String, closed: Bool)>) {
        self.channel = channel
        self.state = state
    }

    static func open(port: Int) async throws -> SyncRawClient {
        let state = NIOLockedValueBox((received: "", closed: false))
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Collector(state: state))
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        return SyncRawClient(channel: channel, state: state)
    }

    /// Sends `GET /v1/sync` with an upgrade; returns the response as far as it came (the head,
    /// and the body of a refusal).
    func upgrade(credential: String) async throws -> String {
        let request = "GET /v1/sync HTTP/1.1\r\nHost: test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            + "Sec-WebSocket-Protocol: beckon.v2\r\nAuthorization: Bearer \(credential)\r\n\r\n"
        try await channel.writeAndFlush(ByteBuffer(string: request)).get()
        return try await waitFor("\r\n\r\n")
    }

    /// Sends one text message in one masked frame (RFC 6455 §5.2; payloads under 126 bytes).
    func send(_ text: String) async throws {
        let payload = Array(text.utf8)
        precondition(payload.count < 126)
        let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        var frame = ByteBuffer()
        frame.writeBytes([0x81, 0x80 | UInt8(payload.count)] + mask)
        frame.writeBytes(payload.enumerated().map { $0.element ^ mask[$0.offset % 4] })
        try await channel.writeAndFlush(frame).get()
    }

    /// Waits until what was received contains `marker`; returns everything received.
    @discardableResult
    func waitFor(_ marker: String, timeout: Duration = .seconds(5)) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let (received, closed) = state.withLockedValue { $0 }
            if received.contains(marker) { return received }
            if closed { throw FixtureError.unexpected("closed before \(marker.debugDescription): \(received)") }
            try await Task.sleep(for: .milliseconds(2))
        }
        throw FixtureError.unexpected("no \(marker.debugDescription) within \(timeout)")
    }

    /// Whether the server has closed the connection within `timeout`.
    func closedByServer(within timeout: Duration) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if state.withLockedValue({ $0.closed }) { return true }
            try await Task.sleep(for: .milliseconds(5))
        }
        return false
    }

    /// Ends the connection without a WebSocket close: SO_LINGER 0 makes close(2) send a TCP reset,
    /// what a device that loses the network or is killed looks like at best.
    func reset() async throws {
        try await (channel as! any SocketOptionProvider).setSoLinger(linger(l_onoff: 1, l_linger: 0)).get()
        try await channel.close()
    }

    func close() async throws {
        try? await channel.close()
    }

    private final class Collector: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let state: NIOLockedValueBox<(received: String, closed: Bool)>
        init(state: NIOLockedValueBox<(received: String, closed: Bool)>) { self.state = state }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            // Latin-1, so frame headers never make the text unreadable; the JSON is ASCII.
            let bytes = unwrapInboundIn(data).readableBytesView
            let text = String(bytes.map { Character(Unicode.Scalar($0)) })
            state.withLockedValue { $0.received += text }
        }

        func channelInactive(context: ChannelHandlerContext) {
            state.withLockedValue { $0.closed = true }
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}

/// Everything `SyncHub.observe` emits, for assertions.
final class SyncEventLog: Sendable {
    private let events = NIOLockedValueBox<[DeliveryEvent]>([])

    init(_ hub: SyncHub) {
        hub.observe { [events] event in events.withLockedValue { $0.append(event) } }
    }

    /// Every event so far, in order.
    var recorded: [DeliveryEvent] { events.withLockedValue { $0 } }

    /// Waits until an event matches.
    func waitFor(timeout: Duration = .seconds(5), _ matches: @escaping @Sendable (DeliveryEvent) -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if events.withLockedValue({ $0.contains(where: matches) }) { return }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw FixtureError.unexpected("no matching event in \(events.withLockedValue { $0 })")
    }
}
