import BeckonJSON
import Foundation
import Hummingbird

/// Reads a JSON request body within the configured size limit.
enum RequestBody {
    /// The body as JSON. 415 if it is not declared as JSON, 413 past `limit` bytes (checked on the
    /// declared length first, so an oversize upload is refused before it is read), 400 if it does
    /// not parse.
    /// `anyContentType`: the body is read as JSON whatever its `Content-Type` says (gorush's
    /// route: its callers send `curl -d`, which says form data).
    static func json(_ request: Request, limit: Int, anyContentType: Bool = false) async throws -> JSONValue {
        guard anyContentType || isJSON(request.headers[.contentType]) else { throw APIError.unsupportedMediaType }
        if let declared = request.headers[.contentLength].flatMap(Int.init), declared > limit {
            throw tooLarge(limit)
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: limit)
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            throw tooLarge(limit)
        }
        return try APIJSON.parse(buffer.readableBytesView)
    }

    /// `application/json` or any `+json` type (RFC 6839), parameters such as `charset` allowed.
    static func isJSON(_ contentType: String?) -> Bool {
        guard let contentType else { return false }
        let lowered = contentType.prefix { $0 != ";" }.trimmingOptionalWhitespace().lowercasedASCII()
        return lowered == "application/json" || (lowered.hasPrefix("application/") && lowered.hasSuffix("+json"))
    }

    private static func tooLarge(_ limit: Int) -> APIError {
        .tooLarge("the body is larger than \(limit) bytes (limits.body-bytes)")
    }
}
