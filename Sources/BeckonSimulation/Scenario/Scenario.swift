import BeckonDelivery
import BeckonProtocol
import DeviceSimulator

/// A script for simulated phones against a real server: who has which phone, what the users
/// and the backend do when, and what must be true (docs/simulator.md, "Writing a scenario").
/// Written in Swift (`BuiltInScenarios`) or as a JSON file of the same shape.
public struct Scenario: Sendable {
    public var name: String
    /// One sentence: what the scenario shows.
    public var summary: String
    /// Virtual seconds per wall-clock second; server windows and iOS budgets run at it together.
    public var timeScale: Double
    public var seed: UInt64
    /// The app's delivery strategy on the server.
    public var strategy: DeliveryStrategy
    /// The app's delivery settings (virtual seconds; the runner divides them by `timeScale`).
    public var delivery: DeliveryPolicy
    public var devices: [ScenarioDevice]
    public var steps: [ScenarioStep]
    /// How long the run lasts, in virtual seconds.
    public var duration: Double
    public var checks: [ScenarioCheck]
    /// Violations the scenario provokes on purpose (`voip-not-reported`); any other fails it.
    public var allowedViolations: Set<TimelineEvent.Violation>

    public init(
        name: String, summary: String, timeScale: Double = 50, seed: UInt64 = 1, strategy: DeliveryStrategy = .wake,
        delivery: DeliveryPolicy = DeliveryPolicy(), devices: [ScenarioDevice], steps: [ScenarioStep], duration: Double,
        checks: [ScenarioCheck], allowedViolations: Set<TimelineEvent.Violation> = []
    ) {
        self.name = name
        self.summary = summary
        self.timeScale = timeScale
        self.seed = seed
        self.strategy = strategy
        self.delivery = delivery
        self.devices = devices
        self.steps = steps
        self.duration = duration
        self.checks = checks
        self.allowedViolations = allowedViolations
    }
}

/// One phone in a scenario.
public struct ScenarioDevice: Sendable, Hashable {
    public var name: String
    /// The user it is registered for (several phones may share one).
    public var user: String
    public var app: AppTraits
    public var ios: IOSPolicy

    public init(_ name: String, user: String, app: AppTraits = AppTraits(), ios: IOSPolicy = IOSPolicy()) {
        self.name = name
        self.user = user
        self.app = app
        self.ios = ios
    }
}

/// Something that happens at a virtual time.
public struct ScenarioStep: Sendable, Hashable {
    public var at: Double
    public var action: ScenarioAction

    public init(at: Double, _ action: ScenarioAction) {
        self.at = at
        self.action = action
    }
}

/// What a step does. Messages and calls are named by the scenario (`as`), and their names are
/// used by later steps and checks.
public enum ScenarioAction: Sendable, Hashable {
    /// The user does something with the phone (`tap` and `swipe-away` name a message: the
    /// notification that shows it).
    case user(device: String, UserAction)
    case tap(device: String, message: String)
    case swipeAway(device: String, message: String)
    /// The user reads these messages in the app on this phone (it must be running).
    case read(device: String, messages: [String])
    /// The backend posts a message (`POST /v1/messages`).
    case post(name: String, to: [String], text: String, kind: MessageKind, urgency: MessageUrgency?)
    /// The backend ends a call (`POST /v1/calls/{id}/end`).
    case endCall(call: String, outcome: CallEndOutcome)
}

/// What must be true when the run ends (or, for events, over the whole run).
public enum ScenarioCheck: Sendable, Hashable {
    /// These messages are in the phone's store.
    case stored(device: String, messages: [String])
    /// A notification showed each of these messages at some point.
    case notified(device: String, messages: [String])
    /// No notification ever showed any of them.
    case notNotified(device: String, messages: [String])
    /// The notifications on screen show exactly these messages: at the end, or at virtual
    /// time `at`.
    case showing(device: String, messages: [String], at: Double?)
    /// The app opened each of these once after a tap, and nothing else.
    case opened(device: String, messages: [String])
    /// Events of `kind` on this phone whose fields include `fields`: at least `min`, at most `max`.
    case events(device: String, kind: String, fields: [String: String], min: Int, max: Int?)
}
