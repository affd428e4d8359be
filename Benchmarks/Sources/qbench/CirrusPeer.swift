// CirrusPeer: the places in a Cirrus container — opened with the run's durability, the Place
// schema imported (the indexes CloudKit's production environment would need), records saved
// through the public API (`modifyRecords`, batches of 400), queried with `records(matching:)`
// and `records(continuingMatchFrom:)` as an application would, on behalf of a signed-in user.

import Cirrus
import Foundation
import QueryExecution
import RecordLog
import RecordModel

final class CirrusPeer {
    /// The user the peer reads and writes as (the records' creator).
    static let user = "_bench"
    static let schema = """
        DEFINE SCHEMA
            RECORD TYPE Place (
                "___recordID" REFERENCE QUERYABLE,
                name        STRING QUERYABLE SORTABLE SEARCHABLE,
                kind        STRING QUERYABLE SORTABLE,
                population  INT64 QUERYABLE SORTABLE,
                country     STRING QUERYABLE SORTABLE,
                location    LOCATION QUERYABLE,
                tags        LIST<STRING> QUERYABLE,
                description STRING SEARCHABLE,
                GRANT WRITE TO "_creator",
                GRANT CREATE TO "_icloud",
                GRANT READ TO "_world"
            );
        """

    let directory: String
    let durability: Durability
    let options: ContainerOptions
    private(set) var container: Container
    private(set) var db: Database

    /// Opens (creating) the container at `directory`; `recordCache` overrides the default number of
    /// decoded base records kept per table (0: none), `readMergeBudget` the default read-merge
    /// budget (`ContainerOptions.readMergeBudget`).
    init(
        directory: String, durability: Durability, schema: String? = CirrusPeer.schema, recordCache: Int? = nil,
        readMergeBudget: Double? = nil
    )
        throws
    {
        self.directory = directory
        self.durability = durability
        var options = ContainerOptions(durability: durability)
        if let recordCache { options.recordCacheSize = recordCache }
        if let readMergeBudget { options.readMergeBudget = readMergeBudget }
        self.options = options
        container = try Container.open(at: directory, environment: .development, options: options)
        if let schema { try container.importSchema(schema) }
        db = container.publicDatabase(as: .user(Self.user))
    }

    /// Saves `places` as records in requests of `batch` (≤ 400), calling `progress(n)`.
    func ingest<C: RandomAccessCollection<Place>>(
        _ places: C, batch: Int, progress: (Int) -> Void
    ) async throws where C.Index == Int {
        var i = places.startIndex
        while i < places.endIndex {
            let end = min(places.endIndex, i + batch)
            let records = places[i..<end].map(\.record)
            let r = try await db.modifyRecords(saving: records, deleting: [], savePolicy: .allKeys)
            if let e = r.partialFailure { throw e }
            i = end
            progress(i - places.startIndex)
        }
    }

    /// Closes and opens the container again (replays the log, bulk-builds the indexes).
    /// Closes and opens again; returns the nanoseconds the close took (it waits for a background
    /// checkpoint under way and checkpoints a large delta), the rest being the open.
    @discardableResult
    func reopen() throws -> UInt64 {
        let c0 = Measure.now()
        try container.close()
        let closed = Measure.now() - c0
        defer { db = container.publicDatabase(as: .user(Self.user)) }
        container = try Container.open(at: directory, environment: .development, options: options)
        return closed
    }

    func close() throws { try container.close() }

    /// One page of `query` and its cursor.
    func page(_ query: RecordQuery, limit: Int) async throws -> ([Record], QueryCursor?) {
        let r = try await db.records(matching: query, resultsLimit: limit)
        return (try r.matchResults.map { try $0.1.get() }, r.queryCursor)
    }

    func next(_ cursor: QueryCursor, limit: Int) async throws -> ([Record], QueryCursor?) {
        let r = try await db.records(continuingMatchFrom: cursor, resultsLimit: limit)
        return (try r.matchResults.map { try $0.1.get() }, r.queryCursor)
    }

    /// Every record of `query`, following cursors.
    func all(_ query: RecordQuery, pageSize: Int = 10_000) async throws -> [Record] {
        var (out, cursor) = try await page(query, limit: pageSize)
        while let c = cursor {
            let (more, nc) = try await next(c, limit: pageSize)
            out += more
            cursor = nc
        }
        return out
    }

    func point(_ recordName: String) async throws -> Record {
        try await db.record(for: RecordID(recordName: recordName))
    }
}
