import BeckonDelivery
import BeckonProtocol
import DeviceSimulator

// A small Swift DSL for scenarios: the built-in ones read like their JSON files.

extension ScenarioStep {
    /// The user does something with `device`.
    public static func user(_ device: String, _ action: UserAction, at time: Double) -> ScenarioStep {
        ScenarioStep(at: time, .user(device: device, action))
    }

    public static func tap(_ device: String, _ message: String, at time: Double) -> ScenarioStep {
        ScenarioStep(at: time, .tap(device: device, message: message))
    }

    public static func swipeAway(_ device: String, _ message: String, at time: Double) -> ScenarioStep {
        ScenarioStep(at: time, .swipeAway(device: device, message: message))
    }

    public static func read(_ device: String, _ messages: [String], at time: Double) -> ScenarioStep {
        ScenarioStep(at: time, .read(device: device, messages: messages))
    }

    /// The backend posts a message named `name` to `users`.
    public static func post(
        _ name: String, to users: [String], text: String, kind: MessageKind = .message, urgency: MessageUrgency? = nil,
        at time: Double
    ) -> ScenarioStep {
        ScenarioStep(at: time, .post(name: name, to: users, text: text, kind: kind, urgency: urgency))
    }

    public static func endCall(_ call: String, _ outcome: CallEndOutcome, at time: Double) -> ScenarioStep {
        ScenarioStep(at: time, .endCall(call: call, outcome: outcome))
    }
}

extension ScenarioCheck {
    /// At least `min` (and at most `max`) events of `kind` on `device` with these fields.
    public static func count(
        _ device: String, _ kind: String, _ fields: [String: String] = [:], min: Int = 1, max: Int? = nil
    ) -> ScenarioCheck {
        .events(device: device, kind: kind, fields: fields, min: min, max: max)
    }

    /// None of them.
    public static func none(_ device: String, _ kind: String, _ fields: [String: String] = [:]) -> ScenarioCheck {
        .events(device: device, kind: kind, fields: fields, min: 0, max: 0)
    }
}

extension DeliveryPolicy {
    /// The default policy with some settings changed: `.with { $0.throttledAlertDelay = 120 }`.
    public static func with(_ change: (inout DeliveryPolicy) -> Void) -> DeliveryPolicy {
        var policy = DeliveryPolicy()
        change(&policy)
        return policy
    }
}
