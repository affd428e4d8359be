// Records: system fields, save policies, deleteSelf cascades (cycles, zones, the 750 limit),
// assets (content-addressed, removed when unreferenced, outside the 1 MB limit), public grants.

import CirrusTestSupport
import RecordLog
import RecordModel
import Testing

@testable import CirrusEmbedded
@testable import CirrusFacade

private let alice = "_alice"
private let bob = "_bob"

private func ref(_ name: String, zone: ZoneID = .default) -> FieldValue {
    .reference(Reference(recordID: RecordID(recordName: name, zoneID: zone), action: .deleteSelf))
}

@Suite struct RecordBehaviourTests {
    @Test func systemFieldsComeFromTheStoreAndTheInjectedClock() async throws {
        let env = TestEnv()
        let c = try env.open()
        let db = c.publicDatabase(as: .user(alice))
        var r = rec("a", ["n": 1])
        r.creationDate = Timestamp(millisecondsSince1970: 5)  // ignored
        let v1 = try await db.save(r)
        #expect(v1.creationDate?.millisecondsSince1970 == env.clock.wallMilliseconds())
        #expect(v1.creatorUserRecordID?.recordName == alice)
        env.clock.advance(5000)
        try c.importSchema(
            "DEFINE SCHEMA RECORD TYPE Note (n INT64 QUERYABLE SORTABLE, GRANT WRITE TO \"_icloud\", GRANT CREATE TO \"_icloud\", GRANT READ TO \"_world\");"
        )
        var edit = v1
        edit["n"] = 2
        let v2 = try await c.publicDatabase(as: .user(bob)).save(edit)
        #expect(v2.creationDate == v1.creationDate)
        #expect(v2.modificationDate?.millisecondsSince1970 == env.clock.wallMilliseconds())
        #expect(v2.creatorUserRecordID?.recordName == alice)
        #expect(v2.lastModifiedUserRecordID?.recordName == bob)
        #expect(v2.recordChangeTag != v1.recordChangeTag)
    }

    @Test func changedKeysMergesAndAllKeysReplaces() async throws {
        let c = try TestEnv().open()
        let db = c.privateDatabase(for: alice)
        try await db.save(rec("a", ["x": 1, "y": 2]))
        let merged = try await db.save(rec("a", ["y": 3]), savePolicy: .changedKeys)
        #expect(merged.fields == ["x": 1, "y": 3])
        let replaced = try await db.save(rec("a", ["y": 4]), savePolicy: .allKeys)
        #expect(replaced.fields == ["y": 4])
    }

    @Test func deleteSelfCascadesWithinTheZoneAndCyclesTerminate() async throws {
        let c = try TestEnv().open()
        let db = c.privateDatabase(for: alice)
        try await db.save(rec("root"))
        try await db.save(rec("child", ["parent": ref("root")]))
        try await db.save(rec("grandchild", ["parent": ref("child")]))
        try await db.save(rec("plain", ["other": .reference(Reference(recordID: rid("root")))]))  // action none
        // A cycle: a → b → a.
        try await db.save(rec("a"))
        try await db.save(rec("b", ["p": ref("a")]))
        var a = try await db.record(for: rid("a"))
        a["p"] = ref("b")
        try await db.save(a)
        // A self reference.
        try await db.save(rec("selfish", ["p": ref("selfish")]))
        try await db.deleteRecord(withID: rid("root"))
        for gone in ["root", "child", "grandchild"] {
            #expect(await code { try await db.record(for: rid(gone)) } == .unknownItem)
        }
        #expect(try await db.record(for: rid("plain")).recordID.recordName == "plain")
        try await db.deleteRecord(withID: rid("a"))
        #expect(await code { try await db.record(for: rid("b")) } == .unknownItem)
        try await db.deleteRecord(withID: rid("selfish"))
        #expect(db.querySnapshot(recordType: "Note")!.rowCount == 1)
        try c.checkInvariants()
    }

    @Test func atMost750CascadingReferencesToOneRecord() async throws {
        let c = try TestEnv().open()
        let db = c.privateDatabase(for: alice)
        try await db.save(rec("target"))
        for start in stride(from: 0, to: 750, by: 375) {
            let batch = (start..<start + 375).map { rec("r\($0)", ["p": ref("target")]) }
            _ = try await db.modifyRecords(saving: batch, deleting: []).get()
        }
        #expect(await code { try await db.save(rec("one-too-many", ["p": ref("target")])) } == .limitExceeded)
        // Re-saving an existing referrer does not count twice.
        var r0 = try await db.record(for: rid("r0"))
        r0["n"] = 1
        try await db.save(r0)
        try await db.deleteRecord(withID: rid("target"))
        #expect(db.querySnapshot(recordType: "Note")!.rowCount == 0)
    }

    @Test func assetsAreContentAddressedAndRemovedWhenUnreferenced() async throws {
        let env = TestEnv()
        var c = try env.open()
        let db = c.privateDatabase(for: alice)
        let big = [UInt8](repeating: 7, count: 1_100_000)  // more than the 1 MB record limit
        let asset = try await db.storeAsset(big)
        #expect(try await db.storeAsset(big) == asset)  // same content, same file
        try await db.save(rec("a", ["file": .asset(asset)]))
        try await db.save(rec("b", ["file": .asset(asset)]))
        let path = "/c/development/assets/\(asset.contentHash.prefix(2))/\(asset.contentHash)"
        #expect(env.fs.exists(path))
        #expect(try await db.assetData(asset, of: rid("a")) == big)
        try await db.deleteRecord(withID: rid("a"))
        try c.sync()
        #expect(env.fs.exists(path))  // b still refers to it
        try await db.deleteRecord(withID: rid("b"))
        try c.sync()
        #expect(!env.fs.exists(path))
        // An asset stored but never saved in a record is removed at the next open.
        let orphan = try await db.storeAsset([1, 2, 3])
        try c.close()
        c = try env.open()
        #expect(!env.fs.exists("/c/development/assets/\(orphan.contentHash.prefix(2))/\(orphan.contentHash)"))
        // A record naming an asset that was never stored is refused.
        #expect(
            await code { try await c.privateDatabase(for: alice).save(rec("x", ["file": .asset(orphan)])) }
                == .invalidArguments)
    }

    @Test func publicGrantsDefaultsAndOverrides() async throws {
        let c = try TestEnv().open()
        let aliceDB = c.publicDatabase(as: .user(alice))
        let bobDB = c.publicDatabase(as: .user(bob))
        try await aliceDB.save(rec("a", "Post", ["n": 1]))
        // Defaults: the world reads, signed-in users create, the creator writes.
        #expect(try await c.publicDatabase.record(for: rid("a"))["n"] == 1)
        try c.publicDatabase.checkCanRead(recordType: "Post")
        try await bobDB.save(rec("b", "Post"))
        #expect(await code { try await bobDB.deleteRecord(withID: rid("a")) } == .permissionFailure)
        // Override: only signed-in users read Secret; only the creator reads Diary; nobody creates Locked.
        try c.importSchema(
            """
            DEFINE SCHEMA
            RECORD TYPE Post (n INT64, GRANT WRITE TO "_creator", GRANT CREATE TO "_icloud", GRANT READ TO "_world");
            RECORD TYPE Secret (n INT64, GRANT WRITE TO "_creator", GRANT CREATE TO "_icloud", GRANT READ TO "_icloud");
            RECORD TYPE Diary (n INT64, GRANT READ, WRITE TO "_creator", GRANT CREATE TO "_icloud");
            RECORD TYPE Locked (n INT64, GRANT READ TO "_world");
            """)
        try await aliceDB.save(rec("s", "Secret", ["n": 1]))
        #expect(await code { try await c.publicDatabase.record(for: rid("s")) } == .notAuthenticated)
        #expect(await code { try c.publicDatabase.checkCanRead(recordType: "Secret") } == .notAuthenticated)
        #expect(try await bobDB.record(for: rid("s"))["n"] == 1)
        try await aliceDB.save(rec("d", "Diary", ["n": 1]))
        #expect(await code { try await bobDB.record(for: rid("d")) } == .permissionFailure)
        #expect(try await aliceDB.record(for: rid("d"))["n"] == 1)
        #expect(await code { try await aliceDB.save(rec("l", "Locked")) } == .permissionFailure)
    }

    @Test func fetchChangesInPagesWithANewTokenEach() async throws {
        let c = try TestEnv().open()
        let db = c.privateDatabase(for: alice)
        let z = try await db.save(zone: ZoneID(zoneName: "Z"))
        _ = try await db.modifyRecords(saving: (0..<7).map { rec("r\($0)", zone: z) }, deleting: []).get()
        var token: ChangeToken?
        var pages = 0
        var seen: [String] = []
        while true {
            let page = try await db.changes(in: z, since: token, limit: 3)
            pages += 1
            seen += page.changed.map(\.recordID.recordName)
            #expect(page.token != token)
            token = page.token
            if !page.moreComing { break }
        }
        #expect(pages == 3 && seen.count == 7)
        try await db.deleteRecord(withID: rid("r1", zone: z))
        var r2 = try await db.record(for: rid("r2", zone: z))
        r2["n"] = 1
        try await db.save(r2)
        let next = try await db.changes(in: z, since: token)
        #expect(next.changed.map(\.recordID.recordName) == ["r2"])
        #expect(next.deleted.map(\.0.recordName) == ["r1"])
        #expect(next.deleted.first?.recordType == "Note")
        let none = try await db.changes(in: z, since: next.token)
        #expect(none.changed.isEmpty && none.deleted.isEmpty && !none.moreComing)
        // A deleted and recreated zone does not accept the old zone's token.
        try await db.deleteZone(z)
        try await db.save(zone: z)
        #expect(await code { try await db.changes(in: z, since: next.token) } == .changeTokenExpired)
    }
}
