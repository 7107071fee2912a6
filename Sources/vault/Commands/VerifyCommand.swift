import ArgumentParser
import VaultKit
import VaultTransfer

struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check the whole vault for tampering and damage.",
        discussion: """
            Checks every item against the vault's manifest (no item deleted, added or \
            put back at an older version behind VaultKit's back) and opens every sealed \
            record (none modified, moved or copied from another vault). Reads check what \
            they touch; run this after restoring or syncing a vault file, or from cron.

            Writes "ok: N items" to standard output and exits 0, or reports the first \
            problem found ("vault: vault is tampered: ...") and exits 1. Replacing the \
            whole file with an older copy of itself, or a damaged \(VaultFileTexts.commitLogSuffix) that lost its \
            last commits, cannot be detected from the file alone: the rollback guard \
            reports them only where it holds a record of a later state, so a vault this \
            user never opened before (or with VAULT_ROLLBACK_GUARD=off) verifies ok \
            without the commits it lost (see docs/THREAT-MODEL.md).

            EXAMPLE:
              vault verify && echo intact
            """
    )

    @OptionGroup var options: VaultOptions

    func run() throws {
        let vault = try options.openItems()
        defer { vault.close() }
        let count = try vault.verify()
        var output = SecretBytes()
        output.append("ok: \(count) item\(count == 1 ? "" : "s")\n")
        try Output.writeStandardOutput(output)
    }
}
