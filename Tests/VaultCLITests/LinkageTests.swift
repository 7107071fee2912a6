import Foundation
import Testing
import TestSupport

/// `vault` starts without loading Foundation: `import Foundation` links
/// FoundationInternationalization and ICU (about 40 MB and a C++ runtime), which the
/// dynamic loader then relocates on every `vault get` (Benchmarks/README.md, "The agent").
/// VaultKit and the tool import only FoundationEssentials.
@Suite struct LinkageTests {
    #if os(Linux)
    @Test func vaultLoadsNoFoundationBeyondEssentials() throws {
        // glibc's loader names every object it loads on standard error.
        let result = try ChildProcess.run(CLI.executable, ["--version"], environment: ChildProcess.cleanEnvironment(["LD_DEBUG": "files"]), timeout: .seconds(60))
        #expect(result.status == 0, "\(result.stderr)")
        let loaded = Set(result.stderr.split(separator: "\n").compactMap { line -> String? in
            guard let start = line.range(of: "file=") else { return nil }
            return String(line[start.upperBound...].prefix { $0 != " " && $0 != "[" })
        })
        #expect(!loaded.isEmpty, "LD_DEBUG=files named no objects: \(result.stderr.prefix(300))")
        let refused = ["libFoundation.so", "libFoundationInternationalization.so", "lib_FoundationICU.so", "libFoundationNetworking.so"]
        #expect(loaded.filter { refused.contains(($0 as NSString).lastPathComponent) }.isEmpty, "\(loaded.sorted())")
    }
    #endif
}
