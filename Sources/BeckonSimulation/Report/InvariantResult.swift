import BeckonJSON

/// One invariant checked at the end of a run: what it promises and whether the run kept it.
public struct InvariantResult: Hashable, Sendable {
    /// A short, stable name: the check and the phone (`stored phone`), or `steps`, `ios-policy`.
    public var name: String
    /// What the invariant promises, in one sentence.
    public var description: String
    public var passed: Bool
    /// Why it passed or failed: counts, the offending events.
    public var detail: String

    public init(name: String, description: String, passed: Bool, detail: String) {
        self.name = name
        self.description = description
        self.passed = passed
        self.detail = detail
    }

    /// The report's JSON for this result.
    public var json: JSONValue {
        .object([
            "name": .string(name), "description": .string(description), "passed": .bool(passed), "detail": .string(detail),
        ])
    }
}
