import MonsoonEngine
import MonsoonStore

/// A command's failure as a message and an exit status. The message is printed after
/// `monsoon: `: it starts lowercase (but for a name, a path, a URL or quoted input) and has no
/// closing period; what to do follows a `;` ("…; list them with 'monsoon downloads'").
struct CLIError: Error {
    var message: String
    var status: Int32 = ExitStatus.failure

    /// A mistake in the command line found as the command runs: printed with the command's usage.
    static func usage(_ message: String) -> CLIError { CLIError(message: message, status: ExitStatus.usage) }
}

extension CLIError {
    /// The failure `error` from below (the database, the engine), its message after `prefix` when
    /// given. A full disk under the database is a full disk like any other: exit 3, else 1.
    init(_ error: Error, _ prefix: String? = nil) {
        let full = (error as? StoreError)?.isDiskFull == true || (error as? DownloadManagerError)?.code == .storageFull
        // Monsoon's errors describe themselves in words for users (and the top level redacts).
        message = prefix.map { "\($0): \(error)" } ?? "\(error)"
        status = full ? ExitStatus.diskFull : ExitStatus.failure
    }
}

extension CLIError {
    /// What `body` returns; its failure as the command's, "`what`: error" (exit 1). A `CLIError`
    /// says what failed already, and passes as it is.
    static func prefixing<T>(_ what: String, _ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as CLIError { throw error } catch { throw CLIError(message: "\(what): \(error)") }
    }
}
