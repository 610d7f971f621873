/// A scenario file that cannot be played: where, and what is wrong, in a sentence.
public struct ScenarioError: Error, CustomStringConvertible, Sendable {
    /// The JSON path, e.g. `steps[3].do`.
    public var path: String
    public var problem: String

    public init(_ path: String, _ problem: String) {
        self.path = path
        self.problem = problem
    }

    public var description: String { path.isEmpty ? problem : "\(path): \(problem)" }
}
