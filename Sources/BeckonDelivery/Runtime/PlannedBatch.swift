import BeckonStore
import Foundation

/// What one `PlanningStep` decided, ready to be saved in one transaction.
struct PlannedBatch: Sendable {
    /// The planners' states, the pushes and the wake outcomes.
    var batch: DeliveryBatch
    /// The devices as the step read them: the dispatcher sends to their tokens.
    var devices: [DeviceRef: Device]
    /// Metrics and logs of the decisions, by device, to run once that device's state is saved: a
    /// device planned again after another node saved it first must not count twice.
    var afterSave: [(DeviceRef, @Sendable () -> Void)]
    /// The planners to remember once saved, at the version the save makes them.
    var planners: [DeviceRef: CachedPlanner]
}
