// Runs one sealing operation N times, for instruction counts under callgrind, which are
// repeatable on a machine too noisy for wall-clock ratios (see Benchmarks/callgrind-seal.sh):
//
//     SealingProbe seal-vaultkit|open-vaultkit|seal-raw|open-raw|seal-raw-record|open-raw-record SIZE N
//
// The -record modes seal/open raw boxes of the whole record's size (the SIZE-byte secret
// plus the 62 bytes of attributes VaultKit's record adds here), separating what the
// record format costs from what VaultKit's code adds.
//
// Per-operation instructions = (total at N - total at 0) / N.
import CSodiumRaw
import Foundation
@_spi(Benchmarking) import VaultKit

let arguments = CommandLine.arguments
guard arguments.count == 4, let size = Int(arguments[2]), let count = Int(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: SealingProbe seal-vaultkit|open-vaultkit|seal-raw|open-raw|seal-raw-record|open-raw-record SIZE N\n".utf8))
    exit(2)
}
precondition(sodium_init() >= 0)

let sealer = try BenchmarkRecordSealer()
let item = VaultItem(service: "api.example.com", account: "alice", created: Date(), modified: Date())
let secret = SecretBytes([UInt8](repeating: 0xA5, count: size))
let index = sealer.index(service: item.service, account: item.account)
let record = sealer.seal(item, secret: secret, index: index)

// The raw side's plaintext: the secret alone, or as many bytes as VaultKit's record.
let rawSize = arguments[1].hasSuffix("-record") ? record.sealedByteCount - Int(crypto_secretbox_MACBYTES) : size
let key = UnsafeMutablePointer<UInt8>.allocate(capacity: Int(crypto_secretbox_KEYBYTES))
let nonce = UnsafeMutablePointer<UInt8>.allocate(capacity: Int(crypto_secretbox_NONCEBYTES))
let plaintext = UnsafeMutablePointer<UInt8>.allocate(capacity: rawSize)
plaintext.initialize(repeating: 0xA5, count: rawSize)
let sealed = UnsafeMutablePointer<UInt8>.allocate(capacity: rawSize + Int(crypto_secretbox_MACBYTES))
crypto_secretbox_keygen(key)
randombytes_buf(nonce, Int(crypto_secretbox_NONCEBYTES))
_ = crypto_secretbox_easy(sealed, plaintext, UInt64(rawSize), nonce, key)

var sink = 0
switch arguments[1] {
case "seal-vaultkit":
    for _ in 0..<count { sink &+= sealer.seal(item, secret: secret, index: index).sealedByteCount }
case "open-vaultkit":
    for _ in 0..<count { sink &+= try sealer.open(record, index: index) }
case "seal-raw", "seal-raw-record":
    for _ in 0..<count {
        randombytes_buf(nonce, Int(crypto_secretbox_NONCEBYTES))
        sink &+= Int(crypto_secretbox_easy(sealed, plaintext, UInt64(rawSize), nonce, key))
    }
case "open-raw", "open-raw-record":
    for _ in 0..<count {
        sink &+= Int(crypto_secretbox_open_easy(plaintext, sealed, UInt64(rawSize) + UInt64(crypto_secretbox_MACBYTES), nonce, key))
    }
default:
    exit(2)
}
print(sink)
