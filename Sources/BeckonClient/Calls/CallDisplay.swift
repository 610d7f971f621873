import BeckonProtocol

/// What CallKit shows for an incoming call before anything is fetched (the push's `hints`,
/// opened from `sealed` when the device has a content key).
public struct CallDisplay: Hashable, Sendable {
    /// `CXHandle` value: who is calling, as the app identifies people.
    public var handle: String
    /// `CXCallUpdate.localizedCallerName`.
    public var callerName: String?
    public var hasVideo: Bool

    public init(handle: String, callerName: String? = nil, hasVideo: Bool = false) {
        self.handle = handle
        self.callerName = callerName
        self.hasVideo = hasVideo
    }

    /// From the push's hints: the title names the caller.
    init(hints: NotificationHints?) {
        let name = hints?.title ?? hints?.body
        self.init(handle: name ?? "Unknown", callerName: name)
    }
}
