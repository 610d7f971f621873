import BeckonJSON
import BeckonProtocol
import BeckonSeal
import Foundation

/// A PushKit push as the app's call handler receives it. Only the SDK makes one (its
/// initialiser is internal), and a `CallReport` can only be made from one: so the handler's one
/// way to finish is to report this very call.
public struct VoIPPush: Sendable {
    /// The call the push names.
    public let call: CallIdentity
    /// What the push says about the call (decrypted from `sealed` when possible).
    public let hints: NotificationHints?
    /// The whole payload (`aps` and `beckon`).
    public let payload: JSONValue
    /// Whether this is a Beckon call push at all; a push that is not gets reported and ended.
    public let isBeckonCall: Bool

    init(payload: JSONValue, sealKey: Data?) {
        self.payload = payload
        let beckon = BeckonPushPayload(payload: payload)
        let callID = beckon?.callID ?? beckon?.ids.last
        isBeckonCall = beckon?.reason == .callVoIP && callID != nil
        // A push without a call id still needs a call to report: a fresh one.
        call = CallIdentity(callID: callID ?? UUID().uuidString.lowercased())
        var hints = beckon?.hints
        if let sealed = beckon?.sealed, let sealKey, let content = try? ContentSeal.open(sealed, key: sealKey) {
            hints = NotificationHints(
                title: content.title, subtitle: content.subtitle, body: content.body, titleLocKey: content.titleLocKey,
                titleLocArgs: content.titleLocArgs, locKey: content.locKey, locArgs: content.locArgs)
        }
        self.hints = hints
    }
}
