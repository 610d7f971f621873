import APNSCore
import NIOCore
import NIOHTTP2

/// The emulator's GOAWAY as bytes on the wire (RFC 9113 §6.8), written below `NIOHTTP2Handler`
/// so that NIO's connection state machine never learns of it.
///
/// Once NIO (1.46) has sent a GOAWAY itself it ignores the HEADERS of a stream the client opened
/// above the last-stream-id, but the DATA that follows is a frame on an idle stream for it: a
/// connection error, and the connection closed with answers still owed below the last-stream-id
/// (apns.md G.19). RFC 9113 says such frames may simply be discarded, and that is what the emulator
/// does itself (`ConnectionStateMachine`: a closing connection takes in no stream above it), with
/// NIO still counting the client's frames and its flow-control windows as usual.
enum GoAwayFrame {
    static func encode(_ goAway: ConnectionStateMachine.GoAway, allocator: ByteBufferAllocator) -> ByteBuffer {
        let debug = #"{"reason":""# + goAway.reason.rawValue + #""}"#
        let length = 8 + debug.utf8.count
        var frame = allocator.buffer(capacity: 9 + length)
        // Frame header: 24-bit length, type 0x7 (GOAWAY), no flags, stream 0.
        frame.writeInteger(UInt8(truncatingIfNeeded: length >> 16))
        frame.writeInteger(UInt16(truncatingIfNeeded: length))
        frame.writeInteger(UInt8(0x7))
        frame.writeInteger(UInt8(0))
        frame.writeInteger(UInt32(0))
        frame.writeInteger(UInt32(Int32(goAway.lastStreamID)) & 0x7FFF_FFFF)
        frame.writeInteger(UInt32(HTTP2ErrorCode.noError.networkCode))
        frame.writeString(debug)
        return frame
    }
}
