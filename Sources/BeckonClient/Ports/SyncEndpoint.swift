import Foundation

/// Where and as whom to connect.
public struct SyncEndpoint: Hashable, Sendable {
    /// `ws(s)://host[:port]/v1/sync`.
    public var url: URL
    /// The device credential (`bkd_…`) from `POST /v1/devices`.
    public var credential: String
    /// `Sec-WebSocket-Protocol`.
    public var subprotocol: String

    public init(url: URL, credential: String, subprotocol: String) {
        self.url = url
        self.credential = credential
        self.subprotocol = subprotocol
    }
}
