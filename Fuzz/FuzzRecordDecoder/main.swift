// libFuzzer target: arbitrary bytes as the plaintext of an item record.
//
// The decoder only ever sees authenticated plaintext, but a bug that lets it crash on
// malformed input would turn a key-holder's mistake into a crash: it must only ever
// return attributes or throw VaultError.tampered.
import Foundation
import FuzzSupport
@testable import VaultKit

func fuzzRecordDecoder(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    do {
        let (_, secret, _) = try ItemRecord.decode(bytes)
        precondition(secret.lowerBound >= 0 && secret.upperBound <= size)
    } catch {
        guard error.code == .tampered else { fatalError("unexpected error \(error)") }
    }
    return 0
}

exit(runFuzzer(fuzzRecordDecoder))
