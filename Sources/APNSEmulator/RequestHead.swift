import APNSCore
import Foundation
import NIOHTTP2

/// The parts of a request's header block APNs looks at, picked out in one pass.
struct RequestHead: Sendable {
    var method: String?
    var path: String?
    var authorization: String?
    var apnsID: String?
    var expiration: String?
    var priority: String?
    var topic: String?
    var pushType: String?
    var collapseID: String?
    /// An APNs header (`authorization`, `apns-*`) appeared twice → `DuplicateHeaders`.
    var hasDuplicates = false
    /// Regular headers as sent (no pseudo-headers, no `authorization`), for the device log.
    var recorded: [String: String] = [:]

    init(method: String? = nil, path: String? = nil) {
        self.method = method
        self.path = path
    }

    init(_ payload: HTTP2Frame.FramePayload.Headers) {
        for (name, value, _) in payload.headers {
            switch name {
            case ":method": method = value
            case ":path": path = value
            case ":scheme", ":authority": continue
            case "authorization": hasDuplicates = hasDuplicates || authorization != nil; authorization = value
            case "apns-id": hasDuplicates = hasDuplicates || apnsID != nil; apnsID = value
            case "apns-expiration": hasDuplicates = hasDuplicates || expiration != nil; expiration = value
            case "apns-priority": hasDuplicates = hasDuplicates || priority != nil; priority = value
            case "apns-topic": hasDuplicates = hasDuplicates || topic != nil; topic = value
            case "apns-push-type": hasDuplicates = hasDuplicates || pushType != nil; pushType = value
            case "apns-collapse-id": hasDuplicates = hasDuplicates || collapseID != nil; collapseID = value
            default: break
            }
            if name != "authorization", !name.hasPrefix(":") { recorded[name] = value }
        }
    }
}

enum RequestSyntax {
    /// Canonical UUID, 8-4-4-4-12 hex digits (apns.md A.2). Apple asks for lowercase; clients send
    /// both cases and APNs accepts them, so either case passes.
    static func isUUID(_ text: String) -> Bool {
        let utf8 = text.utf8
        guard utf8.count == 36 else { return false }
        var index = 0
        for byte in utf8 {
            switch index {
            case 8, 13, 18, 23: if byte != UInt8(ascii: "-") { return false }
            default: if !isHex(byte) { return false }
            }
            index += 1
        }
        return true
    }

    @inline(__always)
    static func isHex(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }

    /// Even-length hex of 64–200 digits, as `APNSDeviceToken` accepts (apns.md E.7: don't assume 32 bytes).
    static func isDeviceToken(_ text: Substring) -> Bool {
        let utf8 = text.utf8
        guard utf8.count % 2 == 0, (64...200).contains(utf8.count) else { return false }
        return utf8.allSatisfy(isHex)
    }

    static func isValidTopic(_ topic: String) -> Bool {
        !topic.isEmpty && topic.utf8.count <= 255
            && topic.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "/") }
    }

    /// Nil when not a non-negative integer.
    static func epochSeconds(_ text: String) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            return nil
        }
        return Int64(text)
    }
}
