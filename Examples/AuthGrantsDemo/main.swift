// auth-grants-demo: VaultAuth's three ways to the first tokens, run against a real
// authorization server with django-oauth-toolkit's URL layout, each ending in a signed-in
// AuthClient that stores the tokens in a vault and calls the API once.
//
//   auth-grants-demo <vault> <server> client-credentials   the client secret in AUTH_DEMO_CLIENT_SECRET; the
//                                                          endpoints from <server>/o's discovery document
//   auth-grants-demo <vault> <server> password <user>      the password on stdin (first line)
//   auth-grants-demo <vault> <server> authorization-code   prints the URL to open, then reads the URL
//                                                          the browser landed on from stdin
//
// The vault key is 64 hex digits in AUTH_DEMO_VAULT_KEY (the vault is created if missing); the
// client id is AUTH_DEMO_CLIENT_ID. Secrets come from the environment or stdin, never argv.
// Try it with the tests' server (docs/AUTH.md, "First tokens"):
//
//   VAULTAUTH_OAUTH_DB=/tmp/oauth.sqlite3 python3 Tests/OAuthServer/manage.py vaultauth_test_server
//   AUTH_DEMO_VAULT_KEY=$(python3 -c 'import secrets; print(secrets.token_hex(32))') AUTH_DEMO_CLIENT_ID=vaultauth-service \
//   AUTH_DEMO_CLIENT_SECRET=service-secret swift run auth-grants-demo /tmp/demo.vault http://127.0.0.1:PORT client-credentials
import Foundation
import VaultAuth
import VaultKit

/// Writes a line at once (`print` would hold it in the buffer while the demo waits for stdin).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data("\(line)\n".utf8))
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("auth-grants-demo: \(message)\n".utf8))
    exit(1)
}

let arguments = CommandLine.arguments
guard arguments.count >= 4, let server = URL(string: arguments[2]) else {
    fail("usage: auth-grants-demo <vault> <server> client-credentials | password <user> | authorization-code")
}
let environment = ProcessInfo.processInfo.environment
guard let clientID = environment["AUTH_DEMO_CLIENT_ID"] else { fail("set AUTH_DEMO_CLIENT_ID") }

let vault: Vault
do {
    let key = try VaultKey(hex: environment["AUTH_DEMO_VAULT_KEY"] ?? "")
    vault = FileManager.default.fileExists(atPath: arguments[1])
        ? try Vault.open(at: arguments[1], key: key) : try Vault.create(at: arguments[1], key: key)
} catch {
    fail("cannot open the vault: \(error)")
}

let tokenEndpoint = server.appendingPathComponent("o/token/")
let client: ClientAuthentication = environment["AUTH_DEMO_CLIENT_SECRET"].map { .basic(clientID: clientID, secret: $0) }
    ?? .none(clientID: clientID)
let grants = OAuth2Grants(tokenEndpoint: tokenEndpoint, client: client)
let store = TokenStore(vault: vault, issuer: server.absoluteString, account: "demo")
let api = HTTPRequest(url: server.appendingPathComponent("api/me"))

do {
    if arguments[3] == "client-credentials" {
        // A service: endpoints from the issuer's discovery document, the first token and every
        // renewal by the client-credentials grant (no refresh token needed).
        let metadata = try await AuthorizationServerDiscovery().metadata(for: server.appendingPathComponent("o"))
        let auth = try AuthClient(store: store, strategy: try metadata.clientCredentialsStrategy(client: client, scope: "read"))
        try await auth.signIn()
        say("signed in: \(await auth.currentTokens.map { "\($0)" } ?? "no tokens")")
        let response = try await auth.send(api)
        say("API \(response.status) \(String(decoding: response.body, as: UTF8.self))")
        exit(0)
    }
} catch {
    fail("\(error)")
}

let tokens: TokenSet
do {
    switch arguments[3] {
    case "password" where arguments.count >= 5:
        // Discouraged outside first-party apps: the app sees the password.
        guard let password = readLine(strippingNewline: true) else { fail("no password on stdin") }
        tokens = try await grants.password(username: arguments[4], password: password)
    case "authorization-code":
        let request = AuthorizationRequest(authorizationEndpoint: server.appendingPathComponent("o/authorize/"), clientID: clientID,
                                           redirectURI: server.appendingPathComponent("callback"), scope: "read")
        say("Open this URL, log in, then paste the URL the browser lands on:\n\(request.url.absoluteString)")
        guard let line = readLine(strippingNewline: true), let redirect = URL(string: line) else { fail("no URL on stdin") }
        tokens = try await grants.exchange(code: try request.code(from: redirect), for: request)
    default:
        fail("unknown grant \(arguments[3])")
    }
} catch {
    fail("no tokens: \(error)")
}

do {
    let auth = try AuthClient(store: store, strategy: OAuth2RefreshStrategy(
        tokenEndpoint: tokenEndpoint, client: client, revocationEndpoint: server.appendingPathComponent("o/revoke_token/")))
    try await auth.signIn(with: tokens)
    say("signed in: \(tokens)")
    let response = try await auth.send(api)
    say("API \(response.status) \(String(decoding: response.body, as: UTF8.self))")
} catch {
    fail("\(error)")
}
