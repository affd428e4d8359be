import Foundation
import Testing

@testable import RecordModel

/// `Schema` and `RecordTypeSchema` keep their values in a shared copy-on-write box. They must
/// still behave as values — a copy never sees a change made through another — and encode as
/// the plain structs they were (the log and exports hold that JSON).
@Suite struct SchemaValueTests {
    /// The record type as it was: every member stored, coding synthesized.
    struct PlainType: Codable {
        var name: String
        var fields: [String: FieldSchema]
        var systemFieldOptions: [SystemField: IndexOptions]
        var grants: [Grant]
    }

    static let place = RecordTypeSchema(
        name: "Place",
        fields: [
            FieldSchema(name: "kind", type: .string, options: [.queryable, .sortable]),
            FieldSchema(name: "location", type: .location, options: [.queryable]),
        ], systemFieldOptions: [.creationDate: [.queryable]])

    @Test func aCopyDoesNotSeeChanges() {
        var schema = Schema(environment: .development, recordTypes: [Self.place], roles: ["Moderator"])
        let before = schema
        schema.recordTypes["Place"]?.fields["name"] = FieldSchema(name: "name", type: .string)
        schema.recordTypes["Place"]?.grants = []
        schema.roles.insert("Editor")
        schema.roleAssignments["_u"] = ["Editor"]
        schema.environment = .production
        #expect(before.recordTypes["Place"]?.fields["name"] == nil)
        #expect(before.recordTypes["Place"]?.grants == Grant.defaults)
        #expect(before.roles == ["Moderator"] && before.roleAssignments.isEmpty)
        #expect(before.environment == .development)
        #expect(schema.recordTypes["Place"]?.fields["name"]?.type == .string)
        #expect(schema.environment == .production && schema.roles == ["Moderator", "Editor"])
        #expect(schema != before)

        var type = Self.place
        let typeBefore = type
        type.name = "Other"
        type.systemFieldOptions = [:]
        #expect(typeBefore.name == "Place" && typeBefore.systemFieldOptions == [.creationDate: [.queryable]])
        #expect(type != typeBefore)
    }

    @Test func equalValuesAreEqualAndHashAlike() {
        let a = Schema(recordTypes: [Self.place])
        // Built separately: another box, the same values.
        let b = Schema(
            recordTypes: [
                RecordTypeSchema(
                    name: "Place",
                    fields: [
                        FieldSchema(name: "location", type: .location, options: [.queryable]),
                        FieldSchema(name: "kind", type: .string, options: [.queryable, .sortable]),
                    ], systemFieldOptions: [.creationDate: [.queryable]])
            ])
        #expect(a == b && a.hashValue == b.hashValue)
        #expect(a.recordTypes["Place"] == b.recordTypes["Place"])
        var c = b
        c.recordTypes["Place"]?.fields["kind"]?.options = [.queryable]
        #expect(a != c)
    }

    @Test func aRecordTypeEncodesAsThePlainStruct() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let t = Self.place
        let plain = PlainType(
            name: t.name, fields: t.fields, systemFieldOptions: t.systemFieldOptions, grants: t.grants)
        let mine = try encoder.encode(t)
        #expect(mine == (try encoder.encode(plain)))
        #expect(try JSONDecoder().decode(RecordTypeSchema.self, from: mine) == t)
        // What the plain struct wrote (the log's older entries) reads back the same.
        #expect(try JSONDecoder().decode(RecordTypeSchema.self, from: try encoder.encode(plain)) == t)
        // A missing member is an error, as it was.
        let partial = Data(#"{"name":"P","fields":{}}"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(RecordTypeSchema.self, from: partial) }
    }

    @Test func aSchemaRoundTrips() throws {
        var s = Schema(environment: .production, recordTypes: [Self.place], roles: ["Moderator"])
        s.roleAssignments["_u"] = ["Moderator"]
        let back = try JSONDecoder().decode(Schema.self, from: try JSONEncoder().encode(s))
        #expect(back == s)
    }
}
