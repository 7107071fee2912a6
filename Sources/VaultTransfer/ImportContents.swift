/// What a format parser found in a file: the items to write, and how many entries it
/// passed over (not a login, or no password), which `vault import` reports.
public struct ImportContents {
    public var items: [ImportedItem] = []
    /// Entries passed over: not a login, or without a password.
    public var skipped = 0

    public init(items: [ImportedItem] = [], skipped: Int = 0) {
        self.items = items
        self.skipped = skipped
    }
}
