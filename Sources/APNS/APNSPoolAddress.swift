/// The host and port a connection pool dials: with the credential, the key of one pool.
struct APNSPoolAddress: Hashable, Sendable {
    var host: String
    var port: Int
}
