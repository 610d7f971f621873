import APNSCore
import Foundation

/// The immutable rules a connection checks requests against.
struct RequestPolicy: Sendable {
    var environment: APNSEnvironment
    /// Empty = any bundle id.
    var bundleIDs: Set<String>
    var verifier: ProviderTokenVerifier
    var tokenMaximumAge: TimeInterval
    var tokenUpdateInterval: TimeInterval

    init(configuration: APNSEmulatorConfiguration) {
        environment = configuration.environment
        bundleIDs = Set(configuration.bundleIDs)
        verifier = ProviderTokenVerifier(
            keys: configuration.authKeys,
            acceptStringIssuedAt: configuration.acceptStringIssuedAt
        )
        tokenMaximumAge = configuration.providerTokenMaximumAge
        tokenUpdateInterval = configuration.providerTokenUpdateInterval
    }

    func allows(bundleID: Substring) -> Bool {
        bundleIDs.isEmpty || bundleIDs.contains(String(bundleID))
    }
}
