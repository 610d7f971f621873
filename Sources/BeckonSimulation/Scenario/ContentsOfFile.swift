import Foundation

enum ContentsOfFile {
    static func read(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }
}
