#if canImport(Glibc)
import Glibc
#endif

/// Why `vault secret-service` could not start or stopped serving.
package enum ProviderError: Error, CustomStringConvertible {
    /// libsystemd (sd-bus) could not be loaded.
    case libraryMissing
    /// Another program already owns org.freedesktop.secrets on this bus.
    case nameTaken
    /// A bus operation failed: what, and sd-bus's negative errno.
    case bus(String, Int32)

    package var description: String {
        switch self {
        case .libraryMissing: "libsystemd (sd-bus) could not be loaded; install it (Debian: libsystemd0)"
        case .nameTaken: "another Secret Service already owns org.freedesktop.secrets on this bus (GNOME Keyring, KeePassXC or another vault secret-service)"
        case .bus(let what, let errno): "\(what): \(String(cString: strerror(-errno)))"
        }
    }
}
