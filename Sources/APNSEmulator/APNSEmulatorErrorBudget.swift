/// How many rejected requests a connection may send before the emulator closes it.
///
/// Apple: "APNs disconnects connections with many 4xx errors", sooner for `BadDeviceToken`
/// (apns.md A.7 tip, C.4, G.15). Apple publishes no numbers, so both limits are configuration.
/// 410s don't count: a provider can't know a token died before it asks.
public struct APNSEmulatorErrorBudget: Sendable, Hashable {
    /// 4xx answers (other than 410) after which the connection gets GOAWAY; nil = no limit.
    public var errors: Int?
    /// `BadDeviceToken` answers after which the connection gets GOAWAY; nil = only `errors` applies.
    public var badDeviceTokenErrors: Int?

    public init(errors: Int? = 1000, badDeviceTokenErrors: Int? = 100) {
        self.errors = errors
        self.badDeviceTokenErrors = badDeviceTokenErrors
    }
}
