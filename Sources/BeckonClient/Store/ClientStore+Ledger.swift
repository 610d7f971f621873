import BeckonProtocol
import Foundation
import GRDB

extension ClientStore {
    /// Records that notification `notificationID` shows `messageIDs`, unless any of them had a
    /// notification before: returns false then, and the caller shows nothing. The check and the
    /// record are one transaction, so app and extension cannot both win.
    package func claimNotification(
        _ notificationID: String, for messageIDs: [String], by role: SyncRole, as writer: LeaseGuard
    ) throws -> Bool {
        let now = nowMilliseconds
        return try write(as: writer) { db in
            for id in messageIDs {
                if try Bool.fetchOne(db, sql: "SELECT 1 FROM notificationLedger WHERE messageId = ?", arguments: [id]) == true {
                    return false
                }
            }
            for id in messageIDs {
                try db.execute(
                    sql: """
                        INSERT INTO notificationLedger (messageId, notificationId, state, shownBy, shownAt)
                        VALUES (?, ?, 'showing', ?, ?)
                        """,
                    arguments: [id, notificationID, role.rawValue, now])
            }
            try Self.queueReceipts(db, messageIDs, kind: .shown, at: now)
            return true
        }
    }

    /// Records what an alert the extension rewrote shows: each of `messageIDs` that no other
    /// notification shows. An alert may replace the one shown under its identifier (one collapse
    /// id for every unseen message, design rule 11): that one's messages are recorded as showing
    /// again, in its place.
    package func recordShown(
        _ notificationID: String, for messageIDs: [String], by role: SyncRole, as writer: LeaseGuard
    ) throws {
        let now = nowMilliseconds
        try write(as: writer) { db in
            for id in messageIDs {
                try db.execute(
                    sql: """
                        INSERT INTO notificationLedger (messageId, notificationId, state, shownBy, shownAt)
                        VALUES (?, ?, 'showing', ?, ?)
                        ON CONFLICT (messageId) DO UPDATE SET state = 'showing', removedAt = NULL
                        WHERE notificationId = excluded.notificationId
                        """,
                    arguments: [id, notificationID, role.rawValue, now])
            }
            try Self.queueReceipts(db, messageIDs, kind: .shown, at: now)
        }
    }

    /// Marks these notifications removed (they stay in the ledger: never shown again).
    package func markNotificationsRemoved(_ notificationIDs: [String], as writer: LeaseGuard) throws {
        guard !notificationIDs.isEmpty else { return }
        let now = nowMilliseconds
        try write(as: writer) { db in
            for id in notificationIDs {
                let messageIDs = try String.fetchAll(
                    db, sql: "SELECT messageId FROM notificationLedger WHERE notificationId = ? AND state = 'showing'", arguments: [id])
                try db.execute(
                    sql: "UPDATE notificationLedger SET state = 'removed', removedAt = ? WHERE notificationId = ? AND state = 'showing'",
                    arguments: [now, id])
                try Self.queueReceipts(db, messageIDs, kind: .removed, at: now)
            }
        }
    }

    /// Notes that these messages were read, for the alerts that show them alongside unread ones
    /// (such an alert goes once all its messages are read).
    package func markLedgerMessagesRead(_ messageIDs: [String], as writer: LeaseGuard) throws {
        guard !messageIDs.isEmpty else { return }
        try write(as: writer) { db in
            for id in messageIDs {
                try db.execute(sql: "UPDATE notificationLedger SET messageRead = 1 WHERE messageId = ?", arguments: [id])
            }
        }
    }

    /// Marks every showing notification removed; returns their ids (the badge-0 push clears
    /// them all on the device, seed 000).
    @discardableResult
    package func markAllNotificationsRemoved(as writer: LeaseGuard) throws -> [String] {
        let now = nowMilliseconds
        return try write(as: writer) { db in
            let ids = try String.fetchAll(
                db, sql: "SELECT DISTINCT notificationId FROM notificationLedger WHERE state = 'showing' ORDER BY notificationId")
            let messageIDs = try String.fetchAll(db, sql: "SELECT messageId FROM notificationLedger WHERE state = 'showing'")
            try Self.queueReceipts(db, messageIDs, kind: .removed, at: now)
            try db.execute(
                sql: "UPDATE notificationLedger SET state = 'removed', removedAt = ? WHERE state = 'showing'", arguments: [now])
            return ids
        }
    }

    /// The notification shown for a message, if one was.
    public func ledgerEntry(messageID: String) throws -> LedgerEntry? {
        try read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM notificationLedger WHERE messageId = ?", arguments: [messageID])
                .map(Self.ledgerEntry)
        }
    }

    /// Every message of the notifications that show any of `messageIDs`.
    public func ledgerEntries(sharingNotificationsWith messageIDs: [String]) throws -> [LedgerEntry] {
        try read { db in
            var entries: [LedgerEntry] = []
            var seen: Set<String> = []
            for id in messageIDs {
                guard let notificationID = try String.fetchOne(
                    db, sql: "SELECT notificationId FROM notificationLedger WHERE messageId = ? AND state = 'showing'",
                    arguments: [id]), seen.insert(notificationID).inserted
                else { continue }
                entries += try Row.fetchAll(
                    db, sql: "SELECT * FROM notificationLedger WHERE notificationId = ? ORDER BY messageId",
                    arguments: [notificationID]
                ).map(Self.ledgerEntry)
            }
            return entries
        }
    }

    /// The notifications the device believes are on screen, by notification id.
    public func showingNotifications() throws -> [String: [String]] {
        try read { db in
            var showing: [String: [String]] = [:]
            for row in try Row.fetchAll(
                db, sql: "SELECT messageId, notificationId FROM notificationLedger WHERE state = 'showing'")
            {
                showing[row["notificationId"], default: []].append(row["messageId"])
            }
            return showing
        }
    }

    /// Whether each of these messages is read in the store.
    func readIDs(among ids: [String]) throws -> Set<String> {
        try read { db in
            var read: Set<String> = []
            for id in ids where try Bool.fetchOne(db, sql: "SELECT isRead FROM message WHERE id = ?", arguments: [id]) == true {
                read.insert(id)
            }
            return read
        }
    }

    private static func ledgerEntry(_ row: Row) -> LedgerEntry {
        LedgerEntry(
            messageID: row["messageId"], notificationID: row["notificationId"],
            state: LedgerEntry.State(rawValue: row["state"]) ?? .removed,
            shownBy: SyncRole(rawValue: row["shownBy"]) ?? .app, shownAt: Date(milliseconds: row["shownAt"]),
            messageRead: row["messageRead"])
    }
}
