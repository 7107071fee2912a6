import Synchronization

/// The storage engines this process reaches by URL, found by the URL's scheme. A location
/// whose scheme no engine registered is a vault file path.
///
/// Register each engine once, before opening a vault by URL:
///
/// ```swift
/// import VaultKitPostgres
/// VaultEngines.register(.postgres)
/// let vault = try Vault.open(url: "postgres://app@db/secrets#default", key: key)
/// ```
public enum VaultEngines {
    private static let registered = Mutex<(byScheme: [String: VaultEngine], inOrder: [VaultEngine])>(([:], []))

    /// Makes `engine` reach the URLs of its schemes; registering the same scheme again
    /// replaces the engine registered before.
    public static func register(_ engine: VaultEngine) {
        registered.withLock { engines in
            for scheme in engine.schemes { engines.byScheme[scheme] = engine }
            engines.inOrder = engines.inOrder.filter { !Set($0.schemes).isSubset(of: engine.schemes) } + [engine]
        }
    }

    /// The registered engines in the order they were registered, for help texts.
    package static var all: [VaultEngine] {
        registered.withLock { engines in
            engines.inOrder.filter { engine in engine.schemes.contains { engines.byScheme[$0]?.schemes == engine.schemes } }
        }
    }

    /// The engine for the scheme `given` starts with (`scheme://`), or `nil` when no
    /// registered engine has it: `given` is then a file path.
    public static func engine(for given: String) -> VaultEngine? {
        guard let scheme = scheme(of: given) else { return nil }
        return registered.withLock { $0.byScheme[scheme] }
    }

    /// Whether `given` is a URL some registered engine opens, rather than a file path.
    public static func isEngineURL(_ given: String) -> Bool {
        engine(for: given) != nil
    }

    /// Whether `given` has the shape of an engine's URL (`scheme://`), registered or not:
    /// what tells a message that a location is no file (a library user may open an
    /// engine's vault without registering it).
    package static func isURL(_ given: String) -> Bool {
        scheme(of: given) != nil
    }

    /// `given` read by the engine of its scheme, or `nil` when it is a file path.
    ///
    /// - Throws: ``VaultError/invalidArgument(_:)`` when the engine cannot read it (the
    ///   URL is never repeated: it may hold a password).
    package static func location(_ given: String) throws(VaultError) -> (any VaultEngineLocation)? {
        guard let engine = engine(for: given) else { return nil }
        return try engine.locate(given)
    }

    /// The scheme of `given` in lower case, if it starts with one and `://`
    /// (RFC 3986: a letter, then letters, digits, `+`, `-` and `.`).
    private static func scheme(of given: String) -> String? {
        let bytes = Array(given.utf8)
        guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: "://".utf8) }) else { return nil }
        let scheme = given.utf8.prefix(end)
        let isLetter = { (byte: UInt8) in (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) }
        let isDigit = { (byte: UInt8) in (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        guard let first = scheme.first, isLetter(first),
              scheme.allSatisfy({ isLetter($0) || isDigit($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") })
        else { return nil }
        return String(decoding: scheme, as: UTF8.self).lowercased()
    }
}
