import Hummingbird

/// The ids callers choose: device ids, user ids (a user token's `sub`, message recipients) and
/// idempotency keys. Non-empty, at most 255 bytes of UTF-8, and without control characters:
/// SQLite's text functions end a string at U+0000, so `bob\u0000x` would be stored as `bob` and
/// reach Bob, and a newline in an id the server logs would forge log lines (CWE-117).
enum Identifier {
    static let maximumBytes = 255

    /// Why `text` cannot be an id, or nil if it can.
    static func problem(_ text: String) -> String? {
        if text.isEmpty { return "must not be empty" }
        if text.utf8.count > maximumBytes { return "must be at most \(maximumBytes) bytes" }
        if text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return "must not contain control characters"
        }
        return nil
    }

    /// A path parameter, percent-decoded (RFC 3986 §2.1: `/v1/devices/a%20b` names the device
    /// `a b`), and checked as an id.
    static func path(_ name: String, of context: some RequestContext) throws(APIError) -> String {
        let raw: String
        do {
            raw = try context.parameters.require(name)
        } catch {
            throw .invalidField(name, "is required")
        }
        guard let decoded = raw.removingPercentEncoding else {
            throw .invalidField(name, "is not valid percent-encoding")
        }
        if let problem = problem(decoded) { throw .invalidField(name, problem) }
        return decoded
    }
}
