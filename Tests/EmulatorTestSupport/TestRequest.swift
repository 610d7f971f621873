import Foundation

/// A request as the test writes it: pseudo-headers and headers in order, and a body.
public struct TestRequest: Sendable {
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(headers: [(String, String)], body: [UInt8]) {
        self.headers = headers
        self.body = body
    }

    /// A valid alert push unless modified.
    public static func push(
        token: String,
        topic: String? = "com.example.app",
        jwt: String?,
        pushType: String? = "alert",
        extra: [(String, String)] = [],
        body: String = #"{"aps":{"alert":"hi"}}"#,
        method: String = "POST",
        path: String? = nil
    ) -> TestRequest {
        var headers: [(String, String)] = [
            (":method", method), (":scheme", "https"), (":path", path ?? "/3/device/\(token)"),
            (":authority", "localhost"),
        ]
        if let jwt { headers.append(("authorization", "bearer \(jwt)")) }
        if let topic { headers.append(("apns-topic", topic)) }
        if let pushType { headers.append(("apns-push-type", pushType)) }
        headers += extra
        return TestRequest(headers: headers, body: Array(body.utf8))
    }
}
