// libFuzzer target: arbitrary bytes as the body of a message to or from the vault agent.
//
// The agent decodes whatever a local process sends it; a decoder that crashed would let
// any process of the user stop the agent (and one of another user, if a mistake opened
// the socket, before the peer check was added). Decoding must only ever return a message
// or throw MalformedMessage, whose type the decoders' typed throws already fix.
// The decoders' sources are VaultAgent's own (Sources/VaultAgent/Protocol), linked here.
import Foundation
import FuzzSupport
import VaultKit

func fuzzAgentMessage(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    if let request = try? AgentRequest.decode(bytes) {
        // A decoded item request always names a vault; the others never do.
        precondition((request.target != nil) == (request.opcode >= 0x10))
    }
    if let response = try? AgentResponse.decode(bytes) {
        // Tags 0-12: protocol 3 added 10-12 (history).
        precondition(response.tag <= 12)
    }
    return 0
}

exit(runFuzzer(fuzzAgentMessage))
