import BeckonJSON

/// One thing that happened during a simulation, at a virtual time: what the report lists and the
/// timeline draws (docs/simulator.md, "Reading a timeline").
public struct TimelineEvent: Hashable, Sendable {
    /// Virtual seconds since the run started (server windows and iOS budgets run scaled together).
    public var time: Double
    /// The simulated device's name, or `server` for what the backend did.
    public var device: String
    public var what: What

    public init(time: Double, device: String, what: What) {
        self.time = time
        self.device = device
        self.what = what
    }

    public static let server = "server"

    public enum What: Hashable, Sendable {
        /// The app's state band.
        case appState(AppState)
        case network(online: Bool)
        /// A user action as the script played it (`tap`, `swipe-away`, `reboot`, ...).
        case user(String)
        /// The backend posted a message (device `server`).
        case messagePosted(id: String)
        /// A sync session of `role` (`app`, `extension`) got its `welcome`.
        case syncConnected(role: String)
        /// It ended; `code` is the WebSocket close code, nil when it dropped.
        case syncDisconnected(role: String, code: Int?)
        /// The server sent a push to APNs for this device (`push` is the apns-id).
        case pushSent(push: String, type: String, priority: Int, reason: String?)
        /// APNs answered 200.
        case pushAccepted(push: String)
        /// APNs refused it (`status`, `reason`). The emulator's device side sees accepted pushes
        /// only, so scenarios do not record it yet; the timeline draws it when a report has it.
        case pushRejected(push: String, status: Int, reason: String)
        /// Held: by APNs while the phone is offline, or by iOS (a background push it will not run
        /// now, newest only).
        case pushHeld(push: String, by: Holder)
        /// The phone got it and iOS acted on it.
        case pushDelivered(push: String, type: String)
        /// Dropped without effect; `why` is machine-readable. By APNs: `replaced`, `expired`,
        /// `not-stored`. By iOS: `force-quit`, `reboot`, `ios-declined`, `no-background-mode`,
        /// `no-voip`, `voip-blocked`, or the reason the app was killed while iOS held it.
        case pushDiscarded(push: String, why: String)
        /// The notification service extension's run for a push.
        case extensionStarted(push: String)
        case extensionFinished(push: String, outcome: String)
        /// A notification appeared (or replaced one with the same identifier).
        case notificationShown(identifier: String, messages: [String], text: String)
        /// It went: `why` is `clear-all` (a badge-0 push), `swiped`, `tapped`, or `app` (the app
        /// removed it: read here or elsewhere).
        case notificationRemoved(identifier: String, why: String)
        case badge(Int)
        /// The message is in the device's local store.
        case messageStored(id: String)
        /// iOS started the app's process: `why` is `user`, `push`, `voip`.
        case appLaunched(why: String)
        /// iOS ended the process: `why` is `force-quit`, `reboot`, `late-completion`,
        /// `voip-not-reported` or `reclaimed` (memory, after a long suspension).
        case appKilled(why: String)
        /// The background fetch completion handler was called.
        case completionHandler(result: String, late: Bool)
        case callReported(callID: String)
        case callEnded(callID: String, outcome: String)
        /// Something iOS punishes or a user would notice (fleet reports count them by kind).
        case violation(Violation, detail: String)
        /// Free text from the script.
        case note(String)
    }

    public enum Holder: String, Hashable, Sendable {
        case apns
        case ios
    }

    /// What the fleet report counts: iOS policy violations, by kind.
    public enum Violation: String, Hashable, Sendable, CaseIterable {
        /// A VoIP push the app did not report to CallKit (apns.md E.6).
        case voipWithoutCall = "voip-without-call"
        /// A background push at priority 10 (apns.md E.3: must be 5).
        case backgroundAtPriority10 = "background-priority-10"
        /// The background completion handler called after 30 s, or never (apns.md E.3).
        case lateCompletion = "late-completion"
        /// One message shown in two notifications.
        case shownTwice = "shown-twice"
        /// A notification still on screen for a message read on another device.
        case leftAfterRead = "left-after-read"
        /// Suspended while a transaction held an SQLite lock on the shared store: iOS kills the
        /// app with 0xdead10cc (apns.md E.9).
        case lockHeldWhenSuspended = "lock-held-when-suspended"
        /// A background task still open when its expiration handler returned: iOS terminates the
        /// app (apns.md E.9).
        case backgroundTaskNotEnded = "background-task-not-ended"
        /// The notification service extension went over its memory limit and was killed (apns.md E.4).
        case extensionOverMemory = "extension-over-memory"
    }
}

extension TimelineEvent {
    /// The report's JSON for this event: `{"t": 1.25, "device": "phone", "kind": "push-delivered", ...}`.
    public var json: JSONValue {
        var object: [String: JSONValue] = [
            "t": .double((time * 1000).rounded() / 1000), "device": .string(device), "kind": .string(what.kind),
        ]
        for (key, value) in what.fields { object[key] = value }
        return .object(object)
    }
}

extension TimelineEvent.What {
    /// A stable, machine-readable name for the event's kind.
    public var kind: String {
        switch self {
        case .appState: "app-state"
        case .network: "network"
        case .user: "user"
        case .messagePosted: "message-posted"
        case .syncConnected: "sync-connected"
        case .syncDisconnected: "sync-disconnected"
        case .pushSent: "push-sent"
        case .pushAccepted: "push-accepted"
        case .pushRejected: "push-rejected"
        case .pushHeld: "push-held"
        case .pushDelivered: "push-delivered"
        case .pushDiscarded: "push-discarded"
        case .extensionStarted: "extension-started"
        case .extensionFinished: "extension-finished"
        case .notificationShown: "notification-shown"
        case .notificationRemoved: "notification-removed"
        case .badge: "badge"
        case .messageStored: "message-stored"
        case .appLaunched: "app-launched"
        case .appKilled: "app-killed"
        case .completionHandler: "completion-handler"
        case .callReported: "call-reported"
        case .callEnded: "call-ended"
        case .violation: "violation"
        case .note: "note"
        }
    }

    /// The event's own fields, as the report writes them.
    public var fields: [String: JSONValue] {
        switch self {
        case .appState(let state): ["state": .string(state.rawValue)]
        case .network(let online): ["online": .bool(online)]
        case .user(let action): ["action": .string(action)]
        case .messagePosted(let id), .messageStored(let id): ["message": .string(id)]
        case .syncConnected(let role): ["role": .string(role)]
        case .syncDisconnected(let role, let code): ["role": .string(role), "code": code.map { .int($0) } ?? .null]
        case .pushSent(let push, let type, let priority, let reason):
            [
                "push": .string(push), "type": .string(type), "priority": .int(priority),
                "reason": reason.map(JSONValue.string) ?? .null,
            ]
        case .pushAccepted(let push), .extensionStarted(let push): ["push": .string(push)]
        case .pushRejected(let push, let status, let reason):
            ["push": .string(push), "status": .int(status), "reason": .string(reason)]
        case .pushHeld(let push, let holder): ["push": .string(push), "by": .string(holder.rawValue)]
        case .pushDelivered(let push, let type): ["push": .string(push), "type": .string(type)]
        case .pushDiscarded(let push, let why): ["push": .string(push), "why": .string(why)]
        case .extensionFinished(let push, let outcome): ["push": .string(push), "outcome": .string(outcome)]
        case .notificationShown(let identifier, let messages, let text):
            ["identifier": .string(identifier), "messages": .array(messages.map(JSONValue.string)), "text": .string(text)]
        case .notificationRemoved(let identifier, let why): ["identifier": .string(identifier), "why": .string(why)]
        case .badge(let count): ["badge": .int(count)]
        case .appLaunched(let why), .appKilled(let why): ["why": .string(why)]
        case .completionHandler(let result, let late): ["result": .string(result), "late": .bool(late)]
        case .callReported(let callID): ["call": .string(callID)]
        case .callEnded(let callID, let outcome): ["call": .string(callID), "outcome": .string(outcome)]
        case .violation(let violation, let detail): ["violation": .string(violation.rawValue), "detail": .string(detail)]
        case .note(let text): ["text": .string(text)]
        }
    }
}
