import BeckonJSON
import Foundation
import NIOConcurrencyHelpers

/// The JSON both stores keep in text columns (an app's environments and limits, a device's
/// capabilities, a message's hints).
enum StoreJSON {
    static func encode<T: Encodable>(_ value: T) throws -> String {
        // Sorted keys: the same value is the same text (a message's fingerprint hashes its
        // hints' text). Escaped slashes: the text these columns always held.
        String(decoding: try JSONStreamEncoder(options: [.sortedKeys, .escapedSlashes]).encode(value), as: UTF8.self)
    }

    static func decode<T: Decodable>(_ type: T.Type, from text: String) throws -> T {
        try JSONValueDecoder().decode(type, from: text.utf8)
    }

    /// `decode` for the small texts that repeat across rows (a device's capabilities, an app's
    /// environments): the same text is decoded once. Decoding it again for every device read was
    /// a tenth of a planning step in profiles.
    static func decodeRepeated<T: Decodable & Sendable>(_ type: T.Type, from text: String) throws -> T {
        let key = RepeatedTextKey(type: ObjectIdentifier(type), text: text)
        if let known = repeatedTexts.withLockedValue({ $0[key] }) as? T { return known }
        let value = try decode(type, from: text)
        repeatedTexts.withLockedValue { memo in
            // Bounded: texts are expected to repeat; if they do not, start over.
            if memo.count >= maximumRepeatedTexts { memo.removeAll(keepingCapacity: true) }
            memo[key] = value
        }
        return value
    }

    private struct RepeatedTextKey: Hashable {
        var type: ObjectIdentifier
        var text: String
    }

    private static let maximumRepeatedTexts = 1_024
    private static let repeatedTexts = NIOLockedValueBox<[RepeatedTextKey: any Sendable]>([:])
}
