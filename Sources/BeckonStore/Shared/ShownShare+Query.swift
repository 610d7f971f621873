import BeckonProtocol

extension ShownShare {
    /// Both stores' query, with each store's spelling of its four parameters (SQLite's named
    /// `:app`, PostgreSQL's `$1`): each message's strategy is its first push's (`live` with none);
    /// it was shown when a `shown` receipt came within the window (ms) of its creation.
    static func query(app: String, from: String, to: String, within: String) -> String {
        """
        SELECT strategy, count(*) AS messages, sum(shown) AS shown FROM (
            SELECT coalesce((SELECT o.strategy FROM push_message pm JOIN push_outbox o ON o.id = pm.push_id
                             WHERE pm.message_id = m.id ORDER BY o.created_at LIMIT 1), 'live') AS strategy,
                   CASE WHEN EXISTS (SELECT 1 FROM message_receipt r WHERE r.message_id = m.id AND r.app_id = m.app_id
                                     AND r.kind = 'shown' AND r.at <= m.created_at + \(within)) THEN 1 ELSE 0 END AS shown
            FROM message m
            WHERE m.app_id = \(app) AND m.created_at >= \(from) AND m.created_at < \(to) AND m.kind IN (\(notifyingKinds))
        ) AS counted GROUP BY strategy ORDER BY strategy
        """
    }

    private static var notifyingKinds: String {
        MessageKind.allCases.filter(\.countsAsUnread).map { "'\($0.rawValue)'" }.joined(separator: ", ")
    }
}
