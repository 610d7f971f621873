import Foundation
import GRDB

/// The device's copy of what matters between launches, in one SQLite file that the app and its
/// extensions share (the app-group container on iOS): messages deduplicated by id, the sync
/// cursor, read state, the notification ledger, calls, and the lease that says which process
/// may write.
///
/// WAL mode (`DatabasePool`), so readers never wait for the writer. Every write goes through
/// `write(as:)`, which checks inside its own transaction that the caller still holds the lease:
/// one writer between app and extension (docs/design.md, "Share one store between the app and
/// its notification service extension"). Transactions are short and none spans a suspension:
/// the lease is a row, never a file lock held while iOS freezes the process (0xdead10cc).
public final class ClientStore: Sendable {
    /// The database once open; `closed` after `close()`, for good.
    private let opened = Locked<(pool: DatabasePool?, closed: Bool)>((nil, false))
    /// Transactions running now.
    private let inFlight = Locked(0)
    private let configuration: Configuration
    /// Whether an open may be tried now (the device simulator's first-unlock rule); on iOS the
    /// system itself refuses the file before the first unlock.
    private let canOpen: @Sendable () -> Bool
    /// Runs the open (the iOS adapter: inside file coordination, after giving the directory its
    /// protection class).
    private let around: @Sendable (_ path: String, _ open: () throws -> Void) throws -> Void
    let clock: any ClientClock
    /// The database file.
    public let path: String

    /// Whether `suspend()` and `resume()` do anything (see there).
    public let observesSuspension: Bool

    /// Opens (creating and migrating if needed) the store at `path` now, or throws.
    /// `observesSuspension`: on iOS, where the store lives in the app group and the process is
    /// frozen in the background (the iOS adapter's `ClientStore.appGroup` sets it).
    public convenience init(path: String, clock: any ClientClock = SystemClock(), observesSuspension: Bool = false) throws {
        self.init(deferredAt: path, clock: clock, observesSuspension: observesSuspension, canOpen: { true }, around: { try $1() })
        _ = try pool
    }

    /// A store opened at its first use, and again at each use until it opens. Before the first
    /// unlock after a restart iOS keeps the file unreadable (apns.md E.9), and an app launched
    /// then for a VoIP push must still report its call: so nothing opens the file at launch, and
    /// every use until it opens throws `ClientStoreError.unavailable`. `around` runs the open
    /// (to coordinate it with other processes, or to prepare the directory first).
    public static func deferred(
        path: String, clock: any ClientClock = SystemClock(), observesSuspension: Bool = false,
        canOpen: @escaping @Sendable () -> Bool = { true },
        around: @escaping @Sendable (_ path: String, _ open: () throws -> Void) throws -> Void = { try $1() }
    ) -> ClientStore {
        ClientStore(deferredAt: path, clock: clock, observesSuspension: observesSuspension, canOpen: canOpen, around: around)
    }

    private init(
        deferredAt path: String, clock: any ClientClock, observesSuspension: Bool, canOpen: @escaping @Sendable () -> Bool,
        around: @escaping @Sendable (_ path: String, _ open: () throws -> Void) throws -> Void
    ) {
        var configuration = Configuration()
        configuration.label = "BeckonClient"
        // The other process may be committing: wait for it rather than fail. Its transactions
        // are as short as ours.
        configuration.busyMode = .timeout(5)
        // GRDB stops taking SQLite locks once told the app is about to be suspended: the other
        // half, with the lease, of never holding a lock while frozen (0xdead10cc).
        configuration.observesSuspensionNotifications = observesSuspension
        // One reader is plenty for a phone's few queries, and each reader is a connection with
        // its own page cache: the notification service extension lives in about 24 MB (apns.md E.4).
        configuration.maximumReaderCount = 1
        self.configuration = configuration
        self.canOpen = canOpen
        self.around = around
        self.clock = clock
        self.path = path
        self.observesSuspension = observesSuspension
    }

    /// The open database, opened (and migrated) now if it was not yet.
    var pool: DatabasePool {
        get throws {
            try opened.withLock { opened in
                if let pool = opened.pool { return pool }
                guard !opened.closed else { throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "the store is closed") }
                guard canOpen() else { throw ClientStoreError.unavailable("protected data is not available yet") }
                var pool: DatabasePool?
                do {
                    try around(path) {
                        let database = try DatabasePool(path: path, configuration: configuration)
                        try Self.migrator.migrate(database)
                        pool = database
                    }
                } catch {
                    throw ClientStoreError.unavailable(String(describing: error))
                }
                guard let pool else { throw ClientStoreError.unavailable("the store was not opened") }
                opened.pool = pool
                return pool
            }
        }
    }

    /// Whether the store is open, or opens now.
    public var isAvailable: Bool { (try? pool) != nil }

    /// No SQLite lock is taken until `resume()`: called before the process may be suspended,
    /// after the lease was let go. GRDB's notification is process-wide, so this is off unless
    /// the store was opened with `observesSuspension` (one store per process, as on iOS; tests
    /// and the simulator run many in one process).
    public func suspend() {
        guard observesSuspension else { return }
        NotificationCenter.default.post(name: Database.suspendNotification, object: self)
    }

    /// Lets the store take locks again after `suspend()`; the SDK calls it at each entry point.
    public func resume() {
        guard observesSuspension else { return }
        NotificationCenter.default.post(name: Database.resumeNotification, object: self)
    }

    /// Closes the file; every later access throws. For a process that ends while its tasks may
    /// still hold the store (the device simulator's killed app): nothing it does afterwards can
    /// touch the file, and the file descriptors go.
    public func close() {
        opened.withLock { opened in
            try? opened.pool?.close()
            opened.closed = true
        }
    }

    /// A write transaction, refused unless `writer` holds the lease at the moment it commits.
    /// The check is inside the transaction, and SQLite runs one write transaction at a time
    /// across processes, so no other process can take the lease between check and commit.
    package func write<Result>(as writer: LeaseGuard, _ body: (Database) throws -> Result) throws -> Result {
        guard writer.isHeld else { throw ClientStoreError.notLeaseHolder }
        return try transaction { db in
            let holder = try String.fetchOne(db, sql: "SELECT holder FROM lease WHERE key = ?", arguments: [writer.key])
            guard holder == writer.holder.name else { throw ClientStoreError.notLeaseHolder }
            return try body(db)
        }
    }

    func read<Result>(_ body: (Database) throws -> Result) throws -> Result {
        try readTransaction(body)
    }

    /// A write transaction, counted while it runs (`isInTransaction`).
    func transaction<Result>(_ body: (Database) throws -> Result) throws -> Result {
        let pool = try self.pool
        inFlight.withLock { $0 += 1 }
        defer { inFlight.withLock { $0 -= 1 } }
        return try pool.write(body)
    }

    /// A read transaction, counted while it runs (`isInTransaction`).
    func readTransaction<Result>(_ body: (Database) throws -> Result) throws -> Result {
        let pool = try self.pool
        inFlight.withLock { $0 += 1 }
        defer { inFlight.withLock { $0 -= 1 } }
        return try pool.read(body)
    }

    /// Whether a transaction of this process runs now, and so holds an SQLite lock on the shared
    /// file: iOS kills an app suspended at such a moment (0xdead10cc, apns.md E.9). The device
    /// simulator checks it when it suspends the app.
    public var isInTransaction: Bool { inFlight.withLock { $0 > 0 } }

    var nowMilliseconds: Int64 { clock.now().milliseconds }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            // Every message the device has, by id (rule 9: the client removes duplicates by id).
            // `synced`: it arrived over sync (its sequence is at or below the cursor); 0 when
            // only the extension fetched it.
            try db.execute(sql: """
                CREATE TABLE message (
                    id TEXT PRIMARY KEY NOT NULL,
                    sequence INTEGER NOT NULL,
                    kind TEXT NOT NULL,
                    payload BLOB NOT NULL,
                    createdAt INTEGER NOT NULL,
                    expiresAt INTEGER,
                    isRead INTEGER NOT NULL DEFAULT 0,
                    synced INTEGER NOT NULL,
                    storedAt INTEGER NOT NULL
                );
                CREATE INDEX message_sequence ON message(sequence);
                CREATE TABLE syncState (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    cursor INTEGER NOT NULL,
                    badge INTEGER NOT NULL
                );
                INSERT INTO syncState (id, cursor, badge) VALUES (1, 0, 0);
                CREATE TABLE pendingRead (
                    messageId TEXT PRIMARY KEY NOT NULL,
                    markedAt INTEGER NOT NULL
                );
                CREATE TABLE notificationLedger (
                    messageId TEXT PRIMARY KEY NOT NULL,
                    notificationId TEXT NOT NULL,
                    state TEXT NOT NULL,
                    shownBy TEXT NOT NULL,
                    shownAt INTEGER NOT NULL,
                    removedAt INTEGER,
                    messageRead INTEGER NOT NULL DEFAULT 0
                );
                CREATE INDEX notificationLedger_notification ON notificationLedger(notificationId);
                CREATE TABLE call (
                    callId TEXT PRIMARY KEY NOT NULL,
                    state TEXT NOT NULL,
                    outcome TEXT,
                    updatedAt INTEGER NOT NULL
                );
                CREATE TABLE lease (
                    key TEXT PRIMARY KEY NOT NULL,
                    holder TEXT,
                    lastHolder TEXT,
                    expiresAt INTEGER NOT NULL,
                    generation INTEGER NOT NULL,
                    wantedBy TEXT,
                    wantedUntil INTEGER
                );
                CREATE TABLE leaseWaiter (
                    ticket INTEGER PRIMARY KEY AUTOINCREMENT,
                    key TEXT NOT NULL,
                    holder TEXT NOT NULL,
                    aliveUntil INTEGER NOT NULL,
                    UNIQUE (key, holder)
                );
                """)
        }
        // When the store last pruned itself (StoreRetention.interval).
        migrator.registerMigration("v2") { db in
            try db.execute(sql: "ALTER TABLE syncState ADD COLUMN prunedAt INTEGER NOT NULL DEFAULT 0")
        }
        // What happened to messages here (shown, opened, removed), until a `receipts` frame
        // carried it to the server; written by the app and its extension alike.
        migrator.registerMigration("v3-receipts") { db in
            try db.execute(sql: """
                CREATE TABLE pendingReceipt (
                    messageId TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    at INTEGER NOT NULL,
                    PRIMARY KEY (messageId, kind)
                );
                """)
        }
        return migrator
    }
}
