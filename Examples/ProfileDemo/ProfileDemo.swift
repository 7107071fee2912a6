import Foundation
import Logging
import ServiceLifecycle
import VaultKit
import VaultProfile

/// A terminal app that keeps a user profile in an encrypted vault.
///
///     PROFILE_DEMO_PASSPHRASE=secret swift run profile-demo --vault /tmp/demo.vault --account alice
///
/// Type commands (see ``CommandService``), stop with Ctrl-C: the last change is written
/// before the process exits. Run it again and the profile is there at once.
///
///     swift run -c release profile-demo --measure [--runs 200] [--dir DIR]
///
/// measures persisting and loading a ~1 KiB profile (see docs/PROFILE.md).
@main
struct ProfileDemo {
    static func main() async {
        var options = Options()
        do {
            options = try Options.parse(Array(CommandLine.arguments.dropFirst()))
            if options.measure {
                try await Measurement.run(runs: options.runs, directory: options.directory)
            } else {
                try await runApp(options)
            }
        } catch {
            FileHandle.standardError.write(Data("profile-demo: \(error)\n".utf8))
            exit(1)
        }
    }

    static func runApp(_ options: Options) async throws {
        let level = options.logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "profile-demo")
        let vault = try openVault(at: options.vaultPath)
        let store = ProfileStore<DemoProfile>(
            vault: vault, service: "profile-demo.profile",
            configuration: ProfileStoreConfiguration(schemaVersion: 1, debounce: options.debounce, shutdownDeadline: options.deadline),
            logger: Logger(label: "VaultProfile")
        )

        // Print every change, as a screen would redraw.
        let printer = Task {
            for await profile in store.updates() {
                say("profile \(profile?.summary ?? "none")")
            }
        }

        let group = ServiceGroupBox()
        let commands = CommandService(store: store, account: options.account, lines: standardInputLines()) {
            await group.triggerGracefulShutdown()
        }
        // Services shut down in reverse order: the commands stop first, then the store
        // writes its final snapshot.
        let serviceGroup = ServiceGroup(
            services: [store, commands],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        )
        await group.set(serviceGroup)
        try await serviceGroup.run()
        _ = await printer.result
        say("stopped")
    }

    /// Opens the vault, creating it on first run. The key comes from the environment:
    /// `PROFILE_DEMO_KEY` (64 hex digits, no key derivation; the tests use it) or
    /// `PROFILE_DEMO_PASSPHRASE` (Argon2id, `interactive` cost).
    static func openVault(at path: String) throws -> Vault {
        let environment = ProcessInfo.processInfo.environment
        let exists = FileManager.default.fileExists(atPath: path)
        if let hex = environment["PROFILE_DEMO_KEY"] {
            guard let bytes = Hex.decode(hex) else { throw DemoError("PROFILE_DEMO_KEY must be 64 hex digits") }
            let key = try VaultKey(Data(bytes))
            return exists ? try Vault.open(at: path, key: key) : try Vault.create(at: path, key: key)
        }
        if let passphrase = environment["PROFILE_DEMO_PASSPHRASE"] {
            return exists ? try Vault.open(at: path, passphrase: passphrase) : try Vault.create(at: path, passphrase: passphrase, kdf: .interactive)
        }
        throw DemoError("set PROFILE_DEMO_PASSPHRASE (or PROFILE_DEMO_KEY) to unlock \(path)")
    }
}

/// Lets the command service ask the group it runs in to shut down.
actor ServiceGroupBox {
    private var group: ServiceGroup?
    func set(_ group: ServiceGroup) { self.group = group }
    func triggerGracefulShutdown() async { await group?.triggerGracefulShutdown() }
}

struct DemoError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

enum Hex {
    static func decode(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count.isMultiple(of: 2) else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }
}
