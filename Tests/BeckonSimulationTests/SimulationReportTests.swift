import BeckonJSON
import BeckonSimulation
import Foundation
import Testing

@Suite struct SimulationReportTests {
    @Test func failsWhenOneInvariantFails() {
        var report = SampleReport.report
        #expect(!report.passed)
        report.invariants = report.invariants.map {
            var passed = $0
            passed.passed = true
            return passed
        }
        #expect(report.passed)
        report.invariants = []
        #expect(report.passed, "nothing checked, nothing failed")
    }

    @Test func jsonHasEveryInvariantAndEvent() throws {
        let report = SampleReport.report
        let json = report.json
        #expect(json["passed"] == false)
        #expect(json["scenario"]?.stringValue == "offline-then-read-elsewhere")
        #expect(json["devices"] == ["alice-iphone", "bob-iphone"])
        #expect(json["durationSeconds"] == .double(120))
        let invariants = try #require(json["invariants"]?.arrayValue)
        #expect(invariants.count == 2)
        #expect(invariants[1]["name"] == "read-clears")
        #expect(invariants[1]["passed"] == false)
        #expect(invariants[1]["detail"]?.stringValue?.contains("msg-7f3a03") == true)
        let events = try #require(json["events"]?.arrayValue)
        #expect(events.count == report.events.count)
        #expect(events.first?["kind"] == "message-posted")
    }

    @Test func eachTraceIsALineOfItsMessageAndDevice() throws {
        var report = SampleReport.report
        #expect(report.json["traces"] == [])
        report.traces = ["m1": TraceCheckTests.trace()]
        let lines = try #require(report.json["traces"]?.arrayValue)
        #expect(lines.map { $0["device"] } == ["ipad", "phone"])
        #expect(lines[1]["message"] == "m1")
        let types = try #require(lines[1]["events"]?.arrayValue).compactMap { $0["type"]?.stringValue }
        #expect(types == ["stored", "push", "push", "apns", "apns", "synced", "shown", "opened"], "the trace's own order")
        #expect(lines[1]["events"]?.arrayValue?[1]["apnsId"] == "a1")
        #expect(report.jsonText.contains("\n    {\"device\":\"phone\",\"events\":["), "one line each")
    }

    @Test func seedsBeyondIntStayExact() {
        var report = SampleReport.report
        #expect(report.json["seed"] == .string("12600928879107657766"))
        report.seed = 42
        #expect(report.json["seed"] == 42)
    }

    @Test func writtenFileParsesBackToTheSameJSON() throws {
        let report = SampleReport.report
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("beckon-report-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try report.write(to: path)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        // Compared as parsed text: a whole double (`120.0`) is written, and so read back, as `120`.
        #expect(try JSONParser.parse(Array(text.utf8)) == JSONParser.parse(report.json.bytes))
        // One event per line, so a report reads and diffs line by line.
        #expect(text.split(separator: "\n").count > report.events.count)
        #expect(text.hasPrefix("{\n  \"scenario\": "))
    }
}
