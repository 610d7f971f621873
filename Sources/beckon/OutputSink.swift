import Foundation

#if canImport(Glibc)
import Glibc
private let systemWrite = Glibc.write
#elseif canImport(Darwin)
import Darwin
private let systemWrite = Darwin.write
#endif

/// Standard output for a process that must outlive whoever reads it: `beckon serve`
/// and `beckon apns-emulator`.
///
/// A write never blocks and never fails: the text joins a bounded queue that one thread of its
/// own writes out. When the reader is slow or stopped reading (a full pipe), the queue fills and
/// further lines are dropped, counted, and reported once output flows again; when the reader went
/// away (EPIPE) or the descriptor fails, everything is dropped from then on. Foundation's
/// `FileHandle.write(_:)` traps on EPIPE, and stdio's `fwrite` blocks its caller (an event loop,
/// for a log line) on a full pipe: neither may decide whether the server runs.
final class OutputSink: TextOutputStream, @unchecked Sendable {
    static let standardOutput = OutputSink(descriptor: STDOUT_FILENO)

    /// Bytes waiting for the writer; beyond it lines are dropped (a log burst, not the heap, pays).
    static let capacity = 1 << 20

    private let descriptor: Int32
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var queued: [UInt8] = []
    private var writing = false
    private var dropped = 0
    private var failed = false
    private var started = false

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Queues `text` whole, or drops it whole when the queue is full or the descriptor failed.
    func write(_ text: String) {
        condition.lock()
        defer { condition.unlock() }
        guard !failed else { return }
        let size = text.utf8.count
        guard queued.count + size <= Self.capacity else {
            dropped += 1
            return
        }
        queued.append(contentsOf: text.utf8)
        if !started {
            started = true
            Self.ignoreBrokenPipes()
            let thread = Thread { [self] in self.run() }
            thread.name = "beckon-output-\(descriptor)"
            thread.start()
        }
        condition.signal()
    }

    /// Waits until what was queued is written, for at most `seconds`: at exit, so the last lines
    /// reach a reader that still reads, without hanging on one that does not.
    func flush(within seconds: Double) {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock()
        defer { condition.unlock() }
        while !failed, !queued.isEmpty || writing {
            guard condition.wait(until: deadline) else { return }
        }
    }

    /// The writer thread: takes everything queued, writes it without the lock, repeats.
    private func run() {
        var batch: [UInt8] = []
        while true {
            condition.lock()
            while queued.isEmpty { condition.wait() }
            swap(&batch, &queued)
            var note: String?
            if dropped > 0 {
                note = "[\(dropped) line(s) of output dropped: the reader of this output was not keeping up]\n"
                dropped = 0
            }
            writing = true
            condition.unlock()

            var ok = writeAll(batch)
            if ok, let note { ok = writeAll(Array(note.utf8)) }
            batch.removeAll(keepingCapacity: batch.capacity <= Self.capacity)

            condition.lock()
            writing = false
            if !ok {
                // The reader is gone (EPIPE) or the descriptor is unusable: stop trying for good.
                failed = true
                queued = []
            }
            condition.broadcast()
            condition.unlock()
            if !ok { return }
        }
    }

    /// Writes every byte; false when the descriptor fails. Blocks this thread only.
    private func writeAll(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let result = systemWrite(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if result > 0 {
                    offset += result
                } else if result < 0, errno == EINTR {
                    continue
                } else if result < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                    // Someone made the shared descriptor non-blocking: wait until it can take more.
                    var poller = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&poller, 1, 1_000)
                } else {
                    return false
                }
            }
            return true
        }
    }

    /// A write to a pipe nobody reads raises SIGPIPE, which kills the process before the write
    /// can return EPIPE. NIO ignores it too, but only once it opens its first socket.
    private static func ignoreBrokenPipes() {
        _ = signal(SIGPIPE, SIG_IGN)
    }
}
