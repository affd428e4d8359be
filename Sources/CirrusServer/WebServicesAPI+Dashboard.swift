// Two operations beyond CloudKit Web Services that the dashboard (and any client) uses, under the
// same paths and authentication as the rest:
//
//   cirrus/schema  {}                                  → {"environment", "recordTypes": [{"name", "fields":
//                                                          [{"name", "type": "STRING", "options": ["QUERYABLE", …]}]}]}
//   cirrus/check   {"recordType", "predicate",          → {"ok": true, "filterBy": [ … ], "warnings": [ … ]}
//                   "variables"?: {"here": FieldValue}}
//                                                        | {"ok": false, "message", "hint"?, "start", "end"}
//   cirrus/explain {"query", "zoneID"?, "resultsLimit"?}  → {"plan": {"operator", "estimatedRows", "actualRows"?,
//                                                          "children"}, "cost", "rejected": [{"summary", "cost"}],
//                                                          "indexes": [{"index", "missing"}], "warnings", "returned"}
//
// `cirrus/check` runs a format string through the checker against the environment's schema, as
// `cirrus check` and the REPL do; `start`/`end` are UTF-16 offsets into the predicate (what a
// browser's string indexes count), so a caret can be drawn under the part at fault. `variables`
// give `$NAME`s their values (Web Services field values: how the dashboard passes the centre of
// `distanceToLocation:fromLocation:(location, $here)`, which has no literal form). An accepted
// predicate comes back as its `filterBy` list, which the dashboard sends to records/query: one
// query path, whichever way the predicate was written. `cirrus/explain` plans the same query as
// records/query would (and runs its first page): the plan tree with estimated and actual rows, the
// plans it beat, and the index options the query needs (`missing` in this schema: the advisor).

import Cirrus
import PredicateSyntax
import QueryChecker
import QueryPlanner
import RecordModel

extension WebServicesAPI {
    func schemaJSON(db: Database) -> JSONValue {
        let schema = db.schema
        let types = schema.recordTypes.values.sorted { $0.name < $1.name }.map { t -> JSONValue in
            .object([
                ("name", .string(t.name)),
                (
                    "fields",
                    .array(
                        t.sortedFields.map { f in
                            var options: [JSONValue] = []
                            if f.options.contains(.queryable) { options.append(.string("QUERYABLE")) }
                            if f.options.contains(.sortable) { options.append(.string("SORTABLE")) }
                            if f.options.contains(.searchable) { options.append(.string("SEARCHABLE")) }
                            return .object([
                                ("name", .string(f.name)), ("type", .string(f.type.description)),
                                ("options", .array(options)),
                            ])
                        })
                ),
            ])
        }
        return .object([("environment", .string(db.environment.rawValue)), ("recordTypes", .array(types))])
    }

    func checkPredicate(_ body: JSONBody, db: Database) throws(WebServicesError) -> JSONValue {
        let recordType = try body["recordType"].string()
        let predicate = try body["predicate"].string()
        guard predicate.utf8.count <= 16_384 else { throw body["predicate"].fail("longer than 16384 bytes") }
        let text = predicate.trimmingCharacters(in: .whitespaces).isEmpty ? "TRUEPREDICATE" : predicate
        var variables: [String: PredicateArgument] = [:]
        let given = body["variables"]
        if given.isPresent {
            guard case .object(let members)? = given.value else { throw given.fail("expected an object") }
            guard members.count <= 64 else { throw given.fail("\(members.count) variables; the limit is 64") }
            for (name, _) in members {
                let value = try given[name].decode { (j) throws(WebServicesJSONError) in
                    try FieldValue(webServicesJSON: j)
                }
                variables[name] = .value(value)
            }
        }
        do {
            let checked = try QueryChecker.parseAndCheck(
                text, context: CheckContext(variables: variables, schema: db.schema, recordType: recordType)
            ).checked
            return .object([
                ("ok", .bool(true)), ("filterBy", .array(checked.predicate.filters.map(\.webServicesJSON))),
                ("warnings", .array(checked.warnings.map { .string("\($0)") })),
            ])
        } catch {
            func utf16(_ byte: Int) -> Int64 {
                let bytes = Array(text.utf8)
                let prefix = bytes.prefix(max(0, min(byte, bytes.count)))
                return Int64(String(decoding: prefix, as: UTF8.self).utf16.count)
            }
            var m: [(String, JSONValue)] = [("ok", .bool(false)), ("message", .string(error.message))]
            if let hint = error.hint { m.append(("hint", .string(hint))) }
            m += [("start", .integer(utf16(error.range.start))), ("end", .integer(utf16(error.range.end)))]
            return .object(m)
        }
    }

    func explainQuery(_ body: JSONBody, db: Database) async throws(WebServicesError) -> JSONValue {
        let limit = Int(try body["resultsLimit"].optionalInt(in: 0...Int64(limits.maximumResults)) ?? 0)
        let zone = try body["zoneID"].zoneID() ?? .default
        let parsed = try recordQuery(body["query"])
        let e: QueryExplanation
        do throws(CirrusError) {
            e = try await db.explain(parsed.query, inZoneWith: zone, resultsLimit: limit)
        } catch {
            if error.code == .invalidArguments,
                let located = Self.locate(
                    filters: parsed.filters, sorts: parsed.sorts, recordType: parsed.query.recordType, db: db)
            {
                throw located
            }
            throw WebServicesError(error)
        }
        func node(_ n: PlanNode) -> JSONValue {
            var m: [(String, JSONValue)] = [
                ("operator", .string(n.summary)), ("estimatedRows", .number(n.estimatedRows.rounded())),
            ]
            if let a = e.actual[n.id] { m.append(("actualRows", .integer(Int64(a)))) }
            m.append(("children", .array(n.children.map(node))))
            return .object(m)
        }
        // Another engine's plan (PostgreSQL's EXPLAIN): its first plan line as the root, the
        // others as its children, each with the rows the line estimates.
        func engineNode(_ line: String, children: [JSONValue]) -> JSONValue {
            var rows = 0.0
            if let r = line.range(of: "rows=") {
                rows = Double(line[r.upperBound...].prefix(while: \.isNumber)) ?? 0
            }
            return .object([
                ("operator", .string(line.trimmingCharacters(in: .whitespaces))), ("estimatedRows", .number(rows)),
                ("children", .array(children)),
            ])
        }
        let plan: JSONValue
        if let p = e.plan {
            plan = node(p.root)
        } else {
            let lines = e.enginePlan.filter { $0.contains("cost=") }
            plan = engineNode(
                lines.first ?? "\(db.engineName) plan", children: lines.dropFirst().map { engineNode($0, children: []) }
            )
        }
        var out: [(String, JSONValue)] = [
            ("plan", plan), ("cost", .number(e.plan?.cost ?? 0)),
            (
                "rejected",
                .array(
                    (e.plan?.rejected ?? []).map {
                        .object([("summary", .string($0.summary)), ("cost", .number($0.cost))])
                    })
            ),
            (
                "indexes",
                .array(
                    e.requiredIndexes.map {
                        .object([("index", .string($0.description)), ("missing", .bool(e.missingIndexes.contains($0)))])
                    })
            ),
            ("warnings", .array(e.warnings.map { .string($0) })), ("text", .string(e.text)),
        ]
        if let r = e.returned { out.append(("returned", .integer(Int64(r)))) }
        return .object(out)
    }
}
