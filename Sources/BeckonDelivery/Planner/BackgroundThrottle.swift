import Foundation

/// The per-device budget of background pushes over a sliding window (rule 3). Apple: "don't try
/// to send more than two or three per hour" (apns.md E.3); pushes beyond that are throttled by
/// iOS anyway, and only the newest held one survives, so the planner keeps under the budget and
/// coalesces instead of sending into the void.
struct BackgroundThrottle: Hashable, Sendable, Codable {
    /// When each background push in the current window was planned, oldest first.
    private(set) var sentAt: [Date] = []

    mutating func prune(now: Date, policy: DeliveryPolicy) {
        sentAt.removeAll { $0.addingTimeInterval(policy.backgroundThrottleWindow) <= now }
    }

    func hasSlot(now: Date, policy: DeliveryPolicy) -> Bool {
        sentAt.count { $0.addingTimeInterval(policy.backgroundThrottleWindow) > now } < policy.backgroundPushesPerHour
    }

    /// When the next slot frees, or nil if the budget is zero.
    func nextSlot(policy: DeliveryPolicy) -> Date? {
        let limit = policy.backgroundPushesPerHour
        guard limit > 0 else { return nil }
        guard sentAt.count >= limit else { return sentAt.first ?? .distantPast }
        return sentAt[sentAt.count - limit].addingTimeInterval(policy.backgroundThrottleWindow)
    }

    mutating func record(_ date: Date) { sentAt.append(date) }
}
