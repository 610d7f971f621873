/// Makes `apns-id` and `apns-unique-id` values: random (version 4) UUIDs, without Foundation.
///
/// Foundation's `UUID()` on Linux reads the system's random source on every call (an open, a read
/// and a close of a device file), and `uuidString` formats with `snprintf`; at 60,000 answers a
/// second that was the emulator's largest cost. These ids need to be unique, not unpredictable,
/// so a 64-bit generator (SplitMix64) seeded once per connection from the system is enough.
struct RequestIDGenerator: Sendable {
    private var state: UInt64

    init(seed: UInt64 = UInt64.random(in: .min ... .max)) {
        state = seed
    }

    /// APNs' own ids are uppercase (apns.md A.5); `apns-unique-id` is lowercase.
    mutating func next(uppercase: Bool) -> String {
        let high = nextWord()
        let low = nextWord()
        let digits: StaticString = uppercase ? "0123456789ABCDEF" : "0123456789abcdef"
        return String(unsafeUninitializedCapacity: 36) { buffer in
            digits.withUTF8Buffer { table in
                var out = 0
                func put(_ word: UInt64, _ nibbles: Range<Int>) {
                    for nibble in nibbles {
                        if out == 8 || out == 13 || out == 18 || out == 23 {
                            buffer[out] = UInt8(ascii: "-")
                            out += 1
                        }
                        buffer[out] = table[Int((word >> UInt64(60 - 4 * nibble)) & 0xF)]
                        out += 1
                    }
                }
                // Version 4 (random) and the RFC 4122 variant, so strict parsers accept them.
                let versioned = (high & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_4000
                let variant = (low & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
                put(versioned, 0..<16)
                put(variant, 0..<16)
            }
            return 36
        }
    }

    private mutating func nextWord() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
