import BeckonStore
import Foundation

/// A planner in `DeliveryDriver`'s cache, with the registration it was planned for: when the
/// device was created and for which user. A device deleted and registered again (same id, new
/// row) or moved to another user must not inherit the old state — owed pushes, or alerts with the
/// previous user's messages.
struct CachedPlanner: Sendable {
    var planner: DevicePlanner
    /// The stored version this planner is (`DeliveryState.version`): a save from a stale cache
    /// entry is refused, and the batch is planned again from the database.
    var version: Int64
    var createdAt: Date
    var userID: String

    init(planner: DevicePlanner, version: Int64, for device: Device) {
        self.planner = planner
        self.version = version
        self.createdAt = device.createdAt
        self.userID = device.userID
    }

    func matches(_ device: Device) -> Bool {
        device.createdAt == createdAt && device.userID == userID
    }
}
