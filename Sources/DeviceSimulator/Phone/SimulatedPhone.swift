import BeckonClient
import BeckonJSON

/// An iPhone with one app, as iOS treats the app and its pushes (docs/simulator.md): a value-type
/// state machine with pure transitions. Events go in with the virtual time; actions come out
/// for the runtime to carry out — callbacks into the real SDK, and records for the timeline. No
/// clock, no sockets: every rule is tested on its own.
public struct SimulatedPhone: Sendable {
    public let traits: AppTraits
    public let policy: IOSPolicy
    public internal(set) var now: Double = 0
    public internal(set) var app: AppState = .notRunning
    public internal(set) var online = true
    public internal(set) var badge = 0
    /// On screen, oldest first.
    public internal(set) var notifications: [ShownNotification] = []
    /// The one background push iOS holds for later (newest only, apns.md E.3).
    public internal(set) var heldBackground: DevicePush?
    public internal(set) var voipBlocked = false
    /// Restarted and not unlocked since: protected files and keychain items cannot be read
    /// (apns.md E.9).
    public internal(set) var lockedSinceBoot = false
    public internal(set) var voipFailures = 0

    var budget: BackgroundBudget
    /// When the app's background time runs out (then it is suspended).
    var backgroundUntil: Double?
    /// The app has nothing left to do in the background since then: suspended after the grace.
    var idleSince: Double?
    /// Completion handlers not yet called, by token: the push and the deadline.
    var completions: [Int: (push: String, deadline: Double)] = [:]
    var nextToken = 0
    var backgroundTasks: Set<Int> = []
    /// Extension runs in flight: the push and the deadline.
    var extensions: [String: (push: DevicePush, deadline: Double)] = [:]
    /// Alerts waiting for the app's `willPresent` answer.
    var presenting: [String: (push: DevicePush, text: String)] = [:]
    var bootedAt: Double?
    /// When the app was last suspended (iOS may reclaim it after `suspendedLifetimeSeconds`).
    var suspendedAt: Double?
    /// Every message shown so far, under which identifier, and whether it was removed since.
    var shownMessages: [String: (identifier: String, removed: Bool)] = [:]

    public init(traits: AppTraits, policy: IOSPolicy = IOSPolicy(), seed: UInt64 = 0) {
        self.traits = traits
        self.policy = policy
        self.budget = BackgroundBudget(
            perHour: policy.backgroundLaunchesPerHour, burst: policy.backgroundBurst, dropRate: policy.backgroundDropRate,
            seed: seed)
    }

    /// The earliest moment something is due: the runtime sends `.tick` then.
    public var nextDeadline: Double? {
        var deadlines = completions.values.map(\.deadline) + extensions.values.map(\.deadline)
        if let backgroundUntil { deadlines.append(backgroundUntil) }
        if let idleSince { deadlines.append(idleSince + policy.suspendGraceSeconds) }
        if app == .suspended, let suspendedAt, let lifetime = policy.suspendedLifetimeSeconds {
            deadlines.append(suspendedAt + lifetime)
        }
        var budget = budget
        if heldBackground != nil, var room = budget.nextRoom(now: now) {
            if let bootedAt, app == .notLaunchedSinceReboot { room = max(room, bootedAt + policy.rebootLaunchDeferralSeconds) }
            deadlines.append(room)
        }
        return deadlines.min()
    }

    public mutating func handle(_ event: PhoneEvent, at time: Double) -> [PhoneAction] {
        now = max(now, time)
        var actions: [PhoneAction] = []
        switch event {
        case .user(let action): user(action, &actions)
        case .pushArrived(let push): arrived(push, &actions)
        case .completionCalled(let token, let result):
            guard completions.removeValue(forKey: token) != nil else { break }
            actions.append(.record(.completionHandler(result: result, late: false)))
            suspendIfDone(&actions)
        case .voipHandled(let push, let reported): voipHandled(push, reported: reported, &actions)
        case .extensionFinished(let push, let result): extensionFinished(push, result, &actions)
        case .willPresentAnswered(let push, let show):
            guard let (push, text) = presenting.removeValue(forKey: push) else { break }
            if show { self.show(push.identifier, messages: push.messageIDs, text: text, payload: push.payload, &actions) }
        case .appAddedNotification(let identifier, let text):
            guard app.isRunning else { break }
            show(identifier, messages: [identifier], text: text, payload: ["aps": [:]], &actions)
        case .extensionAddedNotification(let identifier, let text):
            show(identifier, messages: [identifier], text: text, payload: ["aps": [:]], &actions)
        case .appRemovedNotifications(let identifiers):
            for identifier in identifiers { remove(identifier, why: "app", &actions) }
        case .appSetBadge(let count): setBadge(count, &actions)
        case .backgroundTaskBegan(let id):
            backgroundTasks.insert(id)
            idleSince = nil
        case .backgroundTaskEnded(let id):
            guard backgroundTasks.remove(id) != nil else { break }
            suspendIfDone(&actions)
        case .lockHeldWhenSuspended:
            guard app == .suspended else { break }
            actions.append(.record(.violation(.lockHeldWhenSuspended, detail: "a transaction on the shared store at suspension")))
            kill("0xdead10cc", becoming: .notRunning, &actions)
        case .backgroundTasksLeftOpen(let ids):
            guard app.isRunning || app == .suspended else { break }
            let detail = "tasks \(ids.map(String.init).joined(separator: ", ")) open after their expiration handlers"
            actions.append(.record(.violation(.backgroundTaskNotEnded, detail: detail)))
            kill("background-task-not-ended", becoming: .notRunning, &actions)
        case .tick: tick(&actions)
        }
        return actions
    }

    // MARK: Time

    private mutating func tick(_ actions: inout [PhoneAction]) {
        // UIKit: "up to 30 seconds ... or your app will be terminated" (apns.md E.3).
        if completions.values.contains(where: { $0.deadline <= now }) {
            let late = completions.values.filter { $0.deadline <= now }.map(\.push)
            actions.append(.record(.completionHandler(result: "never", late: true)))
            let detail = "completion handler not called within \(Int(policy.backgroundPushSeconds)) s for "
                + late.sorted().joined(separator: ", ")
            actions.append(.record(.violation(.lateCompletion, detail: detail)))
            kill("late-completion", becoming: .notRunning, &actions)
        }
        for (id, run) in extensions where run.deadline <= now {
            // Apple: after the time, "the system displays the original contents" (apns.md E.4).
            extensions[id] = nil
            actions.append(.expireExtension(push: id))
            actions.append(.record(.extensionFinished(push: id, outcome: "time-expired")))
            present(run.push, text: run.push.text, &actions)
        }
        if app == .background {
            if let until = backgroundUntil, until <= now {
                suspend(&actions)
            } else if let idle = idleSince, idle + policy.suspendGraceSeconds <= now {
                suspend(&actions)
            }
        }
        if app == .suspended, let suspendedAt, let lifetime = policy.suspendedLifetimeSeconds, suspendedAt + lifetime <= now {
            kill("reclaimed", becoming: .notRunning, &actions)
        }
        if let held = heldBackground, canLaunchInBackground {
            heldBackground = nil
            background(held, &actions)
        }
    }

    /// The app called its last completion handler or ended its last background task: iOS may
    /// suspend it at once, and the model does (the worst case; apns.md E.9).
    private mutating func suspendIfDone(_ actions: inout [PhoneAction]) {
        if app == .background && completions.isEmpty && backgroundTasks.isEmpty { suspend(&actions) }
    }

    // MARK: The app's process

    mutating func launch(
        _ why: String, launchNotification: JSONValue?, becoming state: AppState, _ actions: inout [PhoneAction]
    ) {
        actions.append(.startApp)
        actions.append(.record(.appLaunched(why: why)))
        setApp(.launching, &actions)
        actions.append(.lifecycle(.didFinishLaunching(remoteNotification: launchNotification)))
        if state != .launching { setApp(state, &actions) }
    }

    mutating func kill(_ why: String, becoming state: AppState, _ actions: inout [PhoneAction]) {
        // Apple: "If something force quits or kills the app, the system discards the held
        // notification" (apns.md E.3).
        dropHeld(why, &actions)
        if app.isRunning || app == .suspended {
            actions.append(.endApp)
            actions.append(.record(.appKilled(why: why)))
        }
        completions.removeAll()
        backgroundTasks.removeAll()
        presenting.removeAll()
        backgroundUntil = nil
        idleSince = nil
        setApp(state, &actions)
    }

    mutating func suspend(_ actions: inout [PhoneAction]) {
        backgroundUntil = nil
        idleSince = nil
        // Tasks still open when the time is up: iOS calls their expiration handlers first.
        if !backgroundTasks.isEmpty { actions.append(.expireBackgroundTasks(backgroundTasks.sorted())) }
        backgroundTasks.removeAll()
        actions.append(.suspendApp)
        suspendedAt = now
        setApp(.suspended, &actions)
    }

    /// Gives the app background time from now (a push, or leaving the front).
    mutating func runInBackground(for seconds: Double) {
        backgroundUntil = max(backgroundUntil ?? now, now + seconds)
        idleSince = nil
    }

    mutating func setApp(_ state: AppState, _ actions: inout [PhoneAction]) {
        guard state != app else { return }
        app = state
        actions.append(.record(.appState(state)))
    }

    mutating func setBadge(_ count: Int, _ actions: inout [PhoneAction]) {
        guard count != badge else { return }
        badge = count
        actions.append(.record(.badge(count)))
    }
}
