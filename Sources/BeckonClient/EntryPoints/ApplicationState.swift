/// UIKit's `UIApplication.State`, as the entry points report it.
public enum ApplicationState: String, Hashable, Sendable {
    case active
    /// In front but not receiving events: the user tapped a notification and the app is
    /// coming up, or the app merely passes through (seed 001's `appIsStarting` case).
    case inactive
    case background
}
