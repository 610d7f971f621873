import Foundation

extension UUID {
    /// Parses the 8-4-4-4-12 hex form in either case, without Foundation's `sscanf`-based parser
    /// (visible in profiles of the send path, which parses `apns-id` on every answer).
    public init?(hexString text: String) {
        var high: UInt64 = 0
        var low: UInt64 = 0
        var digits = 0
        var position = 0
        for character in text.utf8 {
            defer { position += 1 }
            if position == 8 || position == 13 || position == 18 || position == 23 {
                guard character == UInt8(ascii: "-") else { return nil }
                continue
            }
            let nibble: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = character - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = character - UInt8(ascii: "A") + 10
            default: return nil
            }
            if digits < 16 { high = high << 4 | UInt64(nibble) } else { low = low << 4 | UInt64(nibble) }
            digits += 1
        }
        guard position == 36, digits == 32 else { return nil }
        self.init(high: high, low: low)
    }

    /// The two big-endian halves of the 16 bytes.
    init(high: UInt64, low: UInt64) {
        func byte(_ value: UInt64, _ index: Int) -> UInt8 { UInt8(truncatingIfNeeded: value >> (56 - 8 * index)) }
        self.init(uuid: (
            byte(high, 0), byte(high, 1), byte(high, 2), byte(high, 3), byte(high, 4), byte(high, 5), byte(high, 6), byte(high, 7),
            byte(low, 0), byte(low, 1), byte(low, 2), byte(low, 3), byte(low, 4), byte(low, 5), byte(low, 6), byte(low, 7)
        ))
    }

    /// The 8-4-4-4-12 form in lowercase, as Apple writes `apns-id`, without Foundation's
    /// `sprintf`-based `uuidString`.
    public var lowercaseString: String {
        let digits = Array("0123456789abcdef".utf8)
        let bytes = withUnsafeBytes(of: uuid) { Array($0) }
        return String(unsafeUninitializedCapacity: 36) { buffer in
            var index = 0
            for (offset, byte) in bytes.enumerated() {
                if offset == 4 || offset == 6 || offset == 8 || offset == 10 {
                    buffer[index] = UInt8(ascii: "-")
                    index += 1
                }
                buffer[index] = digits[Int(byte >> 4)]
                buffer[index + 1] = digits[Int(byte & 0xF)]
                index += 2
            }
            return index
        }
    }
}

extension UUID {
    /// A random (version 4) UUID from the system's generator. On Linux, Foundation's `UUID()`
    /// opens the random device on every call, which showed up in profiles of the send path.
    public static func randomV4() -> UUID {
        var generator = SystemRandomNumberGenerator()
        // Version 4 in byte 6's high nibble, variant 10 in byte 8's top bits (RFC 9562 §5.4).
        let high = (generator.next() as UInt64) & ~(0xF << 12) | (0x4 << 12)
        let low = (generator.next() as UInt64) & ~(0x3 << 62) | (0x2 << 62)
        return UUID(high: high, low: low)
    }
}
