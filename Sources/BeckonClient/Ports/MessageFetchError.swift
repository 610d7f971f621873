/// Why a fetch by id failed.
public enum MessageFetchError: Error, Hashable, Sendable {
    /// No such message for this device (or it expired).
    case notFound
    /// The credential was refused (the device re-registered or was deleted).
    case unauthorized
    /// The answer is longer than the limit; it was not read.
    case tooLarge(limit: Int)
    /// Any other HTTP status.
    case status(Int)
    /// The answer is not a message.
    case malformed
    /// The network failed, or the fetch was cancelled.
    case transport(String)
}
