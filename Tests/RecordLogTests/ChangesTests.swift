// Change fetching: records changed and deleted after a sequence number, surviving reopen,
// expiring at compaction.

import Foundation
import RecordModel
import Testing

@testable import RecordLog

@Suite struct ChangesTests {
    @Test func changesSinceASequence() throws {
        let fs = InMemoryFileSystem()
        let zone = ZoneID(zoneName: "Z")
        var s = try openStore(fs)
        try s.commit([.createZone(zone), .save(note("a")), .save(note("b")), .save(note("z1", zone: zone))])
        let token = s.lastSequence
        try s.save(note("c"))
        try s.save(note("a", 2))
        try s.commit([.delete(RecordID(recordName: "b"), recordType: "Note"), .delete(RecordID(recordName: "z1", zoneID: zone), recordType: "Note")])
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
        // saving a deleted record again removes its tombstone
        try s.save(note("b", 3))
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
        try s.save(note("d"))
        #expect(s.snapshot().changes(since: h)?.changed.map(\.recordName) == ["d"])
    }

    @Test func changesArePagedInSequenceOrder() throws {
        let s = try openStore(InMemoryFileSystem())
        for i in 0..<10 { try s.save(note("n\(i)")) }
        try s.commit([.delete(RecordID(recordName: "n2"), recordType: "Note"), .delete(RecordID(recordName: "n5"), recordType: "Note")])
        try s.save(note("n0", 1))
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
