import BeckonDelivery
import BeckonProtocol
import DeviceSimulator

extension BuiltInScenarios {
    /// Seed 000: "If the user rebooted his device and never launched the app since the reboot".
    /// iOS holds the wake push (launches are deferred after boot, apns.md E.3); the server alerts
    /// when no connection comes; the held push still runs later and the app syncs — the user
    /// unlocked the phone meanwhile, without opening the app (before the first unlock the app could
    /// read neither its store nor its credential, apns.md E.9: `locked-reboot-call`).
    static let reboot = Scenario(
        name: "reboot",
        summary: "The phone restarted: iOS defers the wake, the server alerts meanwhile, the held push launches the app later.",
        devices: [ScenarioDevice("phone", user: "alice")],
        steps: [
            .user("phone", .launch, at: 1),
            .user("phone", .home, at: 5),
            .user("phone", .reboot, at: 20),
            .post("m1", to: ["alice"], text: "Dinner?", at: 30),
            .user("phone", .unlock, at: 60),
        ],
        duration: 400,
        checks: [
            .count("phone", "push-held", ["by": "ios"], min: 1, max: 1),
            .count("phone", "push-sent", ["reason": "unreachable-alert"], min: 1, max: 1),
            .notified(device: "phone", messages: ["m1"]),
            .count("phone", "app-launched", ["why": "push"], min: 1, max: 1),
            .stored(device: "phone", messages: ["m1"]),
        ])

    /// APNs store-and-forward: offline, APNs keeps only the newest push (apns.md E.1); back
    /// online, that one arrives and the app catches up on everything.
    static let offline = Scenario(
        name: "offline",
        summary:
            "The phone is offline: APNs keeps only the newest push, delivers it on reconnection, and a tap syncs everything.",
        devices: [ScenarioDevice("phone", user: "alice")],
        steps: [
            .user("phone", .launch, at: 1),
            .user("phone", .home, at: 5),
            .user("phone", .goOffline, at: 15),
            .post("m1", to: ["alice"], text: "First", at: 20),
            .post("m2", to: ["alice"], text: "Second", at: 25),
            .user("phone", .goOnline, at: 150),
            .tap("phone", "m2", at: 170),
        ],
        duration: 200,
        checks: [
            .count("phone", "push-held", ["by": "apns"], min: 2),
            .count("phone", "push-discarded", ["why": "replaced"], min: 1),
            .notified(device: "phone", messages: ["m2"]),
            .stored(device: "phone", messages: ["m1", "m2"]),
            .opened(device: "phone", messages: ["m2"]),
        ])

    /// Rule 3: at most three background pushes an hour. The fourth wake is owed, then sent as an
    /// alert when it stays owed too long.
    static let throttled = Scenario(
        name: "throttled",
        summary: "Messages every 40 s to a suspended app: three wakes, then the server holds back and alerts instead.",
        delivery: .with { $0.throttledAlertDelay = 120 },
        devices: [ScenarioDevice("phone", user: "alice")],
        steps: [
            .user("phone", .launch, at: 1),
            .user("phone", .home, at: 5),
            .post("m1", to: ["alice"], text: "One", at: 20),
            .post("m2", to: ["alice"], text: "Two", at: 60),
            .post("m3", to: ["alice"], text: "Three", at: 100),
            .post("m4", to: ["alice"], text: "Four", at: 140),
            .post("m5", to: ["alice"], text: "Five", at: 180),
        ],
        duration: 320,
        checks: [
            .count("phone", "push-sent", ["type": "background"], min: 3, max: 3),
            .count("phone", "push-sent", ["reason": "throttled-alert"], min: 1, max: 1),
            .stored(device: "phone", messages: ["m1", "m2", "m3"]),
            .notified(device: "phone", messages: ["m5"]),
        ])

    /// Rule 5: a connection that drops with messages unacknowledged gets a re-push.
    static let repush = Scenario(
        name: "repush",
        summary:
            "The network drops while a message is in flight: the server re-pushes, APNs holds it, the app catches up online.",
        devices: [ScenarioDevice("phone", user: "alice", ios: IOSPolicy(networkLatencySeconds: 2))],
        steps: [
            .user("phone", .launch, at: 1),
            .post("m1", to: ["alice"], text: "In flight", at: 10),
            .user("phone", .goOffline, at: 11),
            .user("phone", .goOnline, at: 90),
        ],
        duration: 140,
        checks: [
            .count("phone", "push-sent", ["reason": "repush"], min: 1),
            .count("phone", "push-held", ["by": "apns"], min: 1),
            .stored(device: "phone", messages: ["m1"]),
        ])
}
