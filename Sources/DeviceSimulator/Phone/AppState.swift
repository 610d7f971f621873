/// The app's process as iOS sees it (apns.md E.3, E.5; seed 000's states): what decides whether a
/// push can wake it and which callbacks it gets.
public enum AppState: String, Hashable, Sendable, CaseIterable, Codable {
    /// Never launched since install, or ended by the system (memory, a crash, a late completion
    /// handler). A background push may launch it.
    case notRunning = "not-running"
    /// Between `didFinishLaunching` and the first `didBecomeActive` (or background launch).
    case launching
    /// In front, receiving events (`UIApplication.State.active`).
    case foreground
    /// In front, not receiving events: coming up after a tap, or the app switcher is open.
    case inactive
    /// Running in the background, on borrowed time (30 s for a push, apns.md E.3).
    case background
    /// In memory, not running. A background push resumes it.
    case suspended
    /// Swiped away in the app switcher: iOS does not launch it for background pushes until the
    /// user opens it or the phone restarts (apns.md E.3, "User force-quit").
    case killedByUser = "killed-by-user"
    /// The phone restarted and the user has not opened the app since. Apple: a restart restores
    /// background launches, but they are deferred for a few minutes after boot (apns.md E.3).
    case notLaunchedSinceReboot = "not-launched-since-reboot"

    /// A process exists and runs code.
    public var isRunning: Bool { self == .launching || self == .foreground || self == .inactive || self == .background }
}
