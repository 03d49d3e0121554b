import MonsoonBasics

public enum SharedLibraryDomain: ErrorDomain {}

/// A failure of the shared library: rules that cannot be used, a feed URL that is not one, a
/// refresh whose lease was lost. One line for users (what is wrong and what to do), and a code
/// for programs.
public typealias SharedLibraryError = CodedError<SharedLibraryDomain>

extension SharedLibraryError.Code {
    /// An archive's rules that cannot be kept (a pattern that is not a regular expression, a
    /// template that cannot name files, a count under 1): the message names the option.
    public static var invalidRules: Self { Self(rawValue: "invalidRules") }
    /// A feed URL that is not an http or https URL with a host.
    public static var invalidFeedURL: Self { Self(rawValue: "invalidFeedURL") }
    /// The refresh's lease was lost before it could finish (its job was taken back and given to
    /// another worker): nothing it found was kept, and the job is the other worker's.
    public static var leaseLost: Self { Self(rawValue: "leaseLost") }
}
