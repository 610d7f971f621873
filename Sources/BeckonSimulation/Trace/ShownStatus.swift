/// Whether the server knows a notification was on a phone's screen, against what the phone's
/// timeline says (docs/simulator.md, "Traces").
public enum ShownStatus: String, Hashable, Sendable, CaseIterable {
    /// Shown on the timeline, and the server has the `shown` receipt.
    case reported
    /// Shown, and the SDK queued the receipt; no session has sent it yet (the extension has none,
    /// the app did not run since).
    case queued
    /// Shown by iOS itself (the SDK's ledger does not know it) and the app has not come to the
    /// front since: iOS tells the app only then (`NotificationPresenter.reconcile`).
    case awaitingApp = "awaiting-app"
    /// Shown, and no receipt was queued or reached the server though the SDK knew it, or the
    /// app came to the front after it: a defect.
    case lost
    /// Reported by the extension, which hands its alert to iOS; the app was in front, so iOS
    /// asked it (`willPresent`) and it declined, showing new messages itself (apns.md E.5). The
    /// receipt says the extension presented it, not that a notification was on screen.
    case declinedInFront = "declined-in-front"
    /// The server has a `shown` receipt the timeline never showed: a defect.
    case unfounded
    /// Neither shown nor reported.
    case notShown = "not-shown"
}
