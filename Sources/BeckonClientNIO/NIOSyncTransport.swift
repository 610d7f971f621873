// The sync transport on Linux: the tests and the device simulator run the real SDK core over a
// real WebSocket. Built only where HummingbirdWSClient is (a Linux-only dependency, so an iOS
// build never pulls NIO in); Apple platforms use `URLSessionSyncTransport` (BeckonClientApple).
#if canImport(HummingbirdWSClient)
import BeckonClient
import HTTPTypes
import HummingbirdWSClient
import Logging
import NIOWebSocket
import Foundation

/// `SyncTransport` over HummingbirdWSClient (SwiftNIO).
public struct NIOSyncTransport: SyncTransport {
    let logger: Logger
    /// The largest message accepted from the server.
    let maximumMessageBytes: Int

    public init(logger: Logger = Logger(label: "beckon.client.sync"), maximumMessageBytes: Int = 1 << 20) {
        self.logger = logger
        self.maximumMessageBytes = maximumMessageBytes
    }

    public func connect(to endpoint: SyncEndpoint) async throws -> any SyncTransportConnection {
        var headers = HTTPFields()
        headers[.authorization] = "Bearer \(endpoint.credential)"
        headers[HTTPField.Name("Sec-WebSocket-Protocol")!] = endpoint.subprotocol
        let connection = NIOSyncConnection()
        let url = endpoint.url.absoluteString
        let logger = self.logger
        let limit = maximumMessageBytes
        let task = Task {
            do {
                let close = try await WebSocketClient.connect(
                    url: url, configuration: WebSocketClientConfiguration(additionalHeaders: headers), logger: logger
                ) { inbound, outbound, _ in
                    connection.opened(outbound)
                    for try await message in inbound.messages(maxSize: limit) {
                        if case .text(let text) = message { connection.received(text) }
                    }
                }
                connection.ended(code: close.map { Self.number($0.closeCode) })
            } catch {
                connection.failed(error)
            }
        }
        return try await withTaskCancellationHandler {
            try await connection.waitUntilOpen()
        } onCancel: {
            task.cancel()
        }
    }

    static func number(_ code: WebSocketErrorCode) -> UInt16 {
        UInt16(webSocketErrorCode: code)
    }
}

/// One NIO WebSocket, bridged to `SyncTransportConnection`.
final class NIOSyncConnection: SyncTransportConnection, @unchecked Sendable {
    private enum Phase {
        case connecting(CheckedContinuation<any SyncTransportConnection, any Error>?)
        case open(WebSocketOutboundWriter)
        case ended
    }

    let events: AsyncStream<SyncTransportEvent>
    private let continuation: AsyncStream<SyncTransportEvent>.Continuation
    private let lock = NSLockBox()
    private var phase: Phase = .connecting(nil)
    private var failure: (any Error)?

    init() {
        (events, continuation) = AsyncStream.makeStream(of: SyncTransportEvent.self)
    }

    func waitUntilOpen() async throws -> any SyncTransportConnection {
        try await withCheckedThrowingContinuation { waiter in
            let outcome: Result<any SyncTransportConnection, any Error>? = lock.run {
                switch phase {
                case .connecting:
                    phase = .connecting(waiter)
                    return nil
                case .open:
                    return .success(self)
                case .ended:
                    return .failure(failure ?? WebSocketClientError.webSocketUpgradeFailed)
                }
            }
            if let outcome { waiter.resume(with: outcome) }
        }
    }

    func opened(_ writer: WebSocketOutboundWriter) {
        let waiter = lock.run { () -> CheckedContinuation<any SyncTransportConnection, any Error>? in
            guard case .connecting(let waiter) = phase else { return nil }
            phase = .open(writer)
            return waiter
        }
        waiter?.resume(returning: self)
    }

    func received(_ text: String) {
        continuation.yield(.text(text))
    }

    func ended(code: UInt16?) {
        let waiter = finish(nil)
        waiter?.resume(throwing: WebSocketClientError.webSocketUpgradeFailed)
        continuation.yield(.closed(code: code))
        continuation.finish()
    }

    func failed(_ error: any Error) {
        let waiter = finish(error)
        waiter?.resume(throwing: error)
        continuation.yield(.closed(code: nil))
        continuation.finish()
    }

    private func finish(_ error: (any Error)?) -> CheckedContinuation<any SyncTransportConnection, any Error>? {
        lock.run {
            failure = failure ?? error
            let waiter: CheckedContinuation<any SyncTransportConnection, any Error>?
            if case .connecting(let pending) = phase { waiter = pending } else { waiter = nil }
            phase = .ended
            return waiter
        }
    }

    func send(_ text: String) async throws {
        guard case .open(let writer) = lock.run({ phase }) else { throw WebSocketClientError.webSocketUpgradeFailed }
        try await writer.write(.text(text))
    }

    func close(code: UInt16) async {
        guard case .open(let writer) = lock.run({ phase }) else { return }
        try? await writer.close(WebSocketErrorCode(codeNumber: Int(code)), reason: nil)
    }
}

/// NSLock with a closure (Foundation's `withLock` is not on every platform this builds for).
private final class NSLockBox: @unchecked Sendable {
    private let lock = NSLock()
    func run<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}
#endif
