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
import VaultKit

/// A client's connection to the agent: one request, one response, in turn.
package final class AgentConnection {
    package let socketPath: String
    fileprivate let fd: Int32

    /// Connects to the agent at `socketPath`, or returns `nil` when none is running.
    package init?(socketPath: String) throws(AgentError) {
        guard let fd = try AgentSocket.connect(to: socketPath) else { return nil }
        self.socketPath = socketPath
        self.fd = fd
    }

    deinit { close(fd) }

    package func send(_ request: AgentRequest) throws(AgentError) -> AgentResponse {
        // A request not sent whole is not carried out; once it is, a write may have been.
        try AgentSocket.send(request.encode(), on: fd)
        do throws(AgentError) {
            guard let frame = try AgentSocket.receive(on: fd, limit: AgentProtocol.maximumResponseSize) else {
                throw .brokenConnection(reason: "the agent closed the connection")
            }
            do {
                return try frame.withUnsafeBytes { (bytes) throws(MalformedMessage) in try AgentResponse.decode(bytes) }
            } catch {
                throw .brokenConnection(reason: error.reason)
            }
        } catch {
            guard request.changesItems, case .brokenConnection(let reason) = error else { throw error }
            throw .lostWrite(reason: reason)
        }
    }

    /// Sends `request`, expecting a plain acknowledgement or a failure.
    package func expectOK(_ request: AgentRequest) throws -> AgentResponse {
        let response = try send(request)
        switch response {
        case .failure(let error): throw error
        case .refused(let reason): throw AgentError.refused(reason: reason)
        default: return response
        }
    }
}

extension AgentConnection {
    /// Waits until the agent closes its end (when it exits).
    package func waitForClose() {
        var byte: UInt8 = 0
        while true {
            let n = SystemIO.retryingInterrupted { recv(fd, &byte, 1, 0) }
            if n <= 0 { return }
        }
    }
}
