import NIOHTTP2

/// How the client's `NIOHTTP2Handler` is set up: the SETTINGS it announces, and NIO's defences
/// against abusive peers sized for what APNs itself does (apns.md G.19).
///
/// Those defences turn a burst of ordinary frames into a connection error, and the connection
/// error closes the connection with every open stream: streams APNs may have processed, which
/// the client must then send again or drop. NIO's defaults (200 RST_STREAM, SETTINGS or stream
/// errors per 30 s; 32 reset streams remembered) are below what APNs legitimately sends:
/// REFUSED_STREAM for a window of in-flight streams when it lowers its limit (apns.md C.2, G.7),
/// a SETTINGS frame at every throttle change after a rejection (C.2, G.16), and answers to streams
/// the deadline sweep has already reset. APNs is the only peer, and a trusted one.
enum APNSHTTP2Configuration {
    /// More than APNs' largest stream limit seen (1,500, apns.md C.2), with room.
    static let streamsWorthOfFrames = 4_096

    static var connection: NIOHTTP2Handler.ConnectionConfiguration {
        var connection = NIOHTTP2Handler.ConnectionConfiguration()
        connection.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: 100),
            HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20),
            HTTP2Setting(parameter: .enablePush, value: 0),
        ]
        // Our header blocks are built from validated types; re-checking every field on the send
        // path cost a few percent of throughput.
        connection.headerBlockValidation = .disabled
        // Likewise `content-length`, which we derive from the body we send; parsing it back for
        // every stream cost another 1-2% of client CPU.
        connection.contentLengthValidation = .disabled
        // An answer to a stream the deadline sweep reset is ignored only while NIO remembers the reset.
        connection.maximumRecentlyResetStreams = streamsWorthOfFrames
        connection.controlFrameRateLimit.maximumCount = 100 * streamsWorthOfFrames
        connection.maximumConnectionGlitches = 100 * streamsWorthOfFrames
        return connection
    }

    static var stream: NIOHTTP2Handler.StreamConfiguration {
        var stream = NIOHTTP2Handler.StreamConfiguration()
        stream.streamResetFrameRateLimit.maximumCount = 100 * streamsWorthOfFrames
        stream.streamErrorRateLimit.maximumCount = 100 * streamsWorthOfFrames
        return stream
    }
}
