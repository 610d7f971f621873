import Foundation

/// Virtual seconds to pixels, from 0 to `end`, and the axis ticks.
struct TimeScale {
    let end: Double
    let left: Double
    let width: Double
    /// Seconds between ticks: 1, 2 or 5 × 10^k, about one tick per 100 px.
    let step: Double

    init(end: Double, left: Double, width: Double) {
        self.end = end.isFinite && end > 0 ? end : 1
        self.left = left
        self.width = width
        step = Self.niceStep(for: self.end / max(width / 100, 1))
    }

    var right: Double { left + width }

    /// The x of a time; times outside the run are pinned to its edges.
    func x(_ time: Double) -> Double {
        left + min(max(time, 0), end) / end * width
    }

    var ticks: [Double] {
        let count = Int((end / step + 1e-9).rounded(.down))
        return (0...count).map { Double($0) * step }
    }

    /// A tick's label: as many decimals as the step needs (`0.5s`, `20s`).
    func label(_ time: Double) -> String {
        let decimals = step >= 1 ? 0 : Int(ceil(-log10(step) - 1e-9))
        return Self.fixed(time, decimals: decimals) + "s"
    }

    /// The smallest 1, 2 or 5 × 10^k at least `raw`.
    static func niceStep(for raw: Double) -> Double {
        let magnitude = pow(10, floor(log10(raw)))
        for multiple in [1.0, 2, 5, 10] where multiple * magnitude >= raw * (1 - 1e-9) {
            return multiple * magnitude
        }
        return 10 * magnitude
    }

    /// `value` with exactly `decimals` decimals, without locale or `String(format:)`.
    static func fixed(_ value: Double, decimals: Int) -> String {
        let factor = pow(10, Double(decimals))
        let scaled = Int((abs(value) * factor).rounded())
        let sign = value < 0 && scaled != 0 ? "-" : ""
        guard decimals > 0 else { return sign + String(scaled) }
        let whole = scaled / Int(factor)
        let fraction = String(scaled % Int(factor))
        return sign + "\(whole)." + String(repeating: "0", count: decimals - fraction.count) + fraction
    }

    /// A duration or factor for prose: `12`, `0.25`, `1.5`.
    static func compact(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}
