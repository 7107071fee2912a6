import CSecretService
import VaultKit

/// The arguments of a received D-Bus message, read in order (sd-bus checks each type and
/// every string's UTF-8 as it reads; a mismatch is an InvalidArgs error, not a crash).
package struct BusReader {
    let message: OpaquePointer

    private static func type(_ character: Character) -> CChar { CChar(bitPattern: character.asciiValue!) }

    private func check(_ result: Int32, _ what: String) throws(BusError) {
        guard result > 0 else { throw .invalidArgs("expected \(what)") }
    }

    func string(_ type: Character = "s") throws(BusError) -> String {
        var value: UnsafePointer<CChar>?
        try check(vkbus_message_read_string(message, Self.type(type), &value), type == "o" ? "an object path" : "a string")
        guard let value else { throw .invalidArgs("expected a string") }
        return String(cString: value)
    }

    func objectPath() throws(BusError) -> String { try string("o") }

    func bool() throws(BusError) -> Bool {
        var value: Int32 = 0
        try check(vkbus_message_read_bool(message, &value), "a boolean")
        return value != 0
    }

    /// The bytes of an `ay`, valid while the message lives.
    func bytes() throws(BusError) -> UnsafeRawBufferPointer {
        var pointer: UnsafeRawPointer?
        var size = 0
        let result = vkbus_message_read_bytes(message, &pointer, &size)
        guard result >= 0 else { throw .invalidArgs("expected a byte array") }
        guard let pointer, size > 0 else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: pointer, count: size)
    }

    /// Enters a container; false at the end of the enclosing array.
    func enter(_ type: Character, _ contents: String) throws(BusError) -> Bool {
        let result = vkbus_message_enter_container(message, Self.type(type), contents)
        guard result >= 0 else { throw .invalidArgs("expected \(type == "v" ? "a variant" : "a container") of \(contents)") }
        return result > 0
    }

    func exit() throws(BusError) {
        guard vkbus_message_exit_container(message) >= 0 else { throw .invalidArgs("malformed container") }
    }

    /// The signature of the value in the variant about to be read, or nil.
    func variantContents() -> String? {
        var type: CChar = 0
        var contents: UnsafePointer<CChar>?
        guard vkbus_message_peek_type(message, &type, &contents) > 0, type == Self.type("v"), let contents else { return nil }
        return String(cString: contents)
    }

    func skip(_ types: String) throws(BusError) {
        guard vkbus_message_skip(message, types) >= 0 else { throw .invalidArgs("malformed argument") }
    }

    /// An `ao`.
    func objectPaths() throws(BusError) -> [String] {
        guard try enter("a", "o") else { return [] }
        var paths: [String] = []
        while true {
            var value: UnsafePointer<CChar>?
            let result = vkbus_message_read_string(message, Self.type("o"), &value)
            guard result >= 0 else { throw .invalidArgs("expected object paths") }
            guard result > 0, let value else { break }
            paths.append(String(cString: value))
        }
        try exit()
        return paths
    }

    /// An `a{ss}`, refused past the limits of ``AttributeLimits``.
    func stringDictionary() throws(BusError) -> [String: String] {
        guard try enter("a", "{ss}") else { return [:] }
        var dictionary: [String: String] = [:]
        var total = 0
        while try enter("e", "ss") {
            let key = try string(), value = try string()
            try exit()
            total += key.utf8.count + value.utf8.count
            guard dictionary.count < AttributeLimits.count else { throw .invalidArgs("more than \(AttributeLimits.count) attributes") }
            guard total <= AttributeLimits.bytes else { throw .invalidArgs("attributes longer than \(AttributeLimits.bytes) bytes in all") }
            dictionary[key] = value
        }
        try exit()
        return dictionary
    }
}

/// The arguments of a reply or signal being built, appended in order.
package struct BusWriter {
    let message: OpaquePointer

    private static func type(_ character: Character) -> CChar { CChar(bitPattern: character.asciiValue!) }

    private func check(_ result: Int32) throws(BusError) {
        guard result >= 0 else { throw .failed("could not build the reply") }
    }

    func string(_ value: String, type: Character = "s") throws(BusError) {
        try check(vkbus_message_append_string(message, Self.type(type), value))
    }

    func objectPath(_ value: String) throws(BusError) { try string(value, type: "o") }
    func bool(_ value: Bool) throws(BusError) { try check(vkbus_message_append_bool(message, value ? 1 : 0)) }
    func uint64(_ value: UInt64) throws(BusError) { try check(vkbus_message_append_uint64(message, value)) }

    func bytes(_ value: [UInt8]) throws(BusError) {
        try check(value.withUnsafeBytes { vkbus_message_append_bytes(message, $0.baseAddress, $0.count) })
    }

    func bytes(_ value: SecretBytes) throws(BusError) {
        try check(value.withUnsafeBytes { vkbus_message_append_bytes(message, $0.baseAddress, $0.count) })
    }

    func open(_ type: Character, _ contents: String) throws(BusError) {
        try check(vkbus_message_open_container(message, Self.type(type), contents))
    }

    func close() throws(BusError) { try check(vkbus_message_close_container(message)) }

    func objectPaths(_ paths: [String]) throws(BusError) {
        try open("a", "o")
        for path in paths { try objectPath(path) }
        try close()
    }

    func stringDictionary(_ dictionary: [String: String]) throws(BusError) {
        try open("a", "{ss}")
        for (key, value) in dictionary.sorted(by: { $0.key < $1.key }) {
            try open("e", "ss")
            try string(key)
            try string(value)
            try close()
        }
        try close()
    }
}
