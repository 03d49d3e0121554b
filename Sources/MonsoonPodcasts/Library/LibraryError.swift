import MonsoonBasics

/// The domain of ``LibraryError``.
public enum LibraryDomain: ErrorDomain {}

/// Why a library operation was refused. Its message is one line: what was not found, or which podcasts matched (up to
/// five, with their ids), and what to do.
public typealias LibraryError = CodedError<LibraryDomain>

extension LibraryError.Code {
    /// Nothing fits what was asked (no such podcast or episode, not in the queue, no media file).
    public static var notFound: Self { Self(rawValue: "notFound") }
    /// More than one podcast's title matched.
    public static var ambiguous: Self { Self(rawValue: "ambiguous") }
}
