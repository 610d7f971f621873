import GRDB
import PostgresNIO

/// Store failures that say nothing about the request and pass by themselves: the database is
/// locked or busy, out of space, cannot be opened (no file descriptor left), or its server is out
/// of reach. The API answers them 503 with `Retry-After` instead of 500, and the planner tries
/// its batch again instead of dropping it: a planning batch dropped then would never be pushed.
public enum StoreUnavailable {
    public static func matches(_ error: any Error) -> Bool {
        if let error = error as? DatabaseError {
            return transientSQLite.contains(error.resultCode.primaryResultCode.rawValue)
        }
        if let error = error as? PSQLError {
            // SQLSTATE classes 08 (connection), 53 (insufficient resources), 57 (operator intervention).
            if let state = error.serverInfo?[.sqlState] { return ["08", "53", "57"].contains(String(state.prefix(2))) }
            return transientPostgres.contains(error.code)
        }
        return false
    }

    private static let transientSQLite: Set<Int32> = [
        ResultCode.SQLITE_BUSY, .SQLITE_LOCKED, .SQLITE_FULL, .SQLITE_IOERR, .SQLITE_CANTOPEN, .SQLITE_PROTOCOL, .SQLITE_NOMEM,
    ].map(\.rawValue).reduce(into: []) { $0.insert($1) }

    private static let transientPostgres: Set<PSQLError.Code> = [
        .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed,
    ]
}
