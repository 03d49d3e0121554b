/// Includes the inputs of a `ParsableArguments` type in a command, for inputs several commands
/// share: `@OptionGroup var global: GlobalOptions`.
///
/// A group a command and its subcommand both include is global: its options are accepted before
/// or after the subcommand's name. Its `validate()` runs in every command that includes it.
@propertyWrapper
struct OptionGroup<Value: ParsableArguments>: Sendable {
    var wrappedValue: Value

    init() {
        wrappedValue = ParsingContext.group(Value.self)
    }
}
