/// `BeckonApp.willPresent`'s answer for a notification that arrives while the app is in front.
public enum ForegroundPresentation: Hashable, Sendable {
    /// Beckon's, and news: show it (banner, list, sound, badge).
    case show
    /// Beckon's, and the app shows the message itself or it is read: show nothing.
    case hide
    /// Not Beckon's (the app's own): the app decides.
    case notBeckon
}
