// Apple platforms: the registrar wired from a `BeckonSetup`. A translation, no decisions
// (docs/client-sdk.md).
#if canImport(Security)
import BeckonClient
import BeckonProtocol
import Foundation

extension DeviceRegistrar {
    /// Registers this install with `setup.server`, keeping the credential in `setup.credentials`.
    /// `environment`: "sandbox" for a development build's tokens, "production" for TestFlight and
    /// the App Store (a token belongs to one environment: `BadDeviceToken` in the other, apns.md A.7).
    /// `capabilities`: what the server may rely on (step 3's table); the notification service
    /// extension and the background modes your targets really have. `userToken`: your backend's
    /// user token for the signed-in user (step 4), asked for only to register.
    public init(
        setup: BeckonSetup, environment: String, capabilities: DeviceCapabilities,
        bundleID: String = Bundle.main.bundleIdentifier ?? "", userToken: @escaping @Sendable () async throws -> String
    ) {
        self.init(
            baseURL: setup.server,
            registration: DeviceRegistration(
                deviceID: setup.installationID(), bundleID: bundleID, environment: environment, capabilities: capabilities),
            credentials: setup.credentials, userToken: userToken)
    }
}
#endif
