/// How much a client may send as an item's attributes and label. D-Bus lets a message
/// carry up to 128 MiB; every item's attributes are decoded on every search, so one
/// hostile client could otherwise make each later search slow for all of them.
package enum AttributeLimits {
    /// Attributes per item (libsecret's schemas use at most 32).
    package static let count = 256
    /// Bytes of all attribute names and values of one item together.
    package static let bytes = 64 * 1024
    /// Bytes of a label or a content type.
    package static let label = 64 * 1024
    /// Collections besides the vault's own (each is read on every call).
    package static let collections = 1024
}
