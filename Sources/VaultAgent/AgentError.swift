#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Errors of the agent and of talking to it. None carries a secret or a message's bytes.
package enum AgentError: Error {
    /// The socket's directory could be replaced or read by someone else.
    case unsafeDirectory(path: String, reason: String)
    case socket(what: String, errno: Int32)
    case notRunning(socket: String)
    case alreadyRunning(socket: String)
    /// The process at the other end of the socket belongs to another user.
    case foreignAgent(uid: UInt32)
    /// The agent closed the connection or answered something that is not a response.
    case brokenConnection(reason: String)
    /// The connection broke after a whole write request (set, delete, ...) was sent and
    /// before its answer came: the agent may or may not have written it.
    case lostWrite(reason: String)
    /// The agent refused the request.
    case refused(reason: String)
    case cannotStart(reason: String)

    package var message: String {
        switch self {
        case .unsafeDirectory(let path, let reason):
            "refusing the agent directory \(path): \(reason)"
        case .socket(let what, let code):
            "\(what): \(SystemMessage.text(code))"
        case .notRunning(let socket):
            "no agent is running at \(socket) (start one with 'vault unlock' or 'vault agent start')"
        case .alreadyRunning(let socket):
            "an agent is already running at \(socket)"
        case .foreignAgent(let uid):
            "refusing the agent socket: the agent runs as another user (uid \(uid))"
        case .brokenConnection(let reason):
            "lost the connection to the agent: \(reason)"
        case .lostWrite(let reason):
            "lost the connection to the agent: \(reason); the change may or may not have been written (run 'vault get' or 'vault list' to check)"
        case .refused(let reason):
            "the agent refused the request: \(reason)"
        case .cannotStart(let reason):
            "cannot start the agent: \(reason)"
        }
    }
}

/// `strerror` in lower case, as in "permission denied", like the tool's other messages.
package enum SystemMessage {
    package static func text(_ code: Int32) -> String {
        let text = String(cString: strerror(code))
        return text.prefix(1).lowercased() + text.dropFirst()
    }
}
