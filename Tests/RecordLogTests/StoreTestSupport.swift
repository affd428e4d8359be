// Helpers for store tests on the in-memory file system.

import CirrusIO
import CirrusTestSupport
import Foundation
import RecordModel
import Testing

@testable import RecordLog

let dbDir = "/db"
func segPath(_ n: UInt64) -> String { dbDir + "/" + Manifest.segmentFileName(n) }

func openStore(
    _ fs: InMemoryFileSystem, durability: Durability = .everyCommit, repair: Bool = false, readOnly: Bool = false,
    segmentSize: Int = 64 << 20
) throws -> RecordStore {
    try RecordStore.open(
        directory: dbDir, fileSystem: fs,
        options: RecordStoreOptions(
            durability: durability, readOnly: readOnly, repair: repair, segmentSize: segmentSize))
}

func note(_ name: String, _ i: Int = 0, zone: ZoneID = .default) -> Record {
    var r = Record(recordType: "Note", recordID: RecordID(recordName: name, zoneID: zone))
    r["title"] = .string("note \(name)")
    r["n"] = .int64(Int64(i))
    return r
}

/// Offsets of every frame in a segment's bytes.
func frameOffsets(_ bytes: [UInt8]) -> [Int] {
    var out: [Int] = []
    var p = LogFormat.segmentHeaderSize
    bytes.withUnsafeBytes { b in
        while let h = Frame.validFrame(in: b, at: p) {
            out.append(p)
            p = h.end
        }
    }
    return out
}

/// The snapshot's live records; one that does not decode fails the test.
func liveRecords(_ s: StoreSnapshot) -> [RecordID: StoredRecord] {
    do { return try s.records } catch {
        Issue.record("a stored record does not decode: \(error)")
        return [:]
    }
}

func names(_ store: RecordStore) -> Set<String> { Set(liveRecords(store.snapshot()).keys.map(\.recordName)) }

/// The live state as comparable values.
struct LiveState: Equatable, CustomStringConvertible {
    var records: [RecordID: Record]
    var zones: Set<ZoneID>
    var schema: Schema?

    init(_ s: StoreSnapshot) {
        records = liveRecords(s).mapValues(\.record)
        zones = Set(s.zones.keys)
        schema = s.schema
    }

    init(records: [RecordID: Record] = [:], zones: Set<ZoneID> = [], schema: Schema? = nil) {
        self.records = records
        self.zones = zones
        self.schema = schema
    }

    static func == (a: LiveState, b: LiveState) -> Bool {
        a.zones == b.zones && a.schema == b.schema && a.records.count == b.records.count
            && a.records.allSatisfy { k, v in b.records[k].map { identical(v, $0) } ?? false }
    }

    var description: String {
        "\(records.count) records \(records.keys.map(\.recordName).sorted()), zones \(zones.map(\.zoneName).sorted())"
    }

    mutating func apply(_ op: LogOperation) {
        switch op {
        case .save(let r): records[r.recordID] = r
        case .delete(let id, _): records[id] = nil
        case .createZone(let z): zones.insert(z)
        case .deleteZone(let z):
            zones.remove(z)
            records = records.filter { $0.key.zoneID != z }
        case .setSchema(let s): schema = s
        }
    }
}
