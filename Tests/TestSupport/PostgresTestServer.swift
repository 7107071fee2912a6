import Foundation

/// Whether the suites that need a PostgreSQL server run.
///
/// `scripts/postgres-test-cluster.sh start` (run by scripts/test.sh) starts a throwaway
/// server and exports `VAULTKIT_TEST_POSTGRES_URL`. Without it, a plain `swift test`
/// skips those suites (each suite takes `.enabled(if: PostgresTestServer.suitesRun)`),
/// and one test prints ``skipNotice`` once, rather than a hundred failures that all say
/// the same. Under CI (`CI=true`) they always run, so a missing server fails them instead
/// of passing unseen.
public enum PostgresTestServer {
    /// The server's URL, without the password (libpq reads it from `PGPASSFILE`); `nil`
    /// when no server was started.
    public static var url: String? {
        guard let url = ProcessInfo.processInfo.environment["VAULTKIT_TEST_POSTGRES_URL"], !url.isEmpty else { return nil }
        return url
    }

    /// The hot standby's URL (`VAULTKIT_TEST_POSTGRES_STANDBY=1` when the server was
    /// started, as scripts/test.sh does); `nil` when none streams from it.
    public static var standbyURL: String? {
        guard let url = ProcessInfo.processInfo.environment["VAULTKIT_TEST_POSTGRES_STANDBY_URL"], !url.isEmpty else { return nil }
        return url
    }

    /// Whether the suites that need the standby run (under CI, always).
    public static var standbySuitesRun: Bool { standbyURL != nil || isRequired }

    /// Under CI every suite must run: a skipped one would hide that it was never tested.
    public static var isRequired: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    /// Whether the suites that need the server run (else they are skipped).
    public static var suitesRun: Bool { url != nil || isRequired }

    /// How to run the suites that need the server.
    public static let howToRun = """
        eval "$(scripts/postgres-test-cluster.sh start)"; swift test; \
        scripts/postgres-test-cluster.sh stop "$VAULTKIT_TEST_POSTGRES_DIR" (scripts/test.sh does this)
        """

    /// The one line a run without a server prints.
    public static let skipNotice = "PostgreSQL suites skipped: VAULTKIT_TEST_POSTGRES_URL is not set. To run them: \(howToRun)."
}
