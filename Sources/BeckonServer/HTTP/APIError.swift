import BeckonProtocol
import BeckonStore
import BeckonJSON
import Hummingbird
import Logging

/// An error the API answers with: an HTTP status and `{"error": {"code", "message"}}`.
///
/// Codes are stable, lower-case and documented in `openapi.yaml` (`Error`); messages are for
/// people and name the offending field, so a developer can fix a request from the answer alone.
public struct APIError: Error, Sendable, Equatable {
    public var status: HTTPResponse.Status
    public var code: BeckonErrorCode
    public var message: String
    /// Extra headers, e.g. `WWW-Authenticate` on a 401 (RFC 6750 §3).
    var headers: HTTPFields = [:]

    public init(status: HTTPResponse.Status, code: BeckonErrorCode, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    /// 400 for a field that is missing, of the wrong type or out of range. `field` is a path
    /// like `recipients.users[2]`.
    static func invalidField(_ field: String, _ reason: String) -> APIError {
        APIError(status: .badRequest, code: .invalidField, message: "\(field): \(reason)")
    }

    static func unknownField(_ field: String) -> APIError {
        APIError(status: .badRequest, code: .unknownField, message: "\(field): unknown field")
    }

    static func malformedJSON(_ detail: String) -> APIError {
        APIError(status: .badRequest, code: .malformedJSON, message: "the body is not valid JSON: \(detail)")
    }

    /// 401: no credential, or one that is not valid. The challenge tells the client which scheme
    /// to use (RFC 6750 §3).
    static func unauthorized(_ message: String) -> APIError {
        var error = APIError(status: .unauthorized, code: .unauthorized, message: message)
        error.headers[.wwwAuthenticate] = #"Bearer realm="beckon""#
        return error
    }

    /// 403: a valid credential that does not reach this resource (another device of the app).
    static func forbidden(_ message: String) -> APIError {
        APIError(status: .forbidden, code: .forbidden, message: message)
    }

    static func notFound(_ message: String) -> APIError {
        APIError(status: .notFound, code: .notFound, message: message)
    }

    static func tooLarge(_ message: String) -> APIError {
        APIError(status: .contentTooLarge, code: .tooLarge, message: message)
    }

    static let unsupportedMediaType = APIError(
        status: .unsupportedMediaType, code: .unsupportedMediaType,
        message: "the body must be JSON (Content-Type: application/json)")

    /// The store's errors, as the client should see them.
    init(_ error: BeckonStoreError) {
        switch error {
        case .appNotFound(let id):
            self = .notFound("no app \(id)")
        case .deviceNotFound(_, let deviceID):
            self = .notFound("no device \(deviceID)")
        case .callNotFound(let callID):
            self = .notFound("no call \(callID): a call is a message of kind call")
        case .alreadyExists(let id):
            self.init(status: .conflict, code: .conflict, message: "\(id) exists already")
        case .idempotencyConflict(let key):
            self.init(
                status: .conflict, code: .idempotencyConflict,
                message: "idempotency key \(key) was used before for a message with different content")
        case .invalidArgument(let field, let reason):
            self = .invalidField(field, reason)
        case .schemaTooNew:
            self.init(status: .internalServerError, code: .internalError, message: "the database was written by a newer Beckon")
        }
    }
}

extension APIError: HTTPResponseError {
    /// Any error as a client sees it: ours as they are, the store's mapped, Hummingbird's own
    /// (404 for an unknown path, 405, 413 past a body limit) given our shape, and anything
    /// unexpected a 500 that is logged here and not shown.
    init(_ error: any Error, logger: Logger) {
        switch error {
        case let error as APIError:
            self = error
        case let error as BeckonStoreError:
            self.init(error)
        case let error as any HTTPResponseError:
            self.init(
                status: error.status, code: Self.code(for: error.status),
                message: (error as? HTTPError)?.body ?? error.status.reasonPhrase)
        case let error where StoreUnavailable.matches(error):
            // Passes by itself (a lock, a full disk, no descriptor left): nothing of the request
            // was stored, and the client may retry: a 503, not a 500.
            logger.warning("the store is unavailable", metadata: ["error": "\(String(reflecting: error))"])
            self.init(
                status: .serviceUnavailable, code: .unavailable,
                message: "the database cannot take requests now (busy, locked or out of space); retry later")
            headers[.retryAfter] = "1"
        case is CancellationError:
            // Shutdown's grace ran out with this request open (BeckonService): nothing of it is
            // acknowledged, and the answer, if it still gets out, says to retry elsewhere.
            logger.debug("request cancelled at shutdown")
            self.init(status: .serviceUnavailable, code: .unavailable, message: "the server is shutting down; retry")
            headers[.retryAfter] = "1"
        default:
            logger.error("request failed", metadata: ["error": "\(String(reflecting: error))"])
            self.init(status: .internalServerError, code: .internalError, message: "internal error")
        }
    }

    private static func code(for status: HTTPResponse.Status) -> BeckonErrorCode {
        switch status {
        case .unauthorized: .unauthorized
        case .forbidden: .forbidden
        case .notFound: .notFound
        case .methodNotAllowed: .methodNotAllowed
        case .conflict: .conflict
        case .contentTooLarge: .tooLarge
        case .unsupportedMediaType: .unsupportedMediaType
        case .tooManyRequests: .rateLimited
        case .serviceUnavailable: .unavailable
        default: status.code >= 500 ? .internalError : .badRequest
        }
    }

    /// `{"error": {"code", "message"}}` with the error's status and headers.
    var body: [UInt8] {
        let error: JSONValue = ["code": .string(code.rawValue), "message": .string(message)]
        return JSONValue.object(["error": error]).bytes
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response { response }

    var response: Response {
        var headers = self.headers
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}

extension APIError {
    /// 408: the request's body did not arrive within `http.body-seconds` of its head; the
    /// connection is closed after it.
    static func requestTimeout(seconds: Int64) -> APIError {
        APIError(
            status: .requestTimeout, code: .requestTimeout,
            message: "the request body did not arrive within \(seconds) s (http.body-seconds)")
    }
}
