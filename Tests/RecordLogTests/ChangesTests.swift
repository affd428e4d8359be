// Change fetching: records changed and deleted after a sequence number, surviving reopen,
// expiring at compaction.

import CirrusIO
import Foundation
import RecordModel
import Testing

@testable import RecordLog

@Suite struct ChangesTests {
    @Test func changesSinceASequence() throws {
        let fs = InMemoryFileSystem()
        let zone = ZoneID(zoneName: "Z")
        let notes = ZoneID(zoneName: "Notes")
        func n(_ name: String, _ i: Int = 0) -> Record { note(name, i, zone: notes) }
        var s = try openStore(fs)
        try s.commit([
            .createZone(zone), .createZone(notes), .save(n("a")), .save(n("b")), .save(note("z1", zone: zone)),
        ])
        let token = s.lastSequence
        try s.save(n("c"))
        try s.save(n("a", 2))
        try s.commit([
            .delete(RecordID(recordName: "b", zoneID: notes), recordType: "Note"),
            .delete(RecordID(recordName: "z1", zoneID: zone), recordType: "Note"),
        ])
        func check(_ s: RecordStore) throws {
            let all = try #require(s.snapshot().changes(since: token))
            #expect(all.changed.map(\.recordName) == ["c", "a"])
            #expect(all.deleted.map(\.recordID.recordName) == ["b", "z1"])
            #expect(all.deleted.first?.recordType == "Note")
            #expect(all.lastSequence == s.lastSequence)
            let inZone = try #require(s.snapshot().changes(since: token, in: zone))
            #expect(inZone.changed.isEmpty)
            #expect(inZone.deleted.map(\.recordID.recordName) == ["z1"])
            #expect(s.snapshot().changes(since: s.lastSequence)?.changed.isEmpty == true)
        }
        try check(s)
        try s.close()
        s = try openStore(fs)
        try check(s)
        // a deleted record saved again is reported as changed, not deleted
        try s.save(n("b", 3))
        #expect(s.snapshot().changes(since: token)?.deleted.map(\.recordID.recordName) == ["z1"])
        // compaction drops deletions: older tokens expire
        try s.compact()
        #expect(s.snapshot().changes(since: token) == nil)
        let h = s.snapshot().horizon
        #expect(s.snapshot().changes(since: h)?.changed.isEmpty == true)
        try s.close()
        s = try openStore(fs)
        #expect(s.snapshot().changes(since: token) == nil)
        #expect(s.snapshot().horizon == h)
        try s.save(n("d"))
        #expect(s.snapshot().changes(since: h)?.changed.map(\.recordName) == ["d"])
        #expect(s.snapshot().tombstones(in: notes).isEmpty)
    }

    @Test func changesArePagedInSequenceOrder() throws {
        let s = try openStore(InMemoryFileSystem())
        let z = ZoneID(zoneName: "Z")
        for i in 0..<10 { try s.save(note("n\(i)", zone: z)) }
        try s.commit([
            .delete(RecordID(recordName: "n2", zoneID: z), recordType: "Note"),
            .delete(RecordID(recordName: "n5", zoneID: z), recordType: "Note"),
        ])
        try s.save(note("n0", 1, zone: z))
        var since: UInt64 = 0
        var seen: [String] = []
        var pages = 0
        while true {
            let page = try #require(s.snapshot().changes(since: since, limit: 3))
            seen += page.changes.map { c in
                if case .deleted = c { return "-" + c.recordID.recordName }
                return c.recordID.recordName
            }
            since = page.lastSequence
            pages += 1
            if !page.moreComing { break }
        }
        #expect(seen == ["n1", "n3", "n4", "n6", "n7", "n8", "n9", "-n2", "-n5", "n0"])
        #expect(pages == 4)
        #expect(since == s.lastSequence)
    }
}

@Suite struct TombstoneTests {
    @Test func defaultZoneKeepsNoTombstonesCustomZonesDo() throws {
        let s = try openStore(InMemoryFileSystem())
        let z = ZoneID(zoneName: "Z")
        try s.commit([.save(note("a")), .save(note("b", zone: z))])
        try s.commit([
            .delete(RecordID(recordName: "a"), recordType: "Note"),
            .delete(RecordID(recordName: "b", zoneID: z), recordType: "Note"),
        ])
        #expect(s.snapshot().tombstones(in: .default).isEmpty)
        #expect(s.snapshot().tombstones(in: z).map(\.recordID.recordName) == ["b"])
        try s.commit([.deleteZone(z)])
        #expect(s.snapshot().tombstones(in: z).isEmpty)
    }
}
