// Apple platforms: the registrar wired from a `BeckonSetup`. A translation, no decisions
// (docs/client-sdk.md).
#if canImport(Security)
import BeckonClient
import BeckonProtocol
import Foundation

extension DeviceRegistrar {
    /// Registers this install with `setup.server`, keeping the credential in `setup.credentials`
    /// and the install's id (minted at the first registration) in `setup.installationIDs`.
    /// `environment`: where the tokens come from, read from the provisioning profile by default
    /// (a token belongs to one environment: `BadDeviceToken` in the other, apns.md B.2).
    /// `capabilities`: what the server may rely on (step 3's table); the notification service
    /// extension and the background modes your targets really have. `userToken`: your backend's
    /// user token for the signed-in user (step 4), asked for only to register.
    public init(
        setup: BeckonSetup, environment: String = BeckonSetup.apnsEnvironment(), capabilities: DeviceCapabilities,
        bundleID: String = Bundle.main.bundleIdentifier ?? "", userToken: @escaping @Sendable () async throws -> String
    ) {
        self.init(
            baseURL: setup.server,
            registration: DeviceRegistration(
                deviceID: "", bundleID: bundleID, environment: environment, capabilities: capabilities),
            credentials: setup.credentials, installationIDs: setup.installationIDs, userToken: userToken)
    }
}
#endif
