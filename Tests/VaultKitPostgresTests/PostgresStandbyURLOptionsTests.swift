import Testing
import TestTraits
@testable import VaultKit
@testable import VaultKitPostgres

/// A hot standby named in a vault URL's query (`vaultkit_standby_host` and friends), for
/// the programs that take a URL alone: the parameters are taken out before libpq sees the
/// URL, and the standby's connection string is the primary's with its host and port.
/// No server is needed: libpq only parses here.
@Suite(.offCooperativePool) struct PostgresStandbyURLOptionsTests {
    @Test func theStandbysParametersAreTakenOutAndTheOthersKept() throws {
        let plain = "postgres://app@db-primary:5432/app?sslmode=verify-full"
        #expect(try PostgresStandbyURLOptions.split(plain).url == plain)
        #expect(try PostgresStandbyURLOptions.split(plain).standby == nil)
        let named = try PostgresStandbyURLOptions.split(
            "postgres://app@db-primary:5432/app?sslmode=verify-full&vaultkit_standby_host=db%2Dreplica&vaultkit_standby_port=5433&vaultkit_standby_max_staleness_ms=250&connect_timeout=3")
        #expect(named.url == "postgres://app@db-primary:5432/app?sslmode=verify-full&connect_timeout=3")
        let standby = try #require(named.standby)
        #expect(standby.host == "db-replica" && standby.port == "5433" && standby.maxStaleness == .milliseconds(250))
        let alone = try PostgresStandbyURLOptions.split("postgres://app@db-primary/app?vaultkit_standby_host=replica")
        #expect(alone.url == "postgres://app@db-primary/app")
        #expect(alone.standby?.port == nil && alone.standby?.maxStaleness == .seconds(1))
    }

    @Test func aBoundOrPortWithoutAHostIsRefused() throws {
        for bound in ["0", "-5", "1.5", "soon"] {
            #expect(throws: VaultError.invalidArgument(.standbyStalenessNotPositive)) {
                try PostgresStandbyURLOptions.split("postgres://db/app?vaultkit_standby_host=r&vaultkit_standby_max_staleness_ms=\(bound)")
            }
        }
        for query in ["vaultkit_standby_port=5433", "vaultkit_standby_host=", "vaultkit_standby_host=%zz"] {
            #expect(throws: VaultError.invalidArgument(.notAConnectionString)) { try PostgresStandbyURLOptions.split("postgres://db/app?" + query) }
        }
    }

    /// The primary's options, password and all, with the standby's host and port; quoted
    /// so that libpq reads back exactly those values, quotes and backslashes included.
    @Test func theStandbysConnectionIsThePrimarysWithItsHost() throws {
        let primary = try PostgresVaultLocation.options("postgres://app:it%27s%5Chunter2@db-primary:5432/app?sslmode=require")
        let connection = PostgresStandbyURLOptions.standbyConnection(primary: primary, host: "db-replica", port: "5433")
        var expected = primary
        (expected["host"], expected["port"]) = ("db-replica", "5433")
        #expect(try PostgresVaultLocation.options(connection) == expected)
        #expect(expected["password"] == "it's\\hunter2")
    }

    /// Through the engine, as `vault` and `Vault.open(url:)` reach it: the location has
    /// the standby, and neither shows the password.
    @Test func theEngineGivesTheLocationItsStandby() throws {
        let location = try VaultEngine.postgres.locate("postgres://app:hunter2@db-primary/app?vaultkit_standby_host=db-replica#secrets")
        let postgres = try #require(location as? PostgresVaultLocation)
        #expect(postgres.vaultName == "secrets")
        let standby = try #require(postgres.standby)
        #expect(standby.description == "postgres://app@db-replica/app")
        #expect(standby.maxStaleness == .seconds(1))
        #expect(postgres.holdsPassword)
        #expect(!"\(postgres)".contains("hunter2") && !"\(standby)".contains("hunter2"))
        #expect(try #require(VaultEngine.postgres.locate("postgres://app@db-primary/app#secrets") as? PostgresVaultLocation).standby == nil)
    }
}
