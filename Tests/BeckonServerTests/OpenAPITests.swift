@testable import BeckonServer
import BeckonStore
import Foundation
import Prometheus
import Testing

/// `openapi.yaml` describes exactly the routes the router serves, so the document stays in step
/// with the code.
@Suite struct OpenAPITests {
    /// The repository root, from this file's path (Tests/BeckonServerTests/OpenAPITests.swift).
    static let document = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("openapi.yaml")

    @Test func documentedRoutesAreTheServedRoutes() throws {
        let yaml = try String(contentsOf: Self.document, encoding: .utf8)
        let documented = Self.operations(inOpenAPI: yaml)
        let store = try SQLiteStore(location: .inMemory)
        let router = BeckonHTTPServer.router(
            api: BeckonAPI(store: store, configuration: .defaults), metrics: PrometheusCollectorRegistry())
        let served = Set(router.routes.map { "\($0.method.rawValue) \($0.path.description)" })
        #expect(!served.isEmpty)
        #expect(documented.subtracting(served).sorted() == [], "documented but not served")
        #expect(served.subtracting(documented).sorted() == [], "served but not documented")
    }

    @Test func theDocumentDeclaresOpenAPI31() throws {
        let yaml = try String(contentsOf: Self.document, encoding: .utf8)
        #expect(yaml.split(separator: "\n").contains { $0.hasPrefix("openapi: 3.1") })
    }

    /// `METHOD /path` for every operation under `paths:`. A minimal reader, enough for our own
    /// document's layout: paths are the keys indented two spaces under `paths:`, operations the
    /// HTTP-method keys indented four spaces under a path.
    static func operations(inOpenAPI yaml: String) -> Set<String> {
        let methods: Set<String> = ["get", "put", "post", "delete", "patch", "head", "options"]
        var operations: Set<String> = []
        var inPaths = false
        var path: String?
        for rawLine in yaml.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = String(rawLine)
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("#") || line.trimmingCharacters(in: .whitespaces).isEmpty {
                continue
            }
            let indent = line.prefix { $0 == " " }.count
            if indent == 0 {
                inPaths = line.hasPrefix("paths:")
                path = nil
                continue
            }
            guard inPaths, line.hasSuffix(":") else { continue }
            let key = line.trimmingCharacters(in: .whitespaces).dropLast()
            let unquoted = key.trimmingCharacters(in: CharacterSet(charactersIn: "'\""))
            if indent == 2 {
                path = unquoted
            } else if indent == 4, let path, methods.contains(unquoted) {
                operations.insert("\(unquoted.uppercased()) \(path)")
            }
        }
        return operations
    }
}
