/// A mistake in the command line, found by the parser or thrown by a command's `validate()`;
/// it is reported as a usage error (exit status 2).
///
///     if jobs < 1 { throw ValidationError("--jobs must be at least 1") }
struct ValidationError: Error, CustomStringConvertible {
    /// The complete message, shown after "monsoon: ": lowercase, no closing period; a hint follows
    /// a `;` ("unknown option '--jbos'; did you mean '--jobs'?").
    var message: String

    init(_ message: String) {
        self.message = message
    }

    var description: String { message }
}
