import FoundationEssentials
import Glibc

/// A linear scale from values to pixels, with round tick values for its axis.
struct SVGAxis {
    var maximum: Double
    var from: Double
    var to: Double

    /// A scale of `0...maximum` onto `from...to` pixels (`to` is less than `from` for a y axis).
    init(maximum: Double, from: Double, to: Double) {
        self.maximum = maximum.isFinite && maximum > 0 ? maximum : 1
        self.from = from
        self.to = to
    }

    func position(_ value: Double) -> Double { from + (to - from) * min(max(value, 0), maximum) / maximum }

    /// Round values from 0 to the maximum, about `count` of them (steps of 1, 2 or 5 times a power of ten).
    func ticks(count: Int = 6) -> [Double] {
        let rough = maximum / Double(max(1, count))
        let power = pow(10, (log10(rough)).rounded(.down))
        let step = [1.0, 2, 5, 10].map { $0 * power }.first { $0 >= rough } ?? rough
        return (0...Int((maximum / step + 1e-9).rounded(.down))).map { Double($0) * step }
    }

    /// A tick's label in seconds, with no more decimals than it needs (down to microseconds).
    static func seconds(_ value: Double) -> String {
        if value == value.rounded() { return "\(Int(value)) s" }
        var text = String(cFormat: "%.6f", value)
        while text.hasSuffix("0") { text.removeLast() }
        return text + " s"
    }

    /// A duration for people: milliseconds under a second (a loopback first byte takes a fraction of one).
    static func duration(_ seconds: Double) -> String {
        guard seconds < 1 else { return Self.seconds((seconds * 1000).rounded() / 1000) }
        let milliseconds = seconds * 1000
        var text = String(cFormat: milliseconds < 10 ? "%.2f" : "%.0f", milliseconds)
        if text.contains(".") { while text.hasSuffix("0") { text.removeLast() } }
        if text.hasSuffix(".") { text.removeLast() }
        return text + " ms"
    }
}
