import BeckonProtocol
import BeckonStore
import Foundation
import Logging
import NIOCore
import NIOWebSocket

/// The thin driver of one sync session: it feeds events (frames from the socket, wake-ups and
/// "read elsewhere" from the hub, closes) one at a time into `SyncSessionStateMachine`, and
/// performs the actions it returns: frames to write, store calls (whose results are fed back),
/// the close.
///
/// The connection has no task of its own: `SyncChannelHandler` reads the socket on the event
/// loop and queues messages in the session's inbox (`SyncSessionHandle`; at most
/// `SyncLimits.maximumQueuedFrames`, beyond which the session is closed with 4029). Events are
/// processed one at a time, in order, by a short-lived task that exists only while the inbox is
/// not empty, so frames go out in sequence order without locks, and an idle session is a
/// handler, a session handle and a parked driver: a Swift task keeps the high-water mark of its
/// async frames (the store calls) until it ends, which was most of an idle session's memory.
enum SyncConnection {
    /// Starts a session on a connection that has just been upgraded (on its event loop): the
    /// handler goes into the pipeline, and the session registers with the hub, then processes
    /// what the device sent meanwhile.
    static func start(device: Device, channel: any Channel, gateway: SyncGateway) throws {
        let id = UUID().uuidString.lowercased()
        let limits = gateway.limits
        let driver = Driver(
            machine: SyncSessionStateMachine(sessionID: id, limits: limits.stateMachineLimits),
            device: device.ref, user: device.user, outbound: SyncOutbound(channel: channel), store: gateway.store,
            hub: gateway.hub, logger: gateway.logger)
        let session = SyncSessionHandle(
            id: id, device: device, connectedAt: gateway.now(), hub: gateway.hub, logger: gateway.logger)
        // No reading while the answers (pongs) cannot be written: a device that sends and never
        // reads would otherwise grow the server's memory until its ping timeout. Its own frames
        // then wait in its socket buffers instead.
        try channel.pipeline.syncOperations.addHandler(BackPressureHandler(), position: .first)
        try channel.pipeline.syncOperations.addHandler(SyncChannelHandler(session: session, limits: limits))
        session.start(driver)
    }

    /// The loop's state: the machine and what its actions need.
    struct Driver: Sendable {
        /// The store's roles a session uses: the user's mailbox, the device's read state and its
        /// receipts.
        typealias Store = MailboxStore & ReadStateStore & MessageTraceStore

        var machine: SyncSessionStateMachine
        let device: DeviceRef
        let user: UserRef
        let outbound: SyncOutbound
        let store: any Store
        let hub: SyncHub
        let logger: Logger

        /// Processes one event; returns how the session ended once it has.
        mutating func handle(_ event: SyncSessionHandle.Event, of session: SyncSessionHandle) async -> SyncSessionEnd? {
            let actions: [SyncSessionStateMachine.Action]
            switch event {
            case .frame(let text):
                switch SyncClientFrame.parse(text) {
                case .success(let frame): actions = machine.receive(frame)
                case .failure(let violation): actions = machine.receiveInvalid(violation)
                }
            case .invalidFrame(let violation):
                actions = machine.receiveInvalid(violation)
            case .newMessages(let offered):
                actions = machine.newMessages(offered: offered)
            case .readElsewhere(let ids, let badge):
                actions = machine.readElsewhere(ids: ids, badge: badge)
            case .callEnded(let callID, let outcome):
                actions = machine.callEnded(callID: callID, outcome: outcome)
            case .close(let code, let reason, let end):
                actions = machine.close(code, reason: reason, end: end)
            case .inboundEnded:
                return machine.connectionEnded()
            }
            return await perform(actions, session: session)
        }

        private mutating func perform(
            _ initial: [SyncSessionStateMachine.Action], session: SyncSessionHandle
        ) async -> SyncSessionEnd? {
            var actions = initial
            var next = 0
            // Frames are queued as they come and flushed before the next wait and at the end.
            var unflushed = false
            defer { if unflushed { outbound.flush() } }
            while next < actions.count {
                let action = actions[next]
                next += 1
                if unflushed, action.waits {
                    outbound.flush()
                    unflushed = false
                }
                do {
                    switch action {
                    case .send(let frame):
                        outbound.write(frame.text)
                        unflushed = true
                        if case .message = frame { hub.metrics.messagesSent.increment() }
                    case .register(let role):
                        actions += machine.registered(await hub.register(session, role: role))
                    case .loadStart(let cursor):
                        // Calls ended in the last hour: ringing never lasts longer (call timeouts are
                        // seconds to minutes), so older ends cannot matter to the device.
                        let start = try await store.sessionStart(
                            for: user, cursor: cursor, window: SyncProtocol.maximumReadIDs,
                            callsEndedSince: Date().addingTimeInterval(-3600))
                        actions += machine.started(
                            lastSequence: start.lastSequence, badge: start.badge, readUpToCursor: start.readUpToCursor,
                            endedCalls: start.endedCalls.compactMap { call in
                                CallEndOutcome(rawValue: call.outcome).map { (call.callID, $0) }
                            })
                    case .fetch(let after, let limit):
                        actions += machine.fetched(try await store.messages(for: user, after: after, limit: limit))
                    case .storeAck(let upTo):
                        let cursor = try await store.ack(device: device, upTo: upTo)
                        hub.metrics.acks.increment()
                        await hub.recordAck(device, upTo: cursor)
                    case .markRead(let ids):
                        let newlyRead = try await store.markRead(device: device, messageIDs: ids)
                        if !newlyRead.isEmpty {
                            let badge = try await store.unreadCount(of: user)
                            await hub.readElsewhere(user: user, except: device, ids: newlyRead, badge: badge)
                        }
                    case .storeReceipts(let receipts):
                        try await store.recordReceipts(receipts.map {
                            MessageReceipt(device: device, messageID: $0.messageID, kind: $0.kind, at: $0.at)
                        })
                    case .close(let code, let reason, let end):
                        outbound.close(code, reason: reason)
                        unflushed = false
                        return end
                    }
                } catch {
                    // The store failed: end the session; the device reconnects and resumes.
                    logger.error("sync session store failure", metadata: [
                        "device": "\(device)", "session": "\(machine.sessionID)", "error": "\(error)",
                    ])
                    outbound.close(.internalError, reason: "internal error")
                    unflushed = false
                    _ = machine.close(.internalError, reason: "internal error", end: .serverError)
                    return .serverError
                }
            }
            return nil
        }
    }
}

extension SyncSessionStateMachine.Action {
    /// Whether performing it waits (on the store or the hub): queued frames go out first.
    fileprivate var waits: Bool {
        switch self {
        case .send, .close: false
        case .register, .loadStart, .fetch, .storeAck, .markRead, .storeReceipts: true
        }
    }
}
