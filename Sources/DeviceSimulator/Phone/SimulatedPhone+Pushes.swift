import BeckonClient

extension SimulatedPhone {
    /// The timeline's note when a push reaches the app while it is inactive (seed 001's edge case).
    public static let inactiveArrival = "a push reaches the app while inactive"

    mutating func arrived(_ push: DevicePush, _ actions: inout [PhoneAction]) {
        switch push.type {
        case "voip": voip(push, &actions)
        case "background":
            // Apple: background pushes must use priority 5 (apns.md E.3); iOS still runs this one.
            if push.priority == 10 {
                actions.append(.record(.violation(.backgroundAtPriority10, detail: "push \(push.id)")))
            }
            background(push, &actions)
        default: alert(push, &actions)
        }
    }

    // MARK: Background pushes (apns.md E.3)

    /// Whether iOS would launch or resume the app for a background push now.
    var canLaunchInBackground: Bool {
        if let bootedAt, app == .notLaunchedSinceReboot, now < bootedAt + policy.rebootLaunchDeferralSeconds { return false }
        var budget = budget
        return budget.hasRoom(now: now)
    }

    mutating func background(_ push: DevicePush, _ actions: inout [PhoneAction]) {
        guard traits.remoteNotificationMode else {
            actions.append(.record(.pushDiscarded(push: push.id, why: "no-background-mode")))
            return
        }
        switch app {
        case .killedByUser:
            // Apple: "The system does not automatically launch your app if the user has force-quit it."
            actions.append(.record(.pushDiscarded(push: push.id, why: "force-quit")))
        case .foreground, .inactive:
            // In front: delivered at once, no budget (apns.md E.3, "Foreground").
            actions.append(.record(.pushDelivered(push: push.id, type: push.type)))
            deliver(push, state: app == .foreground ? .active : .inactive, &actions)
        case .background, .launching:
            actions.append(.record(.pushDelivered(push: push.id, type: push.type)))
            runInBackground(for: policy.backgroundPushSeconds)
            deliver(push, state: .background, &actions)
        case .suspended, .notRunning, .notLaunchedSinceReboot:
            guard canLaunchInBackground else {
                hold(push, &actions)
                return
            }
            if budget.declines() {
                actions.append(.record(.pushDiscarded(push: push.id, why: "ios-declined")))
                return
            }
            budget.spend(now: now)
            actions.append(.record(.pushDelivered(push: push.id, type: push.type)))
            if app == .suspended {
                actions.append(.resumeApp)
                setApp(.background, &actions)
            } else {
                launch("push", launchNotification: push.payload, becoming: .background, &actions)
            }
            runInBackground(for: policy.backgroundPushSeconds)
            deliver(push, state: .background, &actions)
        }
    }

    /// Apple: "When the system receives a new background notification, it discards the older
    /// notification and only holds the newest one" (apns.md E.3).
    mutating func hold(_ push: DevicePush, _ actions: inout [PhoneAction]) {
        if let older = heldBackground {
            actions.append(.record(.pushDiscarded(push: older.id, why: "replaced")))
        }
        heldBackground = push
        actions.append(.record(.pushHeld(push: push.id, by: .ios)))
    }

    /// Drops the held push: force quit, restart (apns.md E.3, "Force quit / kill").
    mutating func dropHeld(_ why: String, _ actions: inout [PhoneAction]) {
        guard let held = heldBackground else { return }
        heldBackground = nil
        actions.append(.record(.pushDiscarded(push: held.id, why: why)))
    }

    /// `didReceiveRemoteNotification`, with a completion handler due in 30 s.
    mutating func deliver(_ push: DevicePush, state: ApplicationState, _ actions: inout [PhoneAction]) {
        nextToken += 1
        completions[nextToken] = (push.id, now + policy.backgroundPushSeconds)
        // Seed 001's edge case: inactive, but not because the user tapped.
        if state == .inactive { actions.append(.record(.note(Self.inactiveArrival))) }
        actions.append(.remoteNotification(push, state: state, token: nextToken))
    }

    // MARK: Alerts (apns.md E.2, E.4, E.5)

    mutating func alert(_ push: DevicePush, _ actions: inout [PhoneAction]) {
        actions.append(.record(.pushDelivered(push: push.id, type: push.type)))
        if let badge = push.badge {
            // Seed 000: a push with badge 0 clears every notification of the app.
            if badge == 0 { clearAll(&actions) }
            setBadge(badge, &actions)
        }
        guard push.hasVisibleAlert else { return }
        if traits.serviceExtension && push.wantsServiceExtension {
            extensions[push.id] = (push, now + policy.extensionSeconds)
            actions.append(.record(.extensionStarted(push: push.id)))
            actions.append(.runExtension(push, memoryBytes: policy.extensionMemoryBytes))
            return
        }
        present(push, text: push.text, &actions)
    }

    mutating func extensionFinished(_ id: String, _ result: ExtensionResult, _ actions: inout [PhoneAction]) {
        // Too late: iOS already showed the original at the deadline.
        guard let (push, _) = extensions.removeValue(forKey: id) else { return }
        switch result {
        case .content(let text, let outcome, let messages):
            actions.append(.record(.extensionFinished(push: id, outcome: outcome)))
            var shown = push
            if let messages { shown.messageIDs = messages }
            present(shown, text: text, &actions)
        case .suppressed:
            // Only with the filtering entitlement and push type alert (apns.md E.4).
            if traits.filtering && push.type == "alert" {
                actions.append(.record(.extensionFinished(push: id, outcome: "suppressed")))
            } else {
                actions.append(.record(.extensionFinished(push: id, outcome: "suppress-refused")))
                present(push, text: push.text, &actions)
            }
        case .crashed:
            actions.append(.record(.extensionFinished(push: id, outcome: "crashed")))
            present(push, text: push.text, &actions)
        case .overMemory:
            actions.append(.record(.extensionFinished(push: id, outcome: "memory-limit")))
            actions.append(.record(.violation(.extensionOverMemory, detail: "push \(id)")))
            present(push, text: push.text, &actions)
        }
    }

    /// Shows an alert, or asks the app first when it is in front (apns.md E.5).
    mutating func present(_ push: DevicePush, text: String, _ actions: inout [PhoneAction]) {
        if app == .foreground {
            presenting[push.id] = (push, text)
            actions.append(.askWillPresent(push, text: text))
        } else {
            show(push.identifier, messages: push.messageIDs, text: text, payload: push.payload, &actions)
        }
    }

    // MARK: VoIP (apns.md E.6)

    mutating func voip(_ push: DevicePush, _ actions: inout [PhoneAction]) {
        guard traits.voip else {
            actions.append(.record(.pushDiscarded(push: push.id, why: "no-voip")))
            return
        }
        guard !voipBlocked else {
            // "the system stops launching your app for VoIP push notifications"
            actions.append(.record(.pushDiscarded(push: push.id, why: "voip-blocked")))
            return
        }
        actions.append(.record(.pushDelivered(push: push.id, type: push.type)))
        switch app {
        case .notRunning, .killedByUser, .notLaunchedSinceReboot:
            // PushKit launches the app in the background, force-quit or not (apns.md E.6, "Delivery").
            launch("voip", launchNotification: nil, becoming: .background, &actions)
            runInBackground(for: policy.backgroundPushSeconds)
        case .suspended:
            actions.append(.resumeApp)
            setApp(.background, &actions)
            runInBackground(for: policy.backgroundPushSeconds)
        case .background, .launching:
            runInBackground(for: policy.backgroundPushSeconds)
        case .foreground, .inactive:
            break
        }
        actions.append(.voip(push))
    }

    mutating func voipHandled(_ push: String, reported: Bool, _ actions: inout [PhoneAction]) {
        guard !reported else { return }
        // "Killing app because it never posted an incoming call to the system after receiving a
        // PushKit VoIP push"; repeated, "the system stops delivering" (apns.md E.6).
        actions.append(.record(.violation(.voipWithoutCall, detail: "push \(push)")))
        kill("voip-not-reported", becoming: .notRunning, &actions)
        voipFailures += 1
        if voipFailures >= policy.voipFailuresBeforeBlock && !voipBlocked {
            voipBlocked = true
            actions.append(.record(.note("iOS stops delivering VoIP pushes to the app after \(voipFailures) unreported calls")))
        }
    }
}
