#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's open-files limit (RLIMIT_NOFILE), which bounds how many connections the
/// listener can hold: each is a file descriptor.
enum FileDescriptorLimit {
    /// Descriptors kept back from connections for SQLite (database, WAL, shared memory, one set
    /// per reader), the listener itself, logs and the APNs client's connections.
    static let reserve = 256

    /// Raises the soft limit to the hard one, as servers commonly do at start (the default soft
    /// limit of 1,024 is far below what idle sync sessions need). Returns the soft limit then in
    /// force, or nil where it cannot be read.
    @discardableResult
    static func raiseToHardLimit() -> Int? {
        var limits = rlimit()
        guard getrlimit(resource, &limits) == 0 else { return nil }
        if limits.rlim_cur < limits.rlim_max {
            var raised = limits
            raised.rlim_cur = limits.rlim_max
            if setrlimit(resource, &raised) == 0 { limits = raised }
        }
        return Int(clamping: limits.rlim_cur)  // RLIM_INFINITY is the largest value: clamps to Int.max.
    }

    /// `http.max-connections` when set, else the open-files limit less the reserve; never more
    /// than that: a process with no descriptor left is killed (libdispatch's worker monitor aborts
    /// when it cannot open `/proc`), so the reserve is not negotiable.
    static func connectionLimit(configured: Int?) -> Int {
        let ceiling = raiseToHardLimit().map { max(16, $0 - reserve) } ?? 10_000
        return min(configured ?? ceiling, ceiling)
    }

    #if canImport(Glibc)
    private static let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let resource = RLIMIT_NOFILE
    #endif
}
