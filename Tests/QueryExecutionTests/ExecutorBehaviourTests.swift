import Indexes
import QueryChecker
import QueryPlanner
import RecordModel
import Testing

@testable import QueryExecution

@Suite struct ExecutorBehaviourTests {
    /// 2 000 places with distinct populations, spread over a grid around Paris.
    static let records: [Record] = (0..<2_000).map(place)

    static func place(_ i: Int) -> Record {
        let name = "p" + String(repeating: "0", count: 4 - String(i).count) + String(i)
        let lat: Double = 48.0 + Double(i % 50) / 50
        let lon: Double = 2.0 + Double(i / 50) / 50
        var fields: RecordFields = [:]
        fields["population"] = .int64(Int64(i * 7 % 2_000))
        fields["kind"] = .string(i % 10 == 0 ? "cafe" : "shop")
        fields["location"] = .location(Location(latitude: lat, longitude: lon))
        return Record(recordType: "Place", recordID: RecordID(recordName: name), fields: fields)
    }
    static let schema = RecordTypeSchema(
        name: "Place",
        fields: [
            FieldSchema(name: "population", type: .int64, options: [.queryable, .sortable]),
            FieldSchema(name: "kind", type: .string, options: [.queryable]),
            FieldSchema(name: "location", type: .location, options: [.queryable]),
        ])
    let snap = MemorySnapshot(schema: schema, records: records)

    func query(_ p: String, _ args: [PredicateArgument] = [], sort: [SortDescriptor]) throws -> Query {
        Query(
            recordType: "Place", predicate: try QueryChecker.check(p, context: CheckContext(arguments: args)).predicate,
            sortDescriptors: sort)
    }

    @Test func resumingASortedStreamDoesNotRereadEarlierRows() throws {
        let q = try query("population >= 0", sort: [.field("population", ascending: true)])
        var after: OrderKey? = nil
        for pageNumber in 0..<50 {
            let plan = QueryPlanner.plan(q, statistics: snap.statistics, limit: 10)
            #expect(plan.streamsInOrder)
            let page = try QueryExecutor.run(plan, on: snap, after: after, pageSize: 10)
            #expect(
                page.records.map { $0["population"] }
                    == (pageNumber * 10..<pageNumber * 10 + 10).map { .int64(Int64($0)) })
            let scan = plan.root.allNodes.first { if case .indexScan = $0.op { return true } else { return false } }!
            // A page reads its 10 rows, one more to know more follow, one more to close that row's
            // tie group, and (when resumed) the boundary row the seek lands on — never earlier pages.
            #expect((page.actual[scan.id] ?? 0) <= 13, "page \(pageNumber) scanned \(page.actual[scan.id] ?? -1) rows")
            after = page.next
        }
    }

    @Test func resumingNearestFirstDoesNotRereadEarlierRows() throws {
        let q = try query(
            "TRUEPREDICATE", sort: [.distance(field: "location", from: Location(latitude: 48.5, longitude: 2.5))])
        var after: OrderKey? = nil
        var seen = Set<String>()
        var lastDistance = -1.0
        for _ in 0..<30 {
            let plan = QueryPlanner.plan(q, statistics: snap.statistics, limit: 20)
            let page = try QueryExecutor.run(plan, on: snap, after: after, pageSize: 20)
            let scan = plan.root.allNodes.first { if case .nearest = $0.op { return true } else { return false } }!
            #expect((page.actual[scan.id] ?? 0) <= 40, "a page browses about a page of points, not every earlier one")
            for r in page.records {
                #expect(seen.insert(r.recordID.recordName).inserted)
                guard case .location(let l)? = r["location"] else { continue }
                let d = GeoMath.distanceKm(
                    latitude1: 48.5, longitude1: 2.5, latitude2: l.latitude, longitude2: l.longitude)
                #expect(d >= lastDistance - 1e-9)
                lastDistance = d
            }
            after = page.next
        }
        #expect(seen.count == 600)
    }

    /// Statistics that keep what they find count a small circle exactly, and the execution given
    /// the same `FoundRows` reads the circle's rows from it: the page is the one a plain
    /// plan-and-run gives, and rows planted in it for the circle are what the execution returns.
    @Test func circlesFoundWhilePlanningAreCountedExactlyAndReadByTheExecution() throws {
        let centre = Location(latitude: 48.5, longitude: 2.5)
        for km in [3.0, 15, 40] {
            let q = try query(
                "distanceToLocation:fromLocation:(location, %@) < %@",
                [.value(.location(centre)), .value(.double(km))],
                sort: [])
            let exact = snap.indexes.spatial["location"]!.rows(withinKm: km, of: centre)
            let found = FoundRows()
            let plan = QueryPlanner.plan(q, statistics: snap.statistics(keeping: found), limit: 5_000)
            let radius = plan.root.allNodes.first { if case .radius = $0.op { return true } else { return false } }
            #expect(radius?.estimatedRows == Double(exact.count), "\(km) km: counted, not estimated")
            #expect(found.rows(field: "location", center: centre, km: km) == exact)
            let page = try QueryExecutor.run(plan, on: snap, pageSize: 5_000, found: found)
            let plain = try QueryExecutor.run(
                QueryPlanner.plan(q, statistics: snap.statistics, limit: 5_000), on: snap, pageSize: 5_000)
            #expect(page.records.map(\.recordID) == plain.records.map(\.recordID))
            #expect(page.records.count == exact.count)
            // The execution takes the kept rows as the circle's: plant three of them.
            found.keep(field: "location", center: centre, km: km, rows: [0, 1, 2])
            let planted = try QueryExecutor.run(plan, on: snap, pageSize: 5_000, found: found)
            #expect(planted.records.map(\.recordID.recordName) == ["p0000", "p0001", "p0002"])
        }
    }

    @Test func nodeCountsKeepOnlyTheNodesThatCounted() {
        var counts = NodeCounts()
        counts.add(3, 4)
        counts.add(1, 0)
        counts.add(3, 2)
        // Node 2 never counted (and node 0 is no node): absent, not 0; node 1 counted nothing.
        #expect(counts.dictionary == [1: 0, 3: 6])
        #expect(NodeCounts([5: 7, 2: 0]).dictionary == [2: 0, 5: 7])
        var page = QueryPage(records: [], next: nil, counts: counts)
        page.actual[4] = 9
        #expect(page.actual == [1: 0, 3: 6, 4: 9])
    }

    @Test func explainShowsActualRowsAfterExecution() throws {
        let q = try query("kind == 'cafe'", sort: [.field("population", ascending: false)])
        let plan = QueryPlanner.plan(q, statistics: snap.statistics, limit: 5)
        let page = try QueryExecutor.run(plan, on: snap, pageSize: 5)
        let text = plan.explain(actual: page.actual)
        #expect(page.records.count == 5)
        #expect(text.contains("actual"), "\(text)")
        for line in text.split(separator: "\n") where line.contains("(est") {
            #expect(line.contains("actual"), "every executed node reports its rows: \(line)")
        }
    }

    @Test func desiredKeysProjectFieldsButKeepSystemFields() throws {
        let q = try query("kind == 'cafe'", sort: [])
        let plan = QueryPlanner.plan(q, statistics: snap.statistics, limit: 3)
        let some = try QueryExecutor.run(plan, on: snap, pageSize: 3, desiredKeys: ["kind"])
        #expect(some.records.allSatisfy { Set($0.fields.keys) == ["kind"] })
        let none = try QueryExecutor.run(plan, on: snap, pageSize: 3, desiredKeys: [])
        #expect(none.records.allSatisfy { $0.fields.isEmpty && $0.recordID.recordName.hasPrefix("p") })
        #expect(none.records.map(\.recordID.recordName) == ["p0000", "p0010", "p0020"])
    }

    @Test func aPlanNeedingAMissingIndexFailsClearly() throws {
        let q = try query("kind == 'cafe'", sort: [])
        let plan = QueryPlanner.plan(q, statistics: snap.statistics, limit: 3)
        let bare = MemorySnapshot(schema: RecordTypeSchema(name: "Place"), records: Self.records)
        #expect(
            throws: ExecutionError(
                message: "the plan needs an ordered index on 'kind', which this snapshot does not have")
        ) {
            try QueryExecutor.run(plan, on: bare, pageSize: 3)
        }
    }
}

@Suite struct ExecutorVisibilityTests {
    @Test func invisibleRecordsAreSkippedInStreamsAndSets() throws {
        let snap = MemorySnapshot(schema: ExecutorBehaviourTests.schema, records: ExecutorBehaviourTests.records)
        let hideOdd: @Sendable (Record) -> Bool = { r in
            guard case .int64(let p)? = r["population"] else { return false }
            return p % 2 == 0
        }
        for sort in [[SortDescriptor.field("population", ascending: true)], []] {
            let q = Query(
                recordType: "Place", predicate: try QueryChecker.check("population < 20").predicate,
                sortDescriptors: sort)
            let plan = QueryPlanner.plan(q, statistics: snap.statistics, limit: 100)
            let page = try QueryExecutor.run(plan, on: snap, pageSize: 100, visible: hideOdd)
            #expect(
                Set(
                    page.records.compactMap { r -> Int64? in if case .int64(let p)? = r["population"] { p } else { nil }
                    })
                    == [0, 2, 4, 6, 8, 10, 12, 14, 16, 18])
        }
    }
}

@Suite struct StreamContinuationTests {
    @Test func nearestPagesContinueTheLiveIteratorAndAgreeWithSeeking() throws {
        let snap = MemorySnapshot(schema: ExecutorBehaviourTests.schema, records: ExecutorBehaviourTests.records)
        let q = Query(
            recordType: "Place", predicate: .all,
            sortDescriptors: [.distance(field: "location", from: Location(latitude: 48.3, longitude: 2.7))])
        let plan = QueryPlanner.plan(q, statistics: snap.statistics, limit: 20)
        var afterLive: OrderKey? = nil
        var afterSeek: OrderKey? = nil
        var live: StreamContinuation? = nil
        for _ in 0..<60 {
            let a = try QueryExecutor.run(plan, on: snap, after: afterLive, pageSize: 20, resume: live)
            let b = try QueryExecutor.run(plan, on: snap, after: afterSeek, pageSize: 20)
            #expect(a.records.map(\.recordID) == b.records.map(\.recordID))
            #expect(a.next == b.next)
            #expect(a.continuation != nil, "a nearest stream with more pages hands over its state")
            live = a.continuation
            afterLive = a.next
            afterSeek = b.next
        }
    }

    /// A sorted set plan (equality rows, then the first keys by sort value and id) over rows
    /// whose later rows have earlier ids and tie on the sort value: a row level with the heap's
    /// largest key must still be compared by id, in every page size.
    @Test func sortedSetPagesOrderTiesByIDWhenLaterRowsHaveEarlierIDs() throws {
        let records: [Record] = (0..<12_000).map { i in
            var fields: RecordFields = [:]
            fields["population"] = .int64(Int64(i / 600 % 2))
            fields["kind"] = .string(i % 600 == 0 ? "cafe" : "shop")
            return Record(
                recordType: "Place", recordID: RecordID(recordName: "p\(10_000 - i)"), fields: fields)
        }
        let schema = ExecutorBehaviourTests.schema
        let snap = MemorySnapshot(schema: schema, records: records)
        let q = Query(
            recordType: "Place", predicate: try QueryChecker.check("kind == 'cafe'").predicate,
            sortDescriptors: [.field("population", ascending: true)])
        let expected = FullScan.results(q, records: records, schema: schema, zone: nil).map(\.recordName)
        #expect(expected.count == 20)
        for size in [1, 2, 7, 40] {
            let plan = QueryPlanner.plan(q, statistics: snap.statistics, limit: size)
            guard case .topK = plan.root.op else {
                Issue.record("expected a sorted set plan, got:\n\(plan.explain())")
                return
            }
            var got: [String] = []
            var after: OrderKey? = nil
            while got.count <= expected.count {
                let page = try QueryExecutor.run(
                    QueryPlanner.plan(q, statistics: snap.statistics, limit: size), on: snap, after: after,
                    pageSize: size)
                got += page.records.map(\.recordID.recordName)
                guard let next = page.next else { break }
                after = next
            }
            #expect(got == expected, "page size \(size)")
        }
    }

    @Test func setPlansHaveNoContinuation() throws {
        let snap = MemorySnapshot(schema: ExecutorBehaviourTests.schema, records: ExecutorBehaviourTests.records)
        let q = Query(recordType: "Place", predicate: try QueryChecker.check("kind == 'cafe'").predicate)
        let page = try QueryExecutor.run(
            QueryPlanner.plan(q, statistics: snap.statistics, limit: 5), on: snap, pageSize: 5)
        #expect(page.next != nil)
        #expect(page.continuation == nil)
    }
}

/// A snapshot that logs the prefetch hints it gets and the records read, in order.
final class PrefetchLog: @unchecked Sendable {
    enum Event: Equatable {
        case place(RowID)
        case bytes(RowID)
        case values(RowID)
        case read(RowID)
    }
    var events: [Event] = []
}

struct LoggingSnapshot: QuerySnapshot {
    let base: MemorySnapshot
    let log: PrefetchLog
    var indexes: RecordIndexes { base.indexes }
    var typeSchema: RecordTypeSchema? { base.typeSchema }
    func record(_ row: RowID, inResultOf resultRows: Int) -> Record? {
        log.events.append(.read(row))
        return base.record(row)
    }
    func allRows() -> [RowID] { base.allRows() }
    func valueReader(_ selection: FieldSelection) -> any RowValueReader {
        LoggingValues(base: RecordValueReader(self, selection), log: log)
    }
}

/// Values read from the logging snapshot's records, their prefetches logged.
struct LoggingValues: RowValueReader {
    let base: RecordValueReader<LoggingSnapshot>
    let log: PrefetchLog
    func values(_ row: RowID, into out: inout [FieldValue?]) -> Bool { base.values(row, into: &out) }
    func prefetch(_ rows: ArraySlice<RowID>) { log.events += rows.map { .values($0) } }
}

@Suite struct PrefetchTests {
    /// Every row is read once, in order, with its position.
    @Test func forEachRecordReadsInOrder() {
        let snap = MemorySnapshot(schema: ExecutorBehaviourTests.schema, records: ExecutorBehaviourTests.records)
        for n in [0, 1, 17, 100] {
            let rows = (0..<n).map { RowID($0 * 13 % 2_000) }
            var seen: [(Int, RecordID)] = []
            snap.forEachRecord(rows, inResultOf: n) { k, r in seen.append((k, r.recordID)) }
            #expect(seen.map(\.0) == Array(0..<n))
            #expect(seen.map(\.1) == rows.map { snap.record($0)!.recordID })
        }
    }

    /// A reader of rows in mapped memory that follows ``ReadAhead``'s schedule asks for each
    /// row's place before reading it, and from the 17th row on for its bytes too, at least 8
    /// reads after its place and at least 8 reads before it reads the row — whatever the
    /// page's length.
    @Test func readAheadAsksForPlacesThenBytesAhead() {
        for n in [0, 1, 7, 8, 9, 16, 17, 23, 24, 25, 100] {
            let log = PrefetchLog()
            let rows = (0..<n).map { RowID($0 * 13 % 2_000) }
            for k in 0..<n {
                ReadAhead.schedule(at: k, of: n) { range, payload in
                    log.events += rows[range].map { payload ? .bytes($0) : .place($0) }
                }
                log.events.append(.read(rows[k]))
            }
            var readsSoFar = 0
            var placeAt: [RowID: Int] = [:]
            var bytesAt: [RowID: Int] = [:]
            var readAt: [RowID: Int] = [:]
            for e in log.events {
                switch e {
                case .place(let r): placeAt[r] = placeAt[r] ?? readsSoFar
                case .bytes(let r):
                    #expect(placeAt[r] != nil, "bytes of row \(r) asked for before its place")
                    bytesAt[r] = bytesAt[r] ?? readsSoFar
                case .read(let r):
                    readAt[r] = readsSoFar
                    readsSoFar += 1
                case .values(let r): Issue.record("values of row \(r) asked for by a record read")
                }
            }
            #expect(readsSoFar == n)
            for (k, r) in rows.enumerated() {
                #expect(placeAt[r] != nil, "row \(k) of \(n): no place hint")
                if k >= 16 {
                    #expect(bytesAt[r] != nil, "row \(k) of \(n): no bytes hint")
                    if let b = bytesAt[r], let p = placeAt[r], let read = readAt[r] {
                        #expect(read - b >= 8 && b - p >= 8, "row \(k) of \(n): place \(p), bytes \(b), read \(read)")
                    }
                } else {
                    #expect(bytesAt[r] == nil, "row \(k) of \(n): bytes asked for before its place could load")
                }
            }
        }
    }

    /// A residual filter reads each candidate's values after asking for them: every candidate
    /// of the set is hinted once, before its first read, and the results match the oracle's.
    @Test func residualFiltersAskForEachCandidatesValuesFirst() throws {
        let schema = RecordTypeSchema(
            name: "Place",
            fields: [
                FieldSchema(name: "population", type: .int64, options: [.queryable, .sortable]),
                FieldSchema(name: "kind", type: .string, options: []),
            ])
        let snap = MemorySnapshot(schema: schema, records: ExecutorBehaviourTests.records)
        let log = PrefetchLog()
        let logging = LoggingSnapshot(base: snap, log: log)
        let checked = try QueryChecker.check("population < 300 AND kind == 'cafe'", context: CheckContext())
        let q = Query(recordType: "Place", predicate: checked.predicate, sortDescriptors: [])
        let plan = QueryPlanner.plan(q, statistics: logging.statistics, limit: nil)
        #expect(plan.residualFilters.map(\.fieldName) == ["kind"])
        let page = try QueryExecutor.run(plan, on: logging, pageSize: 2_000)
        let expected = ExecutorBehaviourTests.records.filter { r in
            if case .int64(let p)? = r["population"], case .string(let k)? = r["kind"] {
                p < 300 && k == "cafe"
            } else {
                false
            }
        }
        #expect(page.records.map(\.recordID) == expected.map(\.recordID).sorted())
        var hinted = Set<RowID>()
        var hints = 0
        for e in log.events {
            switch e {
            case .values(let r):
                hinted.insert(r)
                hints += 1
            case .read(let r) where !hinted.contains(r):
                // Only the page's records are read without a values hint, after the filter.
                #expect(page.records.contains { $0.recordID == snap.record(r)?.recordID }, "row \(r) read unhinted")
            default: break
            }
        }
        #expect(hints == 300 && hinted.count == 300)
    }
}
