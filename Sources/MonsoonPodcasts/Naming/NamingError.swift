import MonsoonBasics

/// The domain of ``NamingError``.
public enum NamingDomain: ErrorDomain {}

/// A template that cannot be used. Its message is one line: what is wrong with the template and what to do.
public typealias NamingError = CodedError<NamingDomain>

extension NamingError.Code {
    /// The template does not end with `.{ext}` (the extension comes from the server).
    public static var missingExtension: Self { Self(rawValue: "missingExtension") }
    /// `{ext}` stands somewhere else than at the end of the file name.
    public static var misplacedExtension: Self { Self(rawValue: "misplacedExtension") }
    /// The template starts with `/`: it must be relative to the download root.
    public static var absolutePath: Self { Self(rawValue: "absolutePath") }
    /// A folder name is empty (`//`, a trailing `/`, or nothing before `.{ext}`).
    public static var emptyFolder: Self { Self(rawValue: "emptyFolder") }
    /// A folder is `.` or `..`.
    public static var dotFolder: Self { Self(rawValue: "dotFolder") }
    /// A `{` without its `}`, or a `}` without its `{`.
    public static var unbalancedBrace: Self { Self(rawValue: "unbalancedBrace") }
    /// A `{name}` that is none of ``NamingTemplate/variables``.
    public static var unknownVariable: Self { Self(rawValue: "unknownVariable") }
}
