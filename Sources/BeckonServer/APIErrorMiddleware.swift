import BeckonStore
import Hummingbird
import Logging

/// Turns every error into `{"error": {"code", "message"}}`, so clients parse one shape whatever
/// failed: our own `APIError`s, the store's errors, Hummingbird's (404 for an unknown path, 405,
/// 413 from a body collected past its limit) and anything unexpected (500, logged, not shown).
///
/// It must be the router's first middleware: Hummingbird wraps only routes added after a
/// middleware, and the not-found responder with all of them.
struct APIErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            return Self.response(error)
        } catch let error as BeckonStoreError {
            return Self.response(APIError(error))
        } catch let error as any HTTPResponseError {
            return Self.response(APIError(
                status: error.status, code: Self.code(for: error.status),
                message: (error as? HTTPError)?.body ?? error.status.reasonPhrase))
        } catch {
            context.logger.error("request failed", metadata: ["error": "\(String(reflecting: error))"])
            return Self.response(APIError(status: .internalServerError, code: "internal", message: "internal error"))
        }
    }

    static func code(for status: HTTPResponse.Status) -> String {
        switch status {
        case .badRequest: "bad_request"
        case .unauthorized: "unauthorized"
        case .forbidden: "forbidden"
        case .notFound: "not_found"
        case .methodNotAllowed: "method_not_allowed"
        case .conflict: "conflict"
        case .contentTooLarge: "too_large"
        case .unsupportedMediaType: "unsupported_media_type"
        case .tooManyRequests: "rate_limited"
        default: status.code >= 500 ? "internal" : "error"
        }
    }

    static func response(_ error: APIError) -> Response {
        var headers = error.headers
        headers[.contentType] = "application/json; charset=utf-8"
        let body = APIJSON.encode(ErrorBody(error: .init(code: error.code, message: error.message)))
        return Response(status: error.status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    struct ErrorBody: Encodable {
        struct Detail: Encodable {
            var code: String
            var message: String
        }
        var error: Detail
    }
}
