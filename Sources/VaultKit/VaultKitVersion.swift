/// The release of VaultKit this code is, in one place: `vault --version` prints it, and
/// an app can log it next to its own version when reporting a problem.
///
/// It names the library, not the vault file format: files carry their own format
/// number, and one release reads several formats.
public enum VaultKitVersion {
    /// A semantic version, `MAJOR.MINOR.PATCH`.
    public static let current = "0.11.0"
}
