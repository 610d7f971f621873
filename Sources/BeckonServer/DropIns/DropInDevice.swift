import BeckonDelivery
import BeckonJSON
import BeckonProtocol
import BeckonStore
import Crypto
import Foundation

/// A device a drop-in names by its own protocol's key (a Matrix pushkey, a gorush token), not by
/// a registration of Beckon's: registered implicitly the first time, so that its pushes go
/// through the planner and the outbox like any other (throttling, escalation, Apple's 410s and
/// wake figures, docs/drop-ins.md).
enum DropInDevice {
    enum Source: String, Sendable {
        case matrix, gorush, xmpp
    }

    /// A stable device id from the key, never the key itself: ids appear in logs and on the
    /// status page, and a pushkey or token is a secret (never logged in full). In base32, so
    /// that the id does not look like a token in hex either (scripts/scan-logs.py).
    static func ref(app: String, source: Source, key: String) -> DeviceRef {
        let digest = SHA256.hash(data: Data("\(source.rawValue)\u{0}\(key)".utf8))
        return DeviceRef(appID: app, deviceID: "\(source.rawValue)-" + base32(Array(digest.prefix(15))))
    }

    /// RFC 4648 base32, lowercase, for a whole number of 5-byte groups.
    private static func base32(_ bytes: [UInt8]) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567")
        var out = "", buffer = 0, bits = 0
        for byte in bytes {
            buffer = buffer << 8 | Int(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                out.append(alphabet[(buffer >> bits) & 31])
            }
        }
        return out
    }

    /// Every capability, so that the app's own strategy (`apps.<id>.delivery.strategy`) decides
    /// what its drop-in devices get.
    static let capabilities = DeviceCapabilities(
        notificationServiceExtension: true, filtering: true, backgroundModes: [DeliveryPolicy.remoteNotificationMode])

    /// A pushkey as Sygnal's iOS clients register it (the APNs token in base64, padded or not,
    /// standard or URL alphabet) as hex; nil unless it is 8 to 100 bytes (Apple's tokens are 32,
    /// and may grow).
    static func hexToken(fromBase64 text: String) -> String? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let bytes = Data(base64Encoded: base64), (8...100).contains(bytes.count) else { return nil }
        return bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// An APNs token as gorush's and XEP-0357's callers send it: hex, 8 to 100 bytes.
    static func isHexToken(_ token: String) -> Bool {
        token.utf8.count % 2 == 0 && (16...200).contains(token.utf8.count) && token.utf8.allSatisfy(\.isHexDigit)
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (48...57).contains(self) || (65...70).contains(self) || (97...102).contains(self)
    }
}
