/// A family of ``CodedError``s: the library's refusals, a feed's failures, SQLite's errors …
///
/// A domain is a type with no values (an empty enum). It names its errors with a typealias
/// (`typealias LibraryError = CodedError<LibraryDomain>`), declares its codes in an extension of
/// the errors' `Code`, and says what its errors carry beyond a code and a message.
public protocol ErrorDomain {
    /// A code's value: its name by default; a number where the codes are a C library's (SQLite's).
    associatedtype CodeValue: Hashable, Sendable, CustomStringConvertible = String
    /// What the domain's errors carry beyond their code and message (an HTTP status, where the
    /// XML breaks …), read and written as fields of the error itself.
    associatedtype Details: Hashable, Sendable = NoDetails
}

/// The details of a domain whose errors are a code and a message only.
public struct NoDetails: Hashable, Sendable {
    public init() {}
}
