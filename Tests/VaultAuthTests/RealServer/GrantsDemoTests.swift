import Foundation
import Testing
import TestSupport
import VaultAuth
import VaultKit

/// The runnable example of docs/AUTH.md, run as a user would against the real server.
@Suite(.serialized) struct GrantsDemoTests {
    @Test func theDemoSignsInWithEachGrantAndCallsTheAPI() async throws {
        // OpenID Connect on: the demo's service finds the token endpoint through discovery.
        let world = try await RealServerWorld.make(DjangoOAuthServer.Options(openID: true))
        defer { world.server.stop() }
        let demo = TestPaths.executable("auth-grants-demo")
        let vaultPath = "\(world.directory)/demo.vault"
        let key = VaultKey.random()
        func environment(_ clientID: String, secret: String? = nil) -> [String: String] {
            var overrides = ["AUTH_DEMO_VAULT_KEY": key.hexEncodedString(), "AUTH_DEMO_CLIENT_ID": clientID]
            overrides["AUTH_DEMO_CLIENT_SECRET"] = secret
            return ChildProcess.cleanEnvironment(overrides)
        }
        func stored() throws -> TokenSet? {
            try TokenStore(vault: Vault.open(at: vaultPath, key: key), issuer: world.issuer, account: "demo").load()
        }
        let server = world.server.baseURL.absoluteString

        let serviceEnvironment = environment(DjangoOAuthServer.Client.serviceID, secret: DjangoOAuthServer.Client.serviceSecret)
        let service = try await offPool {
            try ChildProcess.run(demo, [vaultPath, server, "client-credentials"], environment: serviceEnvironment)
        }
        #expect(service.status == 0, "\(service.stdout) \(service.stderr)")
        #expect(service.stdout.contains("API 200"))
        #expect(!service.stdout.contains(try #require(try stored()).accessToken))

        let publicEnvironment = environment(DjangoOAuthServer.Client.publicID)
        let password = try await offPool {
            try ChildProcess.run(demo, [vaultPath, server, "password", "bob"], environment: publicEnvironment,
                                 standardInput: Data("builder\n".utf8))
        }
        #expect(password.stdout.contains(#"API 200 {"user": "bob"}"#), "\(password.stdout) \(password.stderr)")

        let browserFlow = try ChildProcess(demo, [vaultPath, server, "authorization-code"],
                                           environment: environment(DjangoOAuthServer.Client.webID), standardInput: nil)
        defer { browserFlow.send(SIGKILL) }
        #expect(try await offPool { browserFlow.waitForOutput(containing: "/o/authorize/?", timeout: .seconds(60)) })
        let printed = String(decoding: browserFlow.outputSoFar, as: UTF8.self)
        let url = try #require(printed.split(separator: "\n").first { $0.hasPrefix("http") }.flatMap { URL(string: String($0)) })
        var browser = TestBrowser()
        let landed = try await browser.authorize(url, loginURL: world.server.loginURL, user: "alice", password: "wonderland")
        try browserFlow.write(Data("\(landed.absoluteString)\n".utf8))
        let result = try await offPool { browserFlow.wait(timeout: .seconds(60)) }
        #expect(result.stdout.contains(#"API 200 {"user": "alice"}"#), "\(result.stdout) \(result.stderr)")
        #expect(try stored()?.refreshToken != nil)
    }
}
