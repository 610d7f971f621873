import BeckonMarkup
import BeckonStore
import Foundation

/// The operator's status page (`GET /status`): plain HTML with inline CSS and SVG, rendered from a
/// `StatusSnapshot`. Nothing is fetched from elsewhere, so it works offline and behind the
/// strictest content policy; it refreshes itself once a minute.
struct StatusPage {
    let snapshot: StatusSnapshot

    /// One color per strategy, the same in every chart.
    static let colors = ["wake": "#2563eb", "service-extension": "#16a34a", "filtering": "#d97706", "content": "#9333ea"]

    var html: String {
        let totals = snapshot.apps.reduce(into: (devices: 0, pending: 0, pushes: 0)) {
            $0.devices += $1.counts.devices
            $0.pending += $1.counts.pendingPushes
            $0.pushes += $1.pushes
        }
        var out = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>Beckon status</title>
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta http-equiv="refresh" content="60"><link rel="icon" href="data:,">
            <style>\(Self.style)</style></head><body>
            <header><h1>Beckon status</h1><p>\(MarkupEscaper.html.escape(window)) · generated \(Self.time(snapshot.generatedAt)) UTC</p></header>
            \(TracePage.form(app: snapshot.apps.first?.id ?? ""))
            <section id="summary" class="tiles">
            \(Self.tile("apps", "Apps", "\(snapshot.apps.count)"))
            \(Self.tile("devices", "Devices", "\(totals.devices)"))
            \(Self.tile("sessions", "Connected sessions (this node)", "\(snapshot.sessions)"))
            \(Self.tile("outbox", "Pushes waiting in the outbox", "\(totals.pending)"))
            \(Self.tile("pushes", "Pushes in the window", "\(totals.pushes)"))
            </section>
            <section id="apps"><h2>Apps</h2><table><thead><tr><th>App</th><th>Bundle id</th><th>Devices</th>
            <th>Without token</th><th>Unreachable</th><th>Outbox</th><th>Pushes</th><th>Sent</th><th>Failed</th>
            <th>Wake success</th></tr></thead><tbody>
            """
        for app in snapshot.apps {
            out += """
                <tr class="app-row" data-app="\(MarkupEscaper.html.escape(app.id))"><td><a href="#app-\(MarkupEscaper.html.escape(app.id))">\(MarkupEscaper.html.escape(app.id))</a></td>
                <td>\(MarkupEscaper.html.escape(app.bundleID))</td><td>\(app.counts.devices)</td><td>\(app.counts.devicesWithoutToken)</td>
                <td>\(app.unreachable)</td><td>\(app.counts.pendingPushes)</td><td>\(app.pushes)</td><td>\(app.sent)</td>
                <td>\(app.failed)</td><td class="rate">\(Self.percent(app.wakeSuccessRate))</td></tr>
                """
        }
        out += "</tbody></table></section>"
        for app in snapshot.apps { out += section(app) }
        return out + "</body></html>\n"
    }

    private var window: String {
        let seconds = snapshot.generatedAt.timeIntervalSince(snapshot.since)
        return seconds >= 3600 ? "last \(Int((seconds / 3600).rounded())) h" : "last \(Int(seconds.rounded())) s"
    }

    private func section(_ app: StatusSnapshot.App) -> String {
        let id = MarkupEscaper.html.escape(app.id)
        var out = #"<section class="app" id="app-\#(id)"><h2>\#(id)</h2>"#
        if app.strategies.isEmpty {
            out += #"<p class="empty">No push measured in the window.</p>"#
        } else {
            let labels = axisLabels(count: app.strategies[0].buckets.count)
            let success = SVGLineChart(
                title: "Came back within the reconnect window, per strategy (wake: wake success)", axisLabels: labels, maximum: 1,
                format: { "\(Int(($0 * 100).rounded())) %" },
                series: app.strategies.map { .init(name: $0.strategy, color: Self.color($0.strategy), values: $0.buckets.map(\.successRate)) })
            let latencies = app.strategies.flatMap { $0.buckets.compactMap(\.latencyP50) }
            let latency = SVGLineChart(
                title: "Push to connection, median, per strategy", axisLabels: labels,
                maximum: Self.roundUp(latencies.max() ?? 1), format: { Self.seconds($0) },
                series: app.strategies.map { .init(name: $0.strategy, color: Self.color($0.strategy), values: $0.buckets.map(\.latencyP50)) })
            out += #"<div class="charts"><figure class="chart wake-success">\#(success.svg)</figure>"#
                + #"<figure class="chart wake-latency">\#(latency.svg)</figure></div>"#
        }
        out += #"<h3>Shown within a minute (the devices' receipts)</h3>"#
        if app.shown.isEmpty {
            out += #"<p class="empty" id="shown-\#(id)">No message in the window has had its minute yet.</p>"#
        } else {
            out += #"<table class="shown" id="shown-\#(id)"><thead><tr><th>Strategy</th><th>Messages</th><th>Shown</th><th>Share</th></tr></thead><tbody>"#
            for share in app.shown {
                out += #"<tr><td>\#(MarkupEscaper.html.escape(share.strategy))</td><td>\#(share.messages)</td><td>\#(share.shown)</td>"#
                    + #"<td class="rate">\#(Self.percent(share.share))</td></tr>"#
            }
            out += "</tbody></table>"
        }
        if let webhook = app.webhook {
            out += webhookSection(webhook, id: id, now: snapshot.generatedAt)
        }
        out += #"<h3>Recent push failures</h3>"#
        if app.failures.isEmpty {
            out += #"<p class="empty" id="failures-\#(id)">No push failed in the window.</p>"#
        } else {
            out += #"<table class="failures" id="failures-\#(id)"><thead><tr><th>Reason</th><th>Pushes</th><th>Last</th></tr></thead><tbody>"#
            for failure in app.failures {
                out += #"<tr><td class="reason">\#(MarkupEscaper.html.escape(failure.reason))</td><td>\#(failure.count)</td>"#
                    + #"<td>\#(Self.time(failure.last))</td></tr>"#
            }
            out += "</tbody></table>"
        }
        return out + "</section>"
    }

    private func axisLabels(count: Int) -> (first: String, middle: String, last: String) {
        let step = snapshot.bucketSeconds
        func label(_ index: Int) -> String { Self.time(snapshot.since.addingTimeInterval(Double(index) * step)) }
        return (label(0), label(max(0, count - 1) / 2), label(max(0, count - 1)))
    }

    private static func tile(_ id: String, _ label: String, _ value: String) -> String {
        #"<div class="tile" id="\#(id)"><span class="value">\#(value)</span><span class="label">\#(label)</span></div>"#
    }

    private static func color(_ strategy: String) -> String { colors[strategy] ?? "#64748b" }

    static func percent(_ rate: Double?) -> String { rate.map { "\(Int(($0 * 100).rounded())) %" } ?? "–" }

    static func seconds(_ value: Double) -> String {
        value < 10 ? String(format: "%.1f s", value) : "\(Int(value.rounded())) s"
    }

    /// A readable top for the latency axis: 1, 2 or 5 times a power of ten.
    static func roundUp(_ value: Double) -> Double {
        guard value > 0 else { return 1 }
        let power = pow(10, floor(log10(value)))
        return [1.0, 2, 5, 10].map { $0 * power }.first { $0 >= value } ?? 10 * power
    }

    /// A time in UTC, to the second (`fractions`: to the millisecond).
    static func time(_ date: Date, fractions: Bool = false) -> String {
        let format = Date.ISO8601FormatStyle(timeZone: TimeZone(identifier: "UTC")!).year().month().day()
            .dateTimeSeparator(.space).time(includingFractionalSeconds: fractions)
        return date.formatted(format)
    }

    static let style = """
        body{font:14px/1.4 system-ui,-apple-system,"DejaVu Sans",sans-serif;margin:24px;color:#0f172a;background:#f8fafc}
        h1{margin:0 0 4px;font-size:22px}header p{margin:0 0 16px;color:#475569}
        h2{font-size:17px;margin:24px 0 8px}h3{font-size:14px;margin:12px 0 6px}
        .tiles{display:flex;gap:12px;flex-wrap:wrap}
        .tile{background:#fff;border:1px solid #e2e8f0;border-radius:8px;padding:10px 14px;min-width:150px}
        .tile .value{display:block;font-size:24px;font-weight:600}.tile .label{color:#475569;font-size:12px}
        table{border-collapse:collapse;background:#fff;border:1px solid #e2e8f0}
        th,td{padding:5px 10px;border-bottom:1px solid #e2e8f0;text-align:right}th:first-child,td:first-child{text-align:left}
        th{background:#f1f5f9;font-weight:600}
        .app{background:#fff;border:1px solid #e2e8f0;border-radius:8px;padding:4px 16px 12px;margin-top:16px}
        .charts{display:flex;gap:16px;flex-wrap:wrap}figure{margin:0}
        form{margin:16px 0}.events td:nth-child(3){text-align:left;font-family:ui-monospace,monospace;font-size:12px}
        svg .grid{stroke:#e2e8f0}svg .axis,svg .legend{font-size:10px;fill:#475569}
        svg .chart-title{font-size:11px;fill:#0f172a;font-weight:600}.empty{color:#64748b}
        """
}
