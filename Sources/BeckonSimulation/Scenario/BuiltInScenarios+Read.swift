import BeckonDelivery
import BeckonProtocol
import DeviceSimulator

extension BuiltInScenarios {
    /// Seed 000 and rule 7: three notifications; one read on the iPad disappears alone from the
    /// phone; reading the rest there clears them all.
    static let readElsewhere = Scenario(
        name: "read-elsewhere",
        summary: "Three notifications on the phone; one read on the iPad goes alone; reading the rest there clears them all.",
        // Whether m2 reaches the phone in m1's session or with a wake (or re-push) of its own is
        // a matter of a millisecond at ×50, and a third background push before the read would
        // hold the clear back under the server's allowance of three an hour (flaky in CI). Rule 3 is
        // the `throttled` scenario's subject; this one's is rule 7.
        delivery: .with { $0.backgroundPushesPerHour = 6 },
        devices: [
            ScenarioDevice("phone", user: "alice"),
            ScenarioDevice("ipad", user: "alice"),
        ],
        steps: [
            .user("phone", .launch, at: 1), .user("phone", .home, at: 5),
            .user("ipad", .launch, at: 1),
            .post("m1", to: ["alice"], text: "One", at: 20),
            .post("m2", to: ["alice"], text: "Two", at: 22),
            .post("m3", to: ["alice"], text: "Three", at: 24),
            .read("ipad", ["m2"], at: 60),
            .read("ipad", ["m1", "m3"], at: 120),
        ],
        duration: 180,
        checks: [
            .showing(device: "phone", messages: ["m1", "m2", "m3"], at: 55),
            .showing(device: "phone", messages: ["m1", "m3"], at: 110),
            .showing(device: "phone", messages: [], at: nil),
            .stored(device: "phone", messages: ["m1", "m2", "m3"]),
        ])
}
