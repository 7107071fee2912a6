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
/// 0.2 (Service, the one Collection, Items, Sessions), served on the calling thread until
/// the bus goes away.
///
/// Every call runs on that one thread, in order, so the state below needs no lock. Every
/// caller's uid is checked against ours (the session bus is the user's own, but a bus
/// configured to let other users in must not hand them the vault).
package final class SecretServiceProvider {
    let store: any SecretServiceStore
    let ownUID: uid_t
    var bus: OpaquePointer?

    /// The collection's label (kept while the provider runs).
    var collectionLabel = "Vault"
    /// Set by Lock, cleared by Unlock: while set, no secret is handed out.
    var locked = false
    let started = Date()

    var itemIDs: [ItemKey: Int] = [:]
    var itemKeys: [Int: ItemKey] = [:]
    var nextItemID = 1
    var sessions: [String: SecretSession] = [:]
    var nextSessionID = 1
    /// The uid behind each unique bus name, asked of the bus once per name.
    var callerUIDs: [String: uid_t] = [:]
    /// Signals to send after the reply of the call that caused them.
    var pendingSignals: [(path: String, interface: String, member: String, argument: String)] = []

    package init(store: any SecretServiceStore, ownUID: uid_t = getuid()) {
        self.store = store
        self.ownUID = ownUID
    }

    /// Connects to the session bus (`DBUS_SESSION_BUS_ADDRESS`), takes the name and serves
    /// until the bus connection ends.
    package func run(ready: () -> Void = {}) throws(ProviderError) {
        guard vkbus_load() == 0 else { throw .libraryMissing }
        var bus: OpaquePointer?
        var result = vkbus_open_user(&bus)
        guard result >= 0, let bus else { throw .bus("could not connect to the session bus (DBUS_SESSION_BUS_ADDRESS)", result) }
        self.bus = bus
        defer { _ = vkbus_flush_close_unref(bus); self.bus = nil }
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
            result = vkbus_wait(bus, UInt64.max)
            guard result >= 0 || result == -EINTR else { throw .bus("the session bus connection ended", result) }
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

    private func sendPendingSignals() {
        guard let bus else { return }
        let signals = pendingSignals
        pendingSignals.removeAll()
        for signal in signals {
            var message: OpaquePointer?
            guard vkbus_message_new_signal(bus, &message, signal.path, signal.interface, signal.member) >= 0, let message else { continue }
            if vkbus_message_append_string(message, CChar(bitPattern: UInt8(ascii: "o")), signal.argument) >= 0 { _ = vkbus_send(bus, message) }
            _ = vkbus_message_unref(message)
        }
    }

    func emit(_ member: String, item: String) {
        pendingSignals.append((ObjectPaths.collection, "org.freedesktop.Secret.Collection", member, item))
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
    }
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
