// The schema's binary form (docs/log-format.md, "Schema payload") against the model: random
// schemas round-trip through it and through the JSON form a log written earlier holds; equal
// schemas give equal bytes; damaged bytes are an error, never a trap.

import CirrusIO
import Foundation
import RecordModel
import Testing

@testable import RecordLog

struct SchemaCodecTests {
    static func randomSchema(_ rng: inout SplitMix64) -> Schema {
        func name(_ prefix: String) -> String {
            // Non-ASCII names too: the codec compares and writes UTF-8.
            let pool = ["a", "b", "Z", "é", "名", "_", "1", "ß"]
            return prefix + (0..<(1 + rng.below(6))).map { _ in pool[rng.below(pool.count)] }.joined()
        }
        var types: [RecordTypeSchema] = []
        for _ in 0..<rng.below(6) {
            var fields: [FieldSchema] = []
            for _ in 0..<rng.below(9) {
                let scalar = ScalarType.allCases[rng.below(ScalarType.allCases.count)]
                fields.append(
                    FieldSchema(
                        name: name("f"), type: FieldType(scalar, isList: rng.below(2) == 0),
                        options: IndexOptions(rawValue: UInt8(rng.below(8)))))
            }
            var system: [SystemField: IndexOptions] = [:]
            for f in SystemField.allCases where rng.below(3) == 0 {
                system[f] = IndexOptions(rawValue: UInt8(rng.below(8)))
            }
            let roles = [Grant.world, Grant.authenticated, Grant.creator, "editor", "rôle"]
            let grants = (0..<rng.below(5)).map { _ in
                Grant(Set(Permission.allCases.filter { _ in rng.below(2) == 0 }), to: roles[rng.below(roles.count)])
            }
            types.append(
                RecordTypeSchema(
                    name: name("T"), fields: fields, systemFieldOptions: system,
                    grants: rng.below(4) == 0 ? Grant.defaults : grants))
        }
        let roles = Set((0..<rng.below(4)).map { _ in name("r") })
        var assignments: [String: Set<String>] = [:]
        for _ in 0..<rng.below(4) { assignments[name("_u")] = Set(roles.filter { _ in rng.below(2) == 0 }) }
        return Schema(
            environment: rng.below(2) == 0 ? .development : .production, recordTypes: types, roles: roles,
            roleAssignments: assignments)
    }

    static func payload(_ schema: Schema) throws -> [UInt8] {
        var w = ByteWriter()
        try LogEntry.schemaChange(schema).encodePayload(into: &w)
        return w.bytes
    }

    static func decode(_ bytes: [UInt8]) throws -> LogEntry {
        try bytes.withUnsafeBytes { try LogEntry.decode(kind: EntryKind.schemaChange.rawValue, payload: $0) }
    }

    @Test func randomSchemasRoundTripInBothEncodings() throws {
        var rng = SplitMix64(seed: 53)
        for i in 0..<500 {
            let schema = Self.randomSchema(&rng)
            let bytes = try Self.payload(schema)
            #expect(bytes.first == 2, "written in binary")
            #expect(try Self.decode(bytes) == .schemaChange(schema), "schema \(i)")
            // A log written before the binary form: encoding 1, the schema as JSON.
            let json = [1] + Array(try JSONEncoder().encode(schema))
            #expect(try Self.decode(json) == .schemaChange(schema), "JSON schema \(i)")
        }
    }

    @Test func equalSchemasEncodeToEqualBytes() throws {
        var rng = SplitMix64(seed: 54)
        for _ in 0..<200 {
            let schema = Self.randomSchema(&rng)
            // The same schema built again with its types and fields in another order.
            let shuffled = Schema(
                environment: schema.environment,
                recordTypes: schema.recordTypes.values.shuffled(using: &rng).map { t in
                    RecordTypeSchema(
                        name: t.name, fields: t.fields.values.shuffled(using: &rng),
                        systemFieldOptions: t.systemFieldOptions, grants: t.grants)
                }, roles: schema.roles, roleAssignments: schema.roleAssignments)
            #expect(shuffled == schema)
            #expect(try Self.payload(shuffled) == Self.payload(schema))
        }
    }

    @Test func damagedBytesAreAnErrorNeverATrap() throws {
        var rng = SplitMix64(seed: 55)
        var decodedAnyway = 0
        for _ in 0..<100 {
            let bytes = try Self.payload(Self.randomSchema(&rng))
            // Every truncation of a canonical encoding is an error (each ends inside something).
            for n in 0..<bytes.count {
                #expect(throws: CodecError.self) { try Self.decode(Array(bytes[..<n])) }
            }
            // A byte changed: an error or some schema, never a trap; trailing bytes an error.
            for _ in 0..<20 {
                var b = bytes
                b[1 + rng.below(b.count - 1)] ^= UInt8(1 + rng.below(255))
                if (try? Self.decode(b)) != nil { decodedAnyway += 1 }
            }
            #expect(throws: CodecError.self) { try Self.decode(bytes + [0]) }
        }
        #expect(decodedAnyway < 2000, "some damage must be caught")
        #expect(throws: CodecError.self) { try Self.decode([3, 0, 0, 0, 0]) }  // unknown encoding
    }
}
