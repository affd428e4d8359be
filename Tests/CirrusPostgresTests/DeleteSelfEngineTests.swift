// deleteSelf references on both engines: deleting a record deletes, cascading, the records of
// its zone that refer to a deleted one with deleteSelf (not those with a plain reference), in the
// same request, each reported as a deletion by the zone's change token; a reference to a record
// that does not exist or is in another zone is refused (referenceViolation), a self-reference
// is allowed, and a record saved with a reference to one deleted later in the same request goes
// with it.

import Cirrus
import CirrusPostgres
import CirrusTestSupport
import RecordModel
import Testing

private func item(_ name: String, _ zone: ZoneID, refs: [(String, Reference.Action)] = []) -> Record {
    var fields: RecordFields = ["title": .string(name)]
    for (i, (target, action)) in refs.enumerated() {
        fields["ref\(i)"] = .reference(Reference(recordID: RecordID(recordName: target, zoneID: zone), action: action))
    }
    return Record(recordType: "Item", recordID: RecordID(recordName: name, zoneID: zone), fields: fields)
}

@Suite(.serialized) struct DeleteSelfEngineTests {
    @Test(arguments: Engine.available)
    func deletionsCascadeAlongDeleteSelfReferences(_ engine: Engine) async throws {
        let f = try await EngineFixture(engine)
        let db = try await f.database(.private(owner: "_alice"), as: .user("_alice"))
        let zone = try await db.save(zone: ZoneID(zoneName: "Tree"))
        _ = try await db.save(item("root", zone))
        let start = try await db.changes(in: zone, since: nil).token
        _ = try await db.modifyRecords(
            saving: [
                item("a", zone, refs: [("root", .deleteSelf)]), item("b", zone, refs: [("root", .deleteSelf)]),
                item("plain", zone, refs: [("root", .none)]), item("me", zone, refs: [("me", .deleteSelf)]),
            ], deleting: [])
        _ = try await db.save(item("a1", zone, refs: [("a", .deleteSelf), ("plain", .none)]))
        // Refused references: a missing target, a target in another zone.
        let other = try await db.save(zone: ZoneID(zoneName: "Other"))
        _ = try await db.save(item("far", other))
        #expect(
            await code { try await db.save(item("x", zone, refs: [("ghost", .deleteSelf)])) } == .referenceViolation)
        var cross = item("y", zone)
        cross["ref0"] = .reference(Reference(recordID: RecordID(recordName: "far", zoneID: other), action: .deleteSelf))
        #expect(await code { try await db.save(cross) } == .referenceViolation)
        // Deleting the root deletes a, b and (through a) a1; plain and me stay.
        try await db.deleteRecord(withID: RecordID(recordName: "root", zoneID: zone))
        let left = try await db.records(
            for: ["root", "a", "b", "a1", "plain", "me"].map {
                RecordID(recordName: $0, zoneID: zone)
            }
        ).compactMap { id, r in (try? r.get()).map { _ in id.recordName } }
        #expect(left == ["plain", "me"])
        let changes = try await db.changes(in: zone, since: start)
        #expect(Set(changes.deleted.map(\.0.recordName)) == ["root", "a", "b", "a1"])
        #expect(Set(changes.changed.map(\.recordID.recordName)) == ["plain", "me"])
        // A self-reference cascades to nothing else; the record can be deleted.
        try await db.deleteRecord(withID: RecordID(recordName: "me", zoneID: zone))
        // In one request: saves run before deletions, so the new child goes with its parent.
        _ = try await db.save(item("parent", zone))
        let r = try await db.modifyRecords(
            saving: [item("child", zone, refs: [("parent", .deleteSelf)])],
            deleting: [RecordID(recordName: "parent", zoneID: zone)])
        #expect(r.partialFailure == nil)
        #expect(
            await code { try await db.record(for: RecordID(recordName: "child", zoneID: zone)) } == .unknownItem)
        try await f.close()
    }
}
