import APNSCore
import BeckonDelivery
import BeckonServer
import Foundation

extension BeckonServerConfiguration {
    /// Delivery's part of the node's configuration (`delivery.*`, each app's policy).
    var deliveryConfiguration: DeliveryConfiguration {
        var delivery = DeliveryConfiguration()
        delivery.policies = Dictionary(apps.map { ($0.id, $0.delivery) }, uniquingKeysWith: { $1 })
        delivery.bundleIDs = Dictionary(apps.map { ($0.id, $0.bundleID) }, uniquingKeysWith: { $1 })
        delivery.sendsPerApp = sendsPerApp
        delivery.retry = APNSRetryPolicy(
            maximumAttempts: dispatcherAttempts,
            backoff: APNSBackoff(base: TimeInterval(dispatcherRetryBaseSeconds), cap: TimeInterval(dispatcherRetryCapSeconds)))
        delivery.claimLease = TimeInterval(claimLeaseSeconds)
        delivery.deadlineLease = TimeInterval(deadlineLeaseSeconds)
        delivery.shutdownGrace = .seconds(shutdownGraceSeconds)
        return delivery
    }
}
