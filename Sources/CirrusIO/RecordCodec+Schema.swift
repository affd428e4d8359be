// RecordCodec+Schema: the schema in bytes (docs/log-format.md, "Schema payload"). A schema
// change entry carries it, and so does every checkpoint's state segment, which a fresh process
// reads at open: decoding it is a few hundred nanoseconds of plain reads, where the JSON form
// (encoding 1, still read) went through Codable and paid for the runtime's first look at every
// generic type it instantiates — most of a fresh process's open.
//
// Canonical: types, fields, system fields, roles and assignments are written sorted by name, so
// equal schemas encode to equal bytes.

import RecordModel

extension RecordCodec {
    /// Appends `schema` in the binary form (encoding 2 of a schema change entry).
    public static func encodeSchema(_ schema: Schema, into w: inout ByteWriter) {
        w.u8(schema.environment == .production ? 1 : 0)
        let types = schema.sortedRecordTypes
        w.varint(UInt64(types.count))
        for t in types {
            w.string(t.name)
            let fields = t.sortedFields
            w.varint(UInt64(fields.count))
            for f in fields {
                w.string(f.name)
                w.u8(f.type.scalar.rawValue)
                w.u8(f.type.isList ? 1 : 0)
                w.u8(f.options.rawValue)
            }
            let system = t.systemFieldOptions.sorted { $0.key.rawValue < $1.key.rawValue }
            w.varint(UInt64(system.count))
            for (field, options) in system {
                w.string(field.rawValue)
                w.u8(options.rawValue)
            }
            w.varint(UInt64(t.grants.count))
            for g in t.grants {  // in order: the order is the schema's
                w.string(g.role)
                w.u8(permissionBits(g.permissions))
            }
        }
        let roles = schema.roles.sorted { compareUTF8($0, $1) < 0 }
        w.varint(UInt64(roles.count))
        for r in roles { w.string(r) }
        let assignments = schema.roleAssignments.sorted { compareUTF8($0.key, $1.key) < 0 }
        w.varint(UInt64(assignments.count))
        for (user, held) in assignments {
            w.string(user)
            let sorted = held.sorted { compareUTF8($0, $1) < 0 }
            w.varint(UInt64(sorted.count))
            for r in sorted { w.string(r) }
        }
    }

    /// Reads a schema written by `encodeSchema`; throws, naming the offset, on anything else.
    public static func decodeSchema(_ r: inout ByteReader) throws(CodecError) -> Schema {
        let envAt = r.offset
        let environment: Environment
        switch try r.u8() {
        case 0: environment = .development
        case 1: environment = .production
        case let b: throw CodecError("unknown environment \(b)", offset: envAt)
        }
        var types: [RecordTypeSchema] = []
        for _ in 0..<(try count(&r)) {
            let name = try r.string()
            var fields: [FieldSchema] = []
            for _ in 0..<(try count(&r)) {
                let fieldName = try r.string()
                let at = r.offset
                guard let scalar = ScalarType(rawValue: try r.u8()) else {
                    throw CodecError("unknown field type in \(name).\(fieldName)", offset: at)
                }
                let list = try r.u8()
                guard list <= 1 else { throw CodecError("bad list flag in \(name).\(fieldName)", offset: at + 1) }
                let options = try indexOptions(&r)
                fields.append(
                    FieldSchema(name: fieldName, type: FieldType(scalar, isList: list == 1), options: options))
            }
            var system: [SystemField: IndexOptions] = [:]
            for _ in 0..<(try count(&r)) {
                let at = r.offset
                guard let field = SystemField(rawValue: try r.string()) else {
                    throw CodecError("unknown system field in \(name)", offset: at)
                }
                system[field] = try indexOptions(&r)
            }
            var grants: [Grant] = []
            for _ in 0..<(try count(&r)) {
                let role = try r.string()
                let at = r.offset
                let bits = try r.u8()
                guard bits & ~7 == 0 else { throw CodecError("bad permissions \(bits)", offset: at) }
                grants.append(Grant(Set(Permission.allCases.filter { bits & permissionBits([$0]) != 0 }), to: role))
            }
            types.append(RecordTypeSchema(name: name, fields: fields, systemFieldOptions: system, grants: grants))
        }
        var roles: Set<String> = []
        for _ in 0..<(try count(&r)) { roles.insert(try r.string()) }
        var assignments: [String: Set<String>] = [:]
        for _ in 0..<(try count(&r)) {
            let user = try r.string()
            var held: Set<String> = []
            for _ in 0..<(try count(&r)) { held.insert(try r.string()) }
            assignments[user] = held
        }
        return Schema(environment: environment, recordTypes: types, roles: roles, roleAssignments: assignments)
    }

    /// A count of items that each take at least one byte: never more than the bytes left.
    private static func count(_ r: inout ByteReader) throws(CodecError) -> Int { try r.length() }

    private static func indexOptions(_ r: inout ByteReader) throws(CodecError) -> IndexOptions {
        let at = r.offset
        let bits = try r.u8()
        guard bits & ~7 == 0 else { throw CodecError("bad index options \(bits)", offset: at) }
        return IndexOptions(rawValue: bits)
    }

    /// CREATE 1, READ 2, WRITE 4.
    private static func permissionBits(_ p: Set<Permission>) -> UInt8 {
        (p.contains(.create) ? 1 : 0) | (p.contains(.read) ? 2 : 0) | (p.contains(.write) ? 4 : 0)
    }
}
