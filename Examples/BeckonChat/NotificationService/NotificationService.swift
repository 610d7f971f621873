import BeckonClientApple

/// The extension's principal class (`NSExtensionPrincipalClass` in its Info.plist): fetches the
/// messages a push names and shows their text, never a blank notification (docs/client-sdk.md,
/// step 7).
final class NotificationService: BeckonNotificationServiceExtension {
    // One per process: iOS reuses the process and may run several pushes at once.
    static let shared = NotificationServiceHandler(setup: .chat, renderer: chatRenderer)

    override var handler: NotificationServiceHandler { Self.shared }

}
