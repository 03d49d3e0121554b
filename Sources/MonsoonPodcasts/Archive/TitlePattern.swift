/// A regular expression on episode titles (`--match`, `--exclude`, the cluster's stored rules), matched
/// case-insensitively anywhere in the title.
///
/// A backtracking engine takes exponential time on patterns such as `(\w+\s?)+:$` against a title that almost
/// matches. This is a Thompson NFA run as a Pike VM (as RE2 and Rust's `regex`): time proportional to the title's
/// length times the pattern's, whatever both are.
///
/// The syntax, the common ground of POSIX ERE and PCRE: literals; `.`; bracket expressions `[abc]`, `[^a-z0-9]`;
/// `\d \D \w \W \s \S`; `\b \B`; `^` and `$`; groups `( )` and `(?: )`; `|`; the quantifiers `* + ? {m} {m,} {m,n}`,
/// lazy or not; and `\` before any punctuation. Backreferences and lookaround are refused: no engine bounded in time
/// can have them.
public struct TitlePattern: Sendable {
    /// In characters, and the largest program it may compile to (its counted repetitions written out).
    static let maxLength = 1_000
    static let maxProgram = 20_000

    enum Instruction: Sendable {
        case scalar(Unicode.Scalar)
        case any
        case set(ScalarSet)
        case start
        case end
        case wordBoundary(Bool)
        case split(Int, Int)
        case jump(Int)
        case match
    }

    /// A bracket expression or a class escape: its scalars and ranges, its classes, negated or not.
    struct ScalarSet: Sendable {
        enum Class: Sendable { case digit, word, space }
        var ranges: [ClosedRange<UInt32>] = []
        var classes: [(Class, negated: Bool)] = []
        var negated = false

        func contains(_ scalar: Unicode.Scalar) -> Bool {
            let found = TitlePattern.variants(of: scalar).contains { variant in
                ranges.contains { $0.contains(variant.value) } || classes.contains { TitlePattern.isIn($0.0, variant) != $0.negated }
            }
            return found != negated
        }
    }

    let program: [Instruction]

    /// Why a pattern was not taken, in words for the message that names the option.
    public struct Refusal: Error, Sendable, Equatable {
        public var reason: String
    }

    /// - Throws: `Refusal` when it is not a pattern of the syntax above (or too large).
    public init(_ pattern: String) throws(Refusal) {
        let scalars = Array(pattern.unicodeScalars)
        guard scalars.count <= Self.maxLength else { throw Refusal(reason: "it is longer than \(Self.maxLength) characters") }
        var parser = Parser(scalars: scalars)
        let tree = try parser.alternation()
        guard parser.index == scalars.count else { throw Refusal(reason: "it has a ')' without its '('") }
        var compiler = Compiler()
        try compiler.emit(tree)
        compiler.program.append(.match)
        program = compiler.program
    }

    public func matches(_ text: String) -> Bool {
        let scalars = Array(text.unicodeScalars)
        var current = ThreadList(capacity: program.count)
        var next = ThreadList(capacity: program.count)
        for position in 0...scalars.count {
            // A new thread at every position: the match may begin anywhere.
            if add(0, at: position, in: scalars, to: &current) { return true }
            guard position < scalars.count else { break }
            let scalar = scalars[position]
            next.clear()
            for pc in current.items {
                let moves: Bool
                switch program[pc] {
                case .scalar(let wanted): moves = Self.variants(of: scalar).contains(wanted)
                case .any: moves = true
                case .set(let set): moves = set.contains(scalar)
                default: moves = false
                }
                if moves, add(pc + 1, at: position + 1, in: scalars, to: &next) { return true }
            }
            swap(&current, &next)
        }
        return false
    }

    /// Adds the thread at `pc`, following its jumps, splits and assertions; true once one matches.
    private func add(_ pc: Int, at position: Int, in scalars: [Unicode.Scalar], to list: inout ThreadList) -> Bool {
        guard list.insert(pc) else { return false }
        switch program[pc] {
        case .match:
            return true
        case .jump(let target):
            return add(target, at: position, in: scalars, to: &list)
        case .split(let first, let second):
            return add(first, at: position, in: scalars, to: &list) || add(second, at: position, in: scalars, to: &list)
        case .start:
            return position == 0 && add(pc + 1, at: position, in: scalars, to: &list)
        case .end:
            return position == scalars.count && add(pc + 1, at: position, in: scalars, to: &list)
        case .wordBoundary(let wanted):
            let before = position > 0 && Self.isIn(.word, scalars[position - 1])
            let after = position < scalars.count && Self.isIn(.word, scalars[position])
            return (before != after) == wanted && add(pc + 1, at: position, in: scalars, to: &list)
        case .scalar, .any, .set:
            return false   // waits for the next character
        }
    }

    /// The instructions alive at one position, each once (a sparse set: no clearing cost).
    private struct ThreadList {
        var items: [Int] = []
        var slot: [Int]

        init(capacity: Int) {
            slot = Array(repeating: -1, count: capacity)
            items.reserveCapacity(capacity)
        }

        mutating func insert(_ pc: Int) -> Bool {
            if slot[pc] >= 0, slot[pc] < items.count, items[slot[pc]] == pc { return false }
            slot[pc] = items.count
            items.append(pc)
            return true
        }

        mutating func clear() { items.removeAll(keepingCapacity: true) }
    }

    /// `scalar` and its other cases, for matching without case, and a plain space for a space beyond ASCII: a pattern's
    /// ` ` matches a title's no-break or thin space (titles keep those; ASCII ones are collapsed to ` ` already).
    static func variants(of scalar: Unicode.Scalar) -> [Unicode.Scalar] {
        var all = [scalar]
        if !scalar.isASCII, scalar.properties.isWhitespace { all.append(" ") }
        for mapping in [scalar.properties.lowercaseMapping, scalar.properties.uppercaseMapping] {
            let mapped = mapping.unicodeScalars
            if mapped.count == 1, let only = mapped.first, !all.contains(only) { all.append(only) }
        }
        return all
    }

    static func isIn(_ kind: ScalarSet.Class, _ scalar: Unicode.Scalar) -> Bool {
        switch kind {
        case .digit: scalar.properties.numericType == .decimal
        case .word: scalar == "_" || scalar.properties.isAlphabetic || scalar.properties.numericType == .decimal || scalar.properties.generalCategory == .nonspacingMark
        case .space: scalar.properties.isWhitespace
        }
    }
}
