import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import VaultAuth

/// What a user's browser does in the authorization-code flow, over real HTTP: logs in to the
/// server's login form (with Django's CSRF token and session cookie) and follows the
/// authorization endpoint's redirects by hand until one points at the redirect URI.
struct TestBrowser {
    private let transport = URLSessionTransport(session: URLSession(configuration: Self.configuration, delegate: NoRedirects(), delegateQueue: nil))
    private var cookies: [String: String] = [:]

    private static var configuration: URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.urlCache = nil
        return configuration
    }

    /// Logs in as `user` at `loginURL`, then opens `authorizationURL` and returns the URL the
    /// server finally redirected to outside itself (the app's redirect URI).
    mutating func authorize(_ authorizationURL: URL, loginURL: URL, user: String, password: String) async throws -> URL {
        let next = authorizationURL.path + "?" + (authorizationURL.query ?? "")
        let page = try await send(HTTPRequest(url: loginURL))
        let html = String(decoding: page.body, as: UTF8.self)
        guard let csrf = Self.first(#"name="csrfmiddlewaretoken" value="([^"]+)""#, in: html) else { throw BrowserError("no CSRF token in the login page") }
        var login = HTTPRequest(method: "POST", url: loginURL)
        login.setHeader("Content-Type", "application/x-www-form-urlencoded")
        login.body = Data(Self.form([("csrfmiddlewaretoken", csrf), ("username", user), ("password", password), ("next", next)]).utf8)
        var response = try await send(login)
        var hops = 0
        while let location = response.header("Location"), let target = URL(string: location, relativeTo: loginURL)?.absoluteURL, hops < 5 {
            if target.host != loginURL.host || target.port != loginURL.port || target.path == "/callback" { return target }
            response = try await send(HTTPRequest(url: target))
            hops += 1
        }
        throw BrowserError("no redirect to the app: HTTP \(response.status) \(String(decoding: response.body.prefix(300), as: UTF8.self))")
    }

    private mutating func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var request = request
        if !cookies.isEmpty { request.setHeader("Cookie", cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")) }
        let response = try await transport.send(request)
        for (name, value) in response.headers where name.caseInsensitiveCompare("Set-Cookie") == .orderedSame {
            for cookie in ["csrftoken", "sessionid"] {
                if let found = Self.first("\(cookie)=([^;,]+)", in: value) { cookies[cookie] = found }
            }
        }
        return response
    }

    private static func first(_ pattern: String, in text: String) -> String? {
        guard let regex = try? NSRegularExpression(pattern: pattern),
              let match = regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)),
              let range = Range(match.range(at: 1), in: text) else { return nil }
        return String(text[range])
    }

    private static func form(_ fields: [(String, String)]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return fields.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed)!)" }.joined(separator: "&")
    }

    struct BrowserError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}

/// Hands every redirect back as the response, so the browser above sees each `Location`.
private final class NoRedirects: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        completionHandler(nil)
    }
}
