import Foundation

/// A device's saved delivery-planner state. The planner's JSON is opaque here
/// (BeckonDelivery owns it); the store reads only when to wake it and whether it is unreachable.
public struct DeliveryState: Hashable, Sendable {
    public var device: DeviceRef
    public var planner: Data
    public var nextDeadline: Date?
    public var unreachable: Bool

    public init(device: DeviceRef, planner: Data, nextDeadline: Date?, unreachable: Bool) {
        self.device = device
        self.planner = planner
        self.nextDeadline = nextDeadline
        self.unreachable = unreachable
    }
}
