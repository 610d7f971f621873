import BeckonDelivery
import BeckonProtocol
import DeviceSimulator

/// The iOS rules around the app itself (apns.md E.9; docs/simulator.md, "The app's process"):
/// scenes, suspension right after the completion handler, the first unlock after a restart, one
/// app session for a call and a wake at once.
extension BuiltInScenarios {
    /// A scene-based app — every SwiftUI app — gets none of the app delegate's lifecycle calls,
    /// only UIKit's notifications: the SDK must hold its session from those.
    static let sceneForeground = Scenario(
        name: "scene-foreground",
        summary: "A scene-based app: no app-delegate lifecycle call, only UIKit's notifications; the session comes and goes with them.",
        devices: [ScenarioDevice("phone", user: "alice")],
        steps: [
            .user("phone", .launch, at: 1),
            .post("m1", to: ["alice"], text: "In front", at: 10),
            .user("phone", .home, at: 20),
            .post("m2", to: ["alice"], text: "Behind", at: 50),
        ],
        duration: 100,
        checks: [
            .stored(device: "phone", messages: ["m1", "m2"]),
            .notNotified(device: "phone", messages: ["m1"]),
            .count("phone", "sync-connected", ["role": "app"], min: 2),
            // Leaving the front: `bye`, answered by the server's close, before the suspension.
            .count("phone", "sync-disconnected", ["role": "app", "code": "1000"], min: 2),
            .count("phone", "push-delivered", ["type": "background"], min: 1, max: 1),
        ])

    /// iOS may suspend the app the moment it calls its last completion handler (the model does):
    /// `bye`, the lease and the store must be done by then.
    static let completionThenSuspend = Scenario(
        name: "completion-then-suspend",
        summary: "Suspended as soon as the completion handler is called: the SDK said bye and let the lease go first.",
        devices: [ScenarioDevice("phone", user: "alice")],
        steps: [
            .user("phone", .launch, at: 1),
            .user("phone", .home, at: 5),
            .post("m1", to: ["alice"], text: "Wake up", at: 30),
            .post("m2", to: ["alice"], text: "Again", at: 70),
        ],
        duration: 120,
        checks: [
            .stored(device: "phone", messages: ["m1", "m2"]),
            .count("phone", "completion-handler", ["result": "newData"], min: 2, max: 2),
            // The foreground session's and each background session's: none dropped by a suspension.
            .count("phone", "sync-disconnected", ["role": "app", "code": "1000"], min: 3),
            .none("phone", "app-killed"),
            .count("phone", "app-state", ["state": "suspended"], min: 3),
        ])

    /// A call after a restart, before the first unlock: nothing protected can be read, so the app
    /// reports the call from the push alone; no session can follow it, so it stops ringing as
    /// missed before the app is suspended; unlocked, the app syncs as usual.
    static let lockedRebootCall = Scenario(
        name: "locked-reboot-call",
        summary: "A call before the first unlock: reported from the push alone, ended as missed when no session can follow it; unlocked, the app syncs.",
        devices: [ScenarioDevice("phone", user: "alice", app: AppTraits(voip: true))],
        steps: [
            .user("phone", .launch, at: 1),
            .user("phone", .home, at: 5),
            .user("phone", .reboot, at: 20),
            .post("c1", to: ["alice"], text: "Bob calling", kind: .call, at: 30),
            .user("phone", .launch, at: 150),
            .post("m1", to: ["alice"], text: "Missed you", at: 160),
        ],
        duration: 200,
        checks: [
            .count("phone", "push-delivered", ["type": "voip"], min: 1, max: 1),
            .count("phone", "app-launched", ["why": "voip"], min: 1, max: 1),
            .count("phone", "call-reported", [:], min: 1, max: 1),
            .count("phone", "call-ended", ["outcome": "missed"], min: 1, max: 1),
            .none("phone", "app-killed", ["why": "voip-not-reported"]),
            .stored(device: "phone", messages: ["m1"]),
        ])

    /// A call rings while a wake push syncs: both need the app's session, and a second session of
    /// the app's role would replace the first (4001), the two taking turns closing each other.
    static let callDuringWake = Scenario(
        name: "call-during-wake",
        summary: "A call rings while a wake push syncs: one app session serves both, none replaces the other.",
        devices: [ScenarioDevice("phone", user: "alice", app: AppTraits(voip: true))],
        steps: [
            .user("phone", .launch, at: 1),
            .user("phone", .home, at: 5),
            .post("m1", to: ["alice"], text: "Are you free?", at: 30),
            .post("c1", to: ["alice"], text: "Bob calling", kind: .call, at: 30),
            .endCall("c1", .answeredElsewhere, at: 45),
        ],
        duration: 100,
        checks: [
            .stored(device: "phone", messages: ["m1"]),
            .count("phone", "call-reported", [:], min: 1, max: 1),
            .count("phone", "call-ended", ["outcome": "answered-elsewhere"], min: 1, max: 1),
            .none("phone", "sync-disconnected", ["code": "4001"]),
            .count("phone", "completion-handler", [:], min: 1),
            .none("phone", "completion-handler", ["late": "true"]),
        ])
}
