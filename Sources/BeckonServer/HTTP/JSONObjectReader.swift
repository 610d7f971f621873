import BeckonJSON
import Foundation

/// Reads the fields of one JSON object of a request, refusing fields it does not know and
/// naming each field by its path in errors (`notification.locArgs[1]`).
struct JSONObjectReader {
    let path: String
    let fields: [String: JSONValue]

    /// - Parameter allowed: every field this object may have; any other is a 400
    ///   (`unknown_field`), so a misspelt optional field is not silently ignored. Nil for another
    ///   protocol's objects (the drop-ins), which grow fields we need not know.
    init(_ value: JSONValue, path: String, allowed: Set<String>?) throws(APIError) {
        guard case .object(let fields) = value else {
            throw .invalidField(path.isEmpty ? "body" : path, "must be an object, not \(value.typeName)")
        }
        self.path = path
        self.fields = fields
        // Sorted, so the same request always names the same field.
        if let allowed, let unknown = fields.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw .unknownField(name(unknown))
        }
    }

    func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    func has(_ key: String) -> Bool {
        if case .some(.null) = fields[key] { return false }
        return fields[key] != nil
    }

    /// The value, nil if absent or null.
    func value(_ key: String) -> JSONValue? {
        switch fields[key] {
        case .none, .some(.null): nil
        case .some(let value): value
        }
    }

    func string(_ key: String, maxLength: Int = 1024) throws(APIError) -> String? {
        guard let value = value(key) else { return nil }
        guard case .string(let text) = value else { throw .invalidField(name(key), "must be a string, not \(value.typeName)") }
        guard text.utf8.count <= maxLength else { throw .invalidField(name(key), "must be at most \(maxLength) bytes") }
        return text
    }

    func requiredString(_ key: String, maxLength: Int = 1024) throws(APIError) -> String {
        guard let text = try string(key, maxLength: maxLength) else { throw .invalidField(name(key), "is required") }
        guard !text.isEmpty else { throw .invalidField(name(key), "must not be empty") }
        return text
    }

    func bool(_ key: String) throws(APIError) -> Bool? {
        guard let value = value(key) else { return nil }
        guard case .bool(let flag) = value else { throw .invalidField(name(key), "must be a boolean, not \(value.typeName)") }
        return flag
    }

    /// A whole number; `45.0` is one too (JSON Schema 2020-12, which openapi.yaml uses, counts a
    /// number without a fraction as an integer).
    func integer(_ key: String) throws(APIError) -> Int64? {
        guard let value = value(key) else { return nil }
        switch value {
        case .int(let number):
            return Int64(number)
        case .double(let number) where number.rounded() == number && abs(number) < 9.2e18:
            return Int64(number)
        default:
            throw .invalidField(name(key), "must be an integer, not \(value.typeName)")
        }
    }

    /// An id the caller chooses (`Identifier`).
    func identifier(_ key: String) throws(APIError) -> String? {
        guard let text = try string(key, maxLength: Identifier.maximumBytes) else { return nil }
        if let problem = Identifier.problem(text) { throw .invalidField(name(key), problem) }
        return text
    }

    /// A list of ids the caller chooses (`Identifier`).
    func identifierArray(_ key: String, maxCount: Int) throws(APIError) -> [String]? {
        guard let ids = try stringArray(key, maxCount: maxCount, maxLength: Identifier.maximumBytes) else { return nil }
        for (index, id) in ids.enumerated() {
            if let problem = Identifier.problem(id) { throw .invalidField("\(name(key))[\(index)]", problem) }
        }
        return ids
    }

    func stringArray(_ key: String, maxCount: Int = 1000, maxLength: Int = 1024) throws(APIError) -> [String]? {
        guard let value = value(key) else { return nil }
        guard case .array(let items) = value else { throw .invalidField(name(key), "must be an array, not \(value.typeName)") }
        guard items.count <= maxCount else { throw .invalidField(name(key), "must have at most \(maxCount) items") }
        var strings: [String] = []
        for (index, item) in items.enumerated() {
            guard case .string(let text) = item, !text.isEmpty, text.utf8.count <= maxLength else {
                throw .invalidField("\(name(key))[\(index)]", "must be a non-empty string of at most \(maxLength) bytes")
            }
            strings.append(text)
        }
        return strings
    }

    func object(_ key: String, allowed: Set<String>?) throws(APIError) -> JSONObjectReader? {
        guard let value = value(key) else { return nil }
        return try JSONObjectReader(value, path: name(key), allowed: allowed)
    }

    func enumeration<E: RawRepresentable & CaseIterable>(_ key: String, _ type: E.Type) throws(APIError) -> E?
    where E.RawValue == String {
        guard let text = try string(key) else { return nil }
        guard let value = E(rawValue: text) else {
            throw .invalidField(name(key), "must be one of \(E.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return value
    }
}
