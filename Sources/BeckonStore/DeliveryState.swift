import Foundation

/// A device's saved delivery-planner state. The planner's JSON is opaque here
/// (BeckonDelivery owns it); the store reads only when to wake it and whether it is unreachable.
public struct DeliveryState: Hashable, Sendable {
    public var device: DeviceRef
    public var planner: Data
    public var nextDeadline: Date?
    public var unreachable: Bool
    /// How many times the state was saved (0: never). A save names the version it was planned
    /// from and succeeds only if that is still the stored one, so two nodes planning one device
    /// at once cannot both win: the loser gets `BeckonStoreError.deliveryConflict` and plans
    /// again from the winner's state (issue 13: one planner transition at a time per device).
    public var version: Int64

    public init(device: DeviceRef, planner: Data, nextDeadline: Date?, unreachable: Bool, version: Int64 = 0) {
        self.device = device
        self.planner = planner
        self.nextDeadline = nextDeadline
        self.unreachable = unreachable
        self.version = version
    }
}
