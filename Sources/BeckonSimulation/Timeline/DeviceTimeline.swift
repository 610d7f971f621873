import DeviceSimulator

/// One lane's events (a device, or the server) turned into what the timeline draws: spans with
/// a start and an end, push tracks, and point marks. Pairing starts with ends happens here, once,
/// so the drawing code only places shapes. A span still open when the run ends lasts to `end`.
struct DeviceTimeline {
    struct StateSpan { var state: AppState, start: Double, end: Double }
    struct Span { var start: Double, end: Double }
    /// `closed` is false while the session was still up when the run ended.
    struct Session { var role: String, start: Double, end: Double, code: Int?, closed: Bool }
    struct ExtensionRun { var push: String, start: Double, end: Double, outcome: String? }
    struct NotificationSpan { var identifier: String, text: String, messages: [String], start: Double, end: Double, why: String? }
    struct Point { var time: Double, value: String }
    struct Badge { var time: Double, count: Int }

    struct PushTrack {
        enum Stage: Equatable {
            case sent, accepted
            case held(TimelineEvent.Holder)
            case delivered
            case discarded(String)
            case rejected(Int, String)
        }
        var id: String
        var type: String?
        var priority: Int?
        var reason: String?
        var stages: [(time: Double, stage: Stage)] = []
    }

    struct Mark {
        enum Style { case plain, user, note, alarm, violation }
        var time: Double
        var label: String
        var detail: String
        var style: Style
    }

    let name: String
    private(set) var states: [StateSpan] = []
    private(set) var offline: [Span] = []
    private(set) var sessions: [Session] = []
    private(set) var pushes: [PushTrack] = []
    private(set) var extensionRuns: [ExtensionRun] = []
    private(set) var notifications: [NotificationSpan] = []
    private(set) var badges: [Badge] = []
    private(set) var stored: [Point] = []
    private(set) var posted: [Point] = []
    private(set) var marks: [Mark] = []

    /// Sync roles to draw a sub-row for: `app` and `extension` always, then any other seen.
    var roles: [String] {
        let others = Set(sessions.map(\.role)).subtracting(["app", "extension"]).sorted()
        return ["app", "extension"] + others
    }

    var violationTimes: [Double] { marks.filter { $0.style == .violation }.map(\.time) }

    /// `events` are this lane's, in time order.
    init(name: String, events: [TimelineEvent], end: Double) {
        self.name = name
        var openSessions: [String: Int] = [:]
        var openRuns: [String: Int] = [:]
        var openNotifications: [String: Int] = [:]
        var pushIndex: [String: Int] = [:]
        var offlineSince: Double?

        func track(_ push: String, _ time: Double, _ stage: PushTrack.Stage, type: String? = nil) {
            if pushIndex[push] == nil {
                pushes.append(PushTrack(id: push))
                pushIndex[push] = pushes.count - 1
            }
            let index = pushIndex[push]!
            pushes[index].stages.append((time, stage))
            if let type { pushes[index].type = pushes[index].type ?? type }
        }
        func mark(_ time: Double, _ label: String, _ style: Mark.Style, detail: String? = nil) {
            marks.append(Mark(time: time, label: label, detail: detail ?? label, style: style))
        }

        for event in events {
            let t = event.time
            switch event.what {
            case .appState(let state):
                if let last = states.indices.last { states[last].end = t }
                states.append(StateSpan(state: state, start: t, end: end))
            case .network(let online):
                if online, let since = offlineSince {
                    offline.append(Span(start: since, end: t))
                    offlineSince = nil
                } else if !online, offlineSince == nil {
                    offlineSince = t
                }
            case .syncConnected(let role):
                sessions.append(Session(role: role, start: t, end: end, code: nil, closed: false))
                openSessions[role] = sessions.count - 1
            case .syncDisconnected(let role, let code):
                guard let index = openSessions.removeValue(forKey: role) else { continue }
                sessions[index].end = t
                sessions[index].code = code
                sessions[index].closed = true
            case .pushSent(let push, let type, let priority, let reason):
                track(push, t, .sent, type: type)
                let index = pushIndex[push]!
                pushes[index].priority = priority
                pushes[index].reason = reason
            case .pushAccepted(let push): track(push, t, .accepted)
            case .pushRejected(let push, let status, let reason): track(push, t, .rejected(status, reason))
            case .pushHeld(let push, let holder): track(push, t, .held(holder))
            case .pushDelivered(let push, let type): track(push, t, .delivered, type: type)
            case .pushDiscarded(let push, let why): track(push, t, .discarded(why))
            case .extensionStarted(let push):
                extensionRuns.append(ExtensionRun(push: push, start: t, end: end, outcome: nil))
                openRuns[push] = extensionRuns.count - 1
            case .extensionFinished(let push, let outcome):
                if let index = openRuns.removeValue(forKey: push) {
                    extensionRuns[index].end = t
                    extensionRuns[index].outcome = outcome
                } else {
                    mark(t, "extension: \(outcome)", .plain)
                }
            case .notificationShown(let identifier, let messages, let text):
                // Showing an identifier that is on screen replaces that notification.
                if let index = openNotifications[identifier] {
                    notifications[index].end = t
                    notifications[index].why = "replaced"
                }
                notifications.append(
                    NotificationSpan(identifier: identifier, text: text, messages: messages, start: t, end: end, why: nil))
                openNotifications[identifier] = notifications.count - 1
            case .notificationRemoved(let identifier, let why):
                guard let index = openNotifications.removeValue(forKey: identifier) else { continue }
                notifications[index].end = t
                notifications[index].why = why
            case .badge(let count): badges.append(Badge(time: t, count: count))
            case .messageStored(let id): stored.append(Point(time: t, value: id))
            case .messagePosted(let id): posted.append(Point(time: t, value: id))
            case .appLaunched(let why): mark(t, "launched (\(why))", .plain)
            case .appKilled(let why): mark(t, "killed: \(why)", .alarm)
            case .completionHandler(let result, let late):
                mark(t, late ? "completion \(result) LATE" : "completion \(result)", late ? .alarm : .plain)
            case .callReported(let call):
                mark(t, "call reported", .plain, detail: "call \(call) reported")
            case .callEnded(let call, let outcome):
                mark(t, "call ended: \(outcome)", .plain, detail: "call \(call) ended: \(outcome)")
            case .violation(let violation, let detail):
                mark(t, "! \(violation.rawValue)", .violation, detail: "\(violation.rawValue): \(detail)")
            case .user(let action): mark(t, action, .user, detail: "user: \(action)")
            case .note(let text): mark(t, text, .note)
            }
        }
        if let since = offlineSince { offline.append(Span(start: since, end: end)) }
    }
}
