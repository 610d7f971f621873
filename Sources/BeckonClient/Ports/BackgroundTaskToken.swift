/// One background task (UIKit's `UIBackgroundTaskIdentifier` as an integer).
public struct BackgroundTaskToken: Hashable, Sendable {
    public var rawValue: Int
    public init(_ rawValue: Int) { self.rawValue = rawValue }
}
