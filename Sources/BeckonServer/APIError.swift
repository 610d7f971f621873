import BeckonStore
import Hummingbird

/// An error the API answers with: an HTTP status and `{"error": {"code", "message"}}`.
///
/// Codes are stable, lower-case and documented in `openapi.yaml` (`Error`); messages are for
/// people and name the offending field, so a developer can fix a request from the answer alone
/// (issue 4: "400 naming the field").
public struct APIError: Error, Sendable, Equatable {
    public var status: HTTPResponse.Status
    public var code: String
    public var message: String
    /// Extra headers, e.g. `WWW-Authenticate` on a 401 (RFC 6750 §3).
    var headers: HTTPFields = [:]

    public init(status: HTTPResponse.Status, code: String, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    /// 400 for a field that is missing, of the wrong type or out of range. `field` is a path
    /// like `recipients.users[2]`.
    static func invalidField(_ field: String, _ reason: String) -> APIError {
        APIError(status: .badRequest, code: "invalid_field", message: "\(field): \(reason)")
    }

    static func unknownField(_ field: String) -> APIError {
        APIError(status: .badRequest, code: "unknown_field", message: "\(field): unknown field")
    }

    static func malformedJSON(_ detail: String) -> APIError {
        APIError(status: .badRequest, code: "malformed_json", message: "the body is not valid JSON: \(detail)")
    }

    /// 401: no credential, or one that is not valid. The challenge tells the client which scheme
    /// to use (RFC 6750 §3).
    static func unauthorized(_ message: String) -> APIError {
        var error = APIError(status: .unauthorized, code: "unauthorized", message: message)
        error.headers[.wwwAuthenticate] = #"Bearer realm="beckon""#
        return error
    }

    /// 403: a valid credential that does not reach this resource (another device of the app).
    static func forbidden(_ message: String) -> APIError {
        APIError(status: .forbidden, code: "forbidden", message: message)
    }

    static func notFound(_ message: String) -> APIError {
        APIError(status: .notFound, code: "not_found", message: message)
    }

    static func tooLarge(_ message: String) -> APIError {
        APIError(status: .contentTooLarge, code: "too_large", message: message)
    }

    static let unsupportedMediaType = APIError(
        status: .unsupportedMediaType, code: "unsupported_media_type",
        message: "the body must be JSON (Content-Type: application/json)")

    /// The store's errors, as the client should see them.
    init(_ error: BeckonStoreError) {
        switch error {
        case .appNotFound(let id):
            self = .notFound("no app \(id)")
        case .deviceNotFound(_, let deviceID):
            self = .notFound("no device \(deviceID)")
        case .alreadyExists(let id):
            self.init(status: .conflict, code: "conflict", message: "\(id) exists already")
        case .idempotencyConflict(let key):
            self.init(
                status: .conflict, code: "idempotency_conflict",
                message: "idempotency key \(key) was used before for a message with different content")
        case .invalidArgument(let field, let reason):
            self = .invalidField(field, reason)
        case .schemaTooNew:
            self.init(status: .internalServerError, code: "internal", message: "the database was written by a newer Beckon")
        }
    }
}
