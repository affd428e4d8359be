// Container: one CloudKit container in one environment — its public database, every user's
// private database, its schema — over an engine (`ContainerBackend`): the embedded engine
// (CirrusEmbedded: a container directory, `Container.open(at:)`) or PostgreSQL (CirrusPostgres:
// `Container.open(postgres:…)`). The façade holds no storage of its own: what a container does
// on every engine is here and in Container+Schema.swift and Container+Roles.swift; what only the
// embedded engine does (checkpoints, compaction, import, repair, the open report) is CirrusEmbedded's
// extension of this type.

import RecordModel

/// A CloudKit container, over one engine.
///
/// ```swift
/// let container = try Container.open(at: "/data/places", environment: .development)
/// let db = container.publicDatabase(as: .user("_alice"))
/// try await db.save(Record(recordType: "Place", recordID: RecordID(recordName: "louvre"), fields: ["name": "Louvre"]))
/// ```
public final class Container: Sendable {
    /// The engine behind the container.
    public let backend: any ContainerBackend

    /// A container over an engine (`Container.open(at:)` and `Container.open(postgres:…)` make one).
    public init(backend: any ContainerBackend) { self.backend = backend }

    /// The engine behind the container: `embedded` or `postgresql`.
    public var engineName: String { backend.engineName }

    /// Where the container lives: its directory, or on another engine e.g. `postgresql
    /// 127.0.0.1:5432/cirrus iCloud.com.example`.
    public var directory: String { backend.location }

    /// The environment this container was opened in.
    public var environment: Environment { backend.environment }

    /// The public database, anonymously (reads only what the world may read).
    public var publicDatabase: Database { publicDatabase(as: .anonymous) }

    /// The public database on behalf of `identity`.
    public func publicDatabase(as identity: Identity) -> Database {
        Database(backend: backend.database(.public, as: identity))
    }

    /// The private database of `userRecordName`, used on that user's behalf.
    ///
    /// ```swift
    /// let mine = container.privateDatabase(for: "_alice")
    /// ```
    public func privateDatabase(for userRecordName: String) -> Database {
        Database(backend: backend.database(.private(owner: userRecordName), as: .user(userRecordName)))
    }

    /// The database with `scope`, on behalf of `identity` (a private database used by anyone
    /// but its owner refuses every call).
    public func database(_ scope: Database.Scope, as identity: Identity) -> Database {
        Database(backend: backend.database(scope, as: identity))
    }

    /// Closes the container: makes every acknowledged write durable and releases the engine;
    /// later writes fail with internalError.
    public func close() throws(CirrusError) { try backend.close() }
}
