/// A push the APNs emulator accepted for a simulated phone, as the emulator recorded it: what a
/// message's trace must show as `push` and `apns sent` under the same `apns-id`.
struct AcceptedPush: Hashable, Sendable {
    var device: String
    /// `apns-id`, lowercase.
    var apnsID: String
    var type: String
    var reason: String?
    /// The messages it stands for: its `beckon.ids` (rule 11), and the call it rings.
    var messages: [String]
}
