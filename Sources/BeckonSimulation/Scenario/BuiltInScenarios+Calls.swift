import BeckonDelivery
import BeckonProtocol
import DeviceSimulator

extension BuiltInScenarios {
    /// Rule 6: a call goes to PushKit; the app reports it to CallKit at once; answered on another
    /// device, it stops ringing here.
    static let voipCall = Scenario(
        name: "voip-call",
        summary: "A call rings through PushKit and CallKit; answered on another device, it stops ringing on this one.",
        devices: [ScenarioDevice("phone", user: "alice", app: AppTraits(voip: true))],
        steps: [
            .user("phone", .launch, at: 1),
            .user("phone", .forceQuit, at: 5),
            .post("c1", to: ["alice"], text: "Bob calling", kind: .call, at: 20),
            .endCall("c1", .answeredElsewhere, at: 30),
        ],
        duration: 70,
        checks: [
            .count("phone", "push-delivered", ["type": "voip"], min: 1, max: 1),
            .count("phone", "call-reported", [:], min: 1, max: 1),
            .count("phone", "call-ended", ["outcome": "answered-elsewhere"], min: 1, max: 1),
            .none("phone", "app-killed", ["why": "voip-not-reported"]),
        ])

    /// Seed 003: an app that returns from its PushKit handler without reporting a call is
    /// killed, and after a few times iOS stops delivering its VoIP pushes.
    static let voipNotReported = Scenario(
        name: "voip-not-reported",
        summary: "Seed 003: the app never reports its VoIP pushes; iOS kills it each time and then stops delivering them.",
        devices: [ScenarioDevice("phone", user: "alice", app: AppTraits(voip: true, reportsCalls: false))],
        steps: [
            .user("phone", .launch, at: 1),
            .user("phone", .home, at: 5),
            .post("c1", to: ["alice"], text: "Call one", kind: .call, at: 20),
            .post("c2", to: ["alice"], text: "Call two", kind: .call, at: 40),
            .post("c3", to: ["alice"], text: "Call three", kind: .call, at: 60),
            .post("c4", to: ["alice"], text: "Call four", kind: .call, at: 80),
        ],
        duration: 100,
        checks: [
            .count("phone", "app-killed", ["why": "voip-not-reported"], min: 3, max: 3),
            .count("phone", "push-discarded", ["why": "voip-blocked"], min: 1),
            .count("phone", "violation", ["violation": "voip-without-call"], min: 3, max: 3),
        ],
        allowedViolations: [.voipWithoutCall])
}
