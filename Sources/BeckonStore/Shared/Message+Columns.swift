extension Message {
    /// The columns both stores read a message from, qualified by the `message` table's alias `m`.
    static let columns = "m.id, m.app_id, m.kind, m.payload, m.hints, m.urgency, m.expires_at, m.idempotency_key, m.created_at"
}
