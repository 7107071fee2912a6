import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An HTTP request as ``AuthClient`` and the strategies send it.
///
/// Its `description` names the method and the URL without its query: headers (which carry
/// tokens), query strings and the body (which may carry passwords) are never shown.
public struct HTTPRequest: Sendable, CustomStringConvertible {
    public var method: String
    public var url: URL
    /// Header fields; names are matched case-insensitively by ``header(_:)``.
    public var headers: [(name: String, value: String)]
    public var body: Data?

    public init(method: String = "GET", url: URL, headers: [(name: String, value: String)] = [], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    /// The first value of header `name`, compared case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Replaces every field `name` with one `value`.
    public mutating func setHeader(_ name: String, _ value: String) {
        headers.removeAll { $0.name.caseInsensitiveCompare(name) == .orderedSame }
        headers.append((name, value))
    }

    /// Method, scheme, host, port and path: no query (it may carry a token), no headers, no body.
    public var description: String {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        components?.query = nil
        components?.fragment = nil
        components?.user = nil
        components?.password = nil
        return "\(method) \(components?.string ?? "<url>")"
    }
}

/// An HTTP response: status, headers, the whole body.
public struct HTTPResponse: Sendable, CustomStringConvertible {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: Data

    public init(status: Int, headers: [(name: String, value: String)] = [], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first value of header `name`, compared case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    public var description: String { "HTTP \(status), \(body.count) bytes" }
}

/// Sends one HTTP request and returns the response; the only thing VaultAuth needs
/// from an HTTP stack.
///
/// Conform to it to use your own client (AsyncHTTPClient, a proxy, a test double). A
/// transport throws only for failures with no HTTP answer (connection refused, timeout,
/// TLS); every status code, including 4xx and 5xx, is a response.
public protocol HTTPTransport: Sendable {
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}

/// The default transport: Foundation's `URLSession` (FoundationNetworking on Linux).
///
/// It uses an ephemeral session with no cookie storage and no cache, so no token or
/// response body is ever written to disk by the HTTP layer.
public final class URLSessionTransport: HTTPTransport {
    private let session: URLSession

    /// - Parameter timeout: how long one request may take before it fails as a network error.
    public init(timeout: TimeInterval = 30) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForRequest = timeout
        session = URLSession(configuration: configuration)
    }

    /// Uses an existing session, configured by you.
    public init(session: URLSession) {
        self.session = session
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// Sends the request with a data task. Cancelling the calling task cancels the data task,
    /// from another queue: FoundationNetworking can deadlock when `cancel()` runs inside the
    /// Swift task-cancellation handler while the response is being delivered (which
    /// `URLSession.data(for:)` does), and a keep-alive cancelled at shutdown would then hang the exit.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers {
            urlRequest.addValue(value, forHTTPHeaderField: name)
        }
        urlRequest.httpBody = request.body
        let pending = PendingTask()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, any Error>) in
                let task = session.dataTask(with: urlRequest) { data, response, error in
                    if let error {
                        continuation.resume(throwing: error)
                        return
                    }
                    guard let http = response as? HTTPURLResponse else {
                        continuation.resume(throwing: URLError(.badServerResponse))
                        return
                    }
                    var headers: [(name: String, value: String)] = []
                    for (name, value) in http.allHeaderFields {
                        if let name = name as? String, let value = value as? String { headers.append((name, value)) }
                    }
                    continuation.resume(returning: HTTPResponse(status: http.statusCode, headers: headers, body: data ?? Data()))
                }
                if pending.start(task) {
                    task.resume()
                } else {
                    continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            pending.cancel()
        }
    }
}

/// The data task of one ``URLSessionTransport/send(_:)``, and whether it was cancelled
/// before it existed.
private final class PendingTask: @unchecked Sendable {
    private let lock = NSLock()
    private var task: URLSessionDataTask?
    private var cancelled = false

    /// Records the task; `false` if the caller was cancelled already (do not start it).
    func start(_ task: URLSessionDataTask) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard !cancelled else { return false }
        self.task = task
        return true
    }

    func cancel() {
        lock.lock()
        cancelled = true
        let task = self.task
        lock.unlock()
        guard let task else { return }
        DispatchQueue.global().async { task.cancel() }
    }
}
