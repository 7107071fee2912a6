#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import VaultKit
import VaultTransfer

/// The vault identities a host key opens vaults of: `KEY.pin` beside the host key file,
/// one fingerprint (`vkid1:` and 64 hex digits) per line, written by `vault host pin`.
///
/// A list rather than one pin, because one host key may be enrolled in several vaults;
/// a list rather than pins keyed by vault path or URL, because the same vault is reached
/// under different names (a relative path, a symbolic link, a URL's options) and a pin
/// that silently stopped matching would push people to disable it. What this gives up
/// (docs/THREAT-MODEL.md): a vault the key is enrolled in can be swapped for another
/// vault the same key is enrolled in. Hosts that must tell those apart use one key per vault.
///
/// The file gets the same checks as the key beside it (``SecretFile``: a regular file of
/// this user's or root's, readable and writable by no one else), since whoever can
/// rewrite it chooses which vault the host trusts.
enum HostPins {
    /// Where the pins of `keyFile` are kept.
    static func path(forKeyFile keyFile: String) -> String { keyFile + ".pin" }

    /// The pinned identities of `keyFile`.
    ///
    /// - Throws: ``CLIError/hostKeyNotPinned(keyFile:)`` when it has none, naming `vault host pin`.
    static func read(forKeyFile keyFile: String) throws(CLIError) -> [VaultIdentity] {
        guard let pins = try readIfPresent(path(forKeyFile: keyFile)), !pins.isEmpty else {
            throw .hostKeyNotPinned(keyFile: keyFile)
        }
        return pins
    }

    /// Adds `identity` to the pins of `keyFile` (nothing when it is there already): the
    /// whole file is written anew beside the old one and renamed over it, synced.
    static func add(_ identity: VaultIdentity, forKeyFile keyFile: String) throws(CLIError) {
        let path = path(forKeyFile: keyFile)
        var pins = try readIfPresent(path) ?? []
        guard !pins.contains(identity) else { return }
        pins.append(identity)
        let contents = pins.map { $0.fingerprint + "\n" }.joined()
        let temporary = path + ".new"
        let what = "the pin file \(path)"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .cannotWrite(what: what, errno: errno) }
        var failure: Int32 = 0
        var text = contents
        text.withUTF8 { bytes in
            do throws(CLIError) { try Output.write(UnsafeRawBufferPointer(bytes), to: fd) } catch {
                if case .cannotWrite(_, let code) = error { failure = code } else { failure = EIO }
            }
        }
        if failure == 0, fsync(fd) != 0 { failure = errno }
        close(fd)
        if failure == 0, rename(temporary, path) != 0 { failure = errno }
        if failure != 0 {
            unlink(temporary)
            throw .cannotWrite(what: what, errno: failure)
        }
        let directory = path.lastIndex(of: "/").map { path[..<$0].isEmpty ? "/" : String(path[..<$0]) } ?? "."
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 { fsync(directoryFD); close(directoryFD) }
    }

    /// The pins in the file at `path`, or `nil` when there is no file.
    private static func readIfPresent(_ path: String) throws(CLIError) -> [VaultIdentity]? {
        let what = "the pin file \(path)"
        let contents: String
        do {
            contents = try Credentials.readFile(path, what: what, limit: 1 << 20, allowingPipe: false).text
        } catch .cannotRead(_, ENOENT) {
            return nil
        }
        var pins: [VaultIdentity] = []
        for (index, line) in contents.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingWhitespaceAndNewlines()
            if trimmed.isEmpty { continue }
            guard let identity = try? VaultIdentity(fingerprint: trimmed) else { throw .invalidPinFile(path: path, line: index + 1) }
            if !pins.contains(identity) { pins.append(identity) }
        }
        return pins
    }
}
