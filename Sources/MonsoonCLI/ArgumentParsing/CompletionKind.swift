/// Where the values of an input come from at Tab beyond those of its type, as in
/// swift-argument-parser's `CompletionKind.custom`: answered by the program itself, from what it
/// knows when asked (the podcasts of a library), since no shell could know it.
struct CompletionKind: Sendable {
    /// Every candidate for the words typed so far (the program's name first, the word being
    /// typed last); the caller keeps those that fit the typed word. It must not write anything
    /// (a Tab changes nothing) nor print: a failure is no candidates.
    let candidates: @Sendable (_ words: [String], _ context: CommandContext) -> [String]
}
