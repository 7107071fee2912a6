#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The writer name recorded in every record a handle writes (docs/FORMAT.md section 14):
/// its default, and the rule a declared name follows.
///
/// A name is what the writer *says* it is. Any holder of the passphrase or key can seal
/// a record with any name, so a name is provenance among cooperating writers, not proof.
/// A handle unlocked with a host key records the name of its host's wrap, which the
/// vault identity signed (section 12.1); the host could still seal another name with the
/// master key it holds, so that name is not bound cryptographically either.
enum VaultWriter {
    /// `user@machine`: the effective user's login name (else `$USER`, else the uid) and
    /// the host name, as `ssh` and `git` show them.
    static let defaultName: String = {
        var user: String?
        if let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name { user = String(cString: name) }
        if user?.isEmpty ?? true, let name = getenv("USER") { user = String(cString: name) }
        var host = [UInt8](repeating: 0, count: 256)
        let machine = host.withUnsafeMutableBufferPointer { buffer in
            gethostname(UnsafeMutableRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self), buffer.count - 1) == 0
        } ? String(decoding: host.prefix { $0 != 0 }, as: UTF8.self) : ""
        let name = "\(user.flatMap { $0.isEmpty ? nil : $0 } ?? String(geteuid()))@\(machine.isEmpty ? "localhost" : machine)"
        return (try? validated(name)) ?? "unknown"
    }()

    /// The longest writer name, in UTF-8 bytes: as a host name (section 12).
    static let maximumByteCount = 255

    /// `name` if it is 1 to 255 bytes of UTF-8 without a control character (the rule for
    /// host names, so a name prints safely where a host's does).
    static func validated(_ name: String) throws(VaultError) -> String {
        guard (1...maximumByteCount).contains(name.utf8.count),
              !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { throw .invalidArgument(.invalidWriterName) }
        return name
    }
}
