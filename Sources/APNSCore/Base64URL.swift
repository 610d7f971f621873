/// Base64url without padding (RFC 4648 §5), the encoding JWTs use (RFC 7515 §2).
///
/// Coded here rather than through Foundation's base64 and three `replacingOccurrences`: those go
/// through NSString, and on the registration path (a user token checked, a credential issued) they
/// took 6% of a node's time in a profile.
public enum Base64URL {
    /// The two characters after `A-Z a-z 0-9`: RFC 4648 §5's `-` and `_` by default.
    public struct Symbols: Sendable {
        public var index62: UInt8
        public var index63: UInt8

        public init(_ index62: Character, _ index63: Character) {
            self.index62 = index62.asciiValue!
            self.index63 = index63.asciiValue!
        }

        public static let url = Symbols("-", "_")
    }

    public static func encode<Bytes: Sequence>(_ bytes: Bytes, symbols: Symbols = .url) -> String where Bytes.Element == UInt8 {
        let input = Array(bytes)
        let length = (input.count * 8 + 5) / 6
        return String(unsafeUninitializedCapacity: length) { output in
            func character(_ value: UInt32) -> UInt8 {
                switch value & 63 {
                case let v where v < 26: UInt8(v) + UInt8(ascii: "A")
                case let v where v < 52: UInt8(v - 26) + UInt8(ascii: "a")
                case let v where v < 62: UInt8(v - 52) + UInt8(ascii: "0")
                case 62: symbols.index62
                default: symbols.index63
                }
            }
            var written = 0
            var index = 0
            while index < input.count {
                // Up to three bytes make up to four characters; a short group makes fewer.
                let count = min(3, input.count - index)
                var group = UInt32(input[index]) << 16
                if count > 1 { group |= UInt32(input[index + 1]) << 8 }
                if count > 2 { group |= UInt32(input[index + 2]) }
                for shift in stride(from: 18, through: 18 - 6 * count, by: -6) {
                    output[written] = character(group >> UInt32(shift))
                    written += 1
                }
                index += 3
            }
            return written
        }
    }

    /// Nil when the text is not unpadded base64url in these symbols.
    public static func decode<Text: StringProtocol>(_ text: Text, symbols: Symbols = .url) -> [UInt8]? {
        let characters = text.utf8
        guard characters.count % 4 != 1 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(characters.count * 3 / 4)
        var group: UInt32 = 0
        var bits = 0
        for character in characters {
            let value: UInt8
            switch character {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = character - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = character - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = character - UInt8(ascii: "0") + 52
            case symbols.index62: value = 62
            case symbols.index63: value = 63
            default: return nil
            }
            group = group << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: group >> UInt32(bits)))
            }
        }
        return output
    }
}
