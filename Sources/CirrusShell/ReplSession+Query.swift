// ReplSession+Query: `check`, `query`/`find`, `next`, `explain`, `let`/`vars`/`unset`, `use`.
//
// A query line is `query [TYPE] [where PREDICATE] [sort SPEC, …] [limit N] [keys F, …]`. The
// predicate is checked before anything runs; a rejection is shown with a caret under its part of
// the *input line* (the checker's byte ranges are shifted by where the predicate starts).

import Cirrus
import CoreDataMirror
import Foundation
import PredicateSyntax
import QueryChecker
import RecordModel

extension ReplSession {
    static let clauseKeywords: Set<String> = ["where", "sort", "limit", "keys"]

    // MARK: check

    mutating func check(_ line: String, from: Int) throws(ReplError) -> String {
        let source = String(decoding: Array(line.utf8)[min(from, line.utf8.count)...], as: UTF8.self)
        guard !source.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw ReplError("check needs a predicate", hint: "example: check kind == 'cafe' AND population > 100")
        }
        if let t = currentType, isEntity(t) { return try checkMirrored(source, entity: t, from: from) }
        var ctx = CheckContext(variables: variables, now: Timestamp(Date()))
        if let t = currentType { ctx.schema = container.schema; ctx.recordType = t }
        let report = CheckReport(predicate: source, context: ctx)
        if json { return report.json.jsonText + "\n" }
        switch report.outcome {
        case .accepted: return report.text
        case .rejected(let e): throw shifted(e, by: from)
        }
    }

    func shifted(_ e: CheckerError, by offset: Int) -> ReplError {
        let kind = e.kind == .syntax ? "syntax error: " : ""
        return ReplError(kind + e.message, hint: e.hint, at: SourceRange(e.range.start + offset, e.range.end + offset))
    }

    // MARK: query, next, explain

    /// Parses `[TYPE] [where …] [sort …] [limit N] [keys …]` starting at byte `from`.
    func parseQuery(_ line: String, from: Int) throws(ReplError) -> (QueryRequest, predicateStart: Int) {
        let clauses = ReplLine.clauses(line, from: from, keywords: Self.clauseKeywords)
        var type = currentType
        var request = QueryRequest(recordType: "", variables: variables, zone: zone)
        var predicateStart = 0
        var seen = Set<String>()
        var typeSpan: Span? = nil
        for (keyword, body) in clauses {
            guard let keyword else {
                let w = ReplLine.words(body.text)
                guard w.count == 1 else {
                    throw ReplError(
                        "expected a record type, then where / sort / limit / keys",
                        hint: "example: query Place where kind == 'cafe' limit 5", span: body)
                }
                type = body.text
                typeSpan = body
                continue
            }
            guard seen.insert(keyword.text).inserted else {
                throw ReplError("\(keyword.text) given twice", span: keyword)
            }
            switch keyword.text {
            case "where":
                guard !body.text.isEmpty else { throw ReplError("where needs a predicate", span: keyword) }
                request.predicate = body.text
                predicateStart = body.start
            case "sort":
                request.sorts = try parseSorts(body, after: keyword, type: type)
            case "limit":
                guard let n = Int(body.text), (1...10_000).contains(n) else {
                    throw ReplError("limit takes a number from 1 to 10000", span: body.text.isEmpty ? keyword : body)
                }
                request.limit = n
            default:  // keys
                request.keys = body.text.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
            }
        }
        guard let type else {
            throw ReplError(
                "which record type?",
                hint: "name it (query Place where …) or set one with `use Place`; `types` lists them",
                at: SourceRange(from, from + 1))
        }
        if isEntity(type) {
            request.recordType = type
            return (request, predicateStart)
        }
        if container.schema.recordTypes[type] == nil || type == Schema.usersRecordType {
            let known = container.schema.sortedRecordTypes.map(\.name).filter { $0 != Schema.usersRecordType }
            let span = typeSpan ?? Span(text: type, start: from, end: from + 1)
            throw ReplError(
                "no record type \"\(type)\"", hint: "the types are \(known.joined(separator: ", "))", span: span)
        }
        request.recordType = type
        return (request, predicateStart)
    }

    func parseSorts(_ body: Span, after keyword: Span, type: String?) throws(ReplError) -> [RecordModel.SortDescriptor]
    {
        var out: [RecordModel.SortDescriptor] = []
        let words = ReplLine.words(body.text)
        guard !words.isEmpty else { throw ReplError("sort needs FIELD, -FIELD or FIELD@LAT,LON", span: keyword) }
        for w in words {
            var text = w.text
            while text.hasSuffix(",") { text.removeLast() }
            if text.isEmpty { continue }
            let span = Span(text: text, start: body.start + w.start, end: body.start + w.start + text.utf8.count)
            if ["asc", "desc"].contains(text.lowercased()), case .field(let f, _)? = out.last {
                out[out.count - 1] = .field(f, ascending: text.lowercased() == "asc")
                continue
            }
            let sort: RecordModel.SortDescriptor
            do {
                sort = try QueryCommands.parseSort(text, variables: variables)
            } catch {
                throw ReplError(error.message, span: span)
            }
            try checkSortField(sort, type: type, span: span)
            out.append(sort)
        }
        return out
    }

    /// A sort must name a field of the type (or a system field); a nearest-first sort a LOCATION field.
    func checkSortField(_ sort: RecordModel.SortDescriptor, type: String?, span: Span) throws(ReplError) {
        guard let type, let schema = container.schema.recordTypes[type] else { return }
        let field: String
        var needsLocation = false
        switch sort {
        case .field(let f, _): field = f
        case .distance(let f, _): field = f; needsLocation = true
        }
        let system = SystemField.allCases.map(\.rawValue)
        guard let f = schema.fields[field] else {
            if system.contains(field) && !needsLocation { return }
            throw ReplError(
                "no field \"\(field)\" in \(type)",
                hint: "fields: " + schema.sortedFields.map(\.name).joined(separator: ", "), span: span)
        }
        if needsLocation, f.type.scalar != .location || f.type.isList {
            throw ReplError("\(field) is not a LOCATION field: nearest-first sorts need one", span: span)
        }
    }

    /// Checks the predicate of a parsed query (caret in the input line).
    func precheck(_ request: QueryRequest, predicateStart: Int) throws(ReplError) {
        if let rejected = QueryCommands.precheck(request, in: database), case .rejected(let e) = rejected.outcome {
            throw shifted(e, by: predicateStart)
        }
    }

    /// The steps `query` and `explain` share: parse the query at `from`, mirror Core Data names,
    /// then check the predicate (or, when the mirror rewrote it, resolve its lookups). Returns the
    /// mirrored request before resolving, the request to run, and the rewrite notes to print.
    func prepareQuery(
        _ line: String, from: Int
    ) async throws(ReplError) -> (mirrored: QueryRequest, request: QueryRequest, rewritten: String) {
        let (typed, start) = try parseQuery(line, from: from)
        let (mirrored, rewritten) = try mirror(typed, predicateStart: start)
        let request: QueryRequest
        if rewritten.isEmpty {
            request = mirrored
            try precheck(request, predicateStart: start)
        } else {
            request = try await resolveMirrored(mirrored)
        }
        return (mirrored, request, rewritten)
    }

    mutating func query(_ line: String, _ words: [Span], from: Int) async throws(ReplError) -> String {
        let (_, request, rewritten) = try await prepareQuery(line, from: from)
        let db = database
        do {
            let page = try await db.records(
                matching: request.recordQuery, inZoneWith: request.zone, desiredKeys: request.fetchKeys,
                resultsLimit: request.limit)
            lastQuery = request
            lastCursor = page.queryCursor
            pageNumber = 1
            let table = render(try pageRecords(page.matchResults), request, db)
            return json ? table : rewritten + table
        } catch {
            throw ReplError(wrapping: error)
        }
    }

    mutating func next(_ words: [Span]) async throws(ReplError) -> String {
        guard let request = lastQuery else {
            throw ReplError("no query yet", hint: "run a query first, e.g. query Place sort name limit 5")
        }
        guard let cursor = lastCursor else { throw ReplError("no more pages: the last page had no cursor") }
        var limit = request.limit
        if words.count > 1 {
            guard let n = Int(words[1].text), (1...10_000).contains(n) else {
                throw ReplError("next takes a page size from 1 to 10000", span: words[1])
            }
            limit = n
        }
        let db = database
        do {
            let page = try await db.records(
                continuingMatchFrom: cursor, desiredKeys: request.fetchKeys, resultsLimit: limit)
            lastCursor = page.queryCursor
            pageNumber += 1
            return render(try pageRecords(page.matchResults), request, db)
        } catch {
            throw ReplError(wrapping: error)
        }
    }

    func render(_ records: [Record], _ request: QueryRequest, _ db: Database) -> String {
        let token = lastCursor.map { db.token(for: $0) }
        if json { return QueryCommands.pageJSON(records, cursor: token).jsonText + "\n" }
        var out =
            records.isEmpty
            ? ""
            : QueryCommands.table(
                records, keys: request.keys, schema: db.schema.recordTypes[request.recordType],
                sorts: request.sorts, width: width)
        out += "\(records.count) record\(records.count == 1 ? "" : "s")"
        if pageNumber > 1 { out += " (page \(pageNumber))" }
        out += lastCursor == nil ? "\n" : "; more: type `next`\n"
        return out
    }

    mutating func explain(_ line: String, _ words: [Span], from: Int) async throws(ReplError) -> String {
        let (mirrored, request, rewritten) = try await prepareQuery(line, from: from)
        do {
            let e = try await database.explain(
                request.recordQuery, inZoneWith: request.zone, resultsLimit: request.limit)
            return rewritten + QueryCommands.lookupCounts(mirrored, request) + e.text
        } catch {
            throw ReplError(wrapping: error)
        }
    }

    // MARK: variables and the current type

    mutating func bind(_ line: String, _ words: [Span]) throws(ReplError) -> String {
        guard words.count >= 4, words[2].text == "=" else {
            throw ReplError(
                "expected let NAME = VALUE", hint: "example: let here = location 48.8584 2.2945",
                at: words.count > 1 ? SourceRange(words[1].start, words.last?.end ?? words[1].end) : nil)
        }
        let name = words[1].text.hasPrefix("$") ? String(words[1].text.dropFirst()) : words[1].text
        guard QueryCommands.isFieldName(name) else {
            throw ReplError("\"\(words[1].text)\" is not a variable name", span: words[1])
        }
        let valueSpan = ReplLine.trimmed(Array(line.utf8), words[3].start, line.utf8.count)
        let kind = words[3].text.lowercased()
        let args = Array(words.dropFirst(4))
        let value: PredicateArgument
        switch kind {
        case "location":
            let nums = args.flatMap { $0.text.split(separator: ",") }.map { Double($0) }
            guard nums.count == 2, let lat = nums[0], let lon = nums[1], (-90...90).contains(lat),
                (-180...180).contains(lon)
            else {
                throw ReplError(
                    "a location is LATITUDE LONGITUDE in degrees", hint: "example: let here = location 48.8584 2.2945",
                    span: valueSpan)
            }
            value = .value(.location(Location(latitude: lat, longitude: lon)))
        case "date":
            guard args.count == 1, let t = Self.parseDate(args[0].text) else {
                throw ReplError(
                    "a date is YYYY-MM-DD, an ISO 8601 date-time or now", hint: "example: let since = date 2024-05-01",
                    span: valueSpan)
            }
            value = .value(.date(t))
        case "ref":
            guard args.count == 1 else { throw ReplError("a reference is ref RECORDNAME", span: valueSpan) }
            value = .value(
                .reference(Reference(recordID: RecordID(recordName: args[0].text, zoneID: zone ?? .default))))
        default:
            do {
                value = try PredicateArgument(argumentJSON: valueSpan.text)
            } catch {
                throw ReplError(
                    error.message,
                    hint:
                        "a value is location LAT LON, date ISO-DATE, ref NAME, or ARG JSON such as \"cafe\", 42, "
                        + "[\"a\", \"b\"]",
                    span: valueSpan)
            }
        }
        variables[name] = value
        return "$\(name) = \(Self.describe(value))\n"
    }

    static func describe(_ a: PredicateArgument) -> String {
        switch a {
        case .key(let k): return "KEY \(k)"
        case .value(let v): return "\(v.typeName) \(v)"
        }
    }

    static func parseDate(_ s: String) -> Timestamp? {
        if s.lowercased() == "now" { return Timestamp(Date()) }
        let full = ISO8601DateFormatter()
        if let d = full.date(from: s) { return Timestamp(d) }
        let day = ISO8601DateFormatter()
        day.formatOptions = [.withFullDate]
        return day.date(from: s).map { Timestamp($0) }
    }

    func listVariables() -> String {
        if variables.isEmpty { return "no variables; bind one with: let here = location 48.8584 2.2945\n" }
        return variables.keys.sorted().map { "$\($0) = \(Self.describe(variables[$0] ?? .key("")))\n" }.joined()
    }

    mutating func unset(_ words: [Span]) throws(ReplError) -> String {
        guard words.count == 2 else { throw ReplError("expected unset NAME") }
        let name = words[1].text.hasPrefix("$") ? String(words[1].text.dropFirst()) : words[1].text
        guard variables.removeValue(forKey: name) != nil else {
            throw ReplError("no variable $\(name)", span: words[1])
        }
        return "unset $\(name)\n"
    }

    mutating func use(_ words: [Span]) throws(ReplError) -> String {
        guard words.count == 2 else { throw ReplError("expected use TYPE", hint: "`types` lists the record types") }
        let t = words[1].text
        if isEntity(t) {
            currentType = t
            return
                "using entity \(t) (mirrored as "
                + "\(CloudKitMirror.recordType(forRoot: coreDataModel?.root(of: t) ?? t)))\n"
        }
        guard container.schema.recordTypes[t] != nil, t != Schema.usersRecordType else {
            let known = container.schema.sortedRecordTypes.map(\.name).filter { $0 != Schema.usersRecordType }
            throw ReplError(
                "no record type \"\(t)\"", hint: "the types are \(known.joined(separator: ", "))", span: words[1])
        }
        currentType = t
        return "using \(t)\n"
    }
}
