import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit
#if canImport(Glibc)
import Glibc
#endif

/// The rollback guard as the CLI runs it (docs/THREAT-MODEL.md): a read never fails
/// because the guard's own state cannot be written, and says so once; a write refuses,
/// naming the guard's directory and `VAULT_ROLLBACK_GUARD`; re-keys beside reads and
/// writes raise no false alarm; and the agent says `rolledBack` as a direct command does.
@Suite(.offCooperativePool) struct RollbackGuardStateTests {
    static let note = "vault: note: the rollback guard could not record this state of "

    /// A `get` that works, with the note as its only line on stderr, and a `set` refused
    /// in one line naming `directory`.
    static func expectReadsGoOnAndWritesRefuse(
        get: () throws -> ProcessResult, set: () throws -> ProcessResult, directory: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let read = try get()
        #expect(read.status == 0, "\(read.stderr)", sourceLocation: sourceLocation)
        #expect(read.stdout == "secret\n", sourceLocation: sourceLocation)
        #expect(read.stderr.hasPrefix(note) && read.isOneErrorLine, "\(read.stderr)", sourceLocation: sourceLocation)
        #expect(read.stderr.contains(" in \(directory) ") && read.stderr.contains("VAULT_ROLLBACK_GUARD=off"), "\(read.stderr)", sourceLocation: sourceLocation)
        let write = try set()
        #expect(write.status == 1, sourceLocation: sourceLocation)
        #expect(write.isOneErrorLine, "\(write.stderr)", sourceLocation: sourceLocation)
        #expect(write.stderr.hasPrefix("vault: the rollback guard cannot record this write in its state directory \(directory) ("), "\(write.stderr)", sourceLocation: sourceLocation)
        #expect(write.stderr.hasSuffix("or set VAULT_ROLLBACK_GUARD=off to write without the guard\n"), sourceLocation: sourceLocation)
    }

    enum Home: String, CaseIterable { case missing, anotherUsers }

    /// Run as an unprivileged user (root writes everywhere): HOME missing, or a
    /// directory of root's that this user cannot enter.
    @Test(.enabled(if: Unprivileged.isAvailable, "needs root and setpriv(1)"), arguments: Home.allCases)
    func readsGoOnWithoutAUsableHome(home: Home) throws {
        let base = Unprivileged.worldReadableDirectory()
        let own = base + "/own"
        mkdir(own, 0o700)
        chown(own, Unprivileged.userID, Unprivileged.userID)
        let rootsHome = base + "/root-home"
        mkdir(rootsHome, 0o700)
        let (wrapper, command) = try Unprivileged.command(CLI.executable, [])
        func run(_ arguments: [String], home: String, stdin: String = "") throws -> ProcessResult {
            let environment = ChildProcess.cleanEnvironment(["VAULT_PASSPHRASE": "correct horse", "HOME": home])
            return try ChildProcess.run(wrapper, command + arguments + ["--vault", own + "/test.vault"], environment: environment, standardInput: Data(stdin.utf8))
        }
        #expect(try run(["init"] + CLI.cheapKDF, home: own).status == 0)
        #expect(try run(["set", "s", "a"], home: own, stdin: "secret\n").status == 0)
        let otherHome = home == .missing ? "/nonexistent" : rootsHome
        try Self.expectReadsGoOnAndWritesRefuse(
            get: { try run(["get", "s", "a"], home: otherHome) },
            set: { try run(["set", "s", "b"], home: otherHome, stdin: "x\n") },
            directory: otherHome + "/.local/state/vaultkit/rollback"
        )
    }

    /// An immutable record: still compared (an older copy is refused), never written.
    @Test(.enabled(if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/chattr"), "needs root and chattr(1)"))
    func anImmutableRecordIsStillComparedButReadsGoOn() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("s", "a", "old")
        let oldCopy = try Data(contentsOf: URL(fileURLWithPath: cli.vaultPath))
        try cli.set("s", "a", "secret")
        let directory = cli.directory + "/state/vaultkit/rollback"
        let record = try #require(try FileManager.default.contentsOfDirectory(atPath: directory).first { $0.count == 32 })
        // A state newer than the record, so this read has one to record.
        try cli.set("s", "b", "x")
        #expect(try cli.run(["delete", "s", "b"], env: ["VAULT_ROLLBACK_GUARD": "off"]).status == 0)
        #expect(try ChildProcess.run("/usr/bin/chattr", ["+i", directory + "/" + record]).status == 0)
        defer { _ = try? ChildProcess.run("/usr/bin/chattr", ["-i", directory + "/" + record]) }
        try Self.expectReadsGoOnAndWritesRefuse(
            get: { try cli.run("get", "s", "a") }, set: { try cli.run("set", "s", "b", stdin: "x\n") }, directory: directory
        )
        try writePrivateFile(cli.vaultPath, oldCopy)
        let refused = try cli.run("get", "s", "a")
        #expect(refused.status == 1 && refused.stderr.contains("is older than a state this user has seen"), "\(refused.stderr)")
    }

    enum Medium: String, CaseIterable { case readOnly, full }

    /// A state directory on a read-only file system, or a full one, with no record yet.
    @Test(.enabled(if: Mounts.isAvailable, "needs mount(8) as root"), arguments: Medium.allCases)
    func readsGoOnWhereTheStateDirectoryCannotBeWritten(medium: Medium) throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("s", "a", "secret")
        let check = { (state: String) throws in
            try Self.expectReadsGoOnAndWritesRefuse(
                get: { try cli.run(["get", "s", "a"], env: ["XDG_STATE_HOME": state]) },
                set: { try cli.run(["set", "s", "b"], stdin: Data("x\n".utf8), env: ["XDG_STATE_HOME": state]) },
                directory: state + "/vaultkit/rollback"
            )
        }
        switch medium {
        case .readOnly:
            let empty = cli.directory + "/empty-state"
            mkdir(empty, 0o700)
            try Mounts.withReadOnlyView(of: empty) { try check($0) }
        case .full:
            try Mounts.withTmpfs(kibibytes: 64) { mountPoint in
                Mounts.fill(mountPoint)
                try check(mountPoint)
            }
        }
    }

    /// Three `set` loops and two `get` loops while `vault rekey` and `vault passwd` (to the
    /// same passphrase) run: no operation fails. Not with tampering or a rollback (a re-key
    /// between a process's unlock and its guard check was reported as `vault is tampered`),
    /// nor with `keyChanged` (a call whose guard comparison had followed the new wrapping
    /// then found nothing left to follow, and gave up). VAULTKIT_GUARD_RACE_OPERATIONS sets
    /// each loop's length.
    @Test func reKeysBesideReadsAndWritesRaiseNoFalseAlarm() throws {
        let operations = ProcessInfo.processInfo.environment["VAULTKIT_GUARD_RACE_OPERATIONS"].flatMap { Int($0) } ?? 12
        let cli = CLI()
        try cli.initVault()
        try cli.set("svc", "seed", "x")
        let script = """
            i=0
            while [ $i -lt "$2" ]; do
              if [ "$1" = set ]; then printf 'v%s\\n' "$i" | "$VAULT" set svc "$3-$i" --vault "$VAULT_FILE"
              else "$VAULT" get svc seed --vault "$VAULT_FILE" >/dev/null; fi
              i=$((i + 1))
            done
            """
        let environment = ChildProcess.cleanEnvironment([
            "VAULT_PASSPHRASE": "correct horse", "VAULT": CLI.executable, "VAULT_FILE": cli.vaultPath,
            "XDG_STATE_HOME": cli.directory + "/state",
        ])
        let loops = try ["set", "set", "set", "get", "get"].enumerated().map { (index, kind) in
            try ChildProcess("/bin/sh", ["-c", script, "sh", kind, "\(operations)", "w\(index)"], environment: environment)
        }
        for round in 0..<max(4, operations / 3) {
            let command = round.isMultiple(of: 2) ? ["rekey"] : ["passwd"] + CLI.cheapKDF
            let result = try cli.run(command, env: ["VAULT_NEW_PASSPHRASE": "correct horse"])
            #expect(result.status == 0, "\(command[0]): \(result.stderr)")
        }
        for (loop, kind) in zip(loops, ["set", "set", "set", "get", "get"]) {
            let result = loop.wait(timeout: .seconds(600))
            #expect(result.status == 0 && result.stderr.isEmpty, "\(kind): \(result.stderr)")
        }
        #expect(try cli.run("verify").status == 0)
    }

    /// The agent holds the vault; its rows are put back behind it, after a direct write
    /// had been recorded: through the agent, `get`, `list`, `set` and `verify` say what a
    /// direct command says, and the agent serves no old secret.
    @Test func theAgentSaysRolledBackLikeADirectCommand() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("s", "a", "old")
        let copy = cli.directory + "/copy.vault"
        RawDatabase(cli.vaultPath).copy(to: copy)
        try cli.set("s", "a", "new")

        let socket = cli.directory + "/agent.sock"
        let agent = try ChildProcess(CLI.executable, ["agent", "serve"], environment: ChildProcess.cleanEnvironment([
            "VAULT_AGENT_SOCKET": socket, "XDG_STATE_HOME": cli.directory + "/state",
        ]))
        defer { agent.send(SIGTERM); _ = agent.wait(timeout: .seconds(60)) }
        #expect(agent.waitForOutput(containing: "listening on"))
        let throughAgent = ["VAULT_AGENT_SOCKET": socket]
        #expect(try cli.run(["unlock"], env: throughAgent).status == 0)
        #expect(try cli.run(["get", "s", "a"], env: throughAgent, unset: ["VAULT_PASSPHRASE"]).stdout == "new\n")

        RawDatabase(cli.vaultPath).putRowsBack(from: copy)
        let direct = try cli.run("get", "s", "a")
        #expect(direct.status == 1 && direct.stderr.contains("is older than a state this user has seen"), "\(direct.stderr)")
        for command in [["get", "s", "a"], ["list"], ["set", "s", "b"], ["get", "s", "c"], ["set", "s", "d"], ["verify"], ["set", "s", "a"]] {
            let result = try cli.run(command, stdin: Data("fork\n".utf8), env: throughAgent, unset: ["VAULT_PASSPHRASE"])
            #expect(result.status == 1, "\(command): \(result.stdout)")
            #expect(result.stdout.isEmpty)
            #expect(result.stderr == direct.stderr, "\(command)")
        }
    }
}
