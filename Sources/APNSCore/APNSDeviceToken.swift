/// A device token: the hex text APNs expects in `:path` (`/3/device/<hex>`).
///
/// Apple tokens are 32 bytes today, but Apple warns they may grow, so any even-length hex string
/// of 32 to 100 bytes is accepted. The text is normalised to lowercase.
public struct APNSDeviceToken: Hashable, Sendable, CustomStringConvertible {
    public let hex: String
    /// `/3/device/<hex>`, built once per token rather than on every request.
    package let path: String

    public init(hex text: String) throws(APNSDeviceTokenError) {
        let utf8 = text.utf8
        guard utf8.count % 2 == 0, (64...200).contains(utf8.count) else {
            throw .badLength(utf8.count)
        }
        guard utf8.allSatisfy({ $0.isHexDigit }) else { throw .notHex }
        hex = text.lowercased()
        path = "/3/device/" + hex
    }

    public init(bytes: some Sequence<UInt8>) throws(APNSDeviceTokenError) {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in bytes { text.append(digits[Int(byte >> 4)]); text.append(digits[Int(byte & 0xF)]) }
        try self.init(hex: String(decoding: text, as: UTF8.self))
    }

    /// Enough to tell tokens apart in a log, never the whole token.
    public var redacted: String { String(hex.prefix(8)) + "…" }

    public var description: String { redacted }

    public static func == (lhs: APNSDeviceToken, rhs: APNSDeviceToken) -> Bool { lhs.hex == rhs.hex }
    public func hash(into hasher: inout Hasher) { hasher.combine(hex) }
}

public enum APNSDeviceTokenError: Error, Hashable, Sendable, CustomStringConvertible {
    case badLength(Int)
    case notHex

    public var description: String {
        switch self {
        case .badLength(let count): "a device token is 64 to 200 hex digits, an even number; got \(count)"
        case .notHex: "a device token may contain only hex digits 0-9 and a-f"
        }
    }
}

extension UInt8 {
    var isHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }
}
