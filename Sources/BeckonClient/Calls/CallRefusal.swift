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
