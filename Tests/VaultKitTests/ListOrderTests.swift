import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit

/// `items()` sorts by the UTF-8 bytes of service, then account (docs/CLI.md). The sort's
/// comparison was rewritten for speed (Benchmarks/README.md, "vault list at 100k"), so
/// this checks its order, at a size where the sort really runs, against an independent
/// bytewise order.
@Suite(.offCooperativePool) struct ListOrderTests {
    /// Names that Swift's own `String` order, a signed byte compare, or a compare that
    /// stops at the shorter name would put elsewhere.
    static let awkwardNames = [
        "svc1.example.com", "svc10.example.com", "svc1", "svc", "Svc1.example.com", "z",
        "\u{E9}", "e\u{301}", "\u{10FFFF}x", "\u{7F}", "a\u{300}", "\u{E0}", "~", "zz",
    ]

    @Test func itemsComeInBytewiseOrderOfServiceThenAccount() throws {
        let (vault, _, _) = try Fixtures.keyVault()
        defer { vault.close() }
        var expected: [(service: String, account: String)] = []
        var generator = SplitMix64(seed: 17)
        try vault.batch { batch in
            for index in 0..<3_000 {
                let service = Self.awkwardNames[Int(generator.next() % UInt64(Self.awkwardNames.count))] + (index % 7 == 0 ? "" : "\(index % 50)")
                let account = Self.awkwardNames[Int(generator.next() % UInt64(Self.awkwardNames.count))] + "\(index)"
                try batch.set("s", service: service, account: account)
                expected.append((service, account))
            }
        }
        expected.sort { lhs, rhs in
            let (a, b) = (Array(lhs.service.utf8), Array(rhs.service.utf8))
            return a != b ? a.lexicographicallyPrecedes(b) : Array(lhs.account.utf8).lexicographicallyPrecedes(Array(rhs.account.utf8))
        }
        let listed = try vault.items().map { (Array($0.service.utf8), Array($0.account.utf8)) }
        let wanted = expected.map { (Array($0.service.utf8), Array($0.account.utf8)) }
        #expect(listed.count == wanted.count)
        let firstMisplaced = zip(listed, wanted).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(firstMisplaced == nil, "item \(firstMisplaced ?? -1) is out of bytewise order")
    }
}
