// iOS only: built where PushKit exists. A translation, no decisions (docs/client-sdk.md).
#if canImport(PushKit)
import BeckonClient
import BeckonJSON
import Foundation
import PushKit

/// PushKit's delegate: every VoIP push goes to `BeckonApp.receiveVoIPPush`, which reports a call
/// to CallKit before this delegate method returns (apns.md E.6; rule 6) and calls PushKit's
/// completion once CallKit has answered (apns.md E.9). The app's `handler` can only answer with a
/// `CallReport`: there is no way to ignore the push.
public final class PushKitRegistrar: NSObject, PKPushRegistryDelegate, @unchecked Sendable {
    private let registry: PKPushRegistry
    private let app: BeckonApp
    private let handler: (VoIPPush) -> CallReport
    private let onToken: (Data?) -> Void

    /// `onToken`: the VoIP token to register with the server (`pushParameters`), nil when
    /// invalidated. Create this in `application(_:didFinishLaunchingWithOptions:)`: iOS
    /// launches the app for a VoIP push and delivers it as soon as a registry exists.
    public init(
        app: BeckonApp, queue: DispatchQueue? = nil, onToken: @escaping (Data?) -> Void,
        handler: @escaping (VoIPPush) -> CallReport
    ) {
        self.registry = PKPushRegistry(queue: queue)
        self.app = app
        self.handler = handler
        self.onToken = onToken
        super.init()
        registry.delegate = self
        registry.desiredPushTypes = [.voIP]
    }

    public func pushRegistry(_ registry: PKPushRegistry, didUpdate pushCredentials: PKPushCredentials, for type: PKPushType) {
        onToken(pushCredentials.token)
    }

    public func pushRegistry(_ registry: PKPushRegistry, didInvalidatePushTokenFor type: PKPushType) {
        onToken(nil)
    }

    public func pushRegistry(
        _ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload, for type: PKPushType,
        completion: @escaping @Sendable () -> Void
    ) {
        app.receiveVoIPPush(JSONValue(userInfo: payload.dictionaryPayload) ?? [:], handler: handler, completion: completion)
    }
}
#endif
