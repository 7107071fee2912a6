import ArgumentParser
import VaultKit

struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Write a verified copy of the vault to a new file.",
        discussion: """
            Copying the vault file with cp is not a backup: the latest commits may still \
            be in its \(VaultFileTexts.commitLogSuffix) side file, and a copy taken while another process writes can \
            be torn. This writes one consistent snapshot (\(VaultFileTexts.onlineCopy), while \
            other processes go on using the vault) to DEST, which must not exist: mode \
            0600, complete or absent, synced to disk, then opened with the same keys and \
            verified whole. The copy opens with the same passphrase or key file.

            EXAMPLE:
              vault backup /mnt/usb/secrets-$(date +%F).vault
            """
    )

    @OptionGroup var options: VaultOptions

    @Argument(help: ArgumentHelp("Where to write the copy; nothing may exist there.", valueName: "dest"))
    var destination: String

    func validate() throws {
        if destination.isEmpty { throw ValidationError("the destination must not be empty") }
    }

    func run() throws {
        // Before asking for a passphrase that could not be used.
        _ = try options.location().requireFile(for: "backup", because: "back up the database with pg_dump, which keeps the vault sealed")
        let vault = try options.openVault()
        defer { vault.close() }
        try vault.backup(to: destination)
    }
}
