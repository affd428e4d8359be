// ReplSession+Records: `types`, `schema`, `get`, `save`, `delete`, `zones`, `database`, `zone`,
// `user`, `import`. Every write goes through the Database API (access rules, validation and the
// log's atomic commits apply), so nothing typed here can leave the store inconsistent.

import Cirrus
import CoreDataMirror
import Foundation
import RecordModel

extension ReplSession {
    func types() -> String {
        let db = database
        let rows = container.schema.sortedRecordTypes.filter { $0.name != Schema.usersRecordType }.map {
            t -> [String] in
            [t.name, db.querySnapshot(recordType: t.name).map { String($0.rowCount) } ?? "?", String(t.fields.count)]
        }
        return TextTable(header: ["type", "records", "fields"], rows: rows, rightAligned: [1, 2]).render(width: width)
    }

    func schemaText(_ words: [Span]) throws(ReplError) -> String {
        let schema = container.schema
        guard words.count > 1 else { return schema.schemaLanguage }
        guard words.count == 2 else { throw ReplError("expected schema [TYPE]", span: words[2]) }
        guard let t = schema.recordTypes[words[1].text] else {
            let known = schema.sortedRecordTypes.map(\.name)
            throw ReplError(
                "no record type \"\(words[1].text)\"", hint: "the types are \(known.joined(separator: ", "))",
                span: words[1])
        }
        var rows: [[String]] = []
        for sys in SystemField.allCases {
            if let o = t.systemFieldOptions[sys], !o.isEmpty {
                rows.append([
                    sys.rawValue + " (" + sys.schemaName + ")", sys.fieldType.webServicesName,
                    o.names.joined(separator: " "),
                ])
            }
        }
        for f in t.sortedFields {
            rows.append([f.name, f.type.webServicesName, f.options.names.joined(separator: " ")])
        }
        var out = "record type \(t.name) (\(container.environment.rawValue))\n"
        out += TextTable(header: ["field", "type", "indexes"], rows: rows).render(width: width)
        let grants = t.grants.map { "\($0.permissions.sorted().map(\.rawValue).joined(separator: ", ")) to \($0.role)" }
        out += "grants: " + grants.joined(separator: "; ") + "\n"
        return out
    }

    /// `[TYPE] NAME` → (type or nil, the record id in the current zone).
    func recordTarget(_ words: [Span], command: String) throws(ReplError) -> (String?, RecordID, Span) {
        let args = Array(words.dropFirst())
        guard args.count == 1 || args.count == 2 else { throw ReplError("expected \(command) [TYPE] RECORDNAME") }
        let name = args[args.count - 1]
        let type = args.count == 2 ? args[0].text : nil
        if let type, container.schema.recordTypes[type] == nil, !isEntity(type) {
            throw ReplError("no record type \"\(type)\"", span: args[0])
        }
        return (type, RecordID(recordName: name.text, zoneID: zone ?? .default), name)
    }

    func get(_ words: [Span]) async throws(ReplError) -> String {
        let (type, id, span) = try recordTarget(words, command: "get")
        if let type, isEntity(type), !json { return try await getObject(type, id, span) }
        do {
            let r = try await database.record(for: id)
            // An entity's records (json on) are those of its root's CD_ type.
            let expected = type.map { t in
                isEntity(t) ? CloudKitMirror.recordType(forRoot: coreDataModel?.root(of: t) ?? t) : t
            }
            if let type, let expected, r.recordType != expected { throw wrongType(r, id, type, span) }
            return json ? r.webServicesJSON.jsonText + "\n" : StoreCommands.recordText(r)
        } catch {
            throw recordError(error, id, span)
        }
    }

    /// How `get` and `delete` report a failed fetch or delete of `id`: a missing record by name
    /// (and zone), other store errors by their message, a `ReplError` as it is.
    func recordError(_ error: any Error, _ id: RecordID, _ span: Span) -> ReplError {
        switch error {
        case let e as CirrusError:
            return ReplError(
                e.code == .unknownItem ? "no record named \"\(id.recordName)\"\(zoneText(id.zoneID))" : e.message,
                span: span)
        case let e as ReplError:
            return e
        default:
            return ReplError(wrapping: error)
        }
    }

    /// `id` names a record `r` of another type than the command asked for.
    func wrongType(_ r: Record, _ id: RecordID, _ type: String, _ span: Span) -> ReplError {
        ReplError("\"\(id.recordName)\" is a \(r.recordType), not \(article(type)) \(type)", span: span)
    }

    /// "a" or "an" before a type name.
    func article(_ word: String) -> String { "AEIOU".contains(word.first ?? "x") ? "an" : "a" }

    func zoneText(_ z: ZoneID) -> String { z.isDefaultZone ? "" : " in zone \(z.zoneName)" }

    func save(_ line: String, _ words: [Span]) async throws(ReplError) -> String {
        guard words.count >= 4 else {
            throw ReplError(
                "expected save TYPE RECORDNAME {FIELD: VALUE, …}",
                hint: "example: " + (ReplHelp.commands.first { $0.name == "save" }?.example ?? ""))
        }
        let type = words[1].text
        let id = RecordID(recordName: words[2].text, zoneID: zone ?? .default)
        let body = ReplLine.trimmed(Array(line.utf8), words[3].start, line.utf8.count)
        let json: JSONValue
        do {
            json = try JSONValue.parse(body.text)
        } catch {
            throw ReplError("the fields are not valid JSON: \(error)", span: body)
        }
        guard case .object(let members) = json else {
            throw ReplError("the fields are a JSON object {\"field\": value, …}", span: body)
        }
        let fieldTypes = container.schema.recordTypes[type]?.fields
        let db = database
        var record: Record
        do {
            record = try await db.record(for: id)
            guard record.recordType == type else { throw wrongType(record, id, type, words[1]) }
        } catch let e as ReplError {
            throw e
        } catch {
            record = Record(recordType: type, recordID: id)
        }
        for (k, v) in members {
            do {
                if case .null = v {
                    record.fields[k] = nil
                } else if case .object = v, v["type"] != nil {
                    record.fields[k] = try FieldValue(webServicesJSON: v)
                } else {
                    record.fields[k] = try FieldValue(webServicesJSONValue: v, type: fieldTypes?[k]?.type)
                }
            } catch {
                throw ReplError("field \(k): \(error.message)", span: body)
            }
        }
        do {
            let saved = try await db.save(record)
            return
                "saved \(saved.recordType) \(saved.recordID.recordName)\(zoneText(saved.recordID.zoneID)) (change "
                + "tag \(saved.recordChangeTag ?? "-"))\n"
        } catch {
            throw ReplError(wrapping: error)
        }
    }

    func delete(_ words: [Span]) async throws(ReplError) -> String {
        let (type, id, span) = try recordTarget(words, command: "delete")
        let db = database
        do {
            let r = try await db.record(for: id)
            if let type, r.recordType != type { throw wrongType(r, id, type, span) }
            try await db.deleteRecord(withID: id)
            return "deleted \(r.recordType) \(id.recordName)\(zoneText(id.zoneID))\n"
        } catch {
            throw recordError(error, id, span)
        }
    }

    func zones() async throws(ReplError) -> String {
        do {
            return try await database.allZones().map { $0.zoneName + ($0 == zone ? "  (current)" : "") + "\n" }.joined()
        } catch {
            throw ReplError(wrapping: error)
        }
    }

    mutating func switchDatabase(_ words: [Span]) throws(ReplError) -> String {
        guard words.count == 2 else { throw ReplError("expected database public|private") }
        switch words[1].text.lowercased() {
        case "public":
            scope = .public
        case "private":
            guard let u = identity.userRecordName else {
                throw ReplError("the private database needs a user", hint: "sign in first: user _alice", span: words[1])
            }
            scope = .private(owner: u)
        default:
            throw ReplError("expected public or private", span: words[1])
        }
        zone = nil
        lastCursor = nil
        return "now in the \(scope)\n"
    }

    mutating func switchZone(_ words: [Span]) throws(ReplError) -> String {
        guard words.count == 2 else { throw ReplError("expected zone NAME|all") }
        let n = words[1].text
        if n == "all" || n == "default" || n == ZoneID.defaultZoneName {
            zone = n == "all" ? nil : .default
            return n == "all" ? "queries span every zone; records use the default zone\n" : "zone _defaultZone\n"
        }
        if case .public = scope { throw ReplError("the public database has only the default zone", span: words[1]) }
        zone = ZoneID(zoneName: n)
        return "zone \(n)\n"
    }

    mutating func switchUser(_ words: [Span]) throws(ReplError) -> String {
        guard words.count == 2 else { throw ReplError("expected user NAME|anonymous") }
        let n = words[1].text
        if n == "anonymous" {
            identity = .anonymous
            if case .private = scope { scope = .public; zone = nil }
        } else {
            guard !n.isEmpty, n.utf8.count <= 255, n.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
                throw ReplError("a user record name is printable ASCII", span: words[1])
            }
            identity = .user(n)
            if case .private = scope { scope = .private(owner: n); zone = nil }
        }
        lastCursor = nil
        return "acting as \(identity) in the \(scope)\n"
    }

    func importFile(_ line: String, _ words: [Span]) throws(ReplError) -> String {
        guard words.count >= 2 else { throw ReplError("expected import FILE") }
        let span = ReplLine.trimmed(Array(line.utf8), words[1].start, line.utf8.count)
        var path = span.text
        if path.count >= 2, path.first == path.last, path.first == "\"" || path.first == "'" {
            path = String(path.dropFirst().dropLast())
        }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw ReplError("cannot read \(path)", span: span)
        }
        do {
            let s = try container.importFile(path, into: scope)
            var out = "imported \(s.records) records (\(s.rejected) rejected)\n"
            for r in s.rejections.prefix(10) { out += "rejected \(r)\n" }
            return out
        } catch {
            throw ReplError(wrapping: error, span: span)
        }
    }
}
