import Foundation
import Testing
import TestSupport
import TestTraits

/// `docker-credential-vault` as Docker runs it: a real process per action. The cases are
/// upstream's (docker/docker-credential-helpers: credentials/credentials_test.go,
/// client/client_test.go, osxkeychain/osxkeychain_darwin_test.go), with the strict
/// server-URL matching their macOS helper tests.
@Suite(.offCooperativePool) struct DockerCredentialTests {
    static let helper = TestPaths.executable("docker-credential-vault")

    struct Docker {
        let cli: CLI

        init(_ label: String = #function) throws {
            cli = CLI(label)
            try cli.initVault()
        }

        func run(_ action: String, _ input: String) throws -> ProcessResult {
            let environment = ChildProcess.cleanEnvironment(cli.environment.merging(["VAULT_PATH": cli.vaultPath]) { $1 })
            return try ChildProcess.run(DockerCredentialTests.helper, [action], environment: environment,
                                        standardInput: Data(input.utf8), timeout: .seconds(60))
        }

        func store(_ serverURL: String, _ username: String, _ secret: String) throws -> ProcessResult {
            let object: [String: String] = ["ServerURL": serverURL, "Username": username, "Secret": secret]
            return try run("store", String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self))
        }

        /// The username and secret `get` reports, or `nil` with the failure's stdout.
        func get(_ serverURL: String) throws -> (username: String, secret: String)? {
            let result = try run("get", serverURL)
            guard result.status == 0 else { return nil }
            let object = try JSONSerialization.jsonObject(with: result.standardOutput) as? [String: String]
            #expect(object?["ServerURL"] == serverURL)
            return (object?["Username"] ?? "", object?["Secret"] ?? "")
        }
    }

    // MARK: credentials/credentials_test.go

    @Test func storeThenGetGivesTheCredentialsBack() throws {
        let docker = try Docker()
        let store = try docker.store("https://registry.example.com/v1/", "foo", "bar")
        #expect(store.status == 0 && store.stdout.isEmpty && store.stderr.isEmpty, "\(store.stdout)")
        let get = try docker.run("get", "https://registry.example.com/v1/")
        #expect(get.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: get.standardOutput) as? [String: String])
        #expect(object == ["ServerURL": "https://registry.example.com/v1/", "Username": "foo", "Secret": "bar"])
    }

    @Test(arguments: [
        (["ServerURL": "", "Username": "foo", "Secret": "bar"], "no credentials server URL"),
        (["Username": "foo", "Secret": "bar"], "no credentials server URL"),
        (["ServerURL": "https://registry.example.com/v1/", "Username": "", "Secret": "bar"], "no credentials username"),
    ])
    func storeWithoutServerURLOrUsernameFailsWithUpstreamsMessage(object: [String: String], message: String) throws {
        let docker = try Docker()
        let result = try docker.run("store", String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self))
        #expect(result.status == 1)
        #expect(result.stdout == message + "\n")
        #expect(!result.stdout.contains("bar") && !result.stderr.contains("bar"))
        #expect(try docker.cli.run("list").stdout.isEmpty)
    }

    @Test(arguments: ["get", "erase"])
    func getAndEraseWithoutServerURLFail(action: String) throws {
        let docker = try Docker()
        for input in ["", "  \n"] {
            let result = try docker.run(action, input)
            #expect(result.status == 1)
            #expect(result.stdout == "no credentials server URL\n")
        }
    }

    @Test func eraseThenGetIsNotFound() throws {
        let docker = try Docker()
        _ = try docker.store("https://registry.example.com/v1/", "foo", "bar")
        let erase = try docker.run("erase", "https://registry.example.com/v1/\n")
        #expect(erase.status == 0 && erase.stdout.isEmpty)
        let get = try docker.run("get", "https://registry.example.com/v1/")
        #expect(get.status == 1)
        #expect(get.stdout == "credentials not found in native keychain\n")
    }

    // MARK: osxkeychain: TestMissingCredentials, list, store/retrieve, strict matching

    @Test func missingCredentialsAreNotFoundForGetAndErase() throws {
        let docker = try Docker()
        for action in ["get", "erase"] {
            let result = try docker.run(action, "https://adsfasdf.invalid/asdfsdddd")
            #expect(result.status == 1)
            #expect(result.stdout == "credentials not found in native keychain\n")
        }
    }

    @Test func listMapsEachServerURLToItsUsername() throws {
        let docker = try Docker()
        #expect(try docker.run("list", "").stdout == "{}\n")
        _ = try docker.store("https://foobar.example.com:2376/v1", "foobar", "foobarbaz")
        _ = try docker.store("https://foobar.example.com:2376/v2", "foobarbaz", "foobar")
        _ = try docker.store("registry.example.com", "linus", "x")
        try docker.cli.set("not-docker", "someone", "y")
        let list = try docker.run("list", "")
        #expect(list.status == 0)
        let all = try JSONSerialization.jsonObject(with: list.standardOutput) as? [String: String]
        // Keys are the server URLs as Docker sent them, not their normalized form.
        #expect(all == ["https://foobar.example.com:2376/v1": "foobar", "https://foobar.example.com:2376/v2": "foobarbaz", "registry.example.com": "linus"])
        _ = try docker.run("erase", "https://foobar.example.com:2376/v1")
        let after = try JSONSerialization.jsonObject(with: try docker.run("list", "").standardOutput) as? [String: String]
        #expect(after == ["https://foobar.example.com:2376/v2": "foobarbaz", "registry.example.com": "linus"])
    }

    /// Stored one after the other without deleting: later stores must not disturb earlier ones.
    @Test func eachServerURLReadsBackWhatWasStoredForIt() throws {
        let docker = try Docker()
        let urls = [
            "foobar.example.com",
            "foobar.example.com:2376",
            "//foobar.example.com:2376",
            "https://foobar.example.com:2376",
            "http://foobar.example.com:2376",
            "https://foobar.example.com:2376/some/path",
            "https://foobar.example.com:2376/some/other/path",
            "https://foobar.example.com:2376/some/other/path?foo=bar",
        ]
        for (index, url) in urls.enumerated() {
            let store = try docker.store(url, "user-\(index)", "secret-\(index)")
            #expect(store.status == 0, "\(url): \(store.stdout)")
            let got = try docker.get(url)
            #expect(got?.username == "user-\(index)" && got?.secret == "secret-\(index)", "\(url)")
        }
    }

    @Test(arguments: [
        ("https://foobar.example.com:2376", "http://foobar.example.com:2376"),  // stored as https, read with http
        ("http://foobar.example.com:2376", "https://foobar.example.com:2376"),  // stored as http, read with https
        ("http://foobar.example.com", "foobar.example.com:5678"),  // no scheme means https
        ("https://foobar.example.com:1234", "https://foobar.example.com:5678"),  // other port
        ("https://foobar.example.com:1234/one/two", "https://foobar.example.com:1234/five/six"),  // other path
        ("https://foobar.example.com:2376", "https://foobar.example.com"),  // strict: a port is part of the address
        ("https://foobar.example.com:1234/one/two", "https://foobar.example.com:1234"),  // strict: so is a path
    ])
    func onlyTheSameSchemeHostPortAndPathMatch(stored: String, read: String) throws {
        let docker = try Docker()
        _ = try docker.store(stored, "hello", "world")
        let result = try docker.run("get", read)
        #expect(result.status == 1)
        #expect(result.stdout == "credentials not found in native keychain\n")
        #expect(try docker.get(stored)?.secret == "world")
    }

    @Test func aServerURLWithAnUncleanPathStoresAndRetrieves() throws {
        let docker = try Docker()
        let url = "https://::1:8080//////location/../../hello"
        #expect(try docker.store(url, "testuser", "testsecret").status == 0)
        let got = try docker.get(url)
        #expect(got?.username == "testuser" && got?.secret == "testsecret")
    }

    @Test(arguments: [("/foobar.example.com", "no hostname in URL"), ("ftp://foobar.example.com:2376", "unsupported scheme: ftp")])
    func invalidServerURLsAreRefused(url: String, message: String) throws {
        let docker = try Docker()
        let result = try docker.store(url, "u", "s")
        #expect(result.status == 1)
        #expect(result.stdout == message + "\n")
    }

    // MARK: client/client_test.go

    @Test func identityTokensUseTheTokenUsername() throws {
        let docker = try Docker()
        #expect(try docker.store("https://example.com:5002", "<token>", "abcd1234").status == 0)
        let got = try docker.get("https://example.com:5002")
        #expect(got?.username == "<token>" && got?.secret == "abcd1234")
    }

    @Test func aNewUsernameForTheSameRegistryReplacesTheOld() throws {
        let docker = try Docker()
        _ = try docker.store("https://registry.example.com/v1", "foo", "bar")
        _ = try docker.store("https://registry.example.com/v1", "linus", "baz")
        #expect(try docker.get("https://registry.example.com/v1")?.username == "linus")
        #expect(try docker.cli.run("list").stdout == "docker:https://registry.example.com/v1\tlinus\n")
    }

    @Test func secretsWithJSONEscapesRoundTrip() throws {
        let docker = try Docker()
        let secret = "quote\" backslash\\ tab\t newline\n <&> Grüße 🔑 \u{1}"
        let json = #"{"serverurl":"https://r.example","Username":"u","Secret":"quote\" backslash\\ tab\t newline\n \u003c&\u003e Gr\u00fc\u00dfe \ud83d\udd11 \u0001","Extra":12}"#
        let store = try docker.run("store", json)
        #expect(store.status == 0, "\(store.stdout)")
        #expect(try docker.get("https://r.example")?.secret == secret)
        #expect(try docker.cli.run("get", "docker:https://r.example", "u").stdout == secret + "\n")
    }

    /// Docker prints the helper's error line on the user's terminal: a path or action
    /// holding terminal controls is shown escaped, never obeyed.
    @Test func errorsOnStandardOutputEscapeTerminalControls() throws {
        let docker = try Docker()
        let hostilePath = docker.cli.directory + "/\u{1B}]0;pwned\u{7}\u{9B}2J.vault"
        let environment = ChildProcess.cleanEnvironment(docker.cli.environment.merging(["VAULT_PATH": hostilePath]) { $1 })
        let get = try ChildProcess.run(DockerCredentialTests.helper, ["get"], environment: environment,
                                       standardInput: Data("https://r.example".utf8), timeout: .seconds(60))
        #expect(get.status == 1)
        #expect(get.stdout == "no vault at \(docker.cli.directory)/\\x1b]0;pwned\\x07\\u{009b}2J.vault (create one with 'vault init')\n")
        let unknown = try docker.run("\u{1B}[2Jwipe\u{202E}", "")
        #expect(unknown.stdout == "Unknown credential action `\\x1b[2Jwipe\\u{202e}`\n")
    }

    /// As with git's helper: a username holding a newline or NUL is refused, with
    /// nothing of the item written to Docker. (A secret's newline travels escaped in
    /// JSON, as `secretsWithJSONEscapesRoundTrip` shows.)
    @Test func aUsernameWithANewlineOrNULIsRefusedWithNothingWritten() throws {
        let docker = try Docker()
        try docker.cli.run(["set", "docker:https://r.example", "u\nv", "--generic", "https://r.example"], stdin: Data("pw\n".utf8))
        let get = try docker.run("get", "https://r.example")
        #expect(get.status == 1)
        #expect(get.stdout == "refusing the item for service 'docker:https://r.example', account 'u\\nv': its Username holds a newline or NUL, which Docker's credential protocol cannot carry; nothing was written\n")
        try docker.cli.run(["delete", "docker:https://r.example", "--all"])
        try docker.cli.run(["set", "docker:https://q.example", "u\nv", "--generic", "https://q.example"], stdin: Data("pw\n".utf8))
        let list = try docker.run("list", "")
        #expect(list.status == 1)
        #expect(list.stdout.hasPrefix("refusing the item for service 'docker:https://q.example', account 'u\\nv': its Username"), "\(list.stdout)")
    }

    @Test func versionAndUnknownActions() throws {
        let docker = try Docker()
        let version = try docker.run("version", "")
        #expect(version.status == 0 && version.stdout.hasPrefix("docker-credential-vault"))
        let unknown = try docker.run("frobnicate", "")
        #expect(unknown.status == 1)
        #expect(unknown.stdout == "Unknown credential action `frobnicate`\n")
        let invalid = try docker.run("store", "not json")
        #expect(invalid.status == 1 && !invalid.stdout.isEmpty)
    }
}
