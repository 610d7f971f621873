import BeckonDelivery
import BeckonProtocol
import DeviceSimulator

extension BuiltInScenarios {
    /// Seed 001's four cases and `appIsStarting`: a push that arrives is synced, never opened; a
    /// tap opens its message once, whether the app was in the background or not running.
    static let tapCases = Scenario(
        name: "tap-cases",
        summary:
            "Seed 001: arrivals in the background and at launch sync; taps from the background and from cold open once; an arrival while inactive is not a tap.",
        // Four wakes in the script: the server's hourly allowance is raised so the last is not
        // held back (rule 3 is the `throttled` scenario's subject).
        delivery: .with { $0.backgroundPushesPerHour = 6 },
        devices: [ScenarioDevice("phone", user: "alice", ios: IOSPolicy(rebootLaunchDeferralSeconds: 0))],
        steps: [
            .user("phone", .launch, at: 1),
            // Case 1: arrives while the app runs in the background.
            .user("phone", .home, at: 5),
            .post("m1", to: ["alice"], text: "Case one", at: 6),
            // Case 3: the user taps it while the app is in the background.
            .tap("phone", "m1", at: 30),
            // Case 2: arrives while the app is not running (restarted; no deferral here).
            .user("phone", .home, at: 40),
            .user("phone", .reboot, at: 45),
            .post("m2", to: ["alice"], text: "Case two", at: 50),
            // Case 4: the user taps while the app is not running (swiped away, so the server alerts).
            .user("phone", .forceQuit, at: 80),
            .post("m3", to: ["alice"], text: "Case four", at: 85),
            .tap("phone", "m3", at: 170),
            // appIsStarting: a held push arrives while the app switcher is open.
            .user("phone", .goOffline, at: 180),
            .post("m4", to: ["alice"], text: "While inactive", at: 185),
            .user("phone", .openSwitcher, at: 190),
            .user("phone", .goOnline, at: 195),
        ],
        duration: 230,
        checks: [
            .opened(device: "phone", messages: ["m1", "m3"]),
            .stored(device: "phone", messages: ["m1", "m2", "m3", "m4"]),
            .count("phone", "app-launched", ["why": "push"], min: 1),
            .count("phone", "app-launched", ["why": "tap"], min: 1, max: 1),
            .count("phone", "note", ["text": SimulatedPhone.inactiveArrival], min: 1, max: 1),
        ])
}
