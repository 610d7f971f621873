/// What the background fetch completion handler is told (UIKit's `UIBackgroundFetchResult`).
public enum BackgroundFetchResult: String, Hashable, Sendable {
    case newData
    case noData
    case failed
}
