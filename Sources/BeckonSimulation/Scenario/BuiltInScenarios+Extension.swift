import BeckonDelivery
import BeckonProtocol
import DeviceSimulator

extension BuiltInScenarios {
    /// Strategy `service-extension`: the alert's text is the generic one; the extension fetches
    /// the message and shows its own text — or, when iOS's time runs out first, iOS shows the
    /// push's own text (apns.md E.4).
    static let serviceExtension = Scenario(
        name: "service-extension",
        summary:
            "The extension fetches the message and rewrites the alert; on a phone where it runs out of time, iOS shows the generic text.",
        strategy: .serviceExtension,
        devices: [
            ScenarioDevice("phone", user: "alice", app: AppTraits(serviceExtension: true)),
            ScenarioDevice(
                "slow-phone", user: "bob", app: AppTraits(serviceExtension: true),
                ios: IOSPolicy(extensionSeconds: 0.05, networkLatencySeconds: 1)),
        ],
        steps: [
            .user("phone", .launch, at: 1), .user("phone", .home, at: 5),
            .user("slow-phone", .launch, at: 1), .user("slow-phone", .home, at: 5),
            .post("m1", to: ["alice"], text: "Lunch at one?", at: 20),
            .post("m2", to: ["bob"], text: "Running late", at: 20),
        ],
        duration: 60,
        checks: [
            .count("phone", "extension-finished", ["outcome": "rewritten"], min: 1, max: 1),
            .count("phone", "notification-shown", ["text": "Lunch at one?"], min: 1),
            .count("slow-phone", "extension-finished", ["outcome": "time-expired"], min: 1, max: 1),
            .count("slow-phone", "notification-shown", ["text": "BECKON_NEW_MESSAGE"], min: 1),
        ])

    /// Strategy `filtering`: the extension syncs before it decides, and suppresses an alert for a
    /// message read on another device meanwhile (apns.md E.4, the filtering entitlement).
    static let filtering = Scenario(
        name: "filtering",
        summary:
            "On a slow network the extension is still syncing when the message is read on the iPad: it suppresses the alert; an unread one shows.",
        strategy: .filtering,
        devices: [
            ScenarioDevice(
                "phone", user: "alice", app: AppTraits(serviceExtension: true, filtering: true),
                ios: IOSPolicy(networkLatencySeconds: 3)),
            ScenarioDevice("ipad", user: "alice"),
        ],
        steps: [
            .user("phone", .launch, at: 1), .user("phone", .home, at: 5),
            .user("ipad", .launch, at: 1),
            .post("m1", to: ["alice"], text: "Seen on the iPad", at: 20),
            .read("ipad", ["m1"], at: 21),
            .user("ipad", .home, at: 40),
            .post("m2", to: ["alice"], text: "Not seen yet", at: 60),
        ],
        duration: 100,
        checks: [
            .count("phone", "extension-finished", ["outcome": "suppressed"], min: 1),
            .notNotified(device: "phone", messages: ["m1"]),
            .notified(device: "phone", messages: ["m2"]),
            .stored(device: "phone", messages: ["m1", "m2"]),
        ])

    /// The phone goes offline with the app suspended; three messages arrive a minute apart; it is
    /// back online at 250 s, when APNs delivers the one push it kept for it (apns.md E.1).
    private static let offlineForFourMinutes: [ScenarioStep] = [
        .user("phone", .launch, at: 1), .user("phone", .home, at: 5),
        .user("phone", .goOffline, at: 10),
        .post("m1", to: ["alice"], text: "First", at: 20),
        .post("m2", to: ["alice"], text: "Second", at: 40),
        .post("m3", to: ["alice"], text: "Third", at: 60),
        .user("phone", .goOnline, at: 250),
    ]

    /// A phone offline for four minutes gets three messages; back online APNs delivers only the
    /// newest push (apns.md E.1); the extension syncs all three, and all three are on the lock
    /// screen, not only the one the push names.
    static let filteringOffline = Scenario(
        name: "filtering-offline",
        summary: "Offline for four minutes, three messages: APNs delivers the newest push only; the extension syncs and shows all three.",
        strategy: .filtering,
        devices: [ScenarioDevice("phone", user: "alice", app: AppTraits(serviceExtension: true, filtering: true))],
        steps: offlineForFourMinutes,
        duration: 300,
        checks: [
            .count("phone", "push-held", ["by": "apns"], min: 1),
            .count("phone", "push-discarded", ["why": "replaced"], min: 2),
            .notified(device: "phone", messages: ["m1", "m2", "m3"]),
            .stored(device: "phone", messages: ["m1", "m2", "m3"]),
        ])

    /// Rule 11 for the service extension: the phone was offline and got only the newest of three
    /// alerts (apns.md E.1); that alert names all three, and the one notification the extension
    /// shows lists each of them. Without it the user would see "Third" alone.
    static let extensionOffline = Scenario(
        name: "extension-offline",
        summary: "Offline for four minutes, three messages: APNs delivers the newest alert only; it names all three and the extension's notification lists each.",
        strategy: .serviceExtension,
        devices: [ScenarioDevice("phone", user: "alice", app: AppTraits(serviceExtension: true))],
        steps: offlineForFourMinutes,
        duration: 300,
        checks: [
            .count("phone", "push-discarded", ["why": "replaced"], min: 2),
            .notified(device: "phone", messages: ["m1", "m2", "m3"]),
        ])

    /// Seed 003's shared store: the extension syncs (role `extension`) when the user opens the
    /// app; the app's session preempts it, the extension lets the lease go, nothing is lost or
    /// shown twice.
    static let sharedStore = Scenario(
        name: "shared-store",
        summary: "The user opens the app while the extension is syncing: the app preempts it, and every message is stored once.",
        strategy: .filtering,
        devices: [
            ScenarioDevice(
                "phone", user: "alice", app: AppTraits(serviceExtension: true, filtering: true),
                ios: IOSPolicy(networkLatencySeconds: 1))
        ],
        steps: [
            .user("phone", .launch, at: 1),
            .user("phone", .home, at: 5),
        ] + (1...12).map { .post("m\($0)", to: ["alice"], text: "Message \($0)", at: 20) } + [
            // On this slow network the extension is connected by about 27 s and takes a second a
            // message: at 30 s it is in the middle of its sync.
            .user("phone", .launch, at: 30)
        ],
        duration: 60,
        checks: [
            .count("phone", "sync-connected", ["role": "extension"], min: 1),
            .count("phone", "sync-connected", ["role": "app"], min: 2),
            .stored(device: "phone", messages: (1...12).map { "m\($0)" }),
        ])
}
