import BeckonMarkup

/// The small shapes the timeline repeats: push stages and event marks, drawn the same way in the
/// lanes and in the legend. The legend passes its own `className`, so a class still counts only
/// what happened.
extension SVGWriter {
    typealias Stage = DeviceTimeline.PushTrack.Stage

    mutating func pushMarker(
        _ stage: Stage, x: Double, y: Double, colour: String, className: String? = nil, tooltip: String? = nil
    ) {
        let r = 3.6
        switch stage {
        case .sent:
            circle(
                x: x, y: y, radius: r,
                [("class", className ?? "push sent"), ("fill", "#ffffff"), ("stroke", colour), ("stroke-width", "1.5")],
                tooltip: tooltip)
        case .accepted:
            circle(x: x, y: y, radius: r, [("class", className ?? "push accepted"), ("fill", colour)], tooltip: tooltip)
        case .held:
            rect(
                x: x - r, y: y - r, width: 2 * r, height: 2 * r,
                [("class", className ?? "push held"), ("fill", "#ffffff"), ("stroke", colour), ("stroke-width", "1.5")],
                tooltip: tooltip)
        case .delivered:
            polygon(
                [(x - r, y - r - 1), (x - r, y + r + 1), (x + r + 1, y)],
                [("class", className ?? "push delivered"), ("fill", colour)], tooltip: tooltip)
        case .discarded:
            cross(x: x, y: y, colour: colour, className: className ?? "push discarded", tooltip: tooltip)
        case .rejected:
            cross(x: x, y: y, colour: TimelineLayout.alarmColour, className: className ?? "push rejected", tooltip: tooltip)
        }
    }

    mutating func cross(x: Double, y: Double, colour: String, className: String, tooltip: String? = nil) {
        let r = 3.8
        let d =
            "M\(Self.number(x - r)),\(Self.number(y - r))L\(Self.number(x + r)),\(Self.number(y + r))"
            + "M\(Self.number(x - r)),\(Self.number(y + r))L\(Self.number(x + r)),\(Self.number(y - r))"
        path(d, [("class", className), ("stroke", colour), ("stroke-width", "2"), ("fill", "none")], tooltip: tooltip)
    }

    mutating func eventMarker(
        _ style: DeviceTimeline.Mark.Style, x: Double, y: Double, className: String? = nil, tooltip: String? = nil
    ) {
        switch style {
        case .plain:
            circle(
                x: x, y: y, radius: 3, [("class", className ?? "mark"), ("fill", TimelineLayout.textColour)], tooltip: tooltip)
        case .alarm:
            circle(
                x: x, y: y, radius: 3.5, [("class", className ?? "mark alarm"), ("fill", TimelineLayout.alarmColour)],
                tooltip: tooltip)
        case .violation:
            polygon(
                [(x, y - 5), (x + 5, y), (x, y + 5), (x - 5, y)],
                [
                    ("class", className ?? "mark violation"), ("fill", TimelineLayout.alarmColour), ("stroke", "#ffffff"),
                    ("stroke-width", "0.8"),
                ],
                tooltip: tooltip)
        case .user:
            rect(
                x: x - 3, y: y - 3, width: 6, height: 6, [("class", className ?? "mark user"), ("fill", "#1565c0")],
                tooltip: tooltip)
        case .note:
            circle(x: x, y: y, radius: 2.5, [("class", className ?? "mark note"), ("fill", "#9e9e9e")], tooltip: tooltip)
        }
    }

    /// The server's "message posted" mark.
    mutating func postedMarker(x: Double, y: Double, className: String? = nil, tooltip: String? = nil) {
        polygon(
            [(x, y - 4.5), (x + 4.5, y), (x, y + 4.5), (x - 4.5, y)],
            [("class", className ?? "posted"), ("fill", TimelinePalette.serverMarker)], tooltip: tooltip)
    }
}
