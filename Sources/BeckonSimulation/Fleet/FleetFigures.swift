import BeckonJSON
import DeviceSimulator

/// What a fleet run measured: whether each message reached its user (stored by the app, or
/// shown in a notification), how fast, at what cost in pushes, and what iOS would punish.
public struct FleetFigures: Sendable {
    public struct Posted: Sendable {
        var id: String
        var device: String
        var behaviour: FleetBehaviour
        var at: Double
    }

    public var messages: Int
    public var reached: Int
    /// Virtual seconds from post to the user, over the messages that reached.
    public var latencyP50: Double?
    public var latencyP99: Double?
    public var pushesSent: Int
    public var pushesByReason: [String: Int]
    public var backgroundSent: Int
    /// Background pushes iOS ran the app for.
    public var backgroundRun: Int
    public var violations: [String: Int]
    /// Per behaviour: messages, and how many reached.
    public var byBehaviour: [FleetBehaviour: (messages: Int, reached: Int)]

    public var reachedFraction: Double { messages == 0 ? 0 : Double(reached) / Double(messages) }
    public var pushesPerReached: Double { reached == 0 ? 0 : Double(pushesSent) / Double(reached) }
    public var wakeSuccess: Double { backgroundSent == 0 ? 0 : Double(backgroundRun) / Double(backgroundSent) }

    /// Reads the figures off the timeline.
    init(posted: [Posted], events: [TimelineEvent]) {
        var firstSeen: [String: Double] = [:]
        func seen(_ device: String, _ id: String, _ time: Double) {
            let key = device + "\u{1}" + id
            if firstSeen[key].map({ time < $0 }) ?? true { firstSeen[key] = time }
        }
        var pushesByReason: [String: Int] = [:]
        var violations: [String: Int] = [:]
        var backgroundSent = 0
        var backgroundRun = 0
        for event in events {
            switch event.what {
            case .messageStored(let id): seen(event.device, id, event.time)
            case .notificationShown(_, let messages, _): for id in messages { seen(event.device, id, event.time) }
            case .pushSent(_, let type, _, let reason):
                pushesByReason[reason ?? type, default: 0] += 1
                if type == "background" { backgroundSent += 1 }
            case .pushDelivered(_, "background"): backgroundRun += 1
            case .violation(let kind, _): violations[kind.rawValue, default: 0] += 1
            default: break
            }
        }
        var latencies: [Double] = []
        var byBehaviour: [FleetBehaviour: (messages: Int, reached: Int)] = [:]
        for message in posted {
            let reachedAt = firstSeen[message.device + "\u{1}" + message.id]
            if let reachedAt { latencies.append(max(0, reachedAt - message.at)) }
            byBehaviour[message.behaviour, default: (0, 0)].messages += 1
            if reachedAt != nil { byBehaviour[message.behaviour, default: (0, 0)].reached += 1 }
        }
        latencies.sort()
        func percentile(_ p: Double) -> Double? {
            latencies.isEmpty ? nil : latencies[min(latencies.count - 1, Int((p * Double(latencies.count)).rounded(.up)) - 1)]
        }
        self.messages = posted.count
        self.reached = latencies.count
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
