extension TitlePattern {
    indirect enum Node: Sendable {
        case empty
        case instruction(Instruction)
        case sequence([Node])
        case alternatives([Node])
        /// `node` at least `least` times, at most `most` (nil: no bound).
        case repeated(Node, least: Int, most: Int?)
    }

    struct Parser {
        let scalars: [Unicode.Scalar]
        var index = 0
        /// The most a counted repetition may ask for.
        static let maxCount = 1_000

        var peek: Unicode.Scalar? { index < scalars.count ? scalars[index] : nil }

        mutating func take() -> Unicode.Scalar? {
            defer { index += 1 }
            return peek
        }

        mutating func alternation() throws(Refusal) -> Node {
            var choices = [try sequence()]
            while peek == "|" {
                index += 1
                choices.append(try sequence())
            }
            return choices.count == 1 ? choices[0] : .alternatives(choices)
        }

        mutating func sequence() throws(Refusal) -> Node {
            var items: [Node] = []
            while let scalar = peek, scalar != "|", scalar != ")" {
                var atom = try self.atom()
                while let quantifier = try self.quantifier() {
                    switch atom {
                    case .instruction(.start), .instruction(.end): throw Refusal(reason: "'^' or '$' cannot be repeated")
                    default: atom = .repeated(atom, least: quantifier.least, most: quantifier.most)
                    }
                }
                items.append(atom)
            }
            return items.count == 1 ? items[0] : items.isEmpty ? .empty : .sequence(items)
        }

        mutating func atom() throws(Refusal) -> Node {
            guard let scalar = take() else { throw Refusal(reason: "it ends too early") }
            switch scalar {
            case "(":
                if peek == "?" {
                    index += 1
                    guard take() == ":" else { throw Refusal(reason: "it uses '(?', and only '(?:' is taken: no lookaround, no flags") }
                }
                let inner = try alternation()
                guard take() == ")" else { throw Refusal(reason: "it has a '(' without its ')'") }
                return inner
            case ".": return .instruction(.any)
            case "^": return .instruction(.start)
            case "$": return .instruction(.end)
            case "[": return .instruction(.set(try bracket()))
            case "\\": return try escape(inBracket: false)
            case "*", "+", "?": throw Refusal(reason: "it has '\(scalar)' with nothing before it to repeat")
            case "{" where Self.isCount(scalars, from: index): throw Refusal(reason: "it has a count with nothing before it to repeat")
            default: return .instruction(.scalar(scalar))
            }
        }

        /// `{2}`, `{2,}`, `{2,5}`; else a literal brace.
        static func isCount(_ scalars: [Unicode.Scalar], from index: Int) -> Bool {
            var i = index
            var digits = 0
            while i < scalars.count, ("0"..."9").contains(scalars[i]) { i += 1; digits += 1 }
            guard digits > 0, i < scalars.count else { return false }
            if scalars[i] == "}" { return true }
            guard scalars[i] == "," else { return false }
            i += 1
            while i < scalars.count, ("0"..."9").contains(scalars[i]) { i += 1 }
            return i < scalars.count && scalars[i] == "}"
        }

        mutating func quantifier() throws(Refusal) -> (least: Int, most: Int?)? {
            guard let scalar = peek else { return nil }
            var bounds: (least: Int, most: Int?)
            switch scalar {
            case "*": bounds = (0, nil); index += 1
            case "+": bounds = (1, nil); index += 1
            case "?": bounds = (0, 1); index += 1
            case "{" where Self.isCount(scalars, from: index + 1):
                index += 1
                let least = number()
                var most: Int? = least
                if peek == "," {
                    index += 1
                    most = peek == "}" ? nil : number()
                }
                index += 1   // "}"
                guard least <= Self.maxCount, (most ?? 0) <= Self.maxCount else { throw Refusal(reason: "it repeats something more than \(Self.maxCount) times") }
                if let most, most < least { throw Refusal(reason: "it has a count {\(least),\(most)} whose maximum is below its minimum") }
                bounds = (least, most)
            default:
                return nil
            }
            if peek == "?" { index += 1 }   // lazy: the same for a yes-or-no match
            if peek == "+" { throw Refusal(reason: "it uses a possessive quantifier, which is not taken") }
            return bounds
        }

        mutating func number() -> Int {
            var value = 0
            while let scalar = peek, ("0"..."9").contains(scalar) {
                value = min(Int.max / 10 - 9, value) * 10 + Int(scalar.value - 48)
                index += 1
            }
            return value
        }

        mutating func bracket() throws(Refusal) -> ScalarSet {
            var set = ScalarSet()
            if peek == "^" { set.negated = true; index += 1 }
            var first = true
            while true {
                guard let scalar = take() else { throw Refusal(reason: "it has a '[' without its ']'") }
                if scalar == "]" && !first { return set }
                first = false
                var low = scalar
                if scalar == "\\" {
                    switch try escape(inBracket: true) {
                    case .instruction(.scalar(let literal)): low = literal
                    case .instruction(.set(let inner)): set.classes += inner.classes; continue
                    default: throw Refusal(reason: "it has an escape inside '[ ]' that names no character")
                    }
                }
                if peek == "-", index + 1 < scalars.count, scalars[index + 1] != "]" {
                    index += 1
                    guard var high = take() else { throw Refusal(reason: "it has a '[' without its ']'") }
                    if high == "\\" {
                        guard case .instruction(.scalar(let literal)) = try escape(inBracket: true) else {
                            throw Refusal(reason: "it has a range inside '[ ]' that ends in a class")
                        }
                        high = literal
                    }
                    guard low.value <= high.value else { throw Refusal(reason: "it has a range [\(low)-\(high)] that goes backwards") }
                    set.ranges.append(low.value...high.value)
                } else {
                    set.ranges.append(low.value...low.value)
                }
            }
        }

        mutating func escape(inBracket: Bool) throws(Refusal) -> Node {
            guard let scalar = take() else { throw Refusal(reason: "it ends with a '\\'") }
            func kind(_ kind: ScalarSet.Class, negated: Bool) -> Node {
                .instruction(.set(ScalarSet(classes: [(kind, negated)])))
            }
            switch scalar {
            case "d": return kind(.digit, negated: false)
            case "D": return kind(.digit, negated: true)
            case "w": return kind(.word, negated: false)
            case "W": return kind(.word, negated: true)
            case "s": return kind(.space, negated: false)
            case "S": return kind(.space, negated: true)
            case "b" where !inBracket: return .instruction(.wordBoundary(true))
            case "B" where !inBracket: return .instruction(.wordBoundary(false))
            case "t": return .instruction(.scalar("\t"))
            case "n": return .instruction(.scalar("\n"))
            case "1"..."9": throw Refusal(reason: "it uses a backreference (\\\(scalar)), which is not taken")
            case _ where scalar.properties.isAlphabetic || ("0"..."9").contains(scalar):
                throw Refusal(reason: "it uses \\\(scalar), an escape that is not known")
            default: return .instruction(.scalar(scalar))   // punctuation, taken as it is
            }
        }
    }

    /// Thompson's construction.
    struct Compiler {
        var program: [Instruction] = []

        mutating func emit(_ node: Node) throws(Refusal) {
            guard program.count <= TitlePattern.maxProgram else {
                throw Refusal(reason: "it asks for too much repetition (more than \(TitlePattern.maxProgram) steps once written out)")
            }
            switch node {
            case .empty:
                break
            case .instruction(let instruction):
                program.append(instruction)
            case .sequence(let items):
                for item in items { try emit(item) }
            case .alternatives(let choices):
                var jumps: [Int] = []
                for (offset, choice) in choices.enumerated() {
                    if offset < choices.count - 1 {
                        let split = program.count
                        program.append(.split(split + 1, 0))
                        try emit(choice)
                        jumps.append(program.count)
                        program.append(.jump(0))
                        program[split] = .split(split + 1, program.count)
                    } else {
                        try emit(choice)
                    }
                }
                for jump in jumps { program[jump] = .jump(program.count) }
            case .repeated(let inner, let least, let most):
                for _ in 0..<least { try emit(inner) }
                if let most {
                    for _ in least..<most {
                        let split = program.count
                        program.append(.split(split + 1, 0))
                        try emit(inner)
                        program[split] = .split(split + 1, program.count)
                    }
                } else {
                    let split = program.count
                    program.append(.split(split + 1, 0))
                    try emit(inner)
                    program.append(.jump(split))
                    program[split] = .split(split + 1, program.count)
                }
            }
        }
    }
}
