import BeckonSimulation
import DeviceSimulator

/// A small hand-built run: two phones and the server, a push through every stage, a discarded
/// and a rejected one, notifications shown and removed, sync sessions, and one failed invariant.
enum SampleReport {
    static let alice = "alice-iphone"
    static let bob = "bob-iphone"
    /// Markup in a notification's text, which the SVG must escape.
    static let trickyText = "Bob: <script>alert(1)</script> & \"hi\""

    static var report: SimulationReport {
        SimulationReport(
            scenario: "offline-then-read-elsewhere",
            summary: "Alice is offline when a message arrives, gets it once back online, and reads it on the web.",
            seed: 0xaedf_7e0d_8f2c_5026, timeScale: 60, devices: [alice, bob], duration: 120,
            events: serverEvents + aliceEvents + bobEvents,
            invariants: [
                InvariantResult(
                    name: "shown-once", description: "No message is shown in two notifications.", passed: true,
                    detail: "3 notifications, 3 messages"),
                InvariantResult(
                    name: "read-clears", description: "A message read elsewhere leaves no notification.", passed: false,
                    detail: "bob-iphone still shows msg-7f3a03 read at 97s"),
            ])
    }

    /// How many `.appState` events each state has in the sample (one span each).
    static var stateSpans: [AppState: Int] {
        var counts: [AppState: Int] = [:]
        for event in report.events { if case .appState(let state) = event.what { counts[state, default: 0] += 1 } }
        return counts
    }

    private static func at(_ time: Double, _ device: String, _ what: TimelineEvent.What) -> TimelineEvent {
        TimelineEvent(time: time, device: device, what: what)
    }

    static let serverEvents: [TimelineEvent] = [
        at(5, TimelineEvent.server, .messagePosted(id: "msg-7f3a01")),
        at(40, TimelineEvent.server, .messagePosted(id: "msg-7f3a02")),
        at(80, TimelineEvent.server, .messagePosted(id: "msg-7f3a03")),
    ]

    static let aliceEvents: [TimelineEvent] = [
        at(0, alice, .appLaunched(why: "user")),
        at(0, alice, .appState(.launching)),
        at(0.8, alice, .appState(.foreground)),
        at(1, alice, .syncConnected(role: "app")),
        at(5.1, alice, .messageStored(id: "msg-7f3a01")),
        at(10, alice, .user("home")),
        at(10, alice, .appState(.background)),
        at(12, alice, .syncDisconnected(role: "app", code: 1000)),
        at(15, alice, .appState(.suspended)),
        at(20, alice, .network(online: false)),
        at(40, alice, .pushSent(push: "p-a1", type: "alert", priority: 10, reason: "new-message")),
        at(40.05, alice, .pushAccepted(push: "p-a1")),
        at(40.06, alice, .pushHeld(push: "p-a1", by: .apns)),
        at(50, alice, .network(online: true)),
        at(50.2, alice, .pushDelivered(push: "p-a1", type: "alert")),
        at(50.3, alice, .extensionStarted(push: "p-a1")),
        at(50.4, alice, .syncConnected(role: "extension")),
        at(51, alice, .messageStored(id: "msg-7f3a02")),
        at(51.2, alice, .syncDisconnected(role: "extension", code: 1000)),
        at(51.5, alice, .extensionFinished(push: "p-a1", outcome: "shown")),
        at(51.5, alice, .notificationShown(identifier: "n-1", messages: ["msg-7f3a02"], text: trickyText)),
        at(51.5, alice, .badge(1)),
        at(60, alice, .pushSent(push: "p-a2", type: "background", priority: 5, reason: "catch-up")),
        at(60.05, alice, .pushAccepted(push: "p-a2")),
        at(60.1, alice, .pushHeld(push: "p-a2", by: .ios)),
        at(70, alice, .pushSent(push: "p-a3", type: "background", priority: 5, reason: "read-elsewhere")),
        at(70.05, alice, .pushAccepted(push: "p-a3")),
        at(70.1, alice, .pushDiscarded(push: "p-a2", why: "replaced")),
        at(70.1, alice, .pushHeld(push: "p-a3", by: .ios)),
        at(75, alice, .pushDelivered(push: "p-a3", type: "background")),
        at(75, alice, .appState(.background)),
        at(75.1, alice, .syncConnected(role: "app")),
        at(76, alice, .notificationRemoved(identifier: "n-1", why: "read-elsewhere")),
        at(76, alice, .badge(0)),
        at(77, alice, .completionHandler(result: "newData", late: false)),
        at(77.5, alice, .syncDisconnected(role: "app", code: nil)),
        at(78, alice, .appState(.suspended)),
        at(100, alice, .user("tap notification")),
        at(100, alice, .appState(.inactive)),
        at(100.5, alice, .appState(.foreground)),
        at(100.6, alice, .syncConnected(role: "app")),
        at(101, alice, .messageStored(id: "msg-7f3a03")),
    ]

    static let bobEvents: [TimelineEvent] = [
        at(0, bob, .appState(.notRunning)),
        at(2, bob, .user("reboot")),
        at(2, bob, .appState(.notLaunchedSinceReboot)),
        at(40, bob, .pushSent(push: "p-b1", type: "background", priority: 5, reason: "new-message")),
        at(40.02, bob, .pushAccepted(push: "p-b1")),
        at(40.1, bob, .pushDiscarded(push: "p-b1", why: "not-launched")),
        at(40, bob, .pushSent(push: "p-b2", type: "alert", priority: 10, reason: "new-message")),
        at(40.03, bob, .pushAccepted(push: "p-b2")),
        at(40.3, bob, .pushDelivered(push: "p-b2", type: "alert")),
        at(40.3, bob, .extensionStarted(push: "p-b2")),
        at(42, bob, .extensionFinished(push: "p-b2", outcome: "fallback-text")),
        at(42, bob, .notificationShown(identifier: "n-2", messages: ["msg-7f3a02"], text: "New message")),
        at(42, bob, .badge(1)),
        at(60, bob, .user("open app")),
        at(60, bob, .appLaunched(why: "user")),
        at(60, bob, .appState(.launching)),
        at(60.5, bob, .appState(.foreground)),
        at(61, bob, .syncConnected(role: "app")),
        at(61.5, bob, .messageStored(id: "msg-7f3a01")),
        at(61.5, bob, .messageStored(id: "msg-7f3a02")),
        at(65, bob, .notificationRemoved(identifier: "n-2", why: "app")),
        at(65, bob, .badge(0)),
        at(80, bob, .pushSent(push: "p-b3", type: "voip", priority: 10, reason: "call")),
        at(80.02, bob, .pushAccepted(push: "p-b3")),
        at(80.2, bob, .pushDelivered(push: "p-b3", type: "voip")),
        at(80.3, bob, .callReported(callID: "c-1")),
        at(86, bob, .callEnded(callID: "c-1", outcome: "declined")),
        at(90, bob, .user("swipe-away")),
        at(90, bob, .appState(.killedByUser)),
        at(90, bob, .appKilled(why: "force-quit")),
        at(90, bob, .syncDisconnected(role: "app", code: 1001)),
        at(92, bob, .notificationShown(identifier: "n-3", messages: ["msg-7f3a03"], text: "Alice: are you there?")),
        at(95, bob, .pushSent(push: "p-b4", type: "background", priority: 5, reason: "read-elsewhere")),
        at(95.02, bob, .pushAccepted(push: "p-b4")),
        at(95.1, bob, .pushDiscarded(push: "p-b4", why: "force-quit")),
        at(96, bob, .pushSent(push: "p-b5", type: "alert", priority: 10, reason: "new-message")),
        at(96.02, bob, .pushRejected(push: "p-b5", status: 410, reason: "Unregistered")),
        at(97, bob, .violation(.leftAfterRead, detail: "msg-7f3a03 read on alice-iphone, n-3 still shown")),
        at(110, bob, .note("script ends")),
    ]
}
