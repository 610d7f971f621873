extension SimulatedPhone {
    mutating func user(_ action: UserAction, _ actions: inout [PhoneAction]) {
        actions.append(.record(.user(action.name)))
        switch action {
        case .launch:
            unlock(&actions)
            bringToFront(tapped: nil, &actions)
        case .home:
            guard app == .foreground || app == .inactive else { return }
            if app == .foreground { actions.append(.lifecycle(.willResignActive)) }
            actions.append(.lifecycle(.didEnterBackground))
            setApp(.background, &actions)
            presenting.removeAll()
            runInBackground(for: policy.backgroundTaskSeconds)
            idleSince = backgroundTasks.isEmpty && completions.isEmpty ? now : nil
        case .openSwitcher:
            guard app == .foreground else { return }
            actions.append(.lifecycle(.willResignActive))
            setApp(.inactive, &actions)
        case .closeSwitcher:
            guard app == .inactive else { return }
            actions.append(.lifecycle(.didBecomeActive))
            setApp(.foreground, &actions)
        case .forceQuit:
            dropHeld("force-quit", &actions)
            kill("force-quit", becoming: .killedByUser, &actions)
        case .reboot:
            dropHeld("reboot", &actions)
            for id in extensions.keys.sorted() { actions.append(.record(.extensionFinished(push: id, outcome: "reboot"))) }
            extensions.removeAll()
            actions.append(.endExtension)
            kill("reboot", becoming: .notLaunchedSinceReboot, &actions)
            bootedAt = now
            lockedSinceBoot = true
            actions.append(.setProtectedData(available: false))
            if !online { setOnline(true, &actions) }
        case .unlock: unlock(&actions)
        case .goOffline: setOnline(false, &actions)
        case .goOnline: setOnline(true, &actions)
        case .tap(let identifier):
            guard let notification = notifications.first(where: { $0.identifier == identifier }) else { return }
            unlock(&actions)
            remove(identifier, why: "tapped", &actions)
            bringToFront(tapped: notification, &actions)
        case .swipeAway(let identifier):
            remove(identifier, why: "swiped", &actions)
        }
    }

    /// The first unlock after a restart makes protected data readable (apns.md E.9).
    private mutating func unlock(_ actions: inout [PhoneAction]) {
        guard lockedSinceBoot else { return }
        lockedSinceBoot = false
        actions.append(.setProtectedData(available: true))
        actions.append(.record(.note("first unlock since the restart: protected data readable")))
    }

    private mutating func setOnline(_ online: Bool, _ actions: inout [PhoneAction]) {
        guard online != self.online else { return }
        self.online = online
        actions.append(.setOnline(online))
        actions.append(.record(.network(online: online)))
    }

    /// The user opens the app, from its icon or from a notification (seed 001's cases 3 and 4).
    private mutating func bringToFront(tapped: ShownNotification?, _ actions: inout [PhoneAction]) {
        backgroundUntil = nil
        idleSince = nil
        switch app {
        case .notRunning, .killedByUser, .notLaunchedSinceReboot:
            launch(tapped == nil ? "user" : "tap", launchNotification: tapped?.payload, becoming: .launching, &actions)
            setApp(.inactive, &actions)
        case .suspended, .background:
            if app == .suspended { actions.append(.resumeApp) }
            actions.append(.lifecycle(.willEnterForeground))
            setApp(.inactive, &actions)
        case .launching, .inactive, .foreground:
            break
        }
        if let tapped { actions.append(.tap(identifier: tapped.identifier, payload: tapped.payload, shownAt: tapped.shownAt)) }
        if app != .foreground {
            actions.append(.lifecycle(.didBecomeActive))
            setApp(.foreground, &actions)
        }
        // Apple: "If the user launches the app, the system immediately delivers the held
        // notification" (apns.md E.3).
        if let held = heldBackground {
            heldBackground = nil
            actions.append(.record(.pushDelivered(push: held.id, type: held.type)))
            deliver(held, state: .active, &actions)
        }
    }
}
