import APNS
import APNSCore
import BeckonDelivery
import Foundation

/// Where one app's pushes go: the client (Apple's hosts, or an emulator) and the app's
/// credential, decided per app here, in the composition root.
struct APNSRoute: PushSender {
    let client: APNSClient
    let credential: APNSCredential

    func send(
        _ request: APNSRequest, environment: APNSEnvironment, deadline: TimeInterval?, retry: APNSRetryPolicy?
    ) async throws -> APNSResponse {
        try await client.send(request, environment: environment, credential: credential, deadline: deadline, retry: retry)
    }
}
