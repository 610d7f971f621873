import APNS
import APNSCore

/// Where one app's pushes go: the client (Apple's hosts, or an emulator) and the app's
/// credential. Built by the composition root (`BeckonNode`), which decides per app.
public struct APNSRoute: Sendable {
    public let client: APNSClient
    public let credential: APNSCredential

    public init(client: APNSClient, credential: APNSCredential) {
        self.client = client
        self.credential = credential
    }
}
