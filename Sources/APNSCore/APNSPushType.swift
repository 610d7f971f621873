/// The `apns-push-type` header values Apple defines (apns.md A.3).
public enum APNSPushType: String, Hashable, Sendable, CaseIterable {
    case alert
    case background
    case location
    case voip
    case complication
    case fileprovider
    case mdm
    case liveactivity
    case pushtotalk
    case widgets
    case controls

    /// The suffix Apple requires on the bundle id in `apns-topic` (apns.md A.3).
    /// `mdm` has none: its topic comes from the MDM certificate, not the bundle id.
    public var topicSuffix: String {
        switch self {
        case .alert, .background, .mdm: ""
        case .location: ".location-query"
        case .voip: ".voip"
        case .complication: ".complication"
        case .fileprovider: ".pushkit.fileprovider"
        case .liveactivity: ".push-type.liveactivity"
        case .pushtotalk: ".voip-ptt"
        case .widgets: ".push-type.widgets"
        case .controls: ".push-type.controls"
        }
    }

    /// The largest body APNs accepts for this type (apns.md A.4).
    public var maximumPayloadSize: Int {
        self == .voip ? 5120 : 4096
    }

    /// The `apns-topic` for an app with this bundle id.
    public func topic(forBundleID bundleID: String) -> String {
        bundleID + topicSuffix
    }
}
