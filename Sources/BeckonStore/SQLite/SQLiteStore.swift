import CSQLiteSettings
import Foundation
import GRDB
import Logging

/// The embedded store: one SQLite file in WAL mode, through a GRDB `DatabasePool` (one writer
/// connection, concurrent readers that never block it).
///
/// Writes are serialized by GRDB on the single writer connection, which is what makes sequence
/// assignment race-free: each append reads and bumps the per-user counter inside its own write
/// transaction.
public final class SQLiteStore: BeckonStore, Sendable {
    public enum Location: Sendable, Hashable {
        /// A database file; its directory is created if missing.
        case file(path: String)
        /// A private in-memory database (no WAL, gone on close): for tests that need no file.
        case inMemory
    }

    let writer: any DatabaseWriter
    /// The hot, small writes (appends, acks, read markers) go through it to share commits.
    let groupCommit: GroupCommit
    let logger: Logger
    let now: @Sendable () -> Date

    /// SQLite's process-wide settings (no allocation statistics), applied once, before the first
    /// connection opens: SQLite refuses them after. 0 when they took.
    private static let processSettings = beckon_sqlite_configure()

    /// Opens (creating if needed) the database and brings its schema up to date.
    ///
    /// - Parameter now: the clock for `createdAt`, token registration times and expiry; tests
    ///   move it by hand.
    public init(
        location: Location,
        memory: Memory = .default,
        logger: Logger = Logger(label: "beckon.store"),
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        self.logger = logger
        self.now = now
        if Self.processSettings != 0 {
            logger.debug("SQLite was initialized before Beckon's settings; it keeps its defaults", metadata: [
                "code": "\(Self.processSettings)"
            ])
        }

        var configuration = Configuration()
        configuration.label = "beckon.store"
        configuration.foreignKeysEnabled = true
        // Another process (a CLI, a backup) may hold the write lock for a moment: wait, don't fail.
        configuration.busyMode = .timeout(5)
        // SQLite's default page cache (2 MiB) suits a small file: past a few tens of thousands of
        // devices every planning step read its pages again with pread(2), and the per-message
        // path slowed as devices were added. No memory map by default: in WAL mode a reader
        // drops its cache and unmaps its whole map when it starts a read after any commit, and
        // under a steady write load the unmapping, remapping and page faults (with the TLB
        // shootdowns they cause across cores) cost more than pread's copies: the live path's p99
        // fell from 2.0-2.3 ms to 1.7-1.9 ms without the map (BENCHMARKS.md).
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA cache_size = -\(memory.cacheMiB * 1024)")
            try db.execute(sql: "PRAGMA mmap_size = \(Int64(memory.mmapMiB) * 1024 * 1024)")
        }

        switch location {
        case .file(let path):
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let pool = try DatabasePool(path: path, configuration: configuration)
            // Durability of acknowledged writes (design rule 9): a 2xx means the message is on
            // disk. In WAL mode SQLite's NORMAL (which GRDB sets when it opens a pool) survives
            // a crash of the process, but a commit may still be lost on power loss or an OS
            // crash because the WAL is not fsynced at each commit. FULL fsyncs the WAL before
            // a commit returns. It must be set after the pool exists: GRDB sets NORMAL on the
            // writer while enabling WAL, after `prepareDatabase` has run. The writer connection
            // lives as long as the pool, so setting it once holds.
            try pool.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = FULL")
                // Each group-commit piece runs in a savepoint, and SQLite copies every existing
                // page a piece changes into a sub-journal first, to undo the piece alone. With
                // temp files on disk that journal is a file: 25 KB and 12 pwrite(2) calls a push
                // in the 100,000-device burst, over ten times the WAL (BENCHMARKS.md). Here it is
                // memory: as large as the pages the largest piece (request) changes, freed when
                // the piece ends. Only the writer: readers' large sorts still spill to a file.
                try db.execute(sql: "PRAGMA temp_store = MEMORY")
                #if canImport(Darwin)
                // On Apple platforms fsync does not flush the drive's cache; F_FULLFSYNC does.
                try db.execute(sql: "PRAGMA fullfsync = ON")
                #endif
            }
            writer = pool
        case .inMemory:
            writer = try DatabaseQueue(configuration: configuration)
        }

        // A file written by a newer Beckon has migrations this one does not know: refuse it
        // rather than run against a schema it was not written for.
        try writer.read { db in
            if try Self.migrator.hasBeenSuperseded(db) {
                throw BeckonStoreError.schemaTooNew
            }
        }
        try Self.migrator.migrate(writer)
        groupCommit = GroupCommit(writer: writer)
        logger.debug("store opened", metadata: ["location": "\(location)"])
    }

    /// Opens the database file at `path`.
    public convenience init(path: String, memory: Memory = .default, logger: Logger = Logger(label: "beckon.store")) throws {
        try self.init(location: .file(path: path), memory: memory, logger: logger)
    }

    /// How much memory SQLite may use to avoid reading the file (`database.cache-mib`,
    /// `database.mmap-mib`). A map costs address space, not memory: its pages are the kernel's
    /// page cache, shared by every connection and given back under pressure; it is off by
    /// default (see `init`).
    public struct Memory: Sendable, Hashable {
        /// The page cache of each connection, MiB.
        public var cacheMiB: Int
        /// How much of the file is read through a memory map, MiB; 0 reads with pread(2).
        public var mmapMiB: Int

        public init(cacheMiB: Int, mmapMiB: Int) {
            self.cacheMiB = cacheMiB
            self.mmapMiB = mmapMiB
        }

        public static let `default` = Memory(cacheMiB: 32, mmapMiB: 0)
    }

    /// Closes the connections. Everything acknowledged is already on disk; closing also
    /// checkpoints the WAL into the main file. Calls after this fail.
    public func close() throws {
        try writer.close()
    }

    /// The migrations applied to the database, in order (for diagnostics and tests).
    public func appliedMigrations() async throws -> [String] {
        try await writer.read { db in try Self.migrator.appliedMigrations(db) }
    }

    var timestamp: Int64 { now().millisecondsSince1970 }
}
