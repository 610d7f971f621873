@testable import BeckonClient
import BeckonJSON
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The notification service extension's memory: the largest answer it reads must parse within
/// its budget (about 24 MB, apns.md E.4), measured, not assumed. Each shape is the worst of its
/// kind for `JSONValue` (many tiny values). Exit tests: peak memory is per process, so each
/// runs in a process of its own.
@Suite struct ExtensionFootprintTests {
    @Test func aMaximalAnswerOfOneKeyObjectsParsesWithinItsPeak() async {
        await #expect(processExitsWith: .success) { exit(ExtensionFootprintTests.measure(unit: #"{"a":1}"#) ? 0 : 1) }
    }

    @Test func aMaximalAnswerOfSmallNumbersParsesWithinItsPeak() async {
        await #expect(processExitsWith: .success) { exit(ExtensionFootprintTests.measure(unit: "1") ? 0 : 1) }
    }

    /// Builds an answer of `messageBytes` from `unit`s, parses and keeps it as the extension
    /// does, and checks the growth of the process's peak memory against the budget.
    static func measure(unit: String) -> Bool {
        let budget = ExtensionBudget()
        var units: [String] = []
        units.reserveCapacity(budget.messageBytes / unit.utf8.count)
        var size = 100
        while size < budget.messageBytes - 100 {
            units.append(unit)
            size += unit.utf8.count + 1
        }
        let body = Data((#"{"id":"m1","sequence":1,"kind":"message","payload":{"items":["# + units.joined(separator: ",") + "]}}").utf8)
        units = []
        let before = peakBytes()
        guard let json = try? JSONParser.parse(body), let message = try? FetchedMessage(json: json) else { return false }
        let kept = message.compacted()
        let growth = peakBytes() - before
        withExtendedLifetime((json, message, kept)) {}
        print("answer \(body.count) B, peak growth \(growth) B (\(Double(growth) / Double(body.count))x), allowed \(budget.answerPeakBytes) B")
        return body.count <= budget.messageBytes && growth <= budget.answerPeakBytes
            && budget.answerPeakBytes + budget.reserveBytes <= budget.memoryBytes
    }

    static func peakBytes() -> Int {
        var usage = rusage()
        #if canImport(Glibc)
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return usage.ru_maxrss * 1024  // kilobytes on Linux
        #else
        getrusage(RUSAGE_SELF, &usage)
        return usage.ru_maxrss  // bytes on Darwin
        #endif
    }
}
