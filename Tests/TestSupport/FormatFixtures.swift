import Foundation

/// The import fixtures in Tests/Fixtures/Import, written after each password manager's
/// documented export layout: read by the format tests and imported by the CLI's tests.
public enum FormatFixtures {
    public static func path(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../Fixtures/Import/\(name)").standardized.path
    }
}
