import BeckonJSON
import Foundation

/// The API's JSON, in one place so every answer looks the same: sorted keys (stable bytes, so a
/// stored payload re-encoded for an idempotent retry compares equal), no escaped slashes, dates
/// as RFC 3339 strings with milliseconds (`timestamp`).
enum APIJSON {
    static func encode(_ value: some Encodable) -> [UInt8] {
        // Our answer types hold only strings, numbers, booleans, arrays, dictionaries and dates:
        // encoding cannot fail (only non-finite doubles could, and none are produced).
        (try? JSONStreamEncoder(options: [.sortedKeys, .rfc3339Dates]).encode(value)) ?? Array("null".utf8)
    }

    /// Parses a request body; the error says where the JSON broke.
    static func parse(_ bytes: some Collection<UInt8>) throws(APIError) -> JSONValue {
        do {
            return try JSONParser.parse(bytes)
        } catch {
            throw .malformedJSON(error.description)
        }
    }

    /// RFC 3339 with milliseconds, the precision the store keeps.
    static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    static func parseTimestamp(_ text: String) -> Date? {
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return date }
        return try? Date.ISO8601FormatStyle().parse(text)
    }
}
