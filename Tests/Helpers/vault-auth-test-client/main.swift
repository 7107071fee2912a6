// A small client process for the VaultAuth tests: a real program that signs in, refreshes
// and holds a single-device session, which the tests kill (SIGKILL) or stop (SIGTERM).
//
//   vault-auth-test-client serve <vault> <server> <device>   sign in, hold the session, run until SIGTERM
//   vault-auth-test-client refresh-loop <vault> <server>     refresh and call the API forever
//   vault-auth-test-client check <vault> <server>            refresh, one API call: SIGNED_IN (0) or SIGNED_OUT (3)
//   vault-auth-test-client send-on-go <vault> <server>       load the tokens, print READY, wait for a line on
//                                                            stdin, one API call: STATUS 200 (0), SIGNED_OUT (3)
//   vault-auth-test-client sign-out-on-go <vault> <server>   load the tokens, print READY, wait for a line on
//                                                            stdin, sign out: SIGNED_OUT_DONE (0)
//   vault-auth-test-client service-loop <vault> <server> <seconds>
//                                                            a client-credentials service (secret in
//                                                            VAULT_AUTH_TEST_CLIENT_SECRET, client_secret_basic):
//                                                            API calls for <seconds>, `USED <fingerprint>` per
//                                                            access token it sent, DONE <calls> (0)
//
// The vault key is hex in VAULT_AUTH_TEST_KEY; the account is "alice", whose password the
// test stored in the vault. VAULT_AUTH_TEST_NO_RELOGIN=1 disables the stored-credentials fallback;
// VAULT_AUTH_TEST_RELEASE_TIMEOUT_MS sets the session release deadline at shutdown.
// Another server's layout: VAULT_AUTH_TEST_TOKEN_PATH, VAULT_AUTH_TEST_REVOKE_PATH,
// VAULT_AUTH_TEST_RESOURCE_PATH (relative to <server>) and VAULT_AUTH_TEST_CLIENT_ID.
// A <vault> of `pg:NAME` is the vault NAME in the PostgreSQL database of $VAULTKIT_TEST_POSTGRES_URL.
import Foundation
import Logging
import ServiceLifecycle
import VaultAuth
import VaultKit
import VaultKitPostgres

#if canImport(Glibc)
import Glibc
#endif

/// Writes a line to stdout at once (print would buffer it in the pipe).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data("\(line)\n".utf8))
}

/// A stable, non-reversible name for a token (64-bit FNV-1a), so tests can compare the tokens
/// processes used without the tokens in any output.
func fingerprint(_ token: String) -> String {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in token.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
    return String(hash, radix: 16)
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("vault-auth-test-client: \(message)\n".utf8))
    exit(1)
}

let arguments = CommandLine.arguments
guard arguments.count >= 4 else { fail("usage: serve|refresh-loop|check <vault> <server> [device]") }
let mode = arguments[1], vaultPath = arguments[2]
guard let base = URL(string: arguments[3]) else { fail("bad server URL") }
let environment = ProcessInfo.processInfo.environment
guard let hex = environment["VAULT_AUTH_TEST_KEY"] else { fail("VAULT_AUTH_TEST_KEY missing") }

let vault: Vault
do {
    if vaultPath.hasPrefix("pg:") {
        guard let url = environment["VAULTKIT_TEST_POSTGRES_URL"] else { fail("VAULTKIT_TEST_POSTGRES_URL missing") }
        vault = try Vault.open(postgres: PostgresVaultLocation(url, vaultName: String(vaultPath.dropFirst(3))), key: try VaultKey(hex: hex))
    } else {
        vault = try Vault.open(at: vaultPath, key: try VaultKey(hex: hex))
    }
} catch {
    fail("cannot open the vault: \(error)")
}

let issuer = base.absoluteString
let credentials = CredentialStore(vault: vault, issuer: issuer, account: "alice")
let relogin = environment["VAULT_AUTH_TEST_NO_RELOGIN"] != "1"
let tokenURL = base.appendingPathComponent(environment["VAULT_AUTH_TEST_TOKEN_PATH"] ?? "oauth/token")
let clientID = environment["VAULT_AUTH_TEST_CLIENT_ID"] ?? "vaultauth-tests"
let revocationURL = base.appendingPathComponent(environment["VAULT_AUTH_TEST_REVOKE_PATH"] ?? "oauth/revoke")
let strategy: any AuthStrategy = mode == "service-loop"
    ? ClientCredentialsStrategy(tokenEndpoint: tokenURL, client: .basic(clientID: clientID, secret: environment["VAULT_AUTH_TEST_CLIENT_SECRET"] ?? ""),
                                revocationEndpoint: revocationURL)
    : OAuth2RefreshStrategy(
        tokenEndpoint: tokenURL, client: .none(clientID: clientID), revocationEndpoint: revocationURL,
        fallback: relogin ? StoredCredentialsStrategy(tokenEndpoint: tokenURL, client: .none(clientID: clientID), credentials: credentials) : nil)
var configuration = AuthClient.Configuration()
configuration.logger.logLevel = .info
if mode == "serve", arguments.count >= 5 {
    configuration.session = SingleDeviceSession(endpoint: base.appendingPathComponent("sessions"), deviceID: arguments[4],
                                                keepAliveInterval: .seconds(2),
                                                releaseTimeout: .milliseconds(Int(environment["VAULT_AUTH_TEST_RELEASE_TIMEOUT_MS"] ?? "") ?? 10_000))
}

let client: AuthClient
do {
    client = try AuthClient(store: TokenStore(vault: vault, issuer: issuer, account: "alice"), strategy: strategy, configuration: configuration)
} catch {
    fail("cannot load tokens: \(error)")
}
/// The first login: always with the stored password, whatever the fallback setting.
func firstSignIn() async throws {
    let login = StoredCredentialsStrategy(tokenEndpoint: tokenURL, client: .none(clientID: clientID), credentials: credentials)
    let tokens: TokenSet
    do {
        tokens = try await login.relogin(transport: client.transport)
    } catch {
        fail("login failed: \(error)")
    }
    try await client.signIn(with: tokens)
}

/// Announces READY from inside the running ServiceGroup, then waits for the shutdown.
struct ReadyService: Service {
    func run() async throws {
        say("READY")
        try? await gracefulShutdown()
    }
}

let resource = HTTPRequest(url: base.appendingPathComponent(environment["VAULT_AUTH_TEST_RESOURCE_PATH"] ?? "api/me"))

/// One API call, reported as `<label> <status>` (exit 0 for 200), `SIGNED_OUT <reason>` (exit 3)
/// or `ERROR` (exit 1).
func sendAndExit(label: String, refreshFirst: Bool) async -> Never {
    do {
        if refreshFirst { try await client.refreshNow() }
        let response = try await client.send(resource)
        say("\(label) \(response.status)")
        exit(response.status == 200 ? 0 : 1)
    } catch {
        if error.code == .signedOut, let reason = error.signOutReason {
            say("SIGNED_OUT \(reason)")
            exit(3)
        }
        say("ERROR \(error)")
        exit(1)
    }
}

/// Announces READY and blocks until the test writes a line: lets a test start several
/// processes and release them together.
func waitForGo() {
    say("READY")
    guard readLine() != nil else { fail("stdin closed before GO") }
}

switch mode {
case "serve":
    do {
        if await !client.isSignedIn { try await firstSignIn() } else { try await client.claimSession() }
    } catch {
        fail("sign-in failed: \(error)")
    }
    var logger = Logger(label: "vault-auth-test-client")
    logger.logLevel = .warning
    // READY only once the group runs: it traps SIGTERM before it starts any service, so a
    // test that signals after READY never kills the process with the default action.
    let group = ServiceGroup(configuration: .init(services: [.init(service: AuthSessionService(client: client)), .init(service: ReadyService())],
                                                  gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
    do {
        try await group.run()
    } catch {
        fail("service group failed: \(error)")
    }
    let released = await client.currentTokens.map { $0.sessionID == nil } ?? false
    say(released ? "RELEASED" : "NOT RELEASED")
    exit(released ? 0 : 2)

case "refresh-loop":
    do {
        if await !client.isSignedIn { try await firstSignIn() }
    } catch {
        fail("sign-in failed: \(error)")
    }
    say("READY")
    var count = 0
    while true {
        do {
            try await client.refreshNow()
            let response = try await client.send(resource)
            count += 1
            say("OK \(count) \(response.status)")
        } catch {
            say("ERROR \(error)")
            exit(4)
        }
    }

case "check":
    // Refresh first: the stored refresh token is what a crash could have left stale.
    await sendAndExit(label: "SIGNED_IN", refreshFirst: true)

case "send-on-go":
    waitForGo()
    await sendAndExit(label: "STATUS", refreshFirst: false)

case "sign-out-on-go":
    waitForGo()
    do {
        try await client.signOut()
        say("SIGNED_OUT_DONE")
        exit(0)
    } catch {
        say("ERROR \(error)")
        exit(1)
    }

case "service-loop":
    guard arguments.count >= 5, let seconds = Int(arguments[4]) else { fail("usage: service-loop <vault> <server> <seconds>") }
    let end = ContinuousClock.now + .seconds(seconds)
    var calls = 0, lastUsed = ""
    while ContinuousClock.now < end {
        do {
            let response = try await client.send(resource)
            guard response.status == 200 else { say("STATUS \(response.status)"); exit(1) }
            calls += 1
            // The token the call went out with is the current one: a renewal lands before the send.
            if let used = await client.currentTokens.map({ fingerprint($0.accessToken) }), used != lastUsed {
                say("USED \(used)")
                lastUsed = used
            }
        } catch {
            if error.code == .signedOut, let reason = error.signOutReason { say("SIGNED_OUT \(reason)"); exit(3) }
            say("ERROR \(error)")
            exit(1)
        }
        try? await Task.sleep(for: .milliseconds(100))
    }
    say("DONE \(calls)")
    exit(0)

default:
    fail("unknown mode \(mode)")
}
