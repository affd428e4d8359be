// PostgresTenant: whose rows a store reads and writes — one CloudKit database of one container
// in one environment. Every statement a store sends names the tenant's key in its WHERE clause
// or its row key, so a Citus router planner can send it to the one node holding that tenant.

import RecordModel

/// One CloudKit database: container, environment, and the database's owner.
///
/// The container and environment pick the PostgreSQL schema (namespace) holding the tables,
/// whose typed columns follow that container's CloudKit schema; the owner picks the rows.
///
/// ```swift
/// let alice = PostgresTenant(containerID: "iCloud.com.example.notes", environment: .development,
///                            database: .private(owner: "_alice"))
/// alice.key   // "iCloud.com.example.notes/development/private:_alice"
/// ```
public struct PostgresTenant: Sendable, Hashable {
    /// Which database of the container.
    public enum Database: Sendable, Hashable {
        /// The container's public database.
        case `public`
        /// One user's private database.
        case `private`(owner: String)
    }

    /// The container's identifier, e.g. `iCloud.com.example.notes`.
    public var containerID: String
    /// Development or production: each has its own schema and its own tables.
    public var environment: Environment
    /// The database whose rows this tenant holds.
    public var database: Database

    /// A tenant: one database of one container in one environment.
    public init(containerID: String, environment: Environment, database: Database) {
        self.containerID = containerID
        self.environment = environment
        self.database = database
    }

    /// The value of the `tenant` column (the distribution column under Citus).
    public var key: String {
        switch database {
        case .public: "\(containerID)/\(environment.rawValue)/public"
        case .private(let owner): "\(containerID)/\(environment.rawValue)/private:\(owner)"
        }
    }

    /// The key of the public database of the same container and environment (its rows have
    /// partial B-trees of their own: TableLayout.indexes).
    public var publicKey: String { "\(containerID)/\(environment.rawValue)/public" }

    /// The PostgreSQL schema (namespace) of the container's tables in this environment.
    public var namespace: String { SQLName.make("cirrus_", "\(containerID)_\(environment.rawValue)") }
}
