/// A run's last word, on lines that fit where most terminals do not wrap them.
enum SummaryLines {
    /// The widest a summary line may be, its `monsoon: ` included.
    static let width = 100

    /// `parts` joined by ", " on as few lines as fit in `width` after `prefix`; a part never breaks.
    static func packed(_ parts: [String], prefix: String = "monsoon: ") -> [String] {
        parts.reduce(into: [String]()) { lines, part in
            if let last = lines.last, prefix.count + last.count + 2 + part.count <= width {
                lines[lines.count - 1] += ", " + part
            } else {
                lines.append(part)
            }
        }.map { prefix + $0 }
    }
}
