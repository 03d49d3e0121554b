/// An error of one domain: a code for programs and one line for users.
///
/// A struct around an open set of codes (as swift-system's `Errno`), so a new code never breaks a
/// caller's `switch`: compare ``code`` with the domain's codes and keep a `default`. One type for
/// every domain, each with its own codes, so a library code is never compared with a feed's:
///
///     public enum LibraryDomain: ErrorDomain {}
///     public typealias LibraryError = CodedError<LibraryDomain>
///
///     extension LibraryError.Code {
///         /// Nothing fits what was asked.
///         public static var notFound: Self { Self(rawValue: "notFound") }
///     }
///
/// Codes are computed (`static var`): a generic type cannot store static values. The fields of
/// the domain's `Details` read and write as the error's own (`error.httpStatus`).
@dynamicMemberLookup
public struct CodedError<Domain: ErrorDomain>: Error, Sendable, Hashable, CustomStringConvertible {
    /// A kind of error of the domain.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code's name (or number).
        public let rawValue: Domain.CodeValue
        /// A code from its name; unknown names (from a newer Monsoon, say) are kept as they are.
        public init(rawValue: Domain.CodeValue) { self.rawValue = rawValue }
        public var description: String { rawValue.description }
    }

    /// The kind of error, for deciding what to do about it.
    public var code: Code
    /// One line: what happened and, where it can, what to do.
    public var message: String
    /// What the error carries beyond its code and message; its fields also read as the error's own.
    public var details: Domain.Details

    public init(_ code: Code, _ message: String, details: Domain.Details) {
        self.code = code
        self.message = message
        self.details = details
    }

    public init(_ code: Code, _ message: String) where Domain.Details == NoDetails {
        self.init(code, message, details: NoDetails())
    }

    public var description: String { message }

    /// A field of ``details``, as if it were the error's own.
    public subscript<Value>(dynamicMember field: WritableKeyPath<Domain.Details, Value>) -> Value {
        get { details[keyPath: field] }
        set { details[keyPath: field] = newValue }
    }
}
