/// A type whose stored properties are command-line inputs, declared with `@Option`, `@Flag`,
/// `@Argument` and `@OptionGroup`: a command, or a group of options shared by commands.
///
/// The parser makes a value with `init()` and reflects on its property wrappers to learn the
/// inputs, in declaration order (which is also help order and positional order). It then
/// builds the parsed value through `Decodable`: the compiler writes `init(from:)`, and the
/// parser's decoder hands each wrapper its value. So every stored property must use one of
/// the wrappers, and conforming types shouldn't write `init(from:)` themselves.
///
/// `SendableMetatype` lets the metatypes be listed in the `Sendable` `CommandConfiguration`.
protocol ParsableArguments: Decodable, SendableMetatype {
    /// Makes the declaration the parser reflects on; conforming types write `init() {}`.
    init()

    /// Checks the parsed values together; throw `ValidationError` to reject the command line.
    /// Runs after parsing, before the command is returned. Does nothing by default.
    mutating func validate() throws
}

extension ParsableArguments {
    mutating func validate() throws {}
}
