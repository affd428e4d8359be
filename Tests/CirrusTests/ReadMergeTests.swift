// Read-triggered merges (ReadMerge.swift): a table whose queries have spent the budget on its
// extra layers ends in one layer — in the background or not — answering every query as before;
// the charges follow the model; nothing merges without a budget, read-only, or for a meter a
// checkpoint has replaced.

import CirrusTestSupport
import RecordLog
import RecordModel
import Testing

@testable import CirrusEmbedded
@testable import CirrusFacade

@Suite struct ReadMergeTests {
    func place(_ i: Int, v: Int = 0) -> Record {
        rec(
            "p\(i)", "Place",
            [
                "n": .int64(Int64((i + v) % 11)), "name": .string("place \(i) word\(i % 7)"),
                "loc": .location(Location(latitude: Double(i % 50), longitude: Double((i * 7) % 90))),
            ])
    }

    /// A container whose places are in three or more layers (checkpoints of shrinking batches,
    /// with deletions and updates), no automatic checkpoints.
    func layered(_ env: inout TestEnv) async throws -> (Container, Database) {
        env.checkpointThreshold = 1_000_000
        let c = try env.open()
        let db = c.publicDatabase(as: .user("_u"))
        _ = try await db.modifyRecords(saving: (0..<200).map { place($0) }, deleting: [], savePolicy: .allKeys)
        try c.checkpoint()
        for (round, size) in [60, 20, 6].enumerated() {
            _ = try await db.modifyRecords(
                saving: (0..<size).map { place($0 * 3 + round, v: round + 1) } + [place(300 + round)],
                deleting: [RecordID(recordName: "p\(150 + round)")], savePolicy: .allKeys)
            try c.checkpoint()
        }
        return (c, db)
    }

    /// `layered`, then closed and opened again with `budget` (charges start at the open).
    func layeredReopened(_ env: inout TestEnv, budget: Double?) async throws -> (Container, Database) {
        let (c, _) = try await layered(&env)
        try c.close()
        env.readMergeBudget = budget
        let reopened = try env.open()
        return (reopened, reopened.publicDatabase(as: .user("_u")))
    }

    /// The meter of the Place table (nil: one layer or no budget).
    func placeMeter(_ c: Container) -> ReadMergeMeter? {
        c.embedded!.stateLock.withLock { c.embedded!.tables.values.compactMap { $0["Place"] }.first }?.mergeMeter
    }

    func layerCount(_ c: Container) -> Int {
        c.embedded!.store.snapshot().base.values.map(\.layers.count).max() ?? 0
    }

    var queries: [RecordQuery] {
        let here = Location(latitude: 10, longitude: 20)
        return [
            RecordQuery(recordType: "Place", predicate: "n == 3"),
            RecordQuery(recordType: "Place", predicate: "n >= 4", sortDescriptors: [.field("n", ascending: false)]),
            RecordQuery(recordType: "Place", predicate: "name BEGINSWITH 'place 1'"),
            RecordQuery(recordType: "Place", predicate: "self CONTAINS 'word3'"),
            RecordQuery(
                recordType: "Place", predicate: "distanceToLocation:fromLocation:(loc, $here) < 3000",
                variables: ["here": .value(.location(here))]),
            RecordQuery(
                recordType: "Place", predicate: "TRUEPREDICATE", sortDescriptors: [.distance(field: "loc", from: here)]),
        ]
    }

    func answers(_ db: Database) async throws -> [[String]] {
        var out: [[String]] = []
        for q in queries { out.append(try await allPageNames(db, q, limit: 9)) }
        return out
    }

    @Test(arguments: [false, true])
    func aReadTableIsMergedIntoOneLayerAndAnswersAsBefore(background: Bool) async throws {
        var env = TestEnv()
        env.backgroundCheckpoints = background
        var (c, db) = try await layered(&env)
        #expect(layerCount(c) >= 3)
        let before = try await answers(db)
        #expect(before.allSatisfy { !$0.isEmpty })
        try c.close()

        // Budget 0: the first query of the layered table merges it.
        env.readMergeBudget = 0
        c = try env.open()
        db = c.publicDatabase(as: .user("_u"))
        #expect(layerCount(c) >= 3)
        let placeLayers = layerCount(c)
        let total = c.statistics().tableLayers
        #expect(total >= placeLayers && c.statistics().readMerges == 0)
        _ = try await db.records(matching: queries[0])
        c.embedded!.waitForCheckpoints()
        #expect(layerCount(c) == 1)
        #expect(c.statistics().tableLayers == total - placeLayers + 1)
        #expect(c.statistics().readMerges == 1)
        #expect(try await answers(db) == before)
        try c.checkInvariants()
        // Commits go on over the merged table, and the merge survives reopening.
        _ = try await db.modifyRecords(
            saving: [place(5, v: 9)], deleting: [RecordID(recordName: "p300")], savePolicy: .allKeys)
        try c.close()
        c = try env.open()
        db = c.publicDatabase(as: .user("_u"))
        #expect(layerCount(c) == 1)
        #expect(
            c.embedded!.stateLock.withLock { c.embedded!.tables.values.flatMap(\.values) }.allSatisfy {
                $0.mergeMeter == nil
            })
        let names = try await allPageNames(db, RecordQuery(recordType: "Place"), limit: 50)
        #expect(!names.contains("p300") && names.contains("p5"))
        try c.checkInvariants()
        try c.close()
    }

    @Test func aFetchByIDIsChargedToo() async throws {
        var env = TestEnv()
        env.backgroundCheckpoints = false
        let (c, db) = try await layeredReopened(&env, budget: 0)
        #expect(layerCount(c) >= 3)
        let r = try await db.record(for: RecordID(recordName: "p7"))
        #expect(r["n"] == .int64(9))  // place(7, v: 2), saved in the second round
        #expect(layerCount(c) == 1)
        #expect(try await db.record(for: RecordID(recordName: "p7"))["n"] == .int64(9))
        try c.close()
    }

    @Test func nothingMergesWithoutABudgetOrReadOnly() async throws {
        var env = TestEnv()
        var (c, db) = try await layered(&env)
        let layers = layerCount(c)
        _ = try await answers(db)
        c.embedded!.waitForCheckpoints()
        #expect(layerCount(c) == layers)  // readMergeBudget nil
        try c.close()
        env.readMergeBudget = 0
        c = try Container.open(at: env.dir, options: env.options(readOnly: true))
        db = c.publicDatabase(as: .user("_u"))
        #expect(placeMeter(c) == nil)  // read-only: no charges at all
        _ = try await answers(db)
        c.embedded!.waitForCheckpoints()
        #expect(layerCount(c) == layers)
        try c.close()
    }

    @Test func aBudgetIsSpentBeforeTheMerge() async throws {
        var env = TestEnv()
        env.backgroundCheckpoints = false
        // A budget of many queries' charges (a debug query costs far less than 2.3 ms): the merge waits.
        let (c, db) = try await layeredReopened(&env, budget: 0.5)
        let meter = try #require(placeMeter(c))
        #expect(meter.budget > 0)
        var queriesRun = 0
        while layerCount(c) > 1 && queriesRun < 10_000 {
            try #require(meter.total < meter.budget, "merged late, after \(queriesRun) queries")
            _ = try await db.records(matching: queries[queriesRun % queries.count])
            queriesRun += 1
        }
        #expect(queriesRun > 1, "merged before the budget was spent")
        #expect(layerCount(c) == 1)
        #expect(meter.total >= meter.budget)
        try c.close()
    }

    /// Readers on several threads reach the budget together while a writer commits: one merge
    /// starts, in the background, beside the commits; nothing is lost, before or after reopening.
    @Test func aMergeStartedByReadersGoesOnBesideCommits() async throws {
        var env = TestEnv()
        let (opened, shared) = try await layeredReopened(&env, budget: 0.02)  // ~0.1 ms of charges: a few queries
        var c = opened
        #expect(layerCount(c) >= 3)
        let writes = 30
        async let writer: Void = {
            for w in 0..<writes {
                _ = try await shared.modifyRecords(
                    saving: [place(1000 + w), place(w * 5, v: 40 + w)], deleting: [], savePolicy: .allKeys
                ).get()
            }
        }()
        let readers = (0..<3).map { k in
            Task.detached { () -> Int in
                var rows = 0
                for i in 0..<60 {
                    let q = RecordQuery(
                        recordType: "Place", predicate: "n == %@", arguments: [.value(.int64(Int64((i + k) % 11)))])
                    rows += (try? await shared.records(matching: q, resultsLimit: 500).matchResults.count) ?? -1_000_000
                }
                return rows
            }
        }
        try await writer
        for r in readers { #expect(await r.value > 0) }
        c.embedded!.waitForCheckpoints()
        #expect(c.statistics().readMerges == 1)
        #expect(layerCount(c) == 1)
        // Every record the writer saved is there, with its last version, and so are the rest.
        func check(_ db: Database) async throws {
            for w in 0..<writes {
                #expect(try await db.record(for: RecordID(recordName: "p\(1000 + w)"))["n"] == place(1000 + w)["n"])
                #expect(
                    try await db.record(for: RecordID(recordName: "p\(w * 5)"))["n"] == place(w * 5, v: 40 + w)["n"])
            }
            // `layered` leaves 200 places (three added, three deleted); the writer added `writes`.
            #expect(try await allPageNames(db, RecordQuery(recordType: "Place"), limit: 100).count == 200 + writes)
        }
        try await check(shared)
        try c.checkInvariants()
        try c.close()
        c = try env.open()
        try await check(c.publicDatabase(as: .user("_u")))
        try c.checkInvariants()
        try c.close()
    }

    @Test func theChargeModel() throws {
        let key = TableKey(owner: "_", recordType: "T")
        #expect(ReadMergeMeter(key: key, layers: 1, rows: 100, factor: 1) == nil)
        #expect(ReadMergeMeter(key: key, layers: 3, rows: 100, factor: nil) == nil)
        #expect(ReadMergeMeter(key: key, layers: 3, rows: 100, factor: -1) == nil)
        #expect(ReadMergeMeter.charge(elapsedNanoseconds: 1_000, layers: 2) == 100)
        #expect(ReadMergeMeter.charge(elapsedNanoseconds: 1_000, layers: 4) == 300)
        #expect(ReadMergeMeter.charge(elapsedNanoseconds: 1_000, layers: 12) == 500)
        let m = try #require(ReadMergeMeter(key: key, layers: 4, rows: 1, factor: 0.5))
        #expect(m.budget == 8_000)
        #expect(!m.charge(elapsedNanoseconds: 20_000))  // 6 000
        #expect(m.charge(elapsedNanoseconds: 10_000))  // 9 000
        #expect(m.start())
        #expect(!m.start())
        #expect(!m.charge(elapsedNanoseconds: 10_000))  // started: no second request
        #expect(m.total == 12_000)
    }

    @Test func aMeterReplacedByACheckpointStartsNothing() async throws {
        var env = TestEnv()
        env.backgroundCheckpoints = false
        let (c, db) = try await layeredReopened(&env, budget: 1e9)  // never reached by the queries
        let old = try #require(placeMeter(c))
        _ = try await answers(db)
        #expect(old.total > 0)
        // A checkpoint that changes the table makes a new table over new layers: charges start over.
        _ = try await db.modifyRecords(saving: [place(7, v: 3)], deleting: [], savePolicy: .allKeys)
        try c.checkpoint()
        let layers = layerCount(c)
        let new = try #require(placeMeter(c))
        #expect(new !== old && new.total == 0)
        c.embedded!.startReadMerge(old)
        #expect(layerCount(c) == layers)
        c.embedded!.startReadMerge(new)
        #expect(layerCount(c) == 1)
        try c.close()
    }
}
