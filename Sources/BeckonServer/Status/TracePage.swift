import BeckonDelivery
import BeckonMarkup
import Foundation

/// The status page's view of one message's trace (`GET /status/trace?app=A&message=ID`), or of a
/// user's last messages with links to theirs (`…&user=U`): the same facts as
/// `GET /v1/messages/{id}/trace` (docs/trace.md), for an operator with a browser.
struct TracePage {
    enum Content {
        case trace(MessageTrace)
        /// A user's last messages, newest first: id, kind, when.
        case messages(user: String, [(id: String, kind: String, createdAt: Date)])
        case notFound(String)
    }

    let app: String
    let content: Content

    var html: String {
        var out = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>Beckon trace</title>
            <meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,">
            <style>\(StatusPage.style)</style></head><body>
            <header><h1>Trace</h1><p><a href="/status">Status</a> · app \(Self.escape(app))</p></header>
            \(Self.form(app: app))
            """
        switch content {
        case .trace(let trace): out += Self.section(trace)
        case .messages(let user, let messages): out += Self.list(app: app, user: user, messages)
        case .notFound(let why): out += #"<p class="empty" id="not-found">\#(Self.escape(why))</p>"#
        }
        return out + "</body></html>\n"
    }

    /// Find a message by id, or a user's last messages.
    static func form(app: String) -> String {
        """
        <form id="find" method="get" action="/status/trace">
        <label>App <input name="app" value="\(escape(app))" size="12"></label>
        <label>Message id <input name="message" size="38"></label> or
        <label>user <input name="user" size="16"></label> <button>Find</button></form>
        """
    }

    private static func section(_ trace: MessageTrace) -> String {
        let expiry: String = trace.expiresAt.map { ", expires \(time($0)) UTC" } ?? ""
        let recipients: String = trace.recipients.map { "\(escape($0.userId)) (sequence \($0.sequence))" }.joined(separator: ", ")
        var out = #"<section class="app" id="trace"><h2>Message \#(escape(trace.messageID))</h2>"#
        out += "<p>\(escape(trace.kind.rawValue)), stored \(time(trace.createdAt)) UTC\(expiry) · for \(recipients)</p>"
        if trace.devices.isEmpty { out += #"<p class="empty">No device of its recipients is registered.</p>"# }
        for device in trace.devices {
            let owner = device.userId.map { "of \(escape($0))" } ?? "(deleted since)"
            out += #"<h3>Device \#(escape(device.deviceId)) \#(owner)</h3><table class="events" data-device="\#(escape(device.deviceId))">"#
                + "<thead><tr><th>Time (UTC)</th><th>Event</th><th>Details</th></tr></thead><tbody>"
            for event in device.events {
                out += #"<tr class="event \#(escape(event.type.rawValue))"><td>\#(time(event.at, fractions: true))</td>"#
                    + "<td>\(escape(event.type.rawValue))</td><td>\(escape(details(event)))</td></tr>"
            }
            out += "</tbody></table>"
        }
        return out + "</section>"
    }

    private static func list(app: String, user: String, _ messages: [(id: String, kind: String, createdAt: Date)]) -> String {
        var out = #"<section class="app" id="messages"><h2>Last messages of \#(escape(user))</h2>"#
        guard !messages.isEmpty else { return out + #"<p class="empty">No message in this user's mailbox.</p></section>"# }
        out += "<table><thead><tr><th>Message</th><th>Kind</th><th>Stored (UTC)</th></tr></thead><tbody>"
        for message in messages {
            let link = "/status/trace?app=\(query(app))&message=\(query(message.id))"
            out += #"<tr><td><a href="\#(escape(link))">\#(escape(message.id))</a></td><td>\#(escape(message.kind))</td>"#
                + "<td>\(time(message.createdAt))</td></tr>"
        }
        return out + "</tbody></table></section>"
    }

    /// What an event says beyond its time and type, as `key=value` pairs.
    static func details(_ event: TraceEvent) -> String {
        var parts: [String] = []
        func add(_ key: String, _ value: (some CustomStringConvertible)?) { if let value { parts.append("\(key)=\(value)") } }
        add("sequence", event.sequence)
        add("reason", event.reason)
        add("push-type", event.pushType)
        add("priority", event.priority)
        add("collapse-id", event.collapseId)
        add("apns-id", event.apnsId)
        add("attempt", event.attempt)
        add("outcome", event.outcome)
        add("status", event.status)
        add("apns-unique-id", event.uniqueId)
        add("on", event.deviceId)
        add("latency", event.latency.map { String(format: "%.3f s", $0) })
        return parts.joined(separator: " ")
    }

    private static func escape(_ text: String) -> String { MarkupEscaper.html.escape(text) }

    private static func query(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? text
    }

    private static func time(_ date: Date, fractions: Bool = false) -> String { StatusPage.time(date, fractions: fractions) }
}
