/// Why CallKit refused an incoming call (`CXErrorCodeIncomingCallError`, apns.md E.9). A
/// refused call does not ring, so the SDK does not treat it as ringing; the VoIP push was still
/// reported, which is what PushKit asks.
public enum CallRefusal: String, Hashable, Sendable {
    /// `filteredByDoNotDisturb`: a Focus or Do Not Disturb silenced it.
    case doNotDisturb
    /// `filteredByBlockList`: the user blocked the caller.
    case blocked
    /// `callUUIDAlreadyExists`: this call was reported already (and may be ringing).
    case alreadyReported
    /// `unentitled`, `unknown`, or an error CallKit did not classify.
    case failed
}

extension CallRefusal {
    /// From CallKit's error: `CXErrorCodeIncomingCallError.Code`'s raw value (2
    /// `callUUIDAlreadyExists`, 3 `filteredByDoNotDisturb`, 4 `filteredByBlockList`; apns.md
    /// E.9), nil for an error of another kind.
    public init(incomingCallErrorCode code: Int?) {
        switch code {
        case 2: self = .alreadyReported
        case 3: self = .doNotDisturb
        case 4: self = .blocked
        default: self = .failed
        }
    }
}
