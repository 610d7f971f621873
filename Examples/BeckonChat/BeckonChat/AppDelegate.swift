import BeckonClientAppleApp
import CallKit
import UIKit
import UserNotifications

// `@preconcurrency`: UserNotifications' classes are not Sendable; without it, Swift 6 rejects the
// main-actor methods below as the delegate's.
final class AppDelegate: UIResponder, UIApplicationDelegate, @preconcurrency UNUserNotificationCenterDelegate {
    let model = ChatModel()
    var bridge: BeckonAppDelegateBridge!
    var registrar: DeviceRegistrar!
    var calls: CallProvider!
    var pushKit: PushKitRegistrar!
    var network: NetworkPathObserver!

    func application(
        _ application: UIApplication, didFinishLaunchingWithOptions options: [UIApplication.LaunchOptionsKey: Any]?
    ) -> Bool {
        calls = CallProvider()
        // Opens nothing yet: before the first unlock after a restart the store cannot be read, and
        // a launch for a VoIP call must still report it. Throws only without the App Group.
        guard let app = try? BeckonApp(setup: .chat, callKit: calls.reporter, renderer: chatRenderer) else {
            fatalError("add the App Group to the app's entitlements")
        }
        model.app = app
        calls.app = app
        bridge = BeckonAppDelegateBridge(app: app)   // follows UIKit's app-state notifications from here
        network = NetworkPathObserver(app: app)      // back online: reconnect now, not at the backoff
        UNUserNotificationCenter.current().delegate = self   // before launch ends (apns.md E.9)

        // The install's id and the APNs environment (from the provisioning profile) come from the SDK.
        let registrar = DeviceRegistrar(
            setup: .chat,
            capabilities: DeviceCapabilities(notificationServiceExtension: true, backgroundModes: ["remote-notification", "voip"]),
            userToken: { try await Backend.userToken() })
        self.registrar = registrar
        // Every VoIP push reports a call before PushKit's handler returns (apns.md E.6).
        pushKit = PushKitRegistrar(app: app, onToken: { token in Task { try? await registrar.voipTokenChanged(token) } }) { push in
            .incoming(push)
        }
        bridge.didFinishLaunching(options: options)
        return true
    }

    func application(_ application: UIApplication, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data) {
        // At every launch and whenever it changes: registers the first time, then keeps it current.
        Task { try? await registrar.remoteTokenChanged(deviceToken) }
    }

    func application(
        _ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any],
        fetchCompletionHandler completionHandler: @escaping (UIBackgroundFetchResult) -> Void
    ) {
        bridge.didReceiveRemoteNotification(userInfo, application: application, fetchCompletionHandler: completionHandler)
    }

    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse) async {
        await bridge.didReceive(response)   // opened, dismissed, "mark read", or your own action
    }

    func userNotificationCenter(
        _ center: UNUserNotificationCenter, willPresent notification: UNNotification
    ) async -> UNNotificationPresentationOptions {
        // nil: not Beckon's (your own reminders, say); present it as you choose.
        await bridge.willPresent(notification) ?? [.banner, .list, .sound]
    }
}

/// Your backend: it signs a user token for the signed-in user with the app's `user-token-secret`
/// (docs/client-sdk.md, step 4). Only registration asks for one.
enum Backend {
    static func userToken() async throws -> String {
        let (data, response) = try await URLSession.shared.data(from: URL(string: "https://api.example.com/beckon-token")!)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw URLError(.userAuthenticationRequired) }
        return String(decoding: data, as: UTF8.self)
    }
}
