/// The `Code` of a growable struct whose codes are named, not numbered (`AuthError.Code`,
/// `ProfileStoreError.Code`, `AuthEvent.Code`, ...): static members whose `rawValue` is
/// the member's name, which is also how it prints. Each `Code` keeps only its members.
package protocol NamedCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible where RawValue == String {}

extension NamedCode {
    /// The code's name, as in `AuthError.Code.unauthorized`.
    public var description: String { rawValue }
}
