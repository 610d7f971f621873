import Foundation
import NIOConcurrencyHelpers

/// Every HTTP answer the tests see, written where `scripts/check-responses.py` reads it.
///
/// With `BECKON_TEST_RESPONSES_FILE` set (`scripts/test.sh` sets it), each answer a test client
/// receives is appended as one JSON line (method, URI, status, content type, body); the script then
/// checks each against `openapi.yaml`: a documented status, and a body that matches its schema.
/// Without it, nothing is written.
public enum ResponseCapture {
    public static func record(method: String, uri: String, status: Int, contentType: String?, body: [UInt8]) {
        guard let sink else { return }
        var record: [String: Any] = [
            "method": method, "uri": uri, "status": status, "body": String(decoding: body, as: UTF8.self),
        ]
        if let contentType { record["contentType"] = contentType }
        guard var line = try? JSONSerialization.data(withJSONObject: record, options: [.sortedKeys]) else { return }
        line.append(UInt8(ascii: "\n"))
        sink.withLockedValue { $0.write(line) }
    }

    private static let sink: NIOLockedValueBox<FileHandle>? = {
        guard let path = ProcessInfo.processInfo.environment["BECKON_TEST_RESPONSES_FILE"] else { return nil }
        if !FileManager.default.fileExists(atPath: path) {
            FileManager.default.createFile(atPath: path, contents: nil)
        }
        guard let file = FileHandle(forWritingAtPath: path) else { return nil }
        file.seekToEndOfFile()
        return NIOLockedValueBox(file)
    }()
}
