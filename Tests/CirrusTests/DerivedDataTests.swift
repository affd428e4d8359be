// Derived data is never load-bearing (docs/storage-format.md, "Damage and repair"): an index
// segment or section, or a row hash table, that fails its checks at open is rebuilt from the rows,
// with a warning naming the file and offset (open report and logger); queries answer as before; a
// read-only open writes nothing; the next checkpoint writes sound files and moves the damaged one
// into `damaged/` instead of deleting it.

import CirrusTestSupport
import RecordLog
import RecordModel
import Testing

@testable import CirrusEmbedded
@testable import CirrusFacade

@Suite struct DerivedDataTests {
    static let storeDir = "/c/development"
    static let table = TableKey(owner: ZoneID.defaultOwnerName, recordType: "Place")

    func place(_ i: Int) -> Record {
        rec(
            "p\(i)", "Place",
            [
                "n": .int64(Int64(i % 13)), "name": .string("place \(i) harbour"),
                "loc": .location(Location(latitude: 48 + Double(i % 20) / 100, longitude: 2 + Double(i % 7) / 100)),
            ])
    }

    /// 200 places saved and checkpointed into one layer, the container closed.
    func checkpointed(_ env: TestEnv) async throws {
        let c = try env.open()
        _ = try await c.publicDatabase(as: .user("_u")).modifyRecords(saving: (0..<200).map(place), deleting: [])
        try c.checkpoint()
        try c.close()
    }

    func manifest(_ env: TestEnv) throws -> Manifest {
        try Manifest.decode(try #require(env.fs.contents(Self.storeDir + "/CURRENT"))).get()
    }

    func indexSegment(_ env: TestEnv) throws -> String {
        let files = try #require(try manifest(env).checkpoint?.tables[Self.table]?.last)
        return Self.storeDir + "/" + DataSegmentFormat.fileName(try #require(files.indexes))
    }

    func rowsSegment(_ env: TestEnv) throws -> String {
        let files = try #require(try manifest(env).checkpoint?.tables[Self.table]?.last)
        return Self.storeDir + "/" + DataSegmentFormat.fileName(files.rows)
    }

    /// What the queries that use each index return, and every record fetched by id.
    func answers(_ c: Container) async throws -> [String] {
        let db = c.publicDatabase(as: .user("_u"))
        var out: [String] = []
        for (predicate, args) in [
            ("n == %@", [PredicateArgument.value(.int64(3))]),
            ("n > %@", [.value(.int64(10))]),
            ("self CONTAINS 'harbour'", []),
            (
                "distanceToLocation:fromLocation:(loc, %@) < 3",
                [.value(.location(Location(latitude: 48.05, longitude: 2.03)))]
            ),
        ] {
            let q = RecordQuery(recordType: "Place", predicate: predicate, arguments: args)
            out.append(predicate + ": " + (try await allPageNames(db, q, limit: 500)).sorted().joined(separator: ","))
        }
        for i in 0..<200 {
            let r = try await db.record(for: RecordID(recordName: "p\(i)"))
            out.append("\(i): \(r.fields == place(i).fields)")
        }
        return out
    }

    /// Every file of the store with its bytes.
    func snapshot(_ env: TestEnv) throws -> [String: [UInt8]] {
        var out: [String: [UInt8]] = [:]
        for name in try env.fs.list(Self.storeDir) {
            if let b = env.fs.contents(Self.storeDir + "/" + name) { out[name] = b }
        }
        return out
    }

    /// The issue's report: an index segment that lost its last 7 bytes locked every record away.
    @Test func anIndexSegmentMissingItsTailIsRebuiltFromTheRows() async throws {
        let env = TestEnv()
        try await checkpointed(env)
        let expected = try await answers(try env.open())
        let damaged = try indexSegment(env)
        let size = try env.fs.size(damaged)
        env.fs.damageTruncate(damaged, to: size - 7)

        // Read-only: rebuilt in memory, the same answers, nothing written. The index segment is
        // opened with the indexes, at their first use: a fetch by id does not find the damage.
        let before = try snapshot(env)
        let log = LogCollector()
        var ro = env.options(readOnly: true)
        ro.logger = log.logger()
        let r = try Container.open(at: env.dir, options: ro)
        #expect(r.openReport.warnings.isEmpty)
        let p7 = try await r.publicDatabase(as: .user("_u")).record(for: RecordID(recordName: "p7"))
        #expect(p7.fields == place(7).fields)
        #expect(r.openReport.warnings.isEmpty)
        #expect(try await answers(r) == expected)
        let warnings = r.openReport.warnings
        #expect(warnings.count == 1)
        #expect(warnings.first?.path == damaged && warnings.first?.offset == size - 7 - 8)
        #expect(warnings.first?.reason.contains("footer") == true)
        #expect(warnings.first?.consequence.contains("rebuilt") == true)
        #expect(log.messages.contains { $0.level == .warning && $0.message.contains(damaged) })
        #expect(try snapshot(env) == before)

        // Indexes made at open: the segment is opened, and its damage reported, by the open.
        var eager = env.options(readOnly: true)
        eager.indexesOnFirstUse = false
        let e = try Container.open(at: env.dir, options: eager)
        #expect(e.openReport.warnings.map(\.description) == warnings.map(\.description))
        #expect(try await answers(e) == expected)
        #expect(e.openReport.warnings.count == 1)
        #expect(try snapshot(env) == before)

        // Writable: the same; closing checkpoints the table with a sound index segment and moves
        // the damaged one aside.
        let w = try env.open()
        #expect(try await answers(w) == expected)
        try w.close()
        #expect(try indexSegment(env) != damaged)
        #expect(!env.fs.exists(damaged))
        let kept = try env.fs.list(Self.storeDir + "/damaged")
        #expect(kept.count == 1)
        let folder = Self.storeDir + "/damaged/" + (kept.first ?? "")
        #expect(env.fs.contents(folder + "/" + (damaged.split(separator: "/").last.map(String.init) ?? "")) != nil)
        let report = String(decoding: env.fs.contents(folder + "/REPORT.txt") ?? [], as: UTF8.self)
        #expect(report.contains("footer"))

        let again = try env.open()
        #expect(again.openReport.isClean)
        #expect(try await answers(again) == expected)
        try again.checkInvariants()
        #expect(try RecordStore.verify(directory: Self.storeDir, fileSystem: env.fs).isDamaged == false)
    }

    /// A byte of an index section's header flipped: the segment opens (its footer and directory
    /// are sound), the section fails its structure check, and the index is rebuilt from the rows
    /// — the warning names the index segment and the section's offset.
    @Test func anIndexSectionFailingItsCheckIsRebuiltFromTheRows() async throws {
        let env = TestEnv()
        try await checkpointed(env)
        let expected = try await answers(try env.open())
        let path = try indexSegment(env)
        let seg = try DataSegment.open(path, fileSystem: env.fs)
        let section = try #require(seg.sections.first { $0.name.hasPrefix("spatial:") })
        env.fs.flipBit(path, atByte: section.offset + 3)

        // Read-only, indexes at first use (the default): nothing is found until a query uses the
        // table's indexes; a fetch by id does not.
        let c = try Container.open(at: env.dir, options: env.options(readOnly: true))
        #expect(c.openReport.warnings.isEmpty)
        let db = c.publicDatabase(as: .user("_u"))
        #expect(try await db.record(for: RecordID(recordName: "p7")).fields == place(7).fields)
        #expect(c.openReport.warnings.isEmpty)
        #expect(try await answers(c) == expected)
        let w = try #require(c.openReport.warnings.first)
        #expect(c.openReport.warnings.count == 1)
        #expect(w.path == path && w.offset == section.offset && w.reason.contains(section.name))

        // Indexes mapped at open: found there.
        var eager = env.options(readOnly: true)
        eager.indexesOnFirstUse = false
        let e = try Container.open(at: env.dir, options: eager)
        #expect(e.openReport.warnings.map(\.description) == [w.description])
        #expect(try await answers(e) == expected)
        #expect(e.openReport.warnings.count == 1)
    }

    /// A read-only open maps no index section until a query needs the table's indexes: fetches
    /// by id leave them unmade; the first query makes them (once, whichever of several concurrent
    /// queries comes first) and answers as a writable open does.
    @Test func readOnlyIndexesAreMadeAtFirstUse() async throws {
        let env = TestEnv()
        try await checkpointed(env)
        let expected = try await answers(try env.open())
        let c = try Container.open(at: env.dir, options: env.options(readOnly: true))
        let core = try #require(c.embedded)
        func made() -> [Bool] {
            core.stateLock.withLock { core.tables }.values.compactMap { $0["Place"]?.parts.indexes.isMade }
        }
        #expect(!made().isEmpty && made().allSatisfy { !$0 })
        let db = c.publicDatabase(as: .user("_u"))
        for i in [0, 99, 199] {
            #expect(try await db.record(for: RecordID(recordName: "p\(i)")).fields == place(i).fields)
        }
        #expect(made().allSatisfy { !$0 })
        let q = RecordQuery(recordType: "Place", predicate: "n == %@", arguments: [.value(.int64(5))])
        let counts = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<8 { group.addTask { try await allPageNames(db, q, limit: 500).count } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(counts == Array(repeating: (0..<200).filter { $0 % 13 == 5 }.count, count: 8))
        #expect(made().allSatisfy { $0 })
        #expect(try await answers(c) == expected)
        try c.checkInvariants()
        #expect(c.openReport.isClean)
    }

    /// A bit flipped at `offset` of a rows segment's section `name`: a read-only open answers as
    /// before and warns naming the file, the section and `consequence`; `verify` finds the damage.
    func damagedRowsSection(_ name: String, byte offset: Int, bit: Int, consequence: String) async throws {
        let env = TestEnv()
        try await checkpointed(env)
        let expected = try await answers(try env.open())
        let path = try rowsSegment(env)
        let seg = try DataSegment.open(path, fileSystem: env.fs)
        let section = try #require(seg.sections.first { $0.name == name })
        env.fs.flipBit(path, atByte: section.offset + offset, bit: bit)

        let c = try Container.open(at: env.dir, options: env.options(readOnly: true))
        #expect(try await answers(c) == expected)
        let w = try #require(c.openReport.warnings.first)
        #expect(w.path == path && w.reason.contains(name) && w.consequence.contains(consequence))
        #expect(try RecordStore.verify(directory: Self.storeDir, fileSystem: env.fs).isDamaged)
    }

    /// A rows segment's `rowhash` section that does not fit the rows (its slot count changed):
    /// fetches by id binary-search instead. The block CRC fails too, which `verify` reports, but
    /// the open reads only the header.
    @Test func aDamagedRowHashIsNotUsedAndReported() async throws {
        try await damagedRowsSection("rowhash", byte: 8, bit: 6, consequence: "binary-search")
    }

    /// A rows segment's `rowsums` section that does not fit the rows (its row count changed):
    /// returned rows are walked instead.
    @Test func aDamagedRowSumsIsNotUsedAndReported() async throws {
        try await damagedRowsSection("rowsums", byte: 8, bit: 6, consequence: "walking")
    }

    /// A rows segment's `rownames` section that does not parse (its name count changed): the
    /// rows are sampled for the name table instead.
    @Test func aDamagedRowNamesIsNotUsedAndReported() async throws {
        try await damagedRowsSection("rownames", byte: 9, bit: 7, consequence: "sample")
    }
}
