/// `itunes:duration` in whole seconds. (Named so as not to shadow the standard library's `Duration`.)
///
/// Understood: `1234`, `1234.5` and `00:04:49.0` (fractions dropped), `MM:SS`, `H:MM:SS` (minutes and seconds below 60
/// except the leading field: `90:00` is 90 minutes, and so is `00:90:00`, whose hours are zero), one-digit fields
/// (`1:2:3`), surrounding whitespace.
/// Anything else (`PT1H2M`, `abc`, `-5`, four fields, an empty value) is nil: a wrong duration is worse
/// than none.
public enum EpisodeDuration {
    /// The duration in `text`, in whole seconds; nil for anything but the forms listed on `EpisodeDuration`.
    public static func parse(_ text: String) -> Int? {
        var text = text
        return text.withUTF8 { parse(bytes: $0) }
    }

    static func parse(bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var scanner = ByteScanner(bytes)
        scanner.skipSpaces()
        guard !scanner.atEnd else { return nil }
        // Up to three fields, kept in place (no array: this runs once per episode).
        var fields = (0, 0, 0)
        var count = 0
        while true {
            // At most 10 digits: longer runs are not durations.
            guard let field = scanner.number(maxDigits: 10) else { return nil }
            switch count {
            case 0: fields.0 = field.value
            case 1: fields.1 = field.value
            default: fields.2 = field.value
            }
            count += 1
            if scanner.skip(UInt8(ascii: ":")) {
                guard count < 3 else { return nil }
                continue
            }
            break
        }
        if scanner.skip(UInt8(ascii: ".")) {
            // Fractional seconds: the digits are checked, then dropped.
            guard scanner.number(maxDigits: 18) != nil || scanner.atEnd else { return nil }
        }
        guard scanner.atEnd else { return nil }
        switch count {
        case 1:
            return fields.0
        case 2:
            guard fields.1 < 60 else { return nil }
            return fields.0 * 60 + fields.1
        default:
            guard fields.1 < 60 || fields.0 == 0, fields.2 < 60 else { return nil }
            return fields.0 * 3600 + fields.1 * 60 + fields.2
        }
    }
}
