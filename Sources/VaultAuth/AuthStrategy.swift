import Foundation

/// How a strategy reads the server's answer to a request made with an access token.
public enum AuthFailure: Sendable, Hashable {
    /// Not an authentication failure: the response goes back to the caller.
    case none
    /// The access token was rejected (usually 401): refresh and retry once.
    case tokenRejected
    /// The account's session was taken over by another device: sign out, do not log in again.
    case sessionTakenOver
}

/// How to get new tokens and how to recognise an authentication failure: the part of
/// ``AuthClient`` you can replace.
///
/// The client guarantees a strategy that it is never called for two refreshes at once,
/// that the `transport` it is handed is the raw one (no `Authorization` header is added,
/// no 401 handling, so a refresh can never wait for itself), and that whatever it returns
/// is persisted before any caller sees it.
///
/// For example, a strategy for an API that renews a session cookie-style token:
///
/// ```swift
/// struct RenewStrategy: AuthStrategy {
///     let renewURL: URL
///     func refresh(_ tokens: TokenSet, transport: any HTTPTransport) async throws(StrategyError) -> TokenSet {
///         var request = HTTPRequest(method: "POST", url: renewURL)
///         request.setHeader("Authorization", "Bearer \(tokens.accessToken)")
///         let response: HTTPResponse
///         do { response = try await transport.send(request) } catch { throw .transient(.network) }
///         switch response.status {
///         case 200: return TokenSet(accessToken: String(decoding: response.body, as: UTF8.self), expiresIn: 900)
///         case 401, 403: throw .refused(httpStatus: response.status)
///         default: throw .transient(httpStatus: response.status)
///         }
///     }
/// }
/// ```
public protocol AuthStrategy: Sendable {
    /// Exchanges `tokens` for new ones. A rotated refresh token must be in the result; a
    /// missing one keeps the old (the client does that).
    ///
    /// - Throws: ``StrategyError/Code/refused`` when the server says the credential is dead,
    ///   ``StrategyError/Code/transient`` when it might work later.
    func refresh(_ tokens: TokenSet, transport: any HTTPTransport) async throws(StrategyError) -> TokenSet

    /// Whether ``refresh(_:transport:)`` can renew `tokens` at all: `false` for tokens it has
    /// nothing to renew with (no refresh token). The client then keeps using such tokens until
    /// they expire or the server rejects them, instead of signing out at the refresh leeway.
    /// Default `true`.
    func canRefresh(_ tokens: TokenSet) -> Bool

    /// Whether ``relogin(transport:)`` can log in without the user (stored credentials).
    var canRelogin: Bool { get }

    /// Logs in again without the user, after a refused refresh, or for ``AuthClient/signIn()``.
    func relogin(transport: any HTTPTransport) async throws(StrategyError) -> TokenSet

    /// Reads a response to a request sent with an access token.
    func authFailure(in response: HTTPResponse, for request: HTTPRequest) -> AuthFailure

    /// Tells the server the tokens are no longer used (best effort, at sign-out).
    func revoke(_ tokens: TokenSet, transport: any HTTPTransport) async
}

extension AuthStrategy {
    public func canRefresh(_ tokens: TokenSet) -> Bool { true }

    public var canRelogin: Bool { false }

    public func relogin(transport: any HTTPTransport) async throws(StrategyError) -> TokenSet {
        throw .unsupported
    }

    /// 401 is a rejected token; 409 with the JSON error `session_taken_over` is a session lost
    /// to another device (see docs/AUTH.md for the server contract).
    public func authFailure(in response: HTTPResponse, for request: HTTPRequest) -> AuthFailure {
        AuthFailure.classify(response, rejectedTokenStatuses: AuthFailure.defaultRejectedTokenStatuses)
    }

    public func revoke(_ tokens: TokenSet, transport: any HTTPTransport) async {}
}

extension AuthFailure {
    /// 401: what RFC 6750 prescribes for an invalid or expired token.
    public static let defaultRejectedTokenStatuses: Set<Int> = [401]

    /// Reads a response with a set of statuses that mean "token rejected" (add 403 for servers,
    /// such as django-oauth-toolkit's stock protected views, that answer a bad token with it),
    /// and 409 `session_taken_over` as a session lost to another device.
    public static func classify(_ response: HTTPResponse, rejectedTokenStatuses: Set<Int>) -> AuthFailure {
        if response.status == 409, OAuthErrorBody.code(in: response.body) == "session_taken_over" { return .sessionTakenOver }
        return rejectedTokenStatuses.contains(response.status) ? .tokenRejected : .none
    }
}

/// The `{"error": "...", "error_description": "..."}` body of RFC 6749 section 5.2.
enum OAuthErrorBody {
    static func code(in body: Data) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else { return nil }
        return object["error"] as? String
    }
}
