import BeckonProtocol

extension ShownShare {
    /// Both stores' query, with each store's spelling of its parameters (SQLite's named `:app`,
    /// PostgreSQL's `$1`) and of `messagesOf`, a push row's message ids as rows of a `value`
    /// column (SQLite's `json_each`, PostgreSQL's `jsonb_array_elements_text`). The window's
    /// messages are a range of their ids (`fromID`, `toID`: `UUID.timeOrderedPrefix` of its ends;
    /// a message's id is made at its creation), found by the message table's key: an index on
    /// their time cost every message an insert. Each message's strategy is that of its first push
    /// within `within` (ms) after its creation (`live` with none); it was shown when a `shown`
    /// receipt came within it. The pushes are read by app and time (push_outbox_app).
    static func query(
        app: String, from: String, to: String, within: String, fromID: String, toID: String, messagesOf: (String) -> String
    ) -> String {
        """
        WITH pushed AS (
            SELECT j.value AS message_id, o.strategy, o.created_at FROM push_outbox o, \(messagesOf("o.message_ids"))
            WHERE o.app_id = \(app) AND o.created_at >= \(from) AND o.created_at < \(to) + \(within)
        ), firsts AS (
            SELECT m.id, m.app_id, m.created_at, p.strategy,
                   row_number() OVER (PARTITION BY m.id ORDER BY p.created_at) AS n
            FROM message m LEFT JOIN pushed p ON p.message_id = m.id AND p.created_at <= m.created_at + \(within)
            WHERE m.id >= \(fromID) AND m.id < \(toID) AND m.app_id = \(app) AND m.kind IN (\(notifyingKinds))
        )
        SELECT strategy, count(*) AS messages, sum(shown) AS shown FROM (
            SELECT coalesce(f.strategy, 'live') AS strategy,
                   CASE WHEN EXISTS (SELECT 1 FROM message_receipt r WHERE r.message_id = f.id AND r.app_id = f.app_id
                                     AND r.kind = 'shown' AND r.at <= f.created_at + \(within)) THEN 1 ELSE 0 END AS shown
            FROM firsts f WHERE f.n = 1
        ) AS counted GROUP BY strategy ORDER BY strategy
        """
    }

    private static var notifyingKinds: String {
        MessageKind.allCases.filter(\.countsAsUnread).map { "'\($0.rawValue)'" }.joined(separator: ", ")
    }
}
