import MonsoonBasics

/// The domain of ``SettingError``.
public enum SettingDomain: ErrorDomain {}

/// A setting that cannot be read or written. Its message is one line: what is wrong and what to do.
public typealias SettingError = CodedError<SettingDomain>

extension SettingError.Code {
    /// The value given is not one the setting takes (the message says what it takes): ask again.
    public static var invalidValue: Self { Self(rawValue: "invalidValue") }
    /// A podcast's own value was given for a setting that has none (``SettingKey/allowsPodcastOverride``).
    public static var notPerPodcast: Self { Self(rawValue: "notPerPodcast") }
    /// A value without a podcast was given for a setting only a podcast has (``SettingKey/isPodcastOnly``).
    public static var podcastOnly: Self { Self(rawValue: "podcastOnly") }
    /// The value stored is no longer valid (written by another version, or by hand): set it again.
    public static var invalidStoredValue: Self { Self(rawValue: "invalidStoredValue") }
}
