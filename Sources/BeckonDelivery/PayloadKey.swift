/// Beckon's custom payload keys. Apple: custom keys go at the top level, beside `aps`, never
/// inside it (apns.md D.1). All of Beckon's live in one object under `"beckon"`:
///
/// ```
/// "beckon": {
///   "reason": "wake",            // PushReason raw value: how the client routes the push
///   "ids":    ["m1", "m2"],       // messages to fetch over the sync connection (rule 1)
///   "clear":  ["m0"],             // notifications to remove: read on another device (rule 7)
///   "badge":  3,                  // the unread count, on background pushes (no aps.badge there)
///   "call":   "c1",               // the call id (= the call message id) on call pushes
///   "hints":  {"title": ...},     // VoIP only: NotificationHints for CallKit, which can't wait to fetch
///   "sealed": "base64"            // AES-GCM sealed SealedContent (ContentSeal), content strategy
/// }
/// ```
///
/// `ids` and `clear` hold at most `DeliveryPolicy.maximumIDsPerPush` (20) of the newest ids: a
/// background push cannot be truncated, and the ids are hints — the app syncs everything after its
/// cursor, and reconciles read state, whenever it connects.
public enum PayloadKey {
    public static let beckon = "beckon"
    public static let reason = "reason"
    public static let ids = "ids"
    public static let clear = "clear"
    public static let badge = "badge"
    public static let call = "call"
    public static let hints = "hints"
    public static let sealed = "sealed"
}
