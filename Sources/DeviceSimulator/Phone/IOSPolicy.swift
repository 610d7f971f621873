/// The numbers iOS plays by. Apple publishes some (30 s of background time), the field reports
/// the rest (the extension's memory, the reboot deferral); all are settable so a scenario can
/// test the edges. Seconds are virtual: a scenario runs them scaled.
public struct IOSPolicy: Hashable, Sendable, Codable {
    /// Background time for a background push, and the completion handler's deadline: "Your app
    /// has 30 seconds" (apns.md E.3).
    public var backgroundPushSeconds: Double
    /// Background time after the app leaves the foreground, while it holds a background task.
    public var backgroundTaskSeconds: Double
    /// An app sent to the background with no task and no pending completion is suspended this
    /// soon ("about five seconds" after `applicationDidEnterBackground`, apns.md E.9). Once it
    /// calls its last completion handler or ends its last background task, it is suspended at
    /// once: the worst case Apple allows.
    public var suspendGraceSeconds: Double
    /// The notification service extension's time: "only about 30 seconds" (apns.md E.4).
    public var extensionSeconds: Double
    /// The extension's memory limit (~24 MB, apns.md E.4; docs/simulator.md, "Field practice the model uses").
    public var extensionMemoryBytes: Int
    /// Background launches iOS allows, a budget that refills evenly over an hour ("don't try to
    /// send more than two or three per hour", apns.md E.3). Over it, iOS holds the newest push.
    public var backgroundLaunchesPerHour: Double
    /// How many launches the budget holds at most (a full budget allows a burst this big).
    public var backgroundBurst: Double
    /// A background push iOS simply does not run, even within budget (energy, thermal,
    /// conditions Apple does not publish), drawn from the scenario's seed. 0 by default.
    public var backgroundDropRate: Double
    /// After a restart, background launches wait this long (`dasd`'s thundering-herd policy,
    /// observed ~300 s; apns.md E.3).
    public var rebootLaunchDeferralSeconds: Double
    /// Unreported VoIP pushes after which iOS stops delivering VoIP pushes to the app (apns.md
    /// E.6: "repeatedly failing"; Apple does not publish the count).
    public var voipFailuresBeforeBlock: Int
    /// A slow network: each socket connect and each frame from the server arrives this much
    /// later (0: loopback speed). Widens the windows where the app and extension overlap.
    public var networkLatencySeconds: Double
    /// iOS ends a suspended app to reclaim its memory after about this long (nil: never). Phones
    /// do it under memory pressure, at no published age; a fleet sets it so that ten thousand
    /// simulated apps do not all stay in memory. Background pushes relaunch the app.
    public var suspendedLifetimeSeconds: Double?

    public init(
        backgroundPushSeconds: Double = 30, backgroundTaskSeconds: Double = 30, suspendGraceSeconds: Double = 5,
        extensionSeconds: Double = 30, extensionMemoryBytes: Int = 24 << 20, backgroundLaunchesPerHour: Double = 3,
        backgroundBurst: Double = 3, backgroundDropRate: Double = 0, rebootLaunchDeferralSeconds: Double = 300,
        voipFailuresBeforeBlock: Int = 3, networkLatencySeconds: Double = 0, suspendedLifetimeSeconds: Double? = nil
    ) {
        self.backgroundPushSeconds = backgroundPushSeconds
        self.backgroundTaskSeconds = backgroundTaskSeconds
        self.suspendGraceSeconds = suspendGraceSeconds
        self.extensionSeconds = extensionSeconds
        self.extensionMemoryBytes = extensionMemoryBytes
        self.backgroundLaunchesPerHour = backgroundLaunchesPerHour
        self.backgroundBurst = backgroundBurst
        self.backgroundDropRate = backgroundDropRate
        self.rebootLaunchDeferralSeconds = rebootLaunchDeferralSeconds
        self.voipFailuresBeforeBlock = voipFailuresBeforeBlock
        self.networkLatencySeconds = networkLatencySeconds
        self.suspendedLifetimeSeconds = suspendedLifetimeSeconds
    }
}
