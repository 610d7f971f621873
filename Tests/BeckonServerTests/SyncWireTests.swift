@testable import BeckonServer
import NIOCore
import Testing

/// The WebSocket wire of a sync session against hostile bytes (scripts/sync-hostile-input.py is the
/// long version): one close frame a session, whatever follows the first violation, and a
/// client's close code echoed only if an endpoint may send it.
@Suite struct SyncWireTests {
    @Test func twoViolationsInOneWriteGetOneCloseFrame() async throws {
        try await SyncTestServer.with { server in
            let credential = try await server.device(user: "alice", device: "phone")
            // A reserved opcode (0x3), then a ping over 125 bytes, in one write after hello.
            let frames = Self.masked(opcode: 0x1, Array(#"{"type":"hello","version":2,"cursor":0}"#.utf8))
                + Self.masked(opcode: 0x3, Array("abc".utf8)) + Self.masked(opcode: 0x9, Array(repeating: 0x61, count: 126))
            let answer = try await Self.exchange(port: server.port, credential: credential, frames)
            let closes = answer.filter { $0.opcode == 0x8 }
            #expect(closes.map(\.code) == [1002], "\(answer.map(\.opcode))")
        }
    }

    @Test func aClientsCloseCodeIsEchoedOnlyIfItMayBeSent() async throws {
        try await SyncTestServer.with { server in
            let credential = try await server.device(user: "alice", device: "phone")
            for (sent, expected) in [(4001, 4001), (1000, 1000), (5000, 1002), (1005, 1002), (999, 1002)] as [(UInt16, UInt16)] {
                let close = Self.masked(opcode: 0x8, [UInt8(sent >> 8), UInt8(sent & 0xFF)])
                let answer = try await Self.exchange(port: server.port, credential: credential, close)
                #expect(answer.filter { $0.opcode == 0x8 }.map(\.code) == [expected], "close \(sent)")
            }
        }
    }

    struct Frame {
        var opcode: UInt8
        var payload: [UInt8]
        var code: UInt16? { payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : nil }
    }

    /// A client frame (masked, RFC 6455 §5.3), payloads under 64 KiB.
    static func masked(opcode: UInt8, _ payload: [UInt8]) -> [UInt8] {
        let mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        var frame: [UInt8] = [0x80 | opcode]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        return frame + mask + payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
    }

    /// Upgrades, writes `bytes`, and returns the frames the server sent until it hung up.
    static func exchange(port: Int, credential: String, _ bytes: [UInt8]) async throws -> [Frame] {
        let connection = try await RawConnection.open(port: port)
        let upgrade = "GET /v1/sync HTTP/1.1\r\nHost: test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            + "Sec-WebSocket-Protocol: beckon.v2\r\nAuthorization: Bearer \(credential)\r\n\r\n"
        try await connection.channel.writeAndFlush(ByteBuffer(bytes: Array(upgrade.utf8) + bytes)).get()
        var received = try await connection.everything(within: .seconds(10))
        guard let head = received.firstRange(of: Array("\r\n\r\n".utf8)) else { return [] }
        received.removeSubrange(..<head.upperBound)
        var frames: [Frame] = []
        while received.count >= 2 {
            var length = Int(received[1] & 0x7F)
            var start = 2
            if length == 126 {
                guard received.count >= 4 else { break }
                length = Int(received[2]) << 8 | Int(received[3])
                start = 4
            }
            guard received.count >= start + length else { break }
            frames.append(Frame(opcode: received[0] & 0x0F, payload: Array(received[start..<start + length])))
            received.removeFirst(start + length)
        }
        return frames
    }
}
