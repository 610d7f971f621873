extension OutboxPush {
    /// The `message_ids` column both stores keep on the push's outbox row: what its trace and
    /// its events are found by. A JSON array (PostgreSQL's `jsonb`).
    var messageIDsColumn: String? {
        get throws { messageIDs.isEmpty ? nil : try StoreJSON.encode(messageIDs) }
    }
}
