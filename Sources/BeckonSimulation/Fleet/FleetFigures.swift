import BeckonJSON
import DeviceSimulator

/// What a fleet run measured: whether each message reached its user — shown in a notification, or
/// synced while the app was in front (stored alone is not enough: a message the user never saw has
/// not reached them) — how fast, at what cost in pushes, and what iOS would punish. Stored and
/// shown are counted apart too; shown twice over: from the server's receipts (what an operator
/// sees, docs/trace.md) and on the phones' timelines, with the difference explained.
public struct FleetFigures: Sendable {
    public struct Posted: Sendable {
        var id: String
        var device: String
        var behaviour: FleetBehaviour
        var at: Double
    }

    /// Per behaviour (or in all): messages, how many were stored, shown, and reached the user.
    public struct Counts: Sendable, Hashable {
        public var messages = 0
        public var stored = 0
        /// Shown, by the server's `shown` receipts.
        public var shown = 0
        /// Shown in a notification on the phone's timeline.
        public var shownOnTimeline = 0
        /// Shown, the receipt queued on the phone and not sent yet.
        public var shownQueued = 0
        /// Shown by iOS itself, the app not in front since: iOS tells it only then.
        public var shownAwaitingApp = 0
        /// Receipts and timeline disagree: shown, known to the SDK, never reported; or reported,
        /// never shown.
        public var shownDisagreeing = 0
        /// Reported shown by the extension, declined by the app in front (`ShownStatus.declinedInFront`).
        public var shownDeclinedInFront = 0
        public var reached = 0
        /// Reached within `FleetFigures.promptSeconds` of the post.
        public var reachedPromptly = 0
    }

    /// "On a screen within two minutes of its post" (the bar for a chat app).
    public static let promptSeconds = 120.0

    public var messages: Int { all.messages }
    public var stored: Int { all.stored }
    public var shown: Int { all.shown }
    public var shownOnTimeline: Int { all.shownOnTimeline }
    /// Where the receipts and the run's own record disagree (`TraceCheck`), as sentences.
    public var traceFindings: [String] = []
    public var reached: Int { all.reached }
    public var all: Counts
    /// Virtual seconds from post to the user, over the messages that reached.
    public var latencyP50: Double?
    public var latencyP99: Double?
    public var pushesSent: Int
    public var pushesByReason: [String: Int]
    public var backgroundSent: Int
    /// Background pushes iOS ran the app for.
    public var backgroundRun: Int
    public var violations: [String: Int]
    public var byBehaviour: [FleetBehaviour: Counts]

    public var reachedFraction: Double { messages == 0 ? 0 : Double(reached) / Double(messages) }
    public var storedFraction: Double { messages == 0 ? 0 : Double(stored) / Double(messages) }
    public var shownFraction: Double { messages == 0 ? 0 : Double(shown) / Double(messages) }
    public var shownOnTimelineFraction: Double { messages == 0 ? 0 : Double(shownOnTimeline) / Double(messages) }
    public var promptFraction: Double { messages == 0 ? 0 : Double(all.reachedPromptly) / Double(messages) }
    public var pushesPerReached: Double { reached == 0 ? 0 : Double(pushesSent) / Double(reached) }
    public var wakeSuccess: Double { backgroundSent == 0 ? 0 : Double(backgroundRun) / Double(backgroundSent) }

    /// Reads the figures off the timeline; `shown` is each message's status on its phone from
    /// the server's receipts (`TraceCheck.shownStatuses`: message → device → status).
    init(posted: [Posted], events: [TimelineEvent], shown statuses: [String: [String: ShownStatus]]) {
        var firstStored: [String: Double] = [:]
        var firstShown: [String: Double] = [:]
        var firstReached: [String: Double] = [:]
        func note(_ table: inout [String: Double], _ key: String, _ time: Double) {
            if table[key].map({ time < $0 }) ?? true { table[key] = time }
        }
        var inFront: Set<String> = []
        var pushesByReason: [String: Int] = [:]
        var violations: [String: Int] = [:]
        var backgroundSent = 0
        var backgroundRun = 0
        for event in events {
            switch event.what {
            case .appState(let state):
                if state == .foreground || state == .inactive { inFront.insert(event.device) } else { inFront.remove(event.device) }
            case .messageStored(let id):
                let key = event.device + "\u{1}" + id
                note(&firstStored, key, event.time)
                // Synced with the app in front: the app shows it itself.
                if inFront.contains(event.device) { note(&firstReached, key, event.time) }
            case .notificationShown(_, let messages, _):
                for id in messages {
                    let key = event.device + "\u{1}" + id
                    note(&firstShown, key, event.time)
                    note(&firstReached, key, event.time)
                }
            case .pushSent(_, let type, _, let reason):
                pushesByReason[reason ?? type, default: 0] += 1
                if type == "background" { backgroundSent += 1 }
            case .pushDelivered(_, "background"): backgroundRun += 1
            case .violation(let kind, _): violations[kind.rawValue, default: 0] += 1
            default: break
            }
        }
        var latencies: [Double] = []
        var all = Counts()
        var byBehaviour: [FleetBehaviour: Counts] = [:]
        for message in posted {
            let key = message.device + "\u{1}" + message.id
            var counts = Counts(messages: 1)
            if firstStored[key] != nil { counts.stored = 1 }
            if firstShown[key] != nil { counts.shownOnTimeline = 1 }
            switch statuses[message.id]?[message.device] ?? (firstShown[key] != nil ? .lost : .notShown) {
            case .reported: counts.shown = 1
            case .declinedInFront:
                counts.shown = 1
                counts.shownDeclinedInFront = 1
            case .queued: counts.shownQueued = 1
            case .awaitingApp: counts.shownAwaitingApp = 1
            case .lost, .unfounded: counts.shownDisagreeing = 1
            case .notShown: break
            }
            if let reachedAt = firstReached[key] {
                let latency = max(0, reachedAt - message.at)
                latencies.append(latency)
                counts.reached = 1
                if latency <= Self.promptSeconds { counts.reachedPromptly = 1 }
            }
            all.add(counts)
            byBehaviour[message.behaviour, default: Counts()].add(counts)
        }
        latencies.sort()
        func percentile(_ p: Double) -> Double? {
            latencies.isEmpty ? nil : latencies[min(latencies.count - 1, Int((p * Double(latencies.count)).rounded(.up)) - 1)]
        }
        self.all = all
        self.latencyP50 = percentile(0.5)
        self.latencyP99 = percentile(0.99)
        self.pushesSent = pushesByReason.values.reduce(0, +)
        self.pushesByReason = pushesByReason
        self.backgroundSent = backgroundSent
        self.backgroundRun = backgroundRun
        self.violations = violations
        self.byBehaviour = byBehaviour
    }
}

extension FleetFigures.Counts {
    mutating func add(_ other: FleetFigures.Counts) {
        messages += other.messages
        stored += other.stored
        shown += other.shown
        shownOnTimeline += other.shownOnTimeline
        shownQueued += other.shownQueued
        shownAwaitingApp += other.shownAwaitingApp
        shownDisagreeing += other.shownDisagreeing
        shownDeclinedInFront += other.shownDeclinedInFront
        reached += other.reached
        reachedPromptly += other.reachedPromptly
    }

    var json: JSONValue {
        [
            "messages": .int(messages), "stored": .int(stored), "shown": .int(shown), "shownOnTimeline": .int(shownOnTimeline),
            "shownNotYetReported": .int(shownQueued + shownAwaitingApp), "shownQueuedOnPhone": .int(shownQueued),
            "shownAwaitingApp": .int(shownAwaitingApp), "shownDisagreeing": .int(shownDisagreeing),
            "shownDeclinedInFront": .int(shownDeclinedInFront), "reached": .int(reached),
            "reachedWithin120Seconds": .int(reachedPromptly),
        ]
    }
}
