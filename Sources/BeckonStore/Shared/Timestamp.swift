import Foundation

// Times are stored as integer milliseconds since 1970: APNs' 410 `timestamp` is in milliseconds
// and is compared with token registration times, and an integer sorts and compares the same way
// in SQLite and PostgreSQL (BIGINT).
extension Date {
    var millisecondsSince1970: Int64 {
        Int64((timeIntervalSince1970 * 1000).rounded(.down))
    }

    init(millisecondsSince1970 ms: Int64) {
        self.init(timeIntervalSince1970: Double(ms) / 1000)
    }

    /// The same instant at the precision the store keeps.
    var truncatedToMilliseconds: Date {
        Date(millisecondsSince1970: millisecondsSince1970)
    }
}
