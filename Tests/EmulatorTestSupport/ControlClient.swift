import Foundation
import NIOCore
import NIOPosix

/// What the control API answered. The JSON is read with `JSONSerialization`, on purpose: the
/// tests check the emulator's encoder, so they do not share it.
public struct ControlReply: Sendable {
    public var status: Int
    public var headers: [String: String]
    public var body: [UInt8]

    public var json: [String: Any] { ((try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]) ?? [:] }
    public var errorCode: String? { (json["error"] as? [String: Any])?["code"] as? String }
}

/// A minimal HTTP/1.1 client over a raw TCP socket: one request per connection with
/// `connection: close`, reading until the server closes. Enough to test the control API over
/// real HTTP without another dependency.
public struct ControlClient: Sendable {
    public var port: Int

    public init(port: Int) {
        self.port = port
    }

    public func request(_ method: String, _ path: String, json: String? = nil) async throws -> ControlReply {
        let body = Array((json ?? "").utf8)
        var text = "\(method) \(path) HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n"
        if json != nil { text += "content-type: application/json\r\n" }
        text += "content-length: \(body.count)\r\n\r\n"
        let done = MultiThreadedEventLoopGroup.singleton.next().makePromise(of: [UInt8].self)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ReplyCollector(done: done))
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        var buffer = channel.allocator.buffer(string: text)
        buffer.writeBytes(body)
        try await channel.writeAndFlush(buffer)
        let bytes = try await done.futureResult.get()
        return try Self.parse(bytes)
    }

    public func get(_ path: String) async throws -> ControlReply { try await request("GET", path) }
    public func post(_ path: String, _ json: String = "{}") async throws -> ControlReply { try await request("POST", path, json: json) }
    public func delete(_ path: String) async throws -> ControlReply { try await request("DELETE", path) }

    public static func parse(_ bytes: [UInt8]) throws -> ControlReply {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let end = (0...(bytes.count - separator.count)).first(where: { Array(bytes[$0..<$0 + 4]) == separator }) else {
            throw ControlClientError.malformed
        }
        let lines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusLine = lines[0].split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw ControlClientError.malformed }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return ControlReply(status: status, headers: headers, body: Array(bytes[(end + 4)...]))
    }
}

public enum ControlClientError: Error {
    case malformed
}

private final class ReplyCollector: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private let done: EventLoopPromise<[UInt8]>
    private var bytes: [UInt8] = []

    init(done: EventLoopPromise<[UInt8]>) {
        self.done = done
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        bytes += unwrapInboundIn(data).readableBytesView
    }

    func channelInactive(context: ChannelHandlerContext) {
        done.succeed(bytes)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        done.fail(error)
        context.close(promise: nil)
    }
}
