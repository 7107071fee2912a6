/// A D-Bus error reply: the error name clients match on, and a message that never holds
/// a secret (it names what was wrong with the call, not its values).
package struct BusError: Error, Equatable, CustomStringConvertible {
    package let name: String
    package let message: String

    package init(_ name: String, _ message: String) {
        self.name = name
        self.message = message
    }

    package var description: String { "\(name): \(message)" }

    // The names clients act on: SecretStorage turns UnknownMethod and NoSuchObject into
    // ItemNotFoundException, libsecret turns IsLocked into an unlock.
    package static func noSuchObject(_ path: String) -> BusError { BusError("org.freedesktop.Secret.Error.NoSuchObject", "no such object: \(path)") }
    package static func unknownMethod(_ interface: String, _ member: String) -> BusError {
        BusError("org.freedesktop.DBus.Error.UnknownMethod", "no method \(member) in interface \(interface)")
    }
    package static let noSession = BusError("org.freedesktop.Secret.Error.NoSession", "no such session for this caller")
    package static let isLocked = BusError("org.freedesktop.Secret.Error.IsLocked", "the collection is locked; call Unlock")
    package static let accessDenied = BusError("org.freedesktop.DBus.Error.AccessDenied", "the caller is not the user who runs vault secret-service")
    package static func invalidArgs(_ message: String) -> BusError { BusError("org.freedesktop.DBus.Error.InvalidArgs", message) }
    package static func notSupported(_ message: String) -> BusError { BusError("org.freedesktop.DBus.Error.NotSupported", message) }
    package static func failed(_ message: String) -> BusError { BusError("org.freedesktop.DBus.Error.Failed", message) }
}
