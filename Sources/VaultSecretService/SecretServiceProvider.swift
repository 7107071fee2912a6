#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CSecretService
#if canImport(Glibc)
import Glibc
#endif
import VaultKit

/// `org.freedesktop.secrets` on a session bus, backed by a vault: the Secret Service API
/// 0.2 (Service, Collections, Items, Sessions, Prompts), served on the calling thread
/// until the bus goes away or SIGTERM or SIGINT stops it.
///
/// Every call runs on that one thread, in order, so the state below needs no lock. Every
/// caller's uid is checked against ours (the session bus is the user's own, but a bus
/// configured to let other users in must not hand them the vault).
package final class SecretServiceProvider {
    let store: any SecretServiceStore
    let ownUID: uid_t
    var bus: OpaquePointer?

    /// The vault collection's label until one is stored (SecretServiceProvider+Collections.swift).
    static let vaultCollectionLabel = "Vault"
    /// Set by Lock, cleared by Unlock: while set the store has no keys, no secret is
    /// handed out and the collections show as they were at the Lock.
    var locked = false
    var lockedContents: Contents?
    let started = Date()
    /// Open prompts (SecretServiceProvider+Prompts.swift), and the terminal they ask on.
    var prompts: [Int: PendingPrompt] = [:]
    var nextPromptID = 1
    var terminal: PromptTerminal?
    var failedAttempts = 0
    /// How long a prompt waits for an answer before it completes dismissed.
    let promptTimeout: Duration
    /// When a waiting prompt last asked the agent for the vault.
    var lastAgentPoll: ContinuousClock.Instant?

    var itemIDs: [ItemKey: Int] = [:]
    var itemKeys: [Int: ItemKey] = [:]
    var nextItemID = 1
    var sessions: [String: SecretSession] = [:]
    var nextSessionID = 1
    /// The uid behind each unique bus name, asked of the bus once per name.
    var callerUIDs: [String: uid_t] = [:]
    /// Signals to send after the reply of the call that caused them.
    var pendingSignals: [BusSignal] = []

    package init(store: any SecretServiceStore, ownUID: uid_t = getuid(), promptTimeout: Duration = defaultPromptTimeout) {
        self.store = store
        self.ownUID = ownUID
        self.promptTimeout = promptTimeout
    }

    /// Connects to the session bus (`DBUS_SESSION_BUS_ADDRESS`), takes the name and serves
    /// until the bus connection ends (an error) or SIGTERM or SIGINT arrives (a normal
    /// return, after releasing the name).
    package func run(ready: () -> Void = {}) throws(ProviderError) {
        guard vkbus_load() == 0 else { throw .libraryMissing }
        let stopSignals = vkss_catch_stop_signals()
        guard stopSignals >= 0 else { throw .bus("could not catch SIGTERM and SIGINT", stopSignals) }
        var bus: OpaquePointer?
        var result = vkbus_open_user(&bus)
        guard result >= 0, let bus else { throw .bus("could not connect to the session bus (DBUS_SESSION_BUS_ADDRESS)", result) }
        self.bus = bus
        defer {
            terminal = nil
            _ = vkbus_flush_close_unref(bus)
            self.bus = nil
        }
        let context = Unmanaged.passUnretained(self).toOpaque()
        result = vkbus_add_fallback(bus, "/", { message, context, _ in
            guard let message, let context else { return 0 }
            return Unmanaged<SecretServiceProvider>.fromOpaque(context).takeUnretainedValue().handle(message)
        }, context)
        guard result >= 0 else { throw .bus("could not register the objects", result) }
        result = vkbus_add_match(bus, "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged'", { message, context, _ in
            guard let message, let context else { return 0 }
            Unmanaged<SecretServiceProvider>.fromOpaque(context).takeUnretainedValue().nameOwnerChanged(message)
            return 0
        }, context)
        guard result >= 0 else { throw .bus("could not watch clients leave the bus", result) }
        result = vkbus_request_name(bus, "org.freedesktop.secrets", 0)
        guard result >= 0 else { throw result == -EEXIST ? .nameTaken : .bus("could not own org.freedesktop.secrets", result) }
        ready()
        while true {
            result = vkbus_process(bus)
            guard result >= 0 else { throw .bus("the session bus connection ended", result) }
            if result > 0 { continue }
            let ready = vkss_wait(bus, stopSignals, terminal?.fd ?? -1, promptWaitLimit())
            guard ready >= 0 else { throw .bus("the session bus connection ended", ready) }
            if ready & VKSS_READY_STOP != 0, vkss_stop_signal_received(stopSignals) != 0 {
                dismissAllPrompts()
                sendPendingSignals()
                _ = vkbus_release_name(bus, "org.freedesktop.secrets")
                return
            }
            if ready & VKSS_READY_EXTRA != 0 { terminalReadable() }
            pollAgentForWaitingPrompts()
            dismissExpiredPrompts()
            sendPendingSignals()
        }
    }

    /// One method call to any path: answered here, always (unknown objects and methods
    /// get the error GDBus gives, which clients expect).
    func handle(_ message: OpaquePointer) -> Int32 {
        guard vkbus_message_type(message) == 1, let bus else { return 0 }
        let path = vkbus_message_get_path(message).map { String(cString: $0) } ?? ""
        let interface = vkbus_message_get_interface(message).map { String(cString: $0) }
        let member = vkbus_message_get_member(message).map { String(cString: $0) } ?? ""
        let sender = vkbus_message_get_sender(message).map { String(cString: $0) } ?? ""
        var reply: OpaquePointer?
        do throws(BusError) {
            try checkCaller(sender)
            guard vkbus_message_new_method_return(message, &reply) >= 0, let reply else { throw BusError.failed("could not build the reply") }
            // A reply may carry a secret: sd-bus clears its buffers when it frees it.
            _ = vkbus_message_sensitive(reply)
            let call = Call(reader: BusReader(message: message), writer: BusWriter(message: reply), sender: sender, path: path, interface: interface, member: member)
            try dispatch(call)
            _ = vkbus_send(bus, reply)
        } catch {
            pendingSignals.removeAll()
            var errorReply: OpaquePointer?
            if vkbus_message_new_method_error(message, &errorReply, error.name, error.message) >= 0, let errorReply {
                _ = vkbus_send(bus, errorReply)
                _ = vkbus_message_unref(errorReply)
            }
        }
        if let reply { _ = vkbus_message_unref(reply) }
        sendPendingSignals()
        return 1
    }

    func sendPendingSignals() {
        guard let bus else { return }
        let signals = pendingSignals
        pendingSignals.removeAll()
        for signal in signals {
            var message: OpaquePointer?
            guard vkbus_message_new_signal(bus, &message, signal.path, signal.interface, signal.member) >= 0, let message else { continue }
            if let destination = signal.destination, vkbus_message_set_destination(message, destination) < 0 {
                _ = vkbus_message_unref(message)
                continue
            }
            if (try? signal.arguments(BusWriter(message: message))) != nil { _ = vkbus_send(bus, message) }
            _ = vkbus_message_unref(message)
        }
    }

    /// ItemCreated, ItemDeleted or ItemChanged on the item's collection.
    func emit(_ member: String, item: String) {
        let collection = String(item[..<(item.lastIndex(of: "/") ?? item.endIndex)])
        pendingSignals.append(BusSignal(path: collection, interface: Self.collectionInterface, member: member) { writer throws(BusError) in try writer.objectPath(item) })
    }

    /// CollectionCreated, CollectionDeleted or CollectionChanged on the service.
    func emit(_ member: String, collection: String) {
        pendingSignals.append(BusSignal(path: ObjectPaths.service, interface: Self.serviceInterface, member: member) { writer throws(BusError) in try writer.objectPath(collection) })
    }

    /// Refuses a caller whose uid is not ours (asked of the bus daemon, which knows each
    /// connection's credentials from its socket).
    func checkCaller(_ sender: String) throws(BusError) {
        if let uid = callerUIDs[sender] {
            guard uid == ownUID else { throw .accessDenied }
            return
        }
        guard let bus, !sender.isEmpty else { throw .accessDenied }
        var request: OpaquePointer?
        guard vkbus_message_new_method_call(bus, &request, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionUnixUser") >= 0, let request else { throw .accessDenied }
        defer { _ = vkbus_message_unref(request) }
        guard vkbus_message_append_string(request, CChar(bitPattern: UInt8(ascii: "s")), sender) >= 0 else { throw .accessDenied }
        var reply: OpaquePointer?
        guard vkbus_call(bus, request, 0, &reply) >= 0, let reply else { throw .accessDenied }
        defer { _ = vkbus_message_unref(reply) }
        var uid: UInt32 = 0
        guard vkbus_message_read_uint32(reply, &uid) > 0 else { throw .accessDenied }
        callerUIDs[sender] = uid_t(uid)
        guard uid_t(uid) == ownUID else { throw .accessDenied }
    }

    /// A client left the bus: its sessions end with it.
    func nameOwnerChanged(_ message: OpaquePointer) {
        let reader = BusReader(message: message)
        guard let name = try? reader.string(), (try? reader.string()) != nil, let newOwner = try? reader.string(), newOwner.isEmpty else { return }
        callerUIDs[name] = nil
        sessions = sessions.filter { $0.value.owner != name }
        prompts = prompts.filter { $0.value.owner != name }
    }
}

/// A signal to send: where from, to whom (nil: to every client that asked for it), and
/// its arguments.
struct BusSignal {
    let path: String
    let interface: String
    let member: String
    var destination: String? = nil
    let arguments: (BusWriter) throws(BusError) -> Void
}

/// One method call being answered.
struct Call {
    let reader: BusReader
    let writer: BusWriter
    let sender: String
    let path: String
    let interface: String?
    let member: String
}
