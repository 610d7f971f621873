import BeckonMarkup
import Foundation

extension StatusPage {
    /// How far the app's webhook is behind (docs/webhooks.md): what waits, since when, what the
    /// backlog dropped, and the last attempt's answer.
    func webhookSection(_ webhook: StatusSnapshot.Webhook, id: String, now: Date) -> String {
        let status = webhook.status
        let lag = status.oldestWaiting.map { Self.seconds(max(0, now.timeIntervalSince($0))) } ?? "none waiting"
        var out = #"<h3>Webhook</h3><table class="webhook" id="webhook-\#(id)"><tbody>"#
        out += #"<tr><th>Receiver</th><td>\#(MarkupEscaper.html.escape(webhook.url))</td></tr>"#
        out += #"<tr><th>Behind</th><td class="behind">\#(status.behind) events</td></tr>"#
        out += #"<tr><th>Oldest waiting</th><td class="lag">\#(MarkupEscaper.html.escape(lag))</td></tr>"#
        out += #"<tr><th>Dropped (backlog full)</th><td class="dropped">\#(status.dropped)</td></tr>"#
        out += #"<tr><th>Sent by</th><td>\#(MarkupEscaper.html.escape(status.sender ?? "no node holds it"))</td></tr>"#
        if let attempt = status.lastAttempt {
            let answer = attempt.succeeded ? "HTTP \(attempt.status)" : attempt.error ?? "HTTP \(attempt.status)"
            out += #"<tr><th>Last attempt</th><td class="last-attempt">\#(Self.time(attempt.at)) · \#(attempt.events) events · "#
                + #"\#(MarkupEscaper.html.escape(answer))</td></tr>"#
        }
        return out + "</tbody></table>"
    }
}
