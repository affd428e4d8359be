// ReplSession+CoreData: `coredata [MODEL|off]` and what a loaded Core Data model changes.
//
// With a model loaded, `query`, `explain`, `get` and `use` also take an entity name: the query is
// rewritten onto the mirrored CD_ records (CloudKitMirror.rewrite, docs/coredata.md) and the
// rewritten query is printed above the result; to-many tests run their lookups first; `get`
// reads the record back as the object, taking a value from its `_ckAsset` companion when the
// record holds it there. A record type keeps its meaning when a model has an entity of the same name.

import Cirrus
import CoreDataMirror
import Foundation
import PredicateSyntax
import QueryChecker
import RecordModel

extension ReplSession {
    /// Whether `name` is an entity of the loaded model (and not a record type of the container).
    func isEntity(_ name: String) -> Bool {
        guard let m = coreDataModel, m.entity(name) != nil else { return false }
        return container.schema.recordTypes[name] == nil
    }

    // MARK: coredata

    mutating func loadCoreData(_ words: [Span]) throws(ReplError) -> String {
        guard words.count <= 2 else { throw ReplError("expected coredata [MODEL|off]", span: words[2]) }
        if words.count == 2, words[1].text.lowercased() == "off" {
            coreDataModel = nil
            if let t = currentType, container.schema.recordTypes[t] == nil { currentType = nil }
            return "Core Data model unloaded\n"
        }
        let path: String
        if words.count == 2 {
            path = words[1].text
        } else {
            // The model shipped in the container's directory (the demo has Blog.xcdatamodeld).
            let found = ((try? FileManager.default.contentsOfDirectory(atPath: container.directory)) ?? [])
                .filter { $0.hasSuffix(".xcdatamodeld") }.sorted()
            guard found.count == 1 else {
                throw ReplError(
                    found.isEmpty ? "this container ships no Core Data model" : "this container has several models",
                    hint: "name one: coredata PATH/Model.xcdatamodeld")
            }
            path = container.directory + "/" + found[0]
        }
        let model: CoreDataModel
        do {
            model = try CoreDataModel.read(path: path)
        } catch {
            throw ReplError(
                error.message + (error.line.map { " (line \($0))" } ?? ""), span: words.count == 2 ? words[1] : words[0]
            )
        }
        let problems = CloudKitMirror.problems(in: model)
        guard problems.isEmpty else {
            throw ReplError(
                "the model breaks \(problems.count) CloudKit mirroring rule\(problems.count == 1 ? "" : "s"): "
                    + problems.map(\.description).joined(separator: "; "),
                hint: "cirrus coredata schema --dry-run MODEL lists them")
        }
        coreDataModel = model
        let name = path.split(separator: "/").last { $0.hasSuffix(".xcdatamodeld") || $0.hasSuffix(".xcdatamodel") }
        let types = CloudKitMirror.schema(for: model).sortedRecordTypes.map(\.name)
        var out = "Core Data model \(name.map(String.init) ?? path): entities "
        out += model.entities.map(\.name).sorted().joined(separator: ", ") + "\n"
        out += "mirrored as \(types.joined(separator: ", "))"
        let missing = types.filter { container.schema.recordTypes[$0] == nil }
        if !missing.isEmpty { out += " (not in this container's schema: \(missing.joined(separator: ", ")))" }
        out += "\nquery, explain, get and use now take an entity; predicates, sorts and keys name its attributes\n"
        return out
    }

    // MARK: rewriting and lookups

    /// The request rewritten onto the mirrored records when its type is an entity, with the
    /// lines saying what it became (empty for a record type). Errors point into the input line.
    func mirror(_ request: QueryRequest, predicateStart: Int) throws(ReplError) -> (QueryRequest, String) {
        guard let model = coreDataModel, isEntity(request.recordType) else { return (request, "") }
        do {
            let (r, line) = try request.mirrored(model)
            return (r, line + "\n")
        } catch {
            let range =
                error.range == .none || predicateStart == 0
                ? nil : SourceRange(error.range.start + predicateStart, error.range.end + predicateStart)
            throw ReplError(error.message, at: range)
        }
    }

    /// Runs the request's relationship lookups and checks the rewritten predicate (which is not
    /// the typed text, so a rejection quotes it instead of pointing into the line).
    func resolveMirrored(_ request: QueryRequest) async throws(ReplError) -> QueryRequest {
        let r: QueryRequest
        do {
            r = try await request.resolvingLookups(in: database)
        } catch {
            throw ReplError(wrapping: error)
        }
        if let rejected = QueryCommands.precheck(r, in: database), case .rejected(let e) = rejected.outcome {
            throw ReplError(e.message + " (in the rewritten predicate \(r.predicate))", hint: e.hint)
        }
        return r
    }

    /// `check` after `use ENTITY`: the predicate rewritten onto the mirrored records, then checked
    /// against their schema. A to-many test's lookup does not run: its variable is bound to an
    /// empty list, so the verdict is about the rewritten query's shape.
    func checkMirrored(_ source: String, entity: String, from: Int) throws(ReplError) -> String {
        let (r, rewritten) = try mirror(
            QueryRequest(recordType: entity, predicate: source, variables: variables), predicateStart: from)
        var ctx = CheckContext(
            variables: variables, schema: container.schema, recordType: r.recordType, now: Timestamp(Date()))
        for l in r.lookups { ctx.variables[l.variable] = .value(.list([])) }
        let report = CheckReport(predicate: r.predicate, context: ctx)
        if json { return report.json.jsonText + "\n" }
        switch report.outcome {
        case .accepted: return rewritten + report.text
        case .rejected(let e):
            throw ReplError(e.message + " (in the rewritten predicate \(r.predicate))", hint: e.hint)
        }
    }

    // MARK: get

    /// `get ENTITY RECORDNAME`: the record read back as the object.
    func getObject(_ entity: String, _ id: RecordID, _ span: Span) async throws(ReplError) -> String {
        guard let model = coreDataModel, let root = model.root(of: entity) else { throw ReplError("no model") }
        let db = database
        let object: MirroredObject
        do {
            let r = try await db.record(for: id)
            guard r.recordType == CloudKitMirror.recordType(forRoot: root) else {
                throw ReplError("\"\(id.recordName)\" is a \(r.recordType), not a mirrored \(entity)", span: span)
            }
            object = try await CloudKitMirror.read(r, model: model) { asset in
                try await db.assetData(asset, of: r.recordID)
            }
            guard CloudKitMirror.isDescendant(object.entity, of: entity, model) else {
                throw ReplError(
                    "\"\(id.recordName)\" is \(article(object.entity)) \(object.entity), not \(article(entity)) "
                        + "\(entity)",
                    span: span)
            }
        } catch let e as ReplError {
            throw e
        } catch let e as CirrusError {
            throw ReplError(
                e.code == .unknownItem ? "no record named \"\(id.recordName)\"\(zoneText(id.zoneID))" : e.message,
                hint: e.code == .unknownItem && zone == nil
                    ? "mirrored records live in a zone: zone \(DemoData.coreDataZone.zoneName)" : nil,
                span: span)
        } catch {
            throw ReplError(wrapping: error, span: span)
        }
        var out = "\(object.entity) \(id.recordName) (\(CloudKitMirror.recordType(forRoot: root))"
        out += id.zoneID.isDefaultZone ? ")\n" : " in zone \(id.zoneID.zoneName))\n"
        let width = (object.members.map(\.count).max() ?? 0) + 2
        for m in object.members {
            let pad = String(repeating: " ", count: width - m.count)
            switch object.values[m] {
            case nil: out += "  \(m)\(pad)-\n"
            case .field(let v)?: out += "  \(m)\(pad)\(Self.shortText(v))\n"
            case .asset(let a, let v)?:
                out +=
                    "  \(m)\(pad)\(Self.shortText(v))  (from "
                    + "\(CloudKitMirror.prefix + m + CloudKitMirror.assetSuffix), \(a.size) bytes)\n"
            }
        }
        return out
    }

    /// A value on one line: long text cut at 60 characters, bytes as their count.
    static func shortText(_ v: FieldValue) -> String {
        switch v {
        case .bytes(let b): return "\(b.count) bytes"
        case .string(let s):
            let line = s.replacingControlCharacters
            return line.count > 60 ? String(line.prefix(60)) + "…" : line
        default: return v.cellText
        }
    }
}
