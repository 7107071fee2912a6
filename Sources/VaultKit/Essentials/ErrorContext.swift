/// The typed context of an error struct (`VaultError`'s path and `errno`, `AuthError`'s
/// HTTP status and tokens, ...), boxed as swift-service-lifecycle's `ServiceGroupError`
/// keeps its backing storage: an error is copied through every `throws` and most carry
/// no context, so the struct holds its code and this optional reference, not every field.
///
/// Immutable, so copies of an error share one box safely; equal and hashed by the fields,
/// never by identity, so two errors built apart compare as their values do.
package final class ErrorContext<Fields: Hashable & Sendable>: Hashable, Sendable {
    package let fields: Fields

    private init(_ fields: Fields) {
        self.fields = fields
    }

    /// `fields` in a box, or `nil` (no allocation) when they equal `none`.
    package static func boxing(_ fields: Fields, unlessEqualTo none: Fields) -> ErrorContext? {
        fields == none ? nil : ErrorContext(fields)
    }

    package static func == (left: ErrorContext, right: ErrorContext) -> Bool {
        left === right || left.fields == right.fields
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(fields)
    }
}
