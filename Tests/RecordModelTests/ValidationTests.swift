// CloudKit's naming, value and size rules, one assertion per rule with the error kind.

import Testing

@testable import RecordModel

@Suite struct ValidationTests {
    func kind(_ r: Record) -> RecordValidationError.Kind? {
        do {
            try r.validate()
            return nil
        } catch {
            return error.kind
        }
    }

    func rec(_ fields: RecordFields = [:], name: String = "n1", type: String = "Note") -> Record {
        Record(recordType: type, recordID: RecordID(recordName: name), fields: fields)
    }

    @Test func validRecordPasses() {
        #expect(kind(rec(["title": "x", "n_2": 3, "tags": ["a", "b"], "empty": .list([])])) == nil)
    }

    @Test func fieldNames() {
        #expect(kind(rec(["1st": 1])) == .invalidFieldName)
        #expect(kind(rec(["_x": 1])) == .invalidFieldName)
        #expect(kind(rec(["a-b": 1])) == .invalidFieldName)
        #expect(kind(rec([String(repeating: "a", count: 256): 1])) == .invalidFieldName)
        #expect(kind(rec([String(repeating: "a", count: 255): 1])) == nil)
        #expect(kind(rec(["recordName": 1])) == .reservedFieldName)
        #expect(kind(rec(["creationDate": 1])) == .reservedFieldName)
        #expect(kind(rec(["é": 1])) == .invalidFieldName)
    }

    @Test func typeAndRecordNames() {
        #expect(kind(rec(type: "9Note")) == .invalidRecordTypeName)
        #expect(kind(rec(type: "")) == .invalidRecordTypeName)
        #expect(kind(rec(name: "")) == .invalidRecordName)
        #expect(kind(rec(name: "has space")) == .invalidRecordName)
        #expect(kind(rec(name: "naïve")) == .invalidRecordName)
        #expect(kind(rec(name: String(repeating: "r", count: 256))) == .invalidRecordName)
        #expect(kind(rec(name: "A-Z_0.9~!")) == nil)
    }

    @Test func values() {
        #expect(kind(rec(["d": .double(.nan)])) == .nonFiniteDouble)
        #expect(kind(rec(["d": .list([.double(.infinity)])])) == .nonFiniteDouble)
        #expect(kind(rec(["l": .list([.string("a"), .int64(1)])])) == .mixedList)
        #expect(kind(rec(["l": .list([.list([1])])])) == .nestedList)
        #expect(kind(rec(["p": .location(Location(latitude: 91, longitude: 0))])) == .invalidLocation)
        #expect(kind(rec(["p": .location(Location(latitude: 0, longitude: 0, altitude: .nan))])) == .invalidLocation)
        #expect(kind(rec(["a": .asset(Asset(contentHash: "xyz", size: 1))])) == .invalidAsset)
        #expect(kind(rec(["r": .reference(Reference(recordID: RecordID(recordName: "")))])) == .invalidRecordName)
    }

    @Test func sizeLimitExcludesAssets() {
        let big = FieldValue.bytes([UInt8](repeating: 1, count: 1_048_576))
        #expect(kind(rec(["b": big])) == .recordTooLarge)
        let asset = FieldValue.asset(Asset(contentHash: String(repeating: "a", count: 64), size: 50_000_000))
        #expect(kind(rec(["a": asset, "b": .bytes([UInt8](repeating: 1, count: 1_000_000))])) == nil)
    }

    @Test func errorSaysWhichRecordAndField() {
        do {
            try rec(["x": .double(.nan)], name: "r9").validate()
            Issue.record("expected an error")
        } catch {
            #expect(error.recordID?.recordName == "r9")
            #expect(error.field == "x")
            #expect(error.description.hasPrefix("record \"r9\": field \"x\": "))
        }
    }

    /// `SystemField.named` answers as `init(rawValue:)` for every system field's name, for names
    /// of the same lengths that are not one (so the length check cannot stand in for the
    /// comparison), and for names of other lengths.
    @Test func systemFieldsByNameAnswerAsTheirRawValues() {
        var names = SystemField.allCases.map(\.rawValue)
        names += SystemField.allCases.flatMap { f in
            [String(f.rawValue.dropLast()) + "x", f.rawValue.uppercased(), String(f.rawValue.dropFirst())]
        }
        names += ["", "name", "population", "recordname", "___recordID", "recordName ", "récordName"]
        for name in names {
            #expect(SystemField.named(name) == SystemField(rawValue: name), "\(name)")
        }
        for f in SystemField.allCases { #expect(SystemField.named(f.rawValue) == f) }
        #expect(SystemField.named("population") == nil)
    }
}
