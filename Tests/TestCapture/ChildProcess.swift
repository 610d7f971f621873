import Foundation
import Glibc

/// A child process started with `posix_spawn`, for tests that run `beckon` or a probe binary.
///
/// Not Foundation's `Process`: on Linux its `run()` lists `/proc/self/fd` and copies each
/// entry's whole 256-byte name, reading past the end of glibc's directory buffer. With a
/// thousand or more descriptors open (a connection-limit test running beside a launch) that
/// read can cross into an unmapped page and kill the test process with SIGSEGV. Here the child
/// closes every inherited descriptor above stderr with `closefrom`, which lists nothing in the
/// parent.
public final class ChildProcess: @unchecked Sendable {
    public let processIdentifier: pid_t
    private let lock = NSLock()
    private var status: Termination?

    /// How a child ended.
    public enum Termination: Equatable, Sendable {
        case exited(Int32)
        case signalled(Int32)

        /// The shell's convention: the exit code, or 128 + the signal.
        public var code: Int32 {
            switch self {
            case .exited(let code): code
            case .signalled(let signal): 128 + signal
            }
        }
    }

    /// - Parameters:
    ///   - output, errors: descriptors the child gets as stdout and stderr (the parent keeps
    ///     its own; close a pipe's write end after this returns). `nil` inherits the parent's.
    ///   - environment: `nil` inherits the parent's.
    public init(
        _ executable: URL, arguments: [String], environment: [String: String]? = nil,
        output: Int32? = nil, errors: Int32? = nil
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        if let output { posix_spawn_file_actions_adddup2(&actions, output, STDOUT_FILENO) }
        if let errors { posix_spawn_file_actions_adddup2(&actions, errors, STDERR_FILENO) }
        guard Self.addCloseFrom(&actions, STDERR_FILENO + 1) == 0 else {
            throw POSIXError(.ENOSYS)
        }
        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        let env = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0)=\($1)") } + [nil]
        defer { (argv + env).forEach { free($0) } }
        var pid = pid_t()
        let result = posix_spawn(&pid, executable.path, &actions, nil, argv, env)
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EINVAL) }
        processIdentifier = pid
    }

    /// Whether the child has not exited yet (reaps it once it has).
    public var isRunning: Bool {
        lock.lock()
        defer { lock.unlock() }
        return reap() == nil
    }

    /// Blocks until the child exits.
    @discardableResult
    public func waitUntilExit() -> Termination {
        while true {
            lock.lock()
            let status = reap()
            lock.unlock()
            if let status { return status }
            usleep(10_000)
        }
    }

    public func signal(_ signal: Int32) {
        lock.lock()
        defer { lock.unlock() }
        if status == nil { kill(processIdentifier, signal) }
    }

    public func terminate() { signal(SIGTERM) }

    /// The exit status if the child has exited, reaping it the first time. Called with `lock`
    /// held; never blocks, so `signal` from another thread never waits on it.
    private func reap() -> Termination? {
        if let status { return status }
        var raw: Int32 = 0
        var result: pid_t
        repeat {
            result = waitpid(processIdentifier, &raw, WNOHANG)
        } while result == -1 && errno == EINTR
        guard result == processIdentifier else { return nil }
        // The wait status: low seven bits the signal (0 when it exited), the next byte the code.
        let signal = raw & 0x7f
        status = signal == 0 ? .exited((raw >> 8) & 0xff) : .signalled(signal)
        return status
    }

    deinit {
        if status == nil, kill(processIdentifier, SIGKILL) == 0 {
            var raw: Int32 = 0
            waitpid(processIdentifier, &raw, 0)
        }
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which the Swift
    /// module does not import; looked up once.
    private static let addCloseFrom: @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32 = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else {
            fatalError("glibc 2.34 or later is needed (posix_spawn_file_actions_addclosefrom_np)")
        }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()
}
