import DeviceSimulator

/// How a phone in a fleet is used: its app build, its iOS and what its user does.
public enum FleetBehaviour: String, CaseIterable, Sendable, Hashable {
    /// Opened before, not in front now: a background push may launch it.
    case background
    /// In front for the whole run: messages arrive over its sync session.
    case foreground
    /// Swiped away: iOS launches it for no background push (apns.md E.3).
    case killed
    /// Offline for the first half of the run, then back (APNs holds the newest push, apns.md E.1).
    case offline
    /// Restarted at the start and unlocked a minute later without opening the app: background
    /// launches wait five minutes (apns.md E.3); protected data is readable from the unlock (E.9).
    case rebooted
    /// iOS declines half its background pushes (energy, thermal: "doesn't guarantee", apns.md E.3).
    case lowPower = "low-power"
    /// The app ships a notification service extension.
    case serviceExtension = "extension"
    /// Its extension also has the filtering entitlement.
    case filtering

    var traits: AppTraits {
        switch self {
        case .serviceExtension: AppTraits(serviceExtension: true)
        case .filtering: AppTraits(serviceExtension: true, filtering: true)
        default: AppTraits()
        }
    }

    func policy(reclaimAfter lifetime: Double) -> IOSPolicy {
        var policy = IOSPolicy(suspendedLifetimeSeconds: lifetime)
        if self == .lowPower { policy.backgroundDropRate = 0.5 }
        return policy
    }

    /// What the user does, as steps at virtual times.
    func steps(duration: Double) -> [(at: Double, action: UserAction)] {
        switch self {
        case .foreground: [(1, .launch)]
        case .killed: [(1, .forceQuit)]
        case .offline: [(1, .goOffline), (duration / 2, .goOnline)]
        case .rebooted: [(1, .reboot), (61, .unlock)]
        case .background, .lowPower, .serviceExtension, .filtering: []
        }
    }
}

/// The share of each behaviour in a fleet: `background=0.5,killed=0.1,...`; what the list
/// leaves is `background`.
public struct FleetMix: Sendable, Hashable, CustomStringConvertible {
    public private(set) var fractions: [FleetBehaviour: Double]

    public init(_ fractions: [FleetBehaviour: Double]) { self.fractions = fractions }

    /// Parses `NAME=FRACTION,...`.
    public init(parsing text: String) throws(ScenarioError) {
        var fractions: [FleetBehaviour: Double] = [:]
        for part in text.split(separator: ",") where !part.isEmpty {
            let pieces = part.split(separator: "=", maxSplits: 1).map(String.init)
            guard pieces.count == 2, let fraction = Double(pieces[1]), fraction >= 0, fraction <= 1 else {
                throw ScenarioError("--mix", "\"\(part)\" is not NAME=FRACTION with a fraction from 0 to 1")
            }
            guard let behaviour = FleetBehaviour(rawValue: pieces[0]) else {
                throw ScenarioError(
                    "--mix",
                    "unknown behaviour \"\(pieces[0])\"; expected \(FleetBehaviour.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
            fractions[behaviour] = fraction
        }
        guard fractions.values.reduce(0, +) <= 1.000_001 else {
            throw ScenarioError("--mix", "the fractions add up to more than 1")
        }
        self.fractions = fractions
    }

    /// The default mix: most phones in the background, some in front, some killed, offline,
    /// restarted or low on power, a third with an extension.
    public static let standard = FleetMix([
        .foreground: 0.02, .killed: 0.1, .offline: 0.05, .rebooted: 0.05, .lowPower: 0.1, .serviceExtension: 0.2,
        .filtering: 0.1,
    ])

    /// The behaviour of each of `count` phones, in a seeded order.
    func assign(_ count: Int, seed: UInt64) -> [FleetBehaviour] {
        var behaviours: [FleetBehaviour] = []
        for behaviour in FleetBehaviour.allCases where behaviour != .background {
            behaviours += Array(repeating: behaviour, count: Int((fractions[behaviour] ?? 0) * Double(count)))
        }
        behaviours += Array(repeating: .background, count: max(0, count - behaviours.count))
        var random = SeededRandom(seed: seed)
        return random.shuffled(behaviours)
    }

    public var description: String {
        FleetBehaviour.allCases.compactMap { behaviour in fractions[behaviour].map { "\(behaviour.rawValue)=\($0)" } }
            .joined(separator: ",")
    }
}
