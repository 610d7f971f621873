import BeckonProtocol
import Foundation
import GRDB

extension ClientStore {
    /// Most receipts kept unsent: past it the oldest go (a receipt is for the operator's view; a
    /// device that never reaches a server that takes them must not grow without bound).
    static let maximumPendingReceipts = 2_000

    /// Queues a receipt of `kind` for each message, the first of each kind kept.
    package func queueReceipts(_ messageIDs: [String], kind: ReceiptKind, as writer: LeaseGuard) throws {
        let now = nowMilliseconds
        try write(as: writer) { db in try Self.queueReceipts(db, messageIDs, kind: kind, at: now) }
    }

    /// The same, inside a write already under way (the ledger's).
    static func queueReceipts(_ db: Database, _ messageIDs: [String], kind: ReceiptKind, at: Int64) throws {
        guard !messageIDs.isEmpty else { return }
        for id in messageIDs {
            try db.execute(
                sql: "INSERT INTO pendingReceipt (messageId, kind, at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                arguments: [id, kind.rawValue, at])
        }
        try db.execute(
            sql: """
                DELETE FROM pendingReceipt WHERE rowid IN (
                    SELECT rowid FROM pendingReceipt ORDER BY at DESC, messageId LIMIT -1 OFFSET ?)
                """,
            arguments: [maximumPendingReceipts])
    }

    /// Notifications on screen that neither the app nor its extension showed (iOS showed the
    /// alert by itself): recorded in the ledger as showing, so nothing shows them again, with a
    /// `shown` receipt at their delivery date (`now` when the centre gives none). Returns how many
    /// messages were new to the ledger.
    @discardableResult
    package func recordDelivered(_ notifications: [DeliveredNotification], as writer: LeaseGuard) throws -> Int {
        let now = nowMilliseconds
        return try write(as: writer) { db in
            var recorded = 0
            for notification in notifications {
                let at = notification.date.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) } ?? now
                for id in notification.messageIDs {
                    try db.execute(
                        sql: """
                            INSERT INTO notificationLedger (messageId, notificationId, state, shownBy, shownAt)
                            VALUES (?, ?, 'showing', 'app', ?) ON CONFLICT (messageId) DO NOTHING
                            """,
                        arguments: [id, notification.identifier, at])
                    guard db.changesCount > 0 else { continue }
                    recorded += 1
                    try Self.queueReceipts(db, [id], kind: .shown, at: at)
                }
            }
            return recorded
        }
    }

    /// Receipts not yet sent, oldest first.
    public func pendingReceipts(limit: Int = SyncProtocol.maximumReceipts) throws -> [SyncReceipt] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT messageId, kind, at FROM pendingReceipt ORDER BY at, messageId LIMIT ?", arguments: [limit])
                .compactMap { row in
                    ReceiptKind(rawValue: row[1]).map {
                        SyncReceipt(messageID: row[0], kind: $0, at: Date(timeIntervalSince1970: Double(row[2] as Int64) / 1000))
                    }
                }
        }
    }

    package func removePendingReceipts(_ receipts: [SyncReceipt], as writer: LeaseGuard) throws {
        guard !receipts.isEmpty else { return }
        try write(as: writer) { db in
            for receipt in receipts {
                try db.execute(
                    sql: "DELETE FROM pendingReceipt WHERE messageId = ? AND kind = ?", arguments: [receipt.messageID, receipt.kind.rawValue])
            }
        }
    }
}
