import BeckonProtocol
import Foundation

/// The client side of a sync session's decisions, as a value with pure transitions (docs/design.md,
/// "How the code is shaped"): an input goes in, the new state and the effects to carry out come out.
/// `SyncSession` feeds it and performs the effects; tests drive it alone.
///
/// What it guarantees (docs/sync-protocol.md; design rule 9):
/// - `hello` resumes from the cursor stored on the device.
/// - A message is acknowledged only after `persisted` says its write committed, never before.
/// - A read message never notifies, and a notification for it is cleared.
/// - After a drop it connects again with backoff and jitter; never after 4002, 4003, 4008.
package struct SyncClientStateMachine: Sendable {
    package enum State: Hashable, Sendable {
        case idle
        case connecting(attempt: Int)
        case awaitingWelcome(attempt: Int, cursor: Int64)
        case streaming(Streaming)
        /// `bye` sent; the server's close ends it.
        case closing
        case waitingToReconnect(attempt: Int)
        case stopped(SyncStopReason)
    }

    package struct Streaming: Hashable, Sendable {
        package var sessionID: String
        /// The newest sequence the server has told of (`welcome.lastSequence`, then each
        /// message).
        package var lastSequence: Int64
        /// `welcome.lastSequence`: messages up to it are in the welcome's badge already.
        package var welcomeSequence: Int64
        /// The highest sequence committed to the store.
        package var storedUpTo: Int64
        package var badge: Int
        package var caughtUp: Bool
        /// The server takes `receipts` frames (`welcome.features`).
        package var takesReceipts = false
    }

    package enum Input: Hashable, Sendable {
        case start
        /// The socket is open; `cursor` is the store's.
        case transportOpened(cursor: Int64)
        case transportFailed
        case frame(SyncServerFrame)
        /// A server frame that does not parse.
        case unreadableFrame
        /// A message's write committed. `isNew`: it was not stored before (by sync or by the
        /// extension). `isRead`: the user read it, here or elsewhere.
        case persisted(SyncMessage, isNew: Bool, isRead: Bool)
        /// A write failed; `leaseLost` when the store refused it for want of the lease.
        case persistFailed(leaseLost: Bool)
        case transportClosed(code: UInt16?)
        case reconnectDelayElapsed
        /// Something says the server is reachable again (the network came back, a push
        /// arrived): skip the rest of the backoff.
        case reconnectNow
        /// The user read these on this device (already stored as read, and pending).
        case markedRead([String])
        /// Receipts were queued in the store (shown, opened, removed): send them if the server
        /// takes them.
        case receiptsQueued
        case stop
        case preempt
    }

    package enum Effect: Hashable, Sendable {
        case connect
        case send(SyncClientFrame)
        /// Write the message (deduplicating by id) and feed back `persisted`.
        case persist(SyncMessage)
        /// Send the stored pending read markers (after `welcome`).
        case sendPendingReads
        /// Send the stored pending receipts (after `welcome`, and as they are queued), to a
        /// server that takes them.
        case sendPendingReceipts
        /// Show it, if the presenter agrees (new, unread, a kind that notifies).
        case present(SyncMessage)
        /// Remove the notifications of these messages, and mark them read in the store.
        case clearNotifications([String], markRead: Bool)
        case setBadge(Int)
        case endCall(callID: String, outcome: CallEndOutcome)
        /// Every message the server had when the session began is stored.
        case caughtUp
        case close(code: UInt16)
        case scheduleReconnect(after: Duration)
        case stopped(SyncStopReason)
    }

    package let role: SyncRole
    package let window: Int?
    package let backoff: ReconnectBackoff
    package private(set) var state: State = .idle
    private var jitter: JitterSource

    package init(role: SyncRole, window: Int? = nil, backoff: ReconnectBackoff = ReconnectBackoff(), jitter: JitterSource) {
        self.role = role
        self.window = window
        self.backoff = backoff
        self.jitter = jitter
    }

    /// A close frame this client sends when the server breaks the protocol (RFC 6455: 1002).
    package static let protocolErrorCloseCode: UInt16 = 1002

    package mutating func handle(_ input: Input) -> [Effect] {
        switch (state, input) {
        case (.idle, .start):
            state = .connecting(attempt: 0)
            return [.connect]

        case (.connecting(let attempt), .transportOpened(let cursor)):
            state = .awaitingWelcome(attempt: attempt, cursor: cursor)
            return [.send(.hello(version: Int64(SyncProtocol.version), role: role, cursor: cursor, window: window.map(Int64.init)))]

        case (.connecting(let attempt), .transportFailed):
            return retry(after: attempt)

        case (.awaitingWelcome(_, let cursor), .frame(.welcome(let version, let sessionID, let lastSequence, _, let badge, let features))):
            guard version == SyncProtocol.version else {
                state = .stopped(.protocolError)
                return [.close(code: Self.protocolErrorCloseCode), .stopped(.protocolError)]
            }
            let caughtUp = cursor >= lastSequence
            let takesReceipts = features.contains("receipts")
            state = .streaming(Streaming(
                sessionID: sessionID, lastSequence: lastSequence, welcomeSequence: lastSequence, storedUpTo: cursor,
                badge: badge, caughtUp: caughtUp, takesReceipts: takesReceipts))
            return [.setBadge(badge), .sendPendingReads] + (takesReceipts ? [.sendPendingReceipts] : []) + (caughtUp ? [.caughtUp] : [])

        case (.awaitingWelcome, .frame(.error)), (.streaming, .frame(.error)):
            // The server closes next (4008, or another code); the close decides.
            return []

        case (.awaitingWelcome, .frame), (.awaitingWelcome, .unreadableFrame), (.streaming, .unreadableFrame),
            (.streaming, .frame(.welcome)):
            // A server that breaks the protocol: close, and connect again with backoff (a newer
            // server may be rolling out).
            return [.close(code: Self.protocolErrorCloseCode)]

        case (.streaming(var streaming), .frame(.message(let message))):
            streaming.lastSequence = max(streaming.lastSequence, message.sequence)
            state = .streaming(streaming)
            return [.persist(message)]

        case (.streaming(var streaming), .persisted(let message, let isNew, let isRead)):
            // Rule 9: the ack follows the commit.
            streaming.storedUpTo = max(streaming.storedUpTo, message.sequence)
            var effects: [Effect] = [.send(.ack(upTo: streaming.storedUpTo))]
            if isRead {
                effects.append(.clearNotifications([message.id], markRead: false))
            } else if isNew {
                // Counted in the welcome's badge already when it is not newer than the welcome.
                if message.sequence > streaming.welcomeSequence && message.kind.countsAsUnread {
                    streaming.badge += 1
                    effects.append(.setBadge(streaming.badge))
                }
                effects.append(.present(message))
            }
            if !streaming.caughtUp && streaming.storedUpTo >= streaming.welcomeSequence {
                streaming.caughtUp = true
                effects.append(.caughtUp)
            }
            state = .streaming(streaming)
            return effects

        case (.streaming, .persistFailed(let leaseLost)):
            // Nothing acknowledged: the server sends it again from the cursor next time.
            if leaseLost {
                state = .stopped(.leaseLost)
                return [.close(code: SyncCloseCode.normal.rawValue), .stopped(.leaseLost)]
            }
            return [.close(code: SyncCloseCode.internalError.rawValue)]

        case (.streaming(var streaming), .frame(.readElsewhere(let ids, let badge))):
            // Rule 7: read elsewhere means clear here.
            streaming.badge = badge
            state = .streaming(streaming)
            return [.clearNotifications(ids, markRead: true), .setBadge(badge)]

        case (.streaming, .frame(.callEnded(let callID, let outcome))):
            return [.endCall(callID: callID, outcome: outcome)]

        case (.streaming, .frame(.pong)):
            return []

        case (.streaming, .markedRead(let ids)):
            return ids.isEmpty ? [] : [.send(.read(ids: ids))]

        case (.streaming(let streaming), .receiptsQueued):
            return streaming.takesReceipts ? [.sendPendingReceipts] : []

        case (.awaitingWelcome, .stop):
            state = .closing
            return [.send(.bye)]

        case (.streaming(let streaming), .stop):
            // What the session queued (the notifications a background sync showed) goes before
            // `bye`: the next session may be hours away.
            state = .closing
            return (streaming.takesReceipts ? [.sendPendingReceipts] : []) + [.send(.bye)]

        case (.connecting, .stop), (.waitingToReconnect, .stop), (.idle, .stop):
            state = .stopped(.requested)
            return [.stopped(.requested)]

        case (.stopped, _):
            return []

        case (_, .preempt):
            state = .stopped(.preempted)
            return [.close(code: SyncCloseCode.normal.rawValue), .stopped(.preempted)]

        case (.closing, .transportClosed):
            state = .stopped(.requested)
            return [.stopped(.requested)]

        case (.awaitingWelcome(let attempt, _), .transportClosed(let code)):
            return closed(code: code, attempt: attempt)

        case (.streaming, .transportClosed(let code)):
            // A session that got as far as `welcome` starts the backoff over.
            return closed(code: code, attempt: 0)

        case (.waitingToReconnect(let attempt), .reconnectDelayElapsed), (.waitingToReconnect(let attempt), .reconnectNow):
            state = .connecting(attempt: attempt)
            return [.connect]

        default:
            // Inputs that do not apply in this state (a late timer, a read marker while
            // offline: it stays pending in the store and goes after the next welcome).
            return []
        }
    }

    private mutating func closed(code: UInt16?, attempt: Int) -> [Effect] {
        switch code.flatMap(SyncCloseCode.init(rawValue:)) {
        case .preempted?:
            state = .stopped(.preempted)
            return [.stopped(.preempted)]
        case .revoked?:
            state = .stopped(.revoked)
            return [.stopped(.revoked)]
        case .protocolError?:
            state = .stopped(.protocolError)
            return [.stopped(.protocolError)]
        default:
            return retry(after: attempt)
        }
    }

    private mutating func retry(after attempt: Int) -> [Effect] {
        let next = attempt + 1
        state = .waitingToReconnect(attempt: next)
        return [.scheduleReconnect(after: backoff.delay(attempt: next, unit: jitter.next()))]
    }
}
