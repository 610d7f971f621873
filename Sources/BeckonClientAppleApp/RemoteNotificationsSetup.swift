// iOS only: built where UIKit exists. A translation, no decisions (docs/client-sdk.md).
#if canImport(UIKit)
import UIKit
import UserNotifications

/// What an app does once its user has signed in: asks to show notifications, and registers for
/// remote notifications whatever the answer (background pushes need no permission, apns.md
/// E.3). iOS then calls `didRegisterForRemoteNotificationsWithDeviceToken`, at this and every
/// later launch: hand the token to `DeviceRegistrar.remoteTokenChanged`.
@MainActor
public enum RemoteNotificationsSetup {
    /// Returns whether the user allows notifications to be shown.
    @discardableResult
    public static func requestPermissionAndRegister(
        options: UNAuthorizationOptions = [.alert, .badge, .sound]
    ) async -> Bool {
        let granted = (try? await UNUserNotificationCenter.current().requestAuthorization(options: options)) ?? false
        UIApplication.shared.registerForRemoteNotifications()
        return granted
    }
}
#endif
