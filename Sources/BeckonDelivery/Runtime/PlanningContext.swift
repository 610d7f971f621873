import BeckonStore
import Foundation
import Logging
import NIOConcurrencyHelpers

/// What a `PlanningStep` reads from: the store (reads only), where the devices' sessions are,
/// each app's policy and topic, and the planners the driver remembers. The step writes nothing;
/// the driver saves what it decided (`PlannedBatch`).
struct PlanningContext: Sendable {
    var now: Date
    /// What planning reads: the devices, unread counts and cursors, the mailbox after a cursor,
    /// and the planners' saved states.
    var store: any DeviceDirectory & ReadStateStore & MailboxStore & DeliveryStateStore
    var presence: any DevicePresence
    var policies: [String: DeliveryPolicy]
    /// Each app's bundle id: the topic its pushes are rendered for.
    var bundleIDs: [String: String]
    /// The planners as last saved by this driver (see `CachedPlanner`).
    var cache: NIOLockedValueBox<[DeviceRef: CachedPlanner]>
    var metrics: DeliveryMetrics
    var logger: Logger

    func policy(for appID: String) -> DeliveryPolicy { policies[appID] ?? DeliveryPolicy() }

    /// Apps are declared in the configuration, so every device's app has one; an unknown app
    /// renders for an empty topic, which APNs refuses (and the dispatcher has no sender for it).
    func bundleID(for appID: String) -> String { bundleIDs[appID] ?? "" }
}
