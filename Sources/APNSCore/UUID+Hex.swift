import Foundation
#if canImport(Glibc)
import Glibc
#endif

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
        withUnsafeBytes(of: uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { buffer in
                // No arrays: this runs once per notification.
                func digit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? nibble + 0x30 : nibble + 0x57 }
                var index = 0
                for offset in 0..<16 {
                    if offset == 4 || offset == 6 || offset == 8 || offset == 10 {
                        buffer[index] = UInt8(ascii: "-")
                        index += 1
                    }
                    let byte = bytes[offset]
                    buffer[index] = digit(byte >> 4)
                    buffer[index + 1] = digit(byte & 0xF)
                    index += 2
                }
                return index
            }
        }
    }
}

extension UUID {
    /// A random (version 4) UUID from the system's generator. On Linux, Foundation's `UUID()`
    /// opens the random device on every call, which showed up in profiles of the send path.
    public static func randomV4() -> UUID {
        let (first, second) = SystemRandomWords.next()
        // Version 4 in byte 6's high nibble, variant 10 in byte 8's top bits (RFC 9562 §5.4).
        let high = first & ~(0xF << 12) | (0x4 << 12)
        let low = second & ~(0x3 << 62) | (0x2 << 62)
        return UUID(high: high, low: low)
    }
}

extension UUID {
    /// A time-ordered (version 7) UUID: the milliseconds since 1970 in its first 48 bits, then 74
    /// random bits (RFC 9562 §5.7). Ids made one after the other sort one after the other, so a
    /// table keyed by them takes new rows at the end of its index — one page written for a batch
    /// of inserts, not one random page each (the outbox and the message table).
    public static func timeOrdered(at date: Date = Date()) -> UUID {
        let (first, second) = SystemRandomWords.next()
        let milliseconds = UInt64(max(0, (date.timeIntervalSince1970 * 1000).rounded(.down))) & 0xFFFF_FFFF_FFFF
        // Version 7 in bits 48-51, 12 random bits; variant 10 in the second half's top bits.
        let high = milliseconds << 16 | 0x7 << 12 | first & 0xFFF
        let low = second & ~(0x3 << 62) | (0x2 << 62)
        return UUID(high: high, low: low)
    }

    /// The text every `timeOrdered(at:)` id of that millisecond starts with (lowercase): ids of
    /// a time range are the texts between two of these, so a table keyed by them finds a range
    /// of time by its key, without an index on time.
    public static func timeOrderedPrefix(at date: Date) -> String {
        let milliseconds = UInt64(max(0, (date.timeIntervalSince1970 * 1000).rounded(.down))) & 0xFFFF_FFFF_FFFF
        let hex = String(milliseconds, radix: 16)
        let digits = String(repeating: "0", count: 12 - hex.count) + hex
        return "\(digits.prefix(8))-\(digits.suffix(4))"
    }
}

/// Two words from the system's cryptographic generator.
///
/// On Linux, `SystemRandomNumberGenerator` makes one `getrandom` system call per 8 bytes, two per
/// UUID: a visible share of the send path. Here words come from a 256-byte block (the most one
/// `getentropy` call returns), refilled under a lock: one system call per 16 UUIDs.
enum SystemRandomWords {
    #if canImport(Glibc)
    private final class Block: @unchecked Sendable {  // Guarded by `lock`.
        let lock = NSLock()
        var words = [UInt64](repeating: 0, count: 32)
        var used = 32
    }
    private static let block = Block()

    static func next() -> (UInt64, UInt64) {
        let block = self.block
        block.lock.lock()
        defer { block.lock.unlock() }
        if block.used + 2 > block.words.count {
            let filled = block.words.withUnsafeMutableBytes { getentropy($0.baseAddress, $0.count) } == 0
            if !filled {
                var generator = SystemRandomNumberGenerator()
                for index in block.words.indices { block.words[index] = generator.next() }
            }
            block.used = 0
        }
        defer { block.used += 2 }
        return (block.words[block.used], block.words[block.used + 1])
    }
    #else
    static func next() -> (UInt64, UInt64) {
        var generator = SystemRandomNumberGenerator()  // Userspace on Darwin (arc4random).
        return (generator.next(), generator.next())
    }
    #endif
}
