import Foundation

/// A call as Beckon names it (the call message's id) and as CallKit names it (a UUID).
public struct CallIdentity: Hashable, Sendable {
    public var callID: String
    public var uuid: UUID

    /// Call ids are lowercase UUIDs (message ids); anything else gets a UUID derived from it,
    /// the same every time, so a later `callEnded` finds the call.
    public init(callID: String) {
        self.callID = callID
        self.uuid = UUID(uuidString: callID) ?? Self.derivedUUID(callID)
    }

    /// Two FNV-1a 64-bit hashes of the id, as a version-8 ("custom") UUID.
    static func derivedUUID(_ text: String) -> UUID {
        func fnv(_ seed: UInt64) -> UInt64 {
            var hash = seed
            for byte in text.utf8 {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01B3
            }
            return hash
        }
        var bytes = [UInt8](repeating: 0, count: 16)
        for (index, word) in [fnv(0xCBF2_9CE4_8422_2325), fnv(0x8422_2325_CBF2_9CE4)].enumerated() {
            for shift in 0..<8 { bytes[index * 8 + shift] = UInt8(truncatingIfNeeded: word >> (8 * UInt64(shift))) }
        }
        bytes[6] = (bytes[6] & 0x0F) | 0x80
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(uuid: (
            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
            bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}
