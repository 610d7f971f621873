import Foundation

/// How calls ended: recorded once when the backend reports it, and read so that no push rings an
/// ended call and the other devices of its users stop ringing.
public protocol CallStore: Sendable {
    /// Records how a call ended, once: `callNotFound` unless `callID` is a call message of the
    /// app; a second end of the same call returns the first's outcome.
    func endCall(appID: String, callID: String, outcome: String, at date: Date) async throws -> CallEndResult
    /// The users whose mailboxes hold the message.
    func recipients(appID: String, messageID: String) async throws -> [UserRef]
    /// Which of these calls have ended.
    func endedCalls(appID: String, callIDs: [String]) async throws -> Set<String>
}
