import BeckonSimulation
import DeviceSimulator

/// A long, crowded run built by a fixed rule (no randomness): many pushes, overlapping
/// notifications, stored messages and marks close together, to see how the timeline copes.
enum BusyReport {
    static let devices = ["phone-1", "phone-2", "phone-3"]

    static var report: SimulationReport {
        var events: [TimelineEvent] = []
        let states: [AppState] = [.foreground, .background, .suspended, .notRunning, .launching, .inactive]
        for (index, device) in devices.enumerated() {
            func add(_ time: Double, _ what: TimelineEvent.What) {
                events.append(TimelineEvent(time: time, device: device, what: what))
            }
            for step in 0..<40 {
                let t = Double(step) * 90 + Double(index) * 7
                add(t, .appState(states[(step + index) % states.count]))
                if step % 5 == 0 { add(t, .user("tap")) }
                let push = "push-\(device)-\(step)"
                add(
                    t + 1, .pushSent(push: push, type: step % 3 == 0 ? "alert" : "background", priority: 5, reason: "new-message")
                )
                add(t + 1.1, .pushAccepted(push: push))
                if step % 4 == 0 {
                    add(t + 1.2, .pushHeld(push: push, by: .apns))
                    add(t + 200, .pushDelivered(push: push, type: "alert"))
                } else if step % 4 == 1 {
                    add(t + 2, .pushDiscarded(push: push, why: "budget"))
                } else {
                    add(t + 2, .pushDelivered(push: push, type: "background"))
                }
                add(
                    t + 3,
                    .notificationShown(
                        identifier: "n-\(step)", messages: ["m-\(step)"], text: "Message number \(step) with a long body"))
                add(t + 3 + Double(step % 7) * 60, .notificationRemoved(identifier: "n-\(step)", why: "read-elsewhere"))
                add(t + 4, .messageStored(id: "message-\(step)"))
                add(t + 5, .appLaunched(why: "push"))
                add(t + 6, .syncConnected(role: "app"))
                add(t + 40, .syncDisconnected(role: "app", code: 1000))
                add(t + 41, .badge(step % 9))
                if step % 6 == 0 { add(t + 42, .violation(.lateCompletion, detail: "completion after 31 s")) }
            }
        }
        for step in 0..<40 {
            events.append(
                TimelineEvent(time: Double(step) * 90, device: TimelineEvent.server, what: .messagePosted(id: "message-\(step)")))
        }
        return SimulationReport(
            scenario: "busy", summary: "Forty rounds of pushes on three phones.", seed: 7, timeScale: 600, devices: devices,
            duration: 3600, events: events, invariants: [])
    }
}
