/// Bounds on what the trace records, the same for both stores.
enum TraceLimits {
    /// `synced` receipts one acknowledgement records at most, for the newest messages it covers:
    /// a device catching up on a long history is not traced message by message.
    static let syncedReceiptsPerAck = 1_000
}
