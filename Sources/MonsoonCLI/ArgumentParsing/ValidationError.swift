/// An error thrown from `validate()` to reject a command line; the parser reports its message
/// as a usage error.
///
///     if jobs < 1 { throw ValidationError("--jobs must be at least 1.") }
struct ValidationError: Error, CustomStringConvertible {
    /// The complete message, shown after "Error: ".
    var message: String

    init(_ message: String) {
        self.message = message
    }

    var description: String { message }
}
