import BeckonStore
import Foundation
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOWebSocket

/// The thin driver of one sync session: it feeds events (frames from the socket, wake-ups and
/// "read elsewhere" from the hub, closes) one at a time into `SyncSessionStateMachine`, and
/// performs the actions it returns: frames to write, store calls (whose results are fed back),
/// the close.
///
/// The connection's own task (the one hummingbird-websocket runs the handler in) only reads the
/// socket and queues frames in the session's inbox (`SyncSessionHandle`; at most
/// `SyncLimits.maximumQueuedFrames`, beyond which the session is closed with 4029). Events are
/// processed one at a time, in order, by a short-lived task that exists only while the inbox is
/// not empty, so frames go out in sequence order without locks, and an idle session has no task
/// of its own: a Swift task keeps the high-water mark of its async frames (the store calls,
/// the writes) until it ends, which is most of an idle session's memory otherwise.
enum SyncConnection {
    static func run(
        device: Device, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, gateway: SyncGateway,
        channel: (any Channel)?, logger: Logger
    ) async {
        let id = UUID().uuidString.lowercased()
        let limits = gateway.limits
        let driver = Driver(
            machine: SyncSessionStateMachine(sessionID: id, limits: limits.stateMachineLimits),
            device: device.ref, user: device.user, outbound: outbound, store: gateway.store, hub: gateway.hub,
            logger: logger)
        let session = SyncSessionHandle(
            id: id, device: device, connectedAt: gateway.now(), hub: gateway.hub, channel: channel,
            closeTimeout: limits.closeTimeout, logger: logger, driver: driver)

        guard await gateway.hub.register(session) else {
            try? await outbound.close(.goingAway, reason: "server shutting down")
            return
        }
        await read(inbound, into: session, outbound: outbound, limits: limits)
        session.inboundEnded()
        await session.waitUntilDone()
    }

    /// Reads the device's messages into the session's inbox until the connection ends, the
    /// device closes, or the inbox overflows (4029).
    ///
    /// Frames are collated into messages here rather than with `WebSocketInboundStream.messages`,
    /// whose iterator adds two more async frames (over 3 KiB of task memory) to every idle
    /// connection. Same rules: a continuation must follow an unfinished text or binary frame, and
    /// a message over `maximumFrameBytes` closes the connection with 1009.
    private static func read(
        _ inbound: WebSocketInboundStream, into session: SyncSessionHandle, outbound: WebSocketOutboundWriter,
        limits: SyncLimits
    ) async {
        var frames = inbound.makeAsyncIterator()
        var partial: WebSocketDataFrame?
        do {
            while var frame = try await frames.next() {
                if frame.opcode == .continuation {
                    guard var message = partial else { return try await outbound.close(.protocolError, reason: nil) }
                    guard message.data.readableBytes + frame.data.readableBytes <= limits.maximumFrameBytes else {
                        return try await outbound.close(.messageTooLarge, reason: nil)
                    }
                    message.data.writeImmutableBuffer(frame.data)
                    message.fin = frame.fin
                    frame = message
                    partial = nil
                } else if partial != nil {
                    return try await outbound.close(.protocolError, reason: nil)
                }
                guard frame.data.readableBytes <= limits.maximumFrameBytes else {
                    return try await outbound.close(.messageTooLarge, reason: nil)
                }
                guard frame.fin else {
                    partial = frame
                    continue
                }
                switch frame.opcode {
                case .text:
                    guard session.frameArrived(String(buffer: frame.data), limit: limits.maximumQueuedFrames) else {
                        session.close(.tooMany, reason: "too many frames", end: .overloaded)
                        return
                    }
                default:
                    session.invalidFrame(.init(code: "malformed_frame", message: "frames are JSON in text messages"))
                }
            }
        } catch {
            // A broken connection: the end of the inbound side.
        }
    }

    /// The loop's state: the machine and what its actions need.
    struct Driver: Sendable {
        var machine: SyncSessionStateMachine
        let device: DeviceRef
        let user: UserRef
        let outbound: WebSocketOutboundWriter
        let store: any BeckonStore
        let hub: SyncHub
        let logger: Logger

        /// Processes one event; returns how the session ended once it has.
        mutating func handle(_ event: SyncSessionHandle.Event) async -> SyncSessionEnd? {
            let actions: [SyncSessionStateMachine.Action]
            switch event {
            case .frame(let text):
                switch SyncClientFrame.parse(text) {
                case .success(let frame): actions = machine.receive(frame)
                case .failure(let violation): actions = machine.receiveInvalid(violation)
                }
            case .invalidFrame(let violation):
                actions = machine.receiveInvalid(violation)
            case .newMessages:
                actions = machine.newMessages()
            case .readElsewhere(let ids, let badge):
                actions = machine.readElsewhere(ids: ids, badge: badge)
            case .close(let code, let reason, let end):
                actions = machine.close(code, reason: reason, end: end)
            case .inboundEnded:
                return machine.connectionEnded()
            }
            return await perform(actions)
        }

        private mutating func perform(_ initial: [SyncSessionStateMachine.Action]) async -> SyncSessionEnd? {
            var actions = initial
            var next = 0
            while next < actions.count {
                let action = actions[next]
                next += 1
                do {
                    switch action {
                    case .send(let frame):
                        try await outbound.write(.text(frame.text))
                    case .loadLastSequence:
                        actions += machine.started(lastSequence: try await store.lastSequence(of: user))
                    case .fetch(let after, let limit):
                        actions += machine.fetched(try await store.messages(for: user, after: after, limit: limit))
                    case .storeAck(let upTo):
                        let cursor = try await store.ack(device: device, upTo: upTo)
                        await hub.recordAck(device, upTo: cursor)
                    case .markRead(let ids):
                        let newlyRead = try await store.markRead(device: device, messageIDs: ids)
                        if !newlyRead.isEmpty {
                            let badge = try await store.unreadCount(of: user)
                            await hub.readElsewhere(user: user, except: device, ids: newlyRead, badge: badge)
                        }
                    case .close(let code, let reason, let end):
                        try? await outbound.close(WebSocketErrorCode(codeNumber: Int(code.rawValue)), reason: reason)
                        return end
                    }
                } catch {
                    if case .send = action {
                        // The socket is gone: the connection dropped.
                        return machine.connectionEnded()
                    }
                    // The store failed: end the session; the device reconnects and resumes.
                    logger.error("sync session store failure", metadata: [
                        "device": "\(device)", "session": "\(machine.sessionID)", "error": "\(error)",
                    ])
                    try? await outbound.close(.unexpectedServerError, reason: "internal error")
                    _ = machine.close(.internalError, reason: "internal error", end: .serverError)
                    return .serverError
                }
            }
            return nil
        }
    }
}
