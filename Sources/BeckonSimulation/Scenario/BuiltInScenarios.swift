import BeckonDelivery
import BeckonProtocol
import DeviceSimulator

/// The scenarios `beckon simulate` knows by name: one per seed situation (docs/seeds.md), each
/// checking what its name says. `beckon simulate --list` prints them.
public enum BuiltInScenarios {
    public static var all: [Scenario] {
        [
            foreground, backgroundWake, killed, reboot, offline, throttled, tapCases, serviceExtension, voipCall,
            voipNotReported, readElsewhere, sharedStore, filtering, repush, sceneForeground, completionThenSuspend,
            lockedRebootCall, callDuringWake, filteringOffline, extensionOffline,
        ]
    }

    public static func named(_ name: String) -> Scenario? { all.first { $0.name == name } }

    /// Seed 000, state G: the app in front holds the connection; nothing is pushed.
    static let foreground = Scenario(
        name: "foreground",
        summary: "The app is in front: messages arrive over the sync connection and no push is sent.",
        devices: [ScenarioDevice("phone", user: "alice")],
        steps: [
            .user("phone", .launch, at: 1),
            .post("m1", to: ["alice"], text: "Lunch at one?", at: 10),
            .post("m2", to: ["alice"], text: "Or two?", at: 20),
        ],
        duration: 40,
        checks: [
            .stored(device: "phone", messages: ["m1", "m2"]),
            .none("phone", "push-sent"),
            .notNotified(device: "phone", messages: ["m1", "m2"]),
            .count("phone", "sync-connected", ["role": "app"], min: 1, max: 1),
        ])

    /// Seed 000, state C: the app is suspended; a background push wakes it, it syncs within 30 s.
    static let backgroundWake = Scenario(
        name: "background-wake",
        summary: "The app is suspended: a background push wakes it, it syncs within its 30 s and is suspended again.",
        devices: [ScenarioDevice("phone", user: "alice")],
        steps: [
            .user("phone", .launch, at: 1),
            .user("phone", .home, at: 5),
            .post("m1", to: ["alice"], text: "Are you there?", at: 30),
        ],
        duration: 120,
        checks: [
            .stored(device: "phone", messages: ["m1"]),
            .count("phone", "push-delivered", ["type": "background"], min: 1, max: 1),
            .count("phone", "completion-handler", ["result": "newData"], min: 1, max: 1),
            .none("phone", "push-sent", ["type": "alert"]),
            .count("phone", "app-state", ["state": "suspended"], min: 2),
        ])

    /// Seed 000, killed: iOS drops the wake push; with no connection back in the window the
    /// server alerts.
    static let killed = Scenario(
        name: "killed",
        summary: "The user swiped the app away: iOS drops the wake push, no connection comes back, the server alerts instead.",
        devices: [ScenarioDevice("phone", user: "alice")],
        steps: [
            .user("phone", .launch, at: 1),
            .user("phone", .forceQuit, at: 5),
            .post("m1", to: ["alice"], text: "Call me", at: 20),
            .tap("phone", "m1", at: 150),
        ],
        duration: 180,
        checks: [
            .count("phone", "push-discarded", ["why": "force-quit"], min: 1),
            .notified(device: "phone", messages: ["m1"]),
            .opened(device: "phone", messages: ["m1"]),
            .stored(device: "phone", messages: ["m1"]),
            .showing(device: "phone", messages: [], at: nil),
        ])
}
