/// A frame that breaks the sync protocol: which rule (`code`) and a sentence for people. The
/// server sends it as an `error` frame and closes with 4008; a client treats a server frame it
/// cannot read the same way (it closes and reconnects with backoff).
public struct SyncFrameError: Error, Hashable, Sendable {
    public var code: BeckonErrorCode
    public var message: String

    public init(_ code: BeckonErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }
}
