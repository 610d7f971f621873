import Foundation

/// The delivery planner's saved state per device, its deadlines, and the save of what it decided.
/// A planning step reads states, and saves new ones with the pushes they decided in one
/// transaction (`saveDelivery`): that save is how pushes enter the outbox (`PushOutbox` sends
/// them). Versions keep two nodes from planning one device at once.
public protocol DeliveryStateStore: Sendable {
    /// The saved planner state of each device that has one.
    func deliveryStates(_ devices: [DeviceRef]) async throws -> [DeviceRef: DeliveryState]
    /// Takes up to `limit` devices whose planner must be woken at or before `date`, soonest
    /// first: their stored deadline moves to `leaseUntil`, so no other node takes them meanwhile
    /// (several nodes: `FOR UPDATE SKIP LOCKED`); the planning that follows saves the real next
    /// deadline, and if the node dies first the deadline comes due again at `leaseUntil`.
    func claimDueDeliveryStates(before date: Date, limit: Int, leaseUntil: Date) async throws -> [DeviceRef]
    /// Saves planner states, queues new pushes and records wake outcomes in one transaction.
    /// A device's state is saved only if its stored version is still `state.version` (another
    /// node may have planned it meanwhile); for a device where it is not, nothing of the batch is
    /// saved — not its state, pushes or wake outcomes — and it is in the result, to be planned
    /// again from the stored state. Everything else is saved.
    @discardableResult
    func saveDelivery(_ batch: DeliveryBatch) async throws -> Set<DeviceRef>
    /// The devices whose saved planner believes them connected (`DeliveryState.connected`).
    func devicesSavedAsConnected() async throws -> [DeviceRef]
}
