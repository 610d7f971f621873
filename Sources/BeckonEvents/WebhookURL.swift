import Foundation

/// A receiver's address: `http` or `https`, a host, a port and a path (with its query).
public struct WebhookURL: Sendable, Equatable, CustomStringConvertible {
    public var tls: Bool
    public var host: String
    public var port: Int
    /// The request target: the path and query, at least "/".
    public var target: String

    /// Nil for anything but an absolute http(s) URL with a host and no user info.
    public init?(_ text: String) {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty,
            components.user == nil, components.password == nil
        else { return nil }
        tls = scheme == "https"
        // An IPv6 literal comes bracketed in the URL, bare to the resolver.
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        port = components.port ?? (tls ? 443 : 80)
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        target = components.percentEncodedQuery.map { path + "?" + $0 } ?? path
    }

    /// The `Host` header.
    var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == (tls ? 443 : 80) ? name : "\(name):\(port)"
    }

    /// The TLS server name: the host, unless it is an IP address (SNI carries names only, RFC 6066 §3;
    /// the certificate is then checked against the address).
    var serverName: String? {
        host.contains(":") || host.allSatisfy({ $0.isNumber || $0 == "." }) ? nil : host
    }

    /// The address without its query, which may carry a credential of the receiver's (shown on
    /// the status page, in `GET /v1/webhook` and in logs): `?…` stands for it.
    public var description: String {
        let path = target.firstIndex(of: "?").map { String(target[..<$0]) + "?…" } ?? target
        return "\(tls ? "https" : "http")://\(hostHeader)\(path)"
    }
}
