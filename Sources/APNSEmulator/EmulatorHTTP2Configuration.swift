import NIOHTTP2

/// How each emulated connection's `NIOHTTP2Handler` is set up: the SETTINGS APNs sends, and NIO's
/// defences against abusive peers sized for what an APNs client legitimately does.
///
/// A client may have a whole window of streams in flight when GOAWAY refuses them (apns.md C.2,
/// G.5): NIO resets each with REFUSED_STREAM and counts a stream error. With NIO's defaults (32
/// resets remembered, 200 stream errors per 30 s and per connection) the DATA that follows a
/// forgotten reset, or the 201st refusal, becomes a connection error: a second GOAWAY with
/// last-stream-id 0, taking back the first, and the connection closed with answers to processed
/// requests unsent, which the client then sends again (apns.md G.19). SETTINGS acknowledgements,
/// one per throttle change (apns.md G.16), count against another such limit.
enum EmulatorHTTP2Configuration {
    /// `streams`: the connection's configured stream limit.
    static func connection(settings: HTTP2Settings, streams: Int) -> NIOHTTP2Handler.ConnectionConfiguration {
        var connection = NIOHTTP2Handler.ConnectionConfiguration()
        connection.initialSettings = settings
        connection.maximumRecentlyResetStreams = max(2_048, 2 * streams)
        connection.maximumConnectionGlitches = max(100_000, 100 * streams)
        connection.controlFrameRateLimit.maximumCount = max(100_000, 100 * streams)
        return connection
    }

    static func stream(streams: Int) -> NIOHTTP2Handler.StreamConfiguration {
        var stream = NIOHTTP2Handler.StreamConfiguration()
        stream.streamErrorRateLimit.maximumCount = max(100_000, 100 * streams)
        stream.streamResetFrameRateLimit.maximumCount = max(100_000, 100 * streams)
        return stream
    }
}
