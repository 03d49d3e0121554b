/// Human-readable byte counts, in binary units ("1.5 MiB").
public enum ByteCount {
    /// Reads a size: bytes, or with a k, M, G or T suffix, with or without "B" or "iB"
    /// (binary units either way: "500MB" is 500 MiB); nil for anything else.
    public static func parse(_ text: String) -> Int? {
        var text = text.trimmingBlanks()
        if text.lowercased().hasSuffix("ib") { text.removeLast(2) } else if text.lowercased().hasSuffix("b") { text.removeLast() }
        text = text.trimmingBlanks()
        var multiplier = 1
        if let last = text.last, let shift = ["k": 10, "m": 20, "g": 30, "t": 40][last.lowercased()] {
            multiplier = 1 << shift
            text.removeLast()
        }
        guard let value = Double(text), value >= 0, value * Double(multiplier) < Double(Int.max / 2) else { return nil }
        return Int(value * Double(multiplier))
    }

    /// Writes `bytes` for people: whole bytes below 1 KiB ("512 B"), else one decimal below 10 of a unit ("1.5 MiB"),
    /// and whole units above ("42 MiB"), up to TiB.
    public static func format(_ bytes: Int) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while abs(value) >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        if unit == 0 { return "\(bytes) B" }
        let rounded = value < 10 ? (value * 10).rounded() / 10 : value.rounded()
        let text = value < 10 ? String(rounded) : String(Int(rounded))
        return "\(text) \(units[unit])"
    }
}
