import BeckonStore
import Configuration

/// The store (`database.*`): a SQLite file, or PostgreSQL for one node or several.
public struct DatabaseConfiguration: Sendable, Equatable {
    /// `database.path`: the SQLite file (WAL mode); created on first start.
    public var path = "beckon.sqlite"
    /// `database.url`: `postgres://user[:password]@host[:port]/database` puts the store on
    /// PostgreSQL instead (one node or several, docs/cluster.md); `database.path` is then unused.
    public var url: String?
    /// `database.cache-mib`: SQLite's page cache, MiB per connection (the writer and each reader).
    public var cacheMiB = SQLiteStore.Memory.default.cacheMiB
    /// `database.mmap-mib`: how much of the SQLite file is read through a memory map, MiB (0:
    /// none, every page read is a copy from the kernel).
    public var mmapMiB = SQLiteStore.Memory.default.mmapMiB

    public init() {}

    init(reading config: ConfigReader) throws(BeckonConfigurationError) {
        path = config.string(forKey: "database.path", default: path)
        url = config.string(forKey: "database.url")
        if let url, !(url.hasPrefix("postgres://") || url.hasPrefix("postgresql://")) {
            throw .invalid(key: "database.url", "must be postgres://user[:password]@host[:port]/database")
        }
        cacheMiB = try config.positive("database.cache-mib", default: cacheMiB)
        mmapMiB = try config.notNegative("database.mmap-mib", default: mmapMiB)
    }
}
