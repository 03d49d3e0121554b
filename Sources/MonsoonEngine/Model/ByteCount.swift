/// Human-readable byte counts, in binary units ("1.5 MiB").
public enum ByteCount {
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
