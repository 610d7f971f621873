import Foundation
import TestCapture
import Testing

/// The tests' own process launcher (TestCapture.ChildProcess), used instead of Foundation's
/// `Process`, which can crash the test process when many descriptors are open.
@Suite struct ChildProcessTests {
    @Test func aChildStartedBesideManyOpenDescriptorsInheritsNoneOfThem() throws {
        // 1,500 descriptors open, as when a connection-limit test runs beside a launch (a
        // listing of /proc/self/fd then fills glibc's 32 KiB directory buffer), fewer if the
        // open-files limit is low.
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        let count = min(1500, Int(limit.rlim_cur) - 200)
        let open = (0..<count).map { _ in Glibc.open("/dev/null", O_RDONLY) }
        defer { open.forEach { close($0) } }
        #expect(open.allSatisfy { $0 >= 0 })
        for _ in 0..<20 {
            let output = Pipe()
            let child = try ChildProcess(
                URL(fileURLWithPath: "/bin/ls"), arguments: ["/proc/self/fd"], output: output.fileHandleForWriting.fileDescriptor)
            try output.fileHandleForWriting.close()
            let listed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(child.waitUntilExit() == .exited(0))
            // stdin, stdout, stderr, and the descriptor `ls` opened to list the directory.
            #expect(listed.split(separator: "\n").count == 4, "\(listed)")
        }
    }

    @Test func aSignalledChildReportsItsSignal() throws {
        let child = try ChildProcess(URL(fileURLWithPath: "/bin/sleep"), arguments: ["30"])
        #expect(child.isRunning)
        child.signal(SIGKILL)
        #expect(child.waitUntilExit() == .signalled(SIGKILL))
        #expect(!child.isRunning)
        #expect(try ChildProcess(URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", "exit 3"]).waitUntilExit().code == 3)
    }
}
