import Foundation

/// How a client authenticates to the token and revocation endpoints (RFC 6749 section 2.3).
public enum ClientAuthentication: Sendable {
    /// A public client: `client_id` in the form body, no secret.
    case none(clientID: String)
    /// A confidential client: HTTP Basic with the form-urlencoded id and secret (`client_secret_basic`).
    case basic(clientID: String, secret: String)
    /// A confidential client: `client_id` and `client_secret` in the form body (`client_secret_post`),
    /// for servers that do not take Basic.
    case post(clientID: String, secret: String)

    /// The client identifier, whichever the method.
    public var clientID: String {
        switch self {
        case .none(let id), .basic(let id, _), .post(let id, _): id
        }
    }
}

/// Form-encoded POSTs to an OAuth 2.0 token or revocation endpoint, and the reading of
/// their answers. Shared by the shipped strategies.
struct TokenEndpoint: Sendable {
    let url: URL
    let client: ClientAuthentication

    /// POSTs a grant and turns the answer into tokens or a ``StrategyError``.
    func grant(_ parameters: [(String, String)], previous: TokenSet?, transport: any HTTPTransport) async throws(StrategyError) -> TokenSet {
        let response: HTTPResponse
        do {
            response = try await transport.send(formRequest(url: url, parameters))
        } catch {
            throw .transient(.network)
        }
        let receivedAt = Date()
        switch response.status {
        case 200:
            guard let parsed = Self.parse(response.body, receivedAt: receivedAt, previous: previous) else {
                throw .transient(.malformedTokenResponse)
            }
            return parsed
        case 408, 429, 500...599:
            throw .transient(httpStatus: response.status)
        case 409 where OAuthErrorBody.code(in: response.body) == "session_taken_over":
            throw .sessionTakenOver
        default:
            throw Self.refusal(status: response.status, code: OAuthErrorBody.code(in: response.body).flatMap(OAuthErrorCode.init(rawValue:)))
        }
    }

    /// RFC 6749 section 5.2: only `invalid_grant` says the credential (refresh token, password,
    /// code) is dead. `invalid_client`, `unauthorized_client`, `unsupported_grant_type`,
    /// `invalid_scope`, `invalid_request`, any other code, or none, say the request or the
    /// client's setup is wrong: the credential may be fine, so it is kept.
    static func refusal(status: Int, code: OAuthErrorCode?) -> StrategyError {
        guard let code else { return .configuration(httpStatus: status) }
        return code == .invalidGrant ? .refused(oauthError: code) : .configuration(oauthError: code)
    }

    /// An RFC 6749 section 5.1 token response; a missing refresh token keeps the previous one
    /// (section 6: the server MAY issue a new one), a missing scope keeps the previous scope.
    static func parse(_ body: Data, receivedAt: Date, previous: TokenSet?) -> TokenSet? {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
              let access = object["access_token"] as? String, !access.isEmpty,
              let type = object["token_type"] as? String else { return nil }
        let expiresIn: TimeInterval? = (object["expires_in"] as? NSNumber)?.doubleValue
            ?? (object["expires_in"] as? String).flatMap(TimeInterval.init)
        return TokenSet(accessToken: access,
                        refreshToken: (object["refresh_token"] as? String) ?? previous?.refreshToken,
                        tokenType: type,
                        scope: (object["scope"] as? String) ?? previous?.scope,
                        expiresIn: expiresIn,
                        receivedAt: receivedAt,
                        sessionID: (object["session_id"] as? String) ?? previous?.sessionID)
    }

    /// RFC 7009: revokes the refresh token (which also ends its access tokens), or the access
    /// token when there is none. Best effort: the answer is ignored.
    func revoke(_ tokens: TokenSet, transport: any HTTPTransport) async {
        let parameters = tokens.refreshToken.map { [("token", $0), ("token_type_hint", "refresh_token")] }
            ?? [("token", tokens.accessToken), ("token_type_hint", "access_token")]
        _ = try? await transport.send(formRequest(url: url, parameters))
    }

    func formRequest(url: URL, _ parameters: [(String, String)]) -> HTTPRequest {
        var parameters = parameters
        var request = HTTPRequest(method: "POST", url: url)
        switch client {
        case .none(let clientID):
            parameters.append(("client_id", clientID))
        case .post(let clientID, let secret):
            parameters.append(("client_id", clientID))
            parameters.append(("client_secret", secret))
        case .basic(let clientID, let secret):
            let pair = "\(FormEncoding.encode(clientID)):\(FormEncoding.encode(secret))"
            request.setHeader("Authorization", "Basic \(Data(pair.utf8).base64EncodedString())")
        }
        request.setHeader("Content-Type", "application/x-www-form-urlencoded")
        request.setHeader("Accept", "application/json")
        request.body = Data(FormEncoding.encode(parameters).utf8)
        return request
    }
}

/// `application/x-www-form-urlencoded` as HTML and RFC 6749 appendix B define it.
enum FormEncoding {
    private static let unreserved: CharacterSet = {
        var set = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(0x7F)))
        set.insert(charactersIn: "-._*")
        return set
    }()

    static func encode(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: unreserved.union(CharacterSet(charactersIn: " ")))!
            .replacingOccurrences(of: " ", with: "+")
    }

    static func encode(_ parameters: [(String, String)]) -> String {
        parameters.map { "\(encode($0.0))=\(encode($0.1))" }.joined(separator: "&")
    }
}
