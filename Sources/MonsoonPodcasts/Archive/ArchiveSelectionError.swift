import MonsoonBasics

/// The domain of ``ArchiveSelectionError``.
public enum ArchiveSelectionDomain: ErrorDomain {}

/// A selection that cannot be made. Its message is one line: what is wrong and what to do.
public typealias ArchiveSelectionError = CodedError<ArchiveSelectionDomain>

extension ArchiveSelectionError.Code {
    /// A `match` or `exclude` pattern is not a regular expression (the message names the option).
    public static var invalidPattern: Self { Self(rawValue: "invalidPattern") }
}
