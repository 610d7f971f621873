import BeckonStore
import Foundation
import HummingbirdWebSocket
import Logging
import NIOWebSocket

/// The thin driver of one sync session: it feeds events (frames from the socket, wake-ups and
/// "read elsewhere" from the hub, closes) one at a time into `SyncSessionStateMachine`, and
/// performs the actions it returns: frames to write, store calls (whose results are fed back),
/// the close.
///
/// Two tasks per connection: one reads the socket and queues frames (at most
/// `SyncLimits.maximumQueuedFrames`, beyond which the session is closed with 4029); the other
/// is the loop below. Everything the session does happens in that loop, in order, so frames go
/// out in sequence order without locks.
enum SyncConnection {
    static func run(
        device: Device, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, gateway: SyncGateway,
        logger: Logger
    ) async {
        let (events, continuation) = AsyncStream.makeStream(of: SyncSessionHandle.Event.self)
        let handle = SyncSessionHandle(
            id: UUID().uuidString.lowercased(), device: device, connectedAt: gateway.now(), continuation: continuation)
        var logger = logger
        logger[metadataKey: "device"] = "\(device.ref)"
        logger[metadataKey: "session"] = "\(handle.id)"

        guard await gateway.hub.register(handle) else {
            try? await outbound.close(.goingAway, reason: "server shutting down")
            return
        }
        var driver = Driver(
            machine: SyncSessionStateMachine(sessionID: handle.id, limits: gateway.limits.stateMachineLimits),
            handle: handle, outbound: outbound, store: gateway.store, hub: gateway.hub, logger: logger)
        let limits = gateway.limits

        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    reading: for try await message in inbound.messages(maxSize: limits.maximumFrameBytes) {
                        switch message {
                        case .text(let text):
                            guard handle.frameArrived(text, limit: limits.maximumQueuedFrames) else {
                                handle.close(.tooMany, reason: "too many frames", end: .overloaded)
                                break reading
                            }
                        case .binary:
                            handle.invalidFrame(.init(code: "malformed_frame", message: "frames are JSON in text messages"))
                        }
                    }
                } catch {
                    // A broken connection or a frame over the limit: the end of the inbound side.
                }
                handle.inboundEnded()
            }

            var end = SyncSessionEnd.dropped
            for await event in events {
                if let ended = await driver.handle(event) {
                    end = ended
                    break
                }
            }
            continuation.finish()
            await gateway.hub.unregister(handle, end: end)
            logger.debug("sync session ended", metadata: ["end": "\(end.rawValue)"])

            // The device answers our close frame and the reader then ends by itself; do not
            // wait for a peer that does not.
            group.addTask { try? await Task.sleep(for: limits.closeTimeout) }
            await group.next()
            group.cancelAll()
        }
    }

    /// The loop's state: the machine and what its actions need.
    struct Driver {
        var machine: SyncSessionStateMachine
        let handle: SyncSessionHandle
        let outbound: WebSocketOutboundWriter
        let store: any BeckonStore
        let hub: SyncHub
        let logger: Logger

        /// Processes one event; returns how the session ended once it has.
        mutating func handle(_ event: SyncSessionHandle.Event) async -> SyncSessionEnd? {
            let actions: [SyncSessionStateMachine.Action]
            switch event {
            case .frame(let text):
                handle.tookFrame()
                switch SyncClientFrame.parse(text) {
                case .success(let frame): actions = machine.receive(frame)
                case .failure(let violation): actions = machine.receiveInvalid(violation)
                }
            case .invalidFrame(let violation):
                actions = machine.receiveInvalid(violation)
            case .newMessages:
                handle.tookNewMessages()
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
            let device = handle.device
            while next < actions.count {
                let action = actions[next]
                next += 1
                do {
                    switch action {
                    case .send(let frame):
                        try await outbound.write(.text(frame.text))
                    case .loadLastSequence:
                        actions += machine.started(lastSequence: try await store.lastSequence(of: device.user))
                    case .fetch(let after, let limit):
                        actions += machine.fetched(try await store.messages(for: device.user, after: after, limit: limit))
                    case .storeAck(let upTo):
                        let cursor = try await store.ack(device: device.ref, upTo: upTo)
                        await hub.recordAck(device.ref, upTo: cursor)
                    case .markRead(let ids):
                        let newlyRead = try await store.markRead(device: device.ref, messageIDs: ids)
                        if !newlyRead.isEmpty {
                            let badge = try await store.unreadCount(of: device.user)
                            await hub.readElsewhere(user: device.user, except: device.ref, ids: newlyRead, badge: badge)
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
                    logger.error("sync session store failure", metadata: ["error": "\(error)"])
                    try? await outbound.close(.unexpectedServerError, reason: "internal error")
                    _ = machine.close(.internalError, reason: "internal error", end: .serverError)
                    return .serverError
                }
            }
            return nil
        }
    }
}
