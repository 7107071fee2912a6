#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import VaultKit

/// An Unlock that needs a passphrase: an org.freedesktop.Secret.Prompt object. Its
/// Prompt method asks on the provider's terminal, when it has one, and meanwhile looks
/// for the vault in the agent each second, so `vault unlock` in another terminal answers
/// it too. Completed comes when either opens the vault, or with dismissed = true when the
/// client calls Dismiss, the line is empty, three passphrases fail, or nothing opens the
/// vault within the prompt timeout (``SecretServiceProvider/promptTimeout``, 120 s unless
/// `--prompt-timeout` says otherwise), so no client waits forever.
struct PendingPrompt {
    /// The client that got the prompt; only it may use it.
    let owner: String
    /// What Completed reports as unlocked.
    let objects: [String]
    /// When Prompt was called (the prompt then asks on the terminal), or nil.
    var asked: ContinuousClock.Instant?
}

extension SecretServiceProvider {
    static let promptInterface = "org.freedesktop.Secret.Prompt"
    /// How long a prompt waits for someone at the terminal or for `vault unlock`, unless
    /// the command is told otherwise.
    package static let defaultPromptTimeout = Duration.seconds(120)
    /// How often a waiting prompt asks the agent whether it holds the vault now.
    static let agentPollInterval = Duration.seconds(1)
    static let passphraseAttempts = 3

    /// Lock: the store forgets the vault's keys; the collections show as they are now.
    func lock(_ objects: [String]) throws(BusError) -> [String] {
        guard !objects.isEmpty else { return [] }
        if !locked {
            lockedContents = try contents()
            locked = true
            store.lock()
            for id in collectionIDs(lockedContents!) { emit("CollectionChanged", collection: ObjectPaths.collection(id)) }
        }
        return objects
    }

    /// Unlock: at once when the vault opens without anyone typing (or is not locked),
    /// else a prompt for the caller.
    func unlock(_ objects: [String], for caller: String) throws(BusError) -> (unlocked: [String], prompt: String) {
        guard !objects.isEmpty, locked else { return (objects, ObjectPaths.noObject) }
        let opened: Bool
        do {
            opened = try store.unlockWithoutPrompt()
        } catch {
            throw .failed("could not open the vault: \(error)")
        }
        if opened {
            unlocked()
            return (objects, ObjectPaths.noObject)
        }
        let id = nextPromptID
        nextPromptID += 1
        prompts[id] = PendingPrompt(owner: caller, objects: objects)
        return ([], ObjectPaths.prompt(id))
    }

    private func unlocked() {
        locked = false
        for id in collectionIDs(lockedContents ?? Contents(items: [], records: [:])) { emit("CollectionChanged", collection: ObjectPaths.collection(id)) }
        lockedContents = nil
    }

    func promptMethod(_ call: Call, id: Int) throws(BusError) {
        guard let prompt = prompts[id], prompt.owner == call.sender else { throw .noSuchObject(call.path) }
        switch call.member {
        case "Prompt":
            _ = try call.reader.string()
            guard prompt.asked == nil else { return }
            if !locked {
                complete(id, dismissed: false)
            } else {
                // Without a terminal the prompt still waits: for `vault unlock` elsewhere.
                if terminal == nil { _ = startAsking() }
                prompts[id]?.asked = .now
            }
        case "Dismiss":
            complete(id, dismissed: true)
            if !prompts.values.contains(where: { $0.asked != nil }) { stopAsking("dismissed") }
        default:
            throw .unknownMethod(Self.promptInterface, call.member)
        }
    }

    /// Queues Completed(dismissed, unlocked objects) and forgets the prompt. The signal
    /// goes to the prompt's client, as GNOME Keyring sends it: SecretStorage waits for it
    /// without asking the bus for it (no match rule).
    private func complete(_ id: Int, dismissed: Bool) {
        guard let prompt = prompts.removeValue(forKey: id) else { return }
        let objects = dismissed ? [] : prompt.objects
        pendingSignals.append(BusSignal(path: ObjectPaths.prompt(id), interface: Self.promptInterface, member: "Completed", destination: prompt.owner) { writer throws(BusError) in
            try writer.bool(dismissed)
            try writer.open("v", "ao")
            try writer.objectPaths(objects)
            try writer.close()
        })
    }

    private var passphraseQuestion: String { "\nvault secret-service: a program asks to unlock the vault. Passphrase (empty line: refuse): " }

    /// Opens the terminal and asks; false when there is none.
    private func startAsking() -> Bool {
        guard let terminal = PromptTerminal() else { return false }
        self.terminal = terminal
        failedAttempts = 0
        terminal.say(passphraseQuestion)
        return true
    }

    private func stopAsking(_ why: String) {
        terminal?.say("\n\(why)\n")
        terminal = nil
    }

    /// A line (or the end) on the terminal: the passphrase, tried at once.
    func terminalReadable() {
        guard let terminal else { return }
        switch terminal.read() {
        case .pending:
            return
        case .ended:
            dismissAllPrompts()
        case .line(let passphrase):
            guard !passphrase.isEmpty else { return dismissAllPrompts() }
            do {
                try store.unlock(passphrase: passphrase)
            } catch {
                failedAttempts += 1
                guard failedAttempts < Self.passphraseAttempts else { return dismissAllPrompts() }
                terminal.say("\nThat passphrase does not open the vault. Passphrase: ")
                return
            }
            completeAskingPrompts(because: "unlocked")
        }
    }

    /// The vault is open: every prompt that asked completes, and the terminal stops asking.
    private func completeAskingPrompts(because why: String) {
        unlocked()
        for id in prompts.keys.sorted() where prompts[id]?.asked != nil { complete(id, dismissed: false) }
        if terminal != nil { stopAsking(why) }
    }

    /// While a prompt waits, `vault unlock` in another terminal may have given the agent
    /// the vault: then the prompts complete without anyone typing here. A failure to
    /// reach the agent is no answer; the prompt keeps waiting until its timeout.
    func pollAgentForWaitingPrompts() {
        guard locked, prompts.values.contains(where: { $0.asked != nil }) else { return }
        let now = ContinuousClock.now
        if let last = lastAgentPoll, now - last < Self.agentPollInterval { return }
        lastAgentPoll = now
        guard (try? store.unlockWithoutPrompt()) == true else { return }
        completeAskingPrompts(because: "unlocked by the agent (vault unlock)")
    }

    /// Every prompt asking now ends dismissed (also at SIGTERM, so clients do not wait).
    func dismissAllPrompts() {
        for id in prompts.keys.sorted() where prompts[id]?.asked != nil { complete(id, dismissed: true) }
        if terminal != nil { stopAsking("not unlocked") }
    }

    /// Dismisses prompts that have asked longer than ``promptTimeout``.
    func dismissExpiredPrompts() {
        let now = ContinuousClock.now
        let expired = prompts.filter { $0.value.asked.map { now - $0 >= promptTimeout } ?? false }
        guard !expired.isEmpty else { return }
        for id in expired.keys.sorted() { complete(id, dismissed: true) }
        if !prompts.values.contains(where: { $0.asked != nil }) { stopAsking("no answer; not unlocked") }
    }

    /// How long the loop may wait before a prompt expires or the agent is asked again
    /// (microseconds; UInt64.max: no limit).
    func promptWaitLimit() -> UInt64 {
        let now = ContinuousClock.now
        guard let first = prompts.values.compactMap(\.asked).min() else { return UInt64.max }
        let left = min(promptTimeout - (now - first), Self.agentPollInterval)
        guard left > .zero else { return 0 }
        let (seconds, attoseconds) = left.components
        return UInt64(seconds) * 1_000_000 + UInt64(attoseconds / 1_000_000_000_000) + 1
    }
}
