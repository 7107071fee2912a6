import Foundation
import Testing
import TestSupport
import VaultAuth
import VaultKit
#if canImport(Glibc)
import Glibc
#endif

/// VaultAuth's errors as growable structs: a code, typed context, and a description made
/// from those alone.
@Suite struct ErrorCodeTests {
    @Test func oauthErrorCodesKeepOnlyWhatTheRFCAllows() {
        #expect(OAuthErrorCode(rawValue: "invalid_grant") == .invalidGrant)
        #expect(OAuthErrorCode(rawValue: "custom_code")?.rawValue == "custom_code")
        #expect(OAuthErrorCode(rawValue: String(repeating: "x", count: 64)) != nil)
        for refused in ["", "quote\"d", "back\\slash", "caf\u{E9}", "new\nline", String(repeating: "x", count: 65)] {
            #expect(OAuthErrorCode(rawValue: refused) == nil, "\(refused)")
        }
    }

    @Test func aRedirectWithAnUnreadableErrorKeepsNoneOfIt() throws {
        let request = AuthorizationRequest(authorizationEndpoint: URL(string: "https://auth.example.com/authorize")!, clientID: "app",
                                           redirectURI: URL(string: "http://127.0.0.1:8765/callback")!, state: "s1", codeVerifier: "v")
        let redirect = URL(string: "http://127.0.0.1:8765/callback?error=%22SECRET%22&state=s1")!
        let error = try #require(throws: AuthorizationError.self) { try request.code(from: redirect) }
        #expect(error.code == .denied)
        #expect(error.oauthError == nil)
        #expect(error == .denied(nil))
        #expect(!error.description.contains("SECRET"), "\(error)")
    }

    @Test func aRefusalWithAnUnreadableCodeKeepsOnlyItsStatus() async throws {
        let fixture = try await AuthFixture.make()
        defer { fixture.server.stop() }
        let client = try await fixture.signedInClient()
        fixture.server.configure { $0.refreshError = (400, "SECRET \"quoted\"") }
        let error = try await #require(throws: AuthError.self) { try await client.refreshNow() }
        #expect(error.code == .configuration)
        #expect(error.oauthError == nil)
        #expect(error.httpStatus == 400)
        #expect(!error.description.contains("SECRET"), "\(error)")
    }

    @Test func aSessionEndpointOutsideTheContractIsASessionProtocolError() async throws {
        let fixture = try await AuthFixture.make()
        defer { fixture.server.stop() }
        var configuration = fixture.configuration()
        // The revocation endpoint answers a claim with 200 and no body; the token endpoint with 400.
        configuration.session = SingleDeviceSession(endpoint: fixture.server.revokeURL, deviceID: "device-a")
        await #expect(throws: AuthError.sessionProtocol(.claimWithoutSessionID)) {
            _ = try await fixture.signedInClient(configuration: configuration)
        }
        configuration.session = SingleDeviceSession(endpoint: fixture.server.tokenURL, deviceID: "device-a")
        await #expect(throws: AuthError.sessionProtocol(.unexpectedClaimStatus, httpStatus: 400)) {
            _ = try await fixture.signedInClient(account: "alice", configuration: configuration)
        }
    }

    @Test func descriptionsAreMadeFromTheFields() {
        let texts: [(String, String)] = [
            (StrategyError.refused(oauthError: .invalidGrant).description, "the server refused the credential (invalid_grant)"),
            (StrategyError.refused(.noRefreshToken).reasonText, "no refresh token"),
            (StrategyError.transient(httpStatus: 503).description, "temporary failure: HTTP 503"),
            (StrategyError.configuration(httpStatus: 400).reasonText, "HTTP 400"),
            (StrategyError.unsupported.reasonText, "unsupported"),
            (StrategyError.transient(AuthErrorReason(rawValue: "renewalDown")).reasonText, "renewalDown"),
            (AuthError.transient(.network).description, "temporary failure, tokens kept: network error"),
            (AuthError.configuration(oauthError: .invalidClient).description,
             "the authorization server refused the client (invalid_client); check its configuration; tokens kept"),
            (AuthError.sessionProtocol(.unexpectedReleaseStatus, httpStatus: 500).description,
             "unexpected session endpoint answer: release answered HTTP 500"),
            (AuthError.signedOut(.refreshRefused(oauthError: .invalidGrant)).description, "not signed in: refresh refused: invalid_grant"),
            (AuthError.storage(.undecodable).description, "the stored tokens are not in a format this version can read"),
            (TokenStoreError.lock(path: "/v.vaultauth-lock", errno: EPERM).description,
             "cannot take the refresh lock /v.vaultauth-lock: \(String(cString: strerror(EPERM)))"),
            (TokenStoreError.vault(.closed).description, "token storage failed: the vault is closed"),
            (AuthorizationError.denied(.accessDenied).description, "authorization refused: access_denied"),
        ]
        for (text, expected) in texts {
            #expect(text == expected)
        }
    }

    @Test func callersSwitchOverCodesAndCatchWholeErrors() throws {
        func advice(_ error: AuthError) -> String {
            switch error.code {
            case .signedOut: "sign in"
            case .transient: "retry later"
            default: "report"
            }
        }
        #expect(advice(.signedOut(.userSignedOut)) == "sign in")
        #expect(advice(.transient(.cancelled)) == "retry later")
        #expect(advice(.unauthorized) == "report")

        let failures: [any Error] = [AuthError.sessionChanged, StrategyError.unsupported, TokenStoreError.undecodable,
                                     AuthorizationError.missingCode]
        var matched: [String] = []
        for failure in failures {
            do {
                throw failure
            } catch AuthError.sessionChanged {
                matched.append("auth")
            } catch StrategyError.unsupported {
                matched.append("strategy")
            } catch TokenStoreError.undecodable {
                matched.append("store")
            } catch AuthorizationError.missingCode {
                matched.append("authorization")
            }
        }
        #expect(matched == ["auth", "strategy", "store", "authorization"])
    }

    /// Sign-out reasons and events carry what the server said as typed fields, not text, and
    /// are structs a later release can add codes to: callers switch over `code` with a default.
    @Test func signOutReasonsAndEventsAreCodesWithTypedDetail() {
        let refused = SignOutReason.refreshRefused(oauthError: .invalidGrant)
        #expect(refused.code == .refreshRefused)
        #expect(refused.oauthError == .invalidGrant)
        #expect(refused != .refreshRefused(oauthError: .invalidClient))
        #expect(refused != .reloginRefused(oauthError: .invalidGrant))

        let texts: [(String, String)] = [
            (SignOutReason.userSignedOut.description, "signed out by the user"),
            (refused.description, "refresh refused: invalid_grant"),
            (SignOutReason.reloginRefused(.noStoredCredentials).description, "login with stored credentials refused: no stored credentials"),
            (SignOutReason.refreshRefused(httpStatus: 401).description, "refresh refused: HTTP 401"),
            (AuthEvent.refreshFailed(reason: .network).description, "refresh failed for now: network error"),
            (AuthEvent.refreshFailed(httpStatus: 503).description, "refresh failed for now: HTTP 503"),
            (AuthEvent.configurationError(oauthError: .invalidClient).description, "client configuration refused: invalid_client"),
            (AuthEvent.signedOut(.sessionTakenOver).description, "signed out: logged in on another device"),
            (AuthEvent.leaseLost.description, "lease lost"),
        ]
        for (text, expected) in texts {
            #expect(text == expected)
        }

        func metric(_ event: AuthEvent) -> String {
            switch event.code {
            case .refreshed, .adoptedTokensFromVault: "refresh"
            case .refreshRefused, .refreshFailed, .configurationError: "refresh_error.\(event.reasonText)"
            default: "other"
            }
        }
        #expect(metric(.adoptedTokensFromVault) == "refresh")
        #expect(metric(.refreshRefused(oauthError: .invalidGrant)) == "refresh_error.invalid_grant")
        #expect(metric(.signedOut(refused)) == "other")
        #expect(AuthEvent.signedOut(refused).signOutReason == refused)
    }

    @Test func tokensThatWereNotPersistedStayOutOfEveryDescription() {
        let tokens = TokenSet(accessToken: "ACCESS-SECRET", refreshToken: "REFRESH-SECRET")
        let error = AuthError.tokensNotPersisted(tokens, .vault(.closed))
        #expect(error.code == .tokensNotPersisted)
        #expect(error.unpersistedTokens == tokens)
        #expect(error.storageError == .vault(.closed))
        for text in [error.description, "\(error)", String(reflecting: error)] {
            #expect(!text.contains("SECRET"), "\(text)")
        }
    }
}
