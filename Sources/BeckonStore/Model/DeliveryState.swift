import Foundation

/// A device's saved delivery-planner state. The planner's JSON is opaque here
/// (BeckonDelivery owns it); the store reads only when to wake it, whether it is unreachable, and
/// whether it believes its device connected.
public struct DeliveryState: Hashable, Sendable {
    public var device: DeviceRef
    public var planner: Data
    public var nextDeadline: Date?
    public var unreachable: Bool
    /// The planner believes a sync session of the device is live. After a crash of a lone node no
    /// session is, and no drop was ever planned: the node finds these at start (rule 5).
    public var connected: Bool
    /// How many times the state was saved (0: never). A save names the version it was planned
    /// from and succeeds only if that is still the stored one, so two nodes planning one device
    /// at once cannot both win (one planner transition at a time per device): the loser's device
    /// is left out of the save (`DeliveryStateStore.saveDelivery` returns it) and planned again
    /// from the winner's state.
    public var version: Int64

    public init(
        device: DeviceRef, planner: Data, nextDeadline: Date?, unreachable: Bool, connected: Bool = false, version: Int64 = 0
    ) {
        self.device = device
        self.planner = planner
        self.nextDeadline = nextDeadline
        self.unreachable = unreachable
        self.connected = connected
        self.version = version
    }
}
