import Foundation
import NIOHTTP2

/// An answer as the test client saw it.
public struct TestResponse: Sendable {
    public enum End: Sendable, Equatable {
        case complete
        case reset(HTTP2ErrorCode)
        case goAway
        case closed
    }
    public var end: End = .complete
    public var status: Int?
    public var headers: [String: String] = [:]
    public var body: [UInt8] = []

    public init(end: End = .complete) {
        self.end = end
    }

    public var bodyString: String { String(decoding: body, as: UTF8.self) }
    public var json: [String: Any] { ((try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]) ?? [:] }
    public var reason: String? { json["reason"] as? String }
}
