/// Every machine-readable error code Beckon answers with: the HTTP API's
/// `{"error": {"code", "message"}}` (openapi.yaml, `Error`) and the sync protocol's `error` frame
/// (docs/sync-protocol.md). A client switches on these; the message is for people.
public enum BeckonErrorCode: String, Hashable, Sendable, Codable, CaseIterable {
    // The HTTP API.
    /// A request HTTP itself finds wrong (not one of our field checks).
    case badRequest = "bad_request"
    case invalidField = "invalid_field"
    case unknownField = "unknown_field"
    case malformedJSON = "malformed_json"
    case unauthorized
    case forbidden
    case notFound = "not_found"
    case methodNotAllowed = "method_not_allowed"
    case conflict
    case idempotencyConflict = "idempotency_conflict"
    case deviceOwnedByAnotherUser = "device_owned_by_another_user"
    case tooLarge = "too_large"
    case unsupportedMediaType = "unsupported_media_type"
    case upgradeRequired = "upgrade_required"
    case rateLimited = "rate_limited"
    /// The body did not arrive in time (`http.body-seconds`); the connection is closed.
    case requestTimeout = "request_timeout"
    /// The store cannot take the request now (locked, out of space, out of reach): retry.
    case unavailable
    case internalError = "internal"

    // The sync protocol (sent in an `error` frame before close 4008).
    case malformedFrame = "malformed_frame"
    case unknownType = "unknown_type"
    case unexpectedFrame = "unexpected_frame"
    case unsupportedVersion = "unsupported_version"
    case ackBeyondSent = "ack_beyond_sent"
    case cursorAhead = "cursor_ahead"
}
