import BeckonJSON
import BeckonProtocol

/// A push as `didReceiveRemoteNotification` (or the launch options) hands it over.
public struct RemoteNotification: Hashable, Sendable {
    public var payload: JSONValue
    /// Beckon's part (`beckon`), when it is a Beckon push.
    public var beckon: BeckonPushPayload?

    public init(payload: JSONValue) {
        self.payload = payload
        self.beckon = BeckonPushPayload(payload: payload)
    }

    /// The server's clear-all push: `{"aps":{"badge":0}}` and nothing else. iOS clears every
    /// notification of the app when it arrives (seed 000).
    public var isClearAll: Bool {
        if beckon?.reason == .clearAll { return true }
        guard beckon == nil, case .object(let aps)? = payload["aps"] else { return false }
        return aps.count == 1 && aps["badge"]?.intValue == 0
    }

    /// What a tap on it opens.
    public var tap: NotificationTap { NotificationTap(identifier: beckon?.ids.last, payload: payload) }
}
