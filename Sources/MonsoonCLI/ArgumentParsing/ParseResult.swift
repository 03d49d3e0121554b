/// What `CommandParser.parse` decided the command line asks for.
enum ParseResult {
    /// The command to run, already parsed and validated. The caller casts it to its own
    /// protocol that adds `run()`.
    case command(any ParsableCommand)
    /// Help text to print on standard output before exiting with status 0.
    case help(String)
    /// The version to print on standard output before exiting with status 0.
    case version(String)
    /// A mistake in the command line. Print `CommandParser.usageErrorText(message:usage:root:)`
    /// on standard error and exit with status 2.
    ///
    /// - Parameters:
    ///   - message: one sentence, e.g. "Unknown option '--outt'. Did you mean '--out'?"
    ///   - usage: the usage line of the command the mistake was found in, without "Usage: ".
    case usageError(message: String, usage: String)
}
