import Foundation
import VaultKit

/// Where tests put their files and find the programs the package built.
public enum TestPaths {
    /// A new, empty, mode-0700 directory for one test, left after the run: each test
    /// gets a unique one under `$TMPDIR/vaultkit-tests/`, so failures can be inspected
    /// (scripts/test.sh removes those more than a day old).
    public static func temporaryDirectory(_ label: String = #function) -> String {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("vaultkit-tests").path
        try? FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        let safe = label.filter { $0.isLetter || $0.isNumber }.prefix(40)
        let path = "\(base)/\(safe)-\(UUID().uuidString.prefix(8))"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return path
    }

    /// The build products directory (`.build/debug` or similar), found from the running
    /// test bundle, so tests can start executables built in the same `swift build`.
    public static var productsDirectory: String {
        if let override = ProcessInfo.processInfo.environment["VAULTKIT_PRODUCTS_DIR"] { return override }
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        // On Linux the runner is `<products>/<Package>PackageTests.xctest`; on macOS it is inside an .xctest bundle.
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("vault-test-writer").path) { return url.path }
        }
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            return bundle.bundleURL.deletingLastPathComponent().path
        }
        fatalError("cannot find the build products directory from \(CommandLine.arguments[0])")
    }

    /// The path of an executable product of this package.
    public static func executable(_ name: String) -> String {
        "\(productsDirectory)/\(name)"
    }
}

/// Argon2id limits cheap enough for tests (the minimum libsodium allows); never use in production.
public let testKDF: KDFParameters = try! KDFParameters(opsLimit: 1, memoryLimit: 8 * 1024)
