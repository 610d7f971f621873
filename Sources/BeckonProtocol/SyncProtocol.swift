/// Constants of the sync protocol (docs/sync-protocol.md).
public enum SyncProtocol {
    /// The version `hello` must name and `welcome` answers with.
    public static let version = 2
    /// Offered in `Sec-WebSocket-Protocol`; the server echoes it.
    public static let subprotocol = "beckon.v2"
    /// The path of the WebSocket endpoint.
    public static let path = "/v1/sync"
    /// The most ids one `read` frame may carry (and one `readElsewhere` after `welcome`).
    public static let maximumReadIDs = 1000
    /// The most items one `receipts` frame may carry.
    public static let maximumReceipts = 1000
    /// What this server accepts beyond version 2's first frames, listed in `welcome.features`: a
    /// client sends a `receipts` frame only to a server that lists `receipts`.
    public static let features = ["receipts"]
    /// Message ids are lowercase UUIDs; anything longer than this is not one.
    public static let maximumIDBytes = 128
}
