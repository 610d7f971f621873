import Foundation

extension PushAttempt {
    /// An outbox row's `attempt_log` column, in order; none for NULL. Each entry is
    /// `[number, at (ms), outcome, status, reason, unique id]`: an array rather than an object,
    /// as the log is written at every send.
    static func log(_ text: String?) throws -> [PushAttempt] {
        guard let text else { return [] }
        return try StoreJSON.decode([LogEntry].self, from: text).map(\.attempt).sorted { $0.number < $1.number }
    }

    private struct LogEntry: Decodable {
        var attempt: PushAttempt

        init(from decoder: any Decoder) throws {
            var entry = try decoder.unkeyedContainer()
            let number = try entry.decode(Int.self)
            let at = Date(millisecondsSince1970: try entry.decode(Int64.self))
            let outcome = Outcome(rawValue: try entry.decode(String.self)) ?? .failed
            let status = try entry.decode(Int.self)
            attempt = PushAttempt(
                number: number, at: at, outcome: outcome, status: status,
                reason: try entry.decodeIfPresent(String.self), uniqueID: try entry.decodeIfPresent(String.self))
        }
    }
}
