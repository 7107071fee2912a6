import Testing
import TestSupport

/// The PostgreSQL suites run, or a run says once why not and how to run them.
@Suite struct PostgresTestServerTests {
    /// Without a server the suites are skipped and this prints ``PostgresTestServer/skipNotice``;
    /// under CI (`CI=true`) they must run, so a missing server is a failure here too.
    @Test func thePostgreSQLSuitesRunOrTheRunSaysWhyNot() {
        guard PostgresTestServer.url == nil else { return }
        if PostgresTestServer.isRequired {
            Issue.record("CI=true requires the PostgreSQL suites, and VAULTKIT_TEST_POSTGRES_URL is not set. Run: \(PostgresTestServer.howToRun)")
        } else {
            print(PostgresTestServer.skipNotice)
        }
    }
}
