import Configuration
import Crypto
import Foundation

/// `xmpp.*`: Beckon as an XEP-0357 app server, connected to an XMPP server as an external
/// component (XEP-0114; docs/drop-ins.md). Unset `xmpp.host`: no component.
public struct XMPPSettings: Sendable, Equatable {
    /// `xmpp.host`, `xmpp.port`: the XMPP server's component listener (Prosody's
    /// `component_ports`, 5347 by default).
    public var host: String
    public var port: Int
    /// `xmpp.component-jid`: the component's address, the `jid` clients enable push with.
    public var componentJID: String
    /// `xmpp.component-secret`: the shared secret of the component (Prosody's
    /// `component_secret`); it also keys the registrations' secrets, so changing it voids them.
    public var componentSecret: String
    /// `xmpp.app`: the app whose devices the registrations are.
    public var appID: String
    /// `xmpp.open-registration`: whether `POST /v1/xmpp/registrations` takes a token without a
    /// user token (an app with no backend of its own, as Monal). Default false.
    public var openRegistration: Bool = false

    public init(host: String, port: Int = 5347, componentJID: String, componentSecret: String, appID: String) {
        self.host = host
        self.port = port
        self.componentJID = componentJID
        self.componentSecret = componentSecret
        self.appID = appID
    }

    /// The secret a registration's node gets: derived, so nothing is stored per registration
    /// and a publish is checked by recomputing it (HMAC-SHA256 keyed with the component secret).
    func secret(forNode node: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data(node.utf8), using: SymmetricKey(data: Data(componentSecret.utf8)))
        return mac.prefix(16).map { String(format: "%02x", $0) }.joined()
    }

    static func read(_ config: ConfigReader, apps: [AppDeclaration]) throws(BeckonConfigurationError) -> XMPPSettings? {
        guard let host = config.string(forKey: "xmpp.host") else { return nil }
        guard let jid = config.string(forKey: "xmpp.component-jid"), !jid.isEmpty else {
            throw .invalid(key: "xmpp.component-jid", "is required with xmpp.host")
        }
        guard let secret = config.string(forKey: "xmpp.component-secret", isSecret: true), secret.utf8.count >= 16 else {
            throw .invalid(key: "xmpp.component-secret", "is required with xmpp.host, at least 16 bytes")
        }
        guard let appID = config.string(forKey: "xmpp.app"), apps.contains(where: { $0.id == appID }) else {
            throw .invalid(key: "xmpp.app", "must name one of apps.ids")
        }
        var settings = XMPPSettings(
            host: host, port: config.int(forKey: "xmpp.port", default: 5347), componentJID: jid, componentSecret: secret,
            appID: appID)
        guard (1...65535).contains(settings.port) else { throw .invalid(key: "xmpp.port", "must be 1-65535") }
        settings.openRegistration = config.bool(forKey: "xmpp.open-registration", default: false)
        return settings
    }
}

// Service lifecycle logs each service as it starts and stops (`String(describing:)`): the shared
// secret must not be in that text.
extension XMPPSettings: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { "XMPPSettings(\(componentJID) at \(host):\(port), app \(appID))" }
    public var debugDescription: String { description }
}
