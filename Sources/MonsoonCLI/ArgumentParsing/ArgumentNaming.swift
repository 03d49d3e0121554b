/// Turns Swift identifiers into command-line spellings.
enum ArgumentNaming {
    /// `perHost` → `per-host`, `inputFile` → `input-file`, `URLList` → `url-list`, `Get` → `get`.
    static func kebabCase(_ identifier: String) -> String {
        let characters = Array(identifier)
        var result = ""
        for (offset, character) in characters.enumerated() {
            if character == "_" {
                if !result.isEmpty { result.append("-") }
                continue
            }
            guard character.isUppercase else {
                result.append(character)
                continue
            }
            if offset > 0 {
                let previous = characters[offset - 1]
                let next = offset + 1 < characters.count ? characters[offset + 1] : nil
                // A new word starts at an uppercase letter after a lowercase one or a digit
                // ("perHost"), or at the last capital of an acronym before a lowercase letter
                // ("URLList": the second "L").
                let startsWord = previous.isLowercase || previous.isNumber
                    || (previous.isUppercase && next?.isLowercase == true)
                if startsWord && !result.hasSuffix("-") { result.append("-") }
            }
            result += character.lowercased()
        }
        return result
    }
}
