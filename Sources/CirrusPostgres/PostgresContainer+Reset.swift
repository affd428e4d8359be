// Reset of a container's development environment on PostgreSQL — the CloudKit Console's "Reset
// Development Environment", as `Container.resetDevelopment(at:)` does for a directory: the
// development schema, every record, zone, subscription, notification, asset, change history and
// the cursor secret go; production (another namespace) is never touched.
//
// The development namespace is dropped (`DROP SCHEMA … CASCADE`) in one transaction, under the
// namespace's advisory lock (the lock every DDL of the namespace takes). As a directory's reset
// needs its environment closed (its LOCK), this one needs the environment unused: sessions of
// another `Container` on it — a store's (application_name `cirrus <container>/development/…`)
// or a notification listener's (`cirrus listen <namespace>`) — refuse the reset with
// internalError naming them, after waiting a moment for sessions that are closing. The next
// open creates a fresh environment whose schema holds only `Users`, with a new cursor secret.

import CirrusFacade
import Foundation
import Logging
import PostgresNIO
import RecordModel

extension Container {
    /// Resets the development environment of `containerID` on PostgreSQL at `url` (see
    /// `resetDevelopment(at:)` for a directory): close its containers first, here and in every
    /// other process, or the reset is refused (internalError) and nothing changes.
    ///
    /// ```swift
    /// try container.close()                                   // the development container
    /// try await Container.resetDevelopment(postgres: url, containerID: "iCloud.com.example.notes")
    /// let fresh = try await Container.open(postgres: url, containerID: "iCloud.com.example.notes")
    /// ```
    public static func resetDevelopment(
        postgres url: String, containerID: String, timeout: Duration = .seconds(15)
    ) async throws(CirrusError) {
        try await PostgresContainer.resetDevelopment(url: url, containerID: containerID, timeout: timeout)
    }
}

extension PostgresContainer {
    /// How long a reset waits for sessions of the environment that are closing.
    static let resetGrace: Duration = .seconds(5)

    /// Drops the development namespace of `containerID` (see the file header).
    static func resetDevelopment(url: String, containerID: String, timeout: Duration) async throws(CirrusError) {
        let tenant = PostgresTenant(containerID: containerID, environment: .development, database: .public)
        let namespace = tenant.namespace
        guard var config = PostgresNotifier.configuration(url: url, namespace: namespace, timeout: timeout) else {
            throw CirrusError(
                .invalidArguments, "expected postgres://user[:password]@host[:port]/database, got \(url)")
        }
        config.options.additionalStartupParameters = [("application_name", "cirrus reset")]
        let at = "\(config.host ?? "?"):\(config.port ?? 5432)"
        // The sessions of this container's development environment, as they name themselves
        // (PostgreSQL keeps 63 bytes of a name).
        let prefixes = ["cirrus \(containerID)/development/", "cirrus listen \(namespace)"].map {
            String(decoding: Array($0.utf8.prefix(63)), as: UTF8.self)
        }
        let logger = Logger(label: "cirrus.postgres.reset")
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(configuration: config, id: 0, logger: logger)
        } catch {
            throw PostgresStore.mapError(error, what: "connecting to reset development", address: at)
        }
        func exec(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) async throws {
            for try await _ in try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger) {
            }
        }
        func others() async throws -> [(Int32, String)] {
            var b = PostgresBindings()
            b.append(prefixes)
            var out: [(Int32, String)] = []
            for try await (pid, name) in try await connection.query(
                PostgresQuery(
                    unsafeSQL: "SELECT pid, application_name FROM pg_stat_activity WHERE pid <> pg_backend_pid() "
                        + "AND datname = current_database() AND EXISTS (SELECT 1 FROM unnest($1::text[]) p "
                        + "WHERE starts_with(application_name, p)) ORDER BY pid", binds: b), logger: logger
            ).decode((Int32, String).self) { out.append((pid, name)) }
            return out
        }
        var failure: CirrusError? = nil
        do {
            let clock = ContinuousClock()
            let deadline = clock.now + resetGrace
            var open = try await others()
            while !open.isEmpty && clock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
                open = try await others()
            }
            if !open.isEmpty {
                throw CirrusError(
                    .internalError,
                    "development of \(containerID) is in use by \(open.count) session(s) ("
                        + open.prefix(4).map { "pid \($0.0): \($0.1)" }.joined(separator: "; ")
                        + "): close its containers first; nothing was reset")
            }
            try await exec("BEGIN")
            do {
                var lock = PostgresBindings()
                lock.append(namespace)
                try await exec("SELECT pg_advisory_xact_lock(hashtext($1))", lock)
                // A container opened meanwhile (before the lock) is refused too.
                open = try await others()
                if !open.isEmpty {
                    throw CirrusError(
                        .internalError,
                        "development of \(containerID) was opened while resetting (pid \(open[0].0)); nothing was reset"
                    )
                }
                try await exec("DROP SCHEMA IF EXISTS \(SQLName.quote(namespace)) CASCADE")
                try await exec("COMMIT")
            } catch {
                try? await exec("ROLLBACK")
                throw error
            }
        } catch let e as CirrusError {
            failure = e
        } catch {
            failure = PostgresStore.mapError(error, what: "resetting development", address: at)
        }
        try? await connection.close()
        if let failure { throw failure }
    }
}
