import Configuration

/// The listener (`http.*`, `tls.*`).
public struct HTTPConfiguration: Sendable, Equatable {
    /// `http.host`, `http.port`: where the HTTP API listens.
    public var host = "127.0.0.1"
    public var port = 8080
    /// `http.max-connections`: connections held open at once (HTTP and sync sessions together);
    /// beyond it new ones are closed at once. Unset: the open-files limit less 256, so the
    /// process never runs out of file descriptors (see `ConnectionLimitedChannel`).
    public var maximumConnections: Int?
    /// `http.request-head-seconds`: time a new connection has to send its first request head (TLS
    /// handshake included); a slower one is closed. Without it a client trickling header bytes
    /// (slowloris) holds a connection, and a slot of `http.max-connections`, for ever.
    public var requestHeadSeconds = 10
    /// `http.idle-seconds`: a keep-alive HTTP connection with no request for this long is closed
    /// (sync sessions have their own pings).
    public var idleSeconds = 60
    /// `http.body-seconds`: a request's whole body must arrive within this long of its head, or
    /// the connection is answered 408 and closed (also after an early answer such as a 401). A
    /// byte every few seconds would reset a read timeout for ever; 30 s leaves a 1 MiB body
    /// (`limits.body-bytes`) at 35 KB/s.
    public var bodySeconds = 30
    /// `tls.certificate-chain-path` and `tls.private-key-path` (PEM): when both are set the
    /// listener speaks HTTPS/WSS itself; otherwise plain HTTP behind a TLS-terminating proxy.
    public var tlsCertificateChainPath: String?
    public var tlsPrivateKeyPath: String?

    public init() {}

    init(reading config: ConfigReader) throws(BeckonConfigurationError) {
        host = config.string(forKey: "http.host", default: host)
        port = config.int(forKey: "http.port", default: port)
        guard (0...65535).contains(port) else { throw .invalid(key: "http.port", "must be 0-65535") }
        maximumConnections = config.int(forKey: "http.max-connections")
        if let maximumConnections, maximumConnections < 1 {
            throw .invalid(key: "http.max-connections", "must be at least 1")
        }
        requestHeadSeconds = try config.positive("http.request-head-seconds", default: requestHeadSeconds)
        idleSeconds = try config.positive("http.idle-seconds", default: idleSeconds)
        bodySeconds = try config.positive("http.body-seconds", default: bodySeconds)
        tlsCertificateChainPath = config.string(forKey: "tls.certificate-chain-path")
        tlsPrivateKeyPath = config.string(forKey: "tls.private-key-path")
        if (tlsCertificateChainPath == nil) != (tlsPrivateKeyPath == nil) {
            throw .invalid(key: "tls", "set both tls.certificate-chain-path and tls.private-key-path, or neither")
        }
    }
}
