import BeckonProtocol
import BeckonStore
import Foundation
import Logging
import NIOConcurrencyHelpers

/// One live session: its identity, as the hub sees it, and its inbox. Events (frames from the
/// socket, wake-ups and "read elsewhere" from the hub, closes) are queued here and processed one
/// at a time, in order, by `SyncConnection.Driver`, which owns the state machine.
///
/// No task waits on an idle session's inbox: the driver is parked in the inbox while there is
/// nothing to do, and the first event queued takes it out and starts a short-lived task that
/// processes events until the inbox is empty again, then parks the driver and ends. A Swift task
/// keeps every slab of async frames it ever used until it ends, so a long-lived task per session
/// that once ran the store calls of `hello` would hold that memory for the life of the
/// connection (see `SyncConnection`). The hub knows the session from its `hello` on (the role
/// decides which session it replaces or yields to), and the session reads the store only after
/// that, so no wake-up can fall between its read and its registration.
final class SyncSessionHandle: Sendable {
    enum Event: Sendable {
        case frame(String)
        case invalidFrame(SyncFrameError)
        /// New messages, with the entries offered by the node that appended them (empty: read
        /// the store). Queued empty: the entries gather in `Inbox.offered` while it waits, and
        /// are put in when it is taken.
        case newMessages([MailboxEntry])
        case readElsewhere(ids: [String], badge: Int)
        case callEnded(callID: String, outcome: CallEndOutcome)
        case close(SyncCloseCode, reason: String, end: SyncSessionEnd)
        case inboundEnded
    }

    private struct Inbox: Sendable {
        /// Events not yet processed, in order.
        var events: [Event] = []
        /// `frame` events among `events` (4029 past the limit).
        var framesQueued = 0
        /// Coalesces wake-ups: one `newMessages` waits in the queue at most.
        var wakeQueued = false
        /// The entries offered with the queued wake-up; nil once a wake-up without an entry
        /// joined it, or more than `maximumOffered` did (the session then reads the store).
        var offered: [MailboxEntry]?
        /// The driver while no task processes events; nil before `start`, while a task
        /// processes events, and once closed.
        var driver: SyncConnection.Driver?
        /// The session ended: events are no longer queued.
        var closed = false
        var role: SyncRole?
    }

    /// Entries a queued wake-up carries at most: beyond, it reads the store instead, so a slow
    /// session holds few payloads in memory.
    static let maximumOffered = 16

    let id: String
    let ref: DeviceRef
    /// Set once, when `hello` is accepted: the slot it holds in the hub (kept under the inbox's
    /// lock, so a session costs no second lock).
    var role: SyncRole? {
        get { inbox.withLockedValue { $0.role } }
        set { inbox.withLockedValue { $0.role = newValue } }
    }
    let user: UserRef
    let connectedAt: Date
    private let hub: SyncHub
    private let logger: Logger
    private let inbox = SessionLocked(Inbox())

    init(id: String, device: Device, connectedAt: Date, hub: SyncHub, logger: Logger) {
        self.id = id
        self.ref = device.ref
        self.user = device.user
        self.connectedAt = connectedAt
        self.hub = hub
        self.logger = logger
    }

    /// Admits the session to the hub (so shutdown and revocation reach it before its `hello`),
    /// then processes what was queued meanwhile. It takes its device's slot when its `hello`
    /// names its role (`SyncConnection.Driver`). While the server shuts down, the session is
    /// closed with 1001 at once instead.
    func start(_ driver: SyncConnection.Driver) {
        Task.detached {
            let admitted = await self.hub.admit(self)
            let ready: SyncConnection.Driver? = self.inbox.withLockedValue { inbox in
                if !admitted {
                    inbox.events = [.close(.goingAway, reason: "server shutting down", end: .shutdown)]
                    inbox.framesQueued = 0
                    inbox.wakeQueued = false
                    inbox.offered = nil
                }
                guard !inbox.events.isEmpty else {
                    inbox.driver = driver
                    return nil
                }
                return driver
            }
            if let ready { await self.process(ready) }
        }
    }

    // MARK: Posting events

    /// - Parameter entry: the new entry of the session's user, when the caller has it: the
    ///   session can send it without reading the store (`SyncSessionStateMachine.newMessages`).
    func newMessages(_ entry: MailboxEntry? = nil) {
        post { inbox in
            guard !inbox.wakeQueued else {
                if let entry, let count = inbox.offered?.count, count < Self.maximumOffered {
                    inbox.offered?.append(entry)
                } else {
                    inbox.offered = nil
                }
                return false
            }
            inbox.wakeQueued = true
            inbox.offered = entry.map { [$0] }
            inbox.events.append(.newMessages([]))
            return true
        }
    }

    func readElsewhere(ids: [String], badge: Int) { post(.readElsewhere(ids: ids, badge: badge)) }

    func callEnded(callID: String, outcome: CallEndOutcome) { post(.callEnded(callID: callID, outcome: outcome)) }

    func close(_ code: SyncCloseCode, reason: String, end: SyncSessionEnd) {
        post(.close(code, reason: reason, end: end))
    }

    /// Queues a frame from the device; false if `limit` frames are already waiting.
    func frameArrived(_ text: String, limit: Int) -> Bool {
        var accepted = true
        post { inbox in
            guard inbox.framesQueued < limit else {
                accepted = false
                return false
            }
            inbox.framesQueued += 1
            inbox.events.append(.frame(text))
            return true
        }
        return accepted
    }

    func invalidFrame(_ violation: SyncFrameError) { post(.invalidFrame(violation)) }

    /// The connection ended (the device closed, the connection dropped, or the session was
    /// closed and the device answered or timed out).
    func inboundEnded() { post(.inboundEnded) }

    private func post(_ event: Event) {
        post { inbox in
            inbox.events.append(event)
            return true
        }
    }

    /// Runs `enqueue` on the inbox unless the session is closed; if it queued something and no
    /// task is processing events, starts one.
    private func post(_ enqueue: (inout Inbox) -> Bool) {
        let driver: SyncConnection.Driver? = inbox.withLockedValue { inbox in
            guard !inbox.closed, enqueue(&inbox) else { return nil }
            let driver = inbox.driver
            inbox.driver = nil
            return driver
        }
        if let driver {
            // Detached: the session's work belongs to no caller (a hub wake-up comes from an
            // HTTP request's task), and inherits neither its task-locals nor its priority.
            Task.detached { await self.process(driver) }
        }
    }

    // MARK: Processing

    /// Processes events until the inbox is empty (the driver is parked again) or the session ends.
    private func process(_ driver: SyncConnection.Driver) async {
        var driver = driver
        while true {
            let next: Event? = inbox.withLockedValue { inbox in
                guard !inbox.events.isEmpty else {
                    inbox.driver = driver
                    return nil
                }
                var event = inbox.events.removeFirst()
                // Give the storage back: an idle session keeps no buffer.
                if inbox.events.isEmpty { inbox.events = [] }
                switch event {
                case .frame: inbox.framesQueued -= 1
                case .newMessages:
                    inbox.wakeQueued = false
                    event = .newMessages(inbox.offered ?? [])
                    inbox.offered = nil
                default: break
                }
                return event
            }
            guard let event = next else { return }
            if let end = await driver.handle(event, of: self) {
                await finish(end)
                return
            }
        }
    }

    /// The close frame is out (or the connection is gone); `SyncChannelHandler` closes the
    /// connection when the device answers or after the close timeout.
    private func finish(_ end: SyncSessionEnd) async {
        inbox.withLockedValue { inbox in
            inbox.closed = true
            inbox.events = []
            inbox.offered = nil
        }
        await hub.unregister(self, end: end)
        logger.debug("sync session ended", metadata: ["device": "\(ref)", "session": "\(id)", "end": "\(end.rawValue)"])
    }
}
