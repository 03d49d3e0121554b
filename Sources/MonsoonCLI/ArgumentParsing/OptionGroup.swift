/// Includes the options, flags and arguments of another `ParsableArguments` type in a command,
/// for inputs shared by several commands.
///
///     @OptionGroup var global: GlobalOptions
///
/// Groups of the same type in a command and in its subcommand make their options global: they
/// are accepted before or after the subcommand name (`monsoon --home /x get` and
/// `monsoon get --home /x` both fill the subcommand's group). A group's `validate()` runs when
/// its command is validated.
@propertyWrapper
struct OptionGroup<Value: ParsableArguments>: Decodable, OptionGroupProviding {
    var wrappedValue: Value

    /// The declaration; the parser reflects on the fresh `Value()` to find the group's inputs.
    init() {
        wrappedValue = Value()
    }

    /// Reads the group's parsed values and validates them.
    init(from decoder: any Decoder) throws {
        wrappedValue = try Value(from: decoder)
        // Validated here so a shared group's rules hold in every command that includes it.
        try wrappedValue.validate()
    }

    var groupArguments: any ParsableArguments { wrappedValue }
}

extension OptionGroup: Sendable where Value: Sendable {}

/// Lets the parser find the inputs of an `@OptionGroup` by reflection.
protocol OptionGroupProviding {
    /// The group's value, whose own wrappers declare the group's inputs.
    var groupArguments: any ParsableArguments { get }
}
