import BeckonJSON

/// Reads one JSON object of a scenario file, field by field, with the path in every error.
struct ScenarioReader {
    let object: [String: JSONValue]
    let path: String

    init(_ value: JSONValue?, path: String, allowed: Set<String>) throws(ScenarioError) {
        guard case .object(let object)? = value else { throw ScenarioError(path, "must be an object") }
        if let unknown = object.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw ScenarioError(
                Self.join(path, unknown), "unknown field; expected one of \(allowed.sorted().joined(separator: ", "))")
        }
        self.object = object
        self.path = path
    }

    static func join(_ path: String, _ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    func at(_ key: String) -> String { Self.join(path, key) }

    func string(_ key: String) throws(ScenarioError) -> String? {
        switch object[key] {
        case nil, .null?: return nil
        case .string(let text)?: return text
        default: throw ScenarioError(at(key), "must be a string")
        }
    }

    func required(_ key: String) throws(ScenarioError) -> String {
        guard let text = try string(key) else { throw ScenarioError(at(key), "is required") }
        return text
    }

    func number(_ key: String) throws(ScenarioError) -> Double? {
        switch object[key] {
        case nil, .null?: return nil
        case .int(let value)?: return Double(value)
        case .double(let value)?: return value
        default: throw ScenarioError(at(key), "must be a number")
        }
    }

    func bool(_ key: String) throws(ScenarioError) -> Bool? {
        switch object[key] {
        case nil, .null?: return nil
        case .bool(let value)?: return value
        default: throw ScenarioError(at(key), "must be true or false")
        }
    }

    func strings(_ key: String) throws(ScenarioError) -> [String]? {
        switch object[key] {
        case nil, .null?: return nil
        case .string(let single)?: return [single]
        case .array(let items)?:
            var strings: [String] = []
            for item in items {
                guard case .string(let text) = item else { throw ScenarioError(at(key), "must hold strings") }
                strings.append(text)
            }
            return strings
        default: throw ScenarioError(at(key), "must be a string or an array of strings")
        }
    }

    func enumeration<Value: RawRepresentable>(_ key: String, _ type: Value.Type) throws(ScenarioError) -> Value?
    where Value.RawValue == String {
        guard let text = try string(key) else { return nil }
        guard let value = Value(rawValue: text) else { throw ScenarioError(at(key), "unknown value \"\(text)\"") }
        return value
    }
}
