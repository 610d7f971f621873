import GRDB

extension SQLiteStore {
    /// The lengths of the `IN (…)` lists that read many rows by key in one statement. A few fixed
    /// lengths, so that each statement is compiled once and cached; a chunk shorter than its list
    /// repeats its last key (a repeated key matches its rows once).
    static let keyListLengths = [1, 4, 16, 64, 256]

    /// `(?, ?, …)` for each of `keyListLengths`.
    private static let keyLists = Dictionary(uniqueKeysWithValues: keyListLengths.map {
        ($0, "(" + repeatElement("?", count: $0).joined(separator: ", ") + ")")
    })

    /// Calls `body` with each row that `select` finds for `keys`, one statement per app and per
    /// chunk of up to 256 keys.
    ///
    /// `select` ends with `WHERE app_id = ? AND <key column> IN`. A key given twice is read once.
    /// One statement per chunk rather than one per key: besides the statement's steps, each fetch
    /// makes GRDB name the statement's columns again (a lower-cased table of them), which in a
    /// 100,000-device burst was 2% of the node's time with one fetch per device or user.
    /// The row passed to `body` is valid only during the call (read it, do not keep it).
    static func forEachRow(
        _ db: Database, select: String, keys: some Sequence<(appID: String, key: String)>, _ body: (Row) throws -> Void
    ) throws {
        // Distinct keys: within a statement SQLite matches a repeated key once, but a key given
        // twice could land in two chunks.
        var keysOfApp: [String: Set<String>] = [:]
        for (appID, key) in keys { keysOfApp[appID, default: []].insert(key) }
        for (appID, keys) in keysOfApp {
            var rest = keys[...]
            while !rest.isEmpty {
                let chunk = rest.prefix(keyListLengths.last!)
                let length = keyListLengths.first { $0 >= chunk.count }!
                var values: [(any DatabaseValueConvertible)?] = [appID]
                values.reserveCapacity(length + 1)
                for key in chunk { values.append(key) }
                while values.count <= length { values.append(values.last!) }
                let statement = try db.cachedStatement(sql: select + " " + keyLists[length]!)
                let rows = try Row.fetchCursor(statement, arguments: StatementArguments(values))
                while let row = try rows.next() { try body(row) }
                rest = rest.dropFirst(chunk.count)
            }
        }
    }
}
