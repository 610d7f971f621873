/// Failures a caller can act on; the HTTP layer maps them to 404, 409 and 400.
public enum BeckonStoreError: Error, Equatable, Sendable {
    case appNotFound(String)
    case deviceNotFound(appID: String, deviceID: String)
    /// No call message with this id in the app.
    case callNotFound(String)
    /// An app with this id exists already.
    case alreadyExists(String)
    /// The idempotency key was used before for a message with different content.
    case idempotencyConflict(key: String)
    /// An argument the store checks itself (token format, environment, recipients).
    case invalidArgument(field: String, reason: String)
    /// The database was written by a newer Beckon whose migrations this one does not know.
    case schemaTooNew
}
