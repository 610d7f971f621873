import BeckonDelivery
import BeckonServer

extension BeckonServerConfiguration {
    /// Delivery's part of the node's configuration: `delivery.*`, with each app's policy and
    /// bundle id from its declaration.
    var deliveryConfiguration: DeliveryConfiguration {
        var configuration = delivery
        configuration.policies = Dictionary(apps.map { ($0.id, $0.delivery) }, uniquingKeysWith: { $1 })
        configuration.bundleIDs = Dictionary(apps.map { ($0.id, $0.bundleID) }, uniquingKeysWith: { $1 })
        configuration.shutdownGrace = .seconds(shutdownGraceSeconds)
        return configuration
    }
}
