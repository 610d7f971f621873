/// Bounds on what the trace records, the same for both stores.
enum TraceLimits {
    /// `synced` receipts one acknowledgement records at most, for the newest messages it covers:
    /// a device catching up on a long history is not traced message by message.
    static let syncedReceiptsPerAck = 1_000

    /// Rows one pruning write deletes at most (`pruneTrace` writes until fewer are left): other
    /// writes wait behind each one.
    static let pruneChunk = 5_000
}
