// records/query, records/modify, records/lookup (records/changes: WebServicesAPI+Changes.swift).
//
// Bodies and answers are CloudKit Web Services' (docs/web-services.md). A query's `filterBy` and
// `sortBy` become a format string and arguments and run through `Database.records(matching:)`;
// when the checker refuses them, the filter or sort at fault is found by checking each alone, so
// the error names `query.filterBy[i]` instead of a position in a generated format string.

import Cirrus
import Foundation
import QueryChecker
import QueryExecution
import RecordModel

extension WebServicesAPI {
    // MARK: records/query

    func query(_ body: JSONBody, db: Database) async throws(WebServicesError) -> JSONValue {
        try await queryPage(body, db: db).json
    }

    /// records/query's page, before it becomes JSON (RecordsPage writes it straight to bytes).
    func queryPage(_ body: JSONBody, db: Database) async throws(WebServicesError) -> RecordsPage {
        let limit = Int(try body["resultsLimit"].optionalInt(in: 0...Int64(limits.maximumResults)) ?? 0)
        let desiredKeys = try body["desiredKeys"].strings(limit: 1_000)
        let zone = try body["zoneID"].zoneID()
        let marker = try body["continuationMarker"].optionalString()
        let q = body["query"]
        let request: RecordQuery?
        var filters: [QueryFilter] = []
        var sorts: [RecordModel.SortDescriptor] = []
        if q.isPresent || marker == nil {
            let parsed = try recordQuery(q)
            (request, filters, sorts) = (parsed.query, parsed.filters, parsed.sorts)
        } else {
            request = nil
        }
        let page: (matchResults: [(RecordID, Result<Record, CirrusError>)], queryCursor: QueryCursor?)
        do throws(CirrusError) {
            if let marker {
                let cursor = try db.cursor(fromToken: marker, expecting: request)
                page = try await db.records(continuingMatchFrom: cursor, desiredKeys: desiredKeys, resultsLimit: limit)
            } else {
                // No zoneID: the default zone, as CloudKit (not every zone of the database).
                page = try await db.records(
                    matching: request!, inZoneWith: zone ?? .default, desiredKeys: desiredKeys, resultsLimit: limit)
            }
        } catch {
            if error.code == .invalidArguments, let request,
                let located = Self.locate(filters: filters, sorts: sorts, recordType: request.recordType, db: db)
            {
                throw located
            }
            if error.code == .invalidArguments && marker != nil {
                throw WebServicesError(.badRequest, "continuationMarker: \(error.message)")
            }
            throw WebServicesError(error)
        }
        return RecordsPage(items: page.matchResults, continuationMarker: page.queryCursor.map { db.token(for: $0) })
    }

    /// A `query` object (recordType, filterBy, sortBy) as a format-string query, with its parts.
    func recordQuery(
        _ q: BodyNode
    ) throws(WebServicesError) -> (
        query: RecordQuery, filters: [QueryFilter], sorts: [RecordModel.SortDescriptor]
    ) {
        let recordType = try q["recordType"].string()
        var filters: [QueryFilter] = []
        var sorts: [RecordModel.SortDescriptor] = []
        for f in try q["filterBy"].array(limit: limits.maximumOperations) {
            filters.append(try f.decode { (j) throws(WebServicesJSONError) in try QueryFilter(webServicesJSON: j) })
        }
        for s in try q["sortBy"].array(limit: 16) {
            sorts.append(
                try s.decode { (j) throws(WebServicesJSONError) in
                    try RecordModel.SortDescriptor(webServicesJSON: j)
                })
        }
        let (format, arguments) = (filters.isEmpty ? QueryPredicate.all : .filters(filters)).predicateFormat
        return (
            RecordQuery(recordType: recordType, predicate: format, arguments: arguments, sortDescriptors: sorts),
            filters, sorts
        )
    }

    /// The first filter or sort the checker refuses on its own, as a BAD_REQUEST naming it.
    static func locate(
        filters: [QueryFilter], sorts: [RecordModel.SortDescriptor], recordType: String, db: Database
    )
        -> WebServicesError?
    {
        let context = CheckContext(schema: db.schema, recordType: recordType)
        for (i, f) in filters.enumerated() {
            let (format, arguments) = f.predicateFormat
            var c = context
            c.arguments = arguments
            do {
                _ = try QueryChecker.check(format, context: c)
            } catch {
                return WebServicesError(.badRequest, "query.filterBy[\(i)]: \(error)")
            }
        }
        for (j, s) in sorts.enumerated() {
            do {
                try QueryChecker.checkSort([s], context: context)
            } catch {
                return WebServicesError(.badRequest, "query.sortBy[\(j)]: \(error)")
            }
        }
        return nil
    }

    static func recordJSON(_ item: (RecordID, Result<Record, CirrusError>)) -> JSONValue {
        switch item.1 {
        case .success(let r): r.webServicesJSON
        case .failure(let e): errorJSON(WebServicesError(e), id: item.0)
        }
    }

    static func errorJSON(_ e: WebServicesError, id: RecordID) -> JSONValue {
        var e = e
        e.recordName = id.recordName
        return e.json
    }

    // MARK: records/modify

    /// CloudKit's operation types and what each does.
    enum OperationType: String, CaseIterable {
        case create, update, forceUpdate, replace, forceReplace, delete, forceDelete

        /// How a save operation saves (nil for deletions): create fails when the record exists,
        /// update and replace check the change tag (update keeps fields it does not send), the
        /// force forms do not check it.
        var saveRule: (policy: SavePolicy, merging: Bool, needsTag: Bool)? {
            switch self {
            case .create: (.ifServerRecordUnchanged, false, false)
            case .update: (.ifServerRecordUnchanged, true, true)
            case .replace: (.ifServerRecordUnchanged, false, true)
            case .forceUpdate: (.changedKeys, false, false)
            case .forceReplace: (.allKeys, false, false)
            case .delete, .forceDelete: nil
            }
        }
    }

    func modify(_ body: JSONBody, db: Database) async throws(WebServicesError) -> JSONValue {
        let atomic = try body["atomic"].bool(default: true)
        let zone = try body["zoneID"].zoneID()
        let desiredKeys = try body["desiredKeys"].strings(limit: 1_000)
        var operations: [RecordOperation] = []
        var types: [OperationType] = []
        for op in try body["operations"].array(limit: limits.maximumOperations) {
            let name = try op["operationType"].string()
            guard let type = OperationType(rawValue: name) else {
                throw op["operationType"].fail(
                    "unknown operation type \"\(name)\" (\(OperationType.allCases.map(\.rawValue).joined(separator: ", ")))"
                )
            }
            types.append(type)
            operations.append(try Self.operation(type, op["record"], zone: zone))
        }
        if operations.isEmpty { throw body["operations"].fail("no operations") }
        let results: [(RecordID, Result<Record?, CirrusError>)]
        do throws(CirrusError) {
            results = try await db.modify(operations, atomically: atomic)
        } catch {
            throw WebServicesError(error)
        }
        let records: [JSONValue] = zip(results, types).map { item, type in
            let (id, result) = item
            switch result {
            case .success(let r?): return r.projected(to: desiredKeys).webServicesJSON
            case .success(nil):
                return .object([("recordName", .string(id.recordName)), ("deleted", .bool(true))])
            case .failure(let e):
                var w = WebServicesError(e)
                if type == .create && e.code == .serverRecordChanged {
                    w = WebServicesError(.exists, "a record named \"\(id.recordName)\" already exists")
                }
                return Self.errorJSON(w, id: id)
            }
        }
        return .object([("records", .array(records))])
    }

    static func operation(
        _ type: OperationType, _ node: BodyNode, zone: ZoneID?
    ) throws(WebServicesError)
        -> RecordOperation
    {
        guard case .object(var members)? = node.value else { throw node.fail("expected a record object") }
        if !members.contains(where: { $0.0 == "zoneID" }), let zone {
            members.append(("zoneID", zone.webServicesJSON))
        }
        guard let rule = type.saveRule else {
            let name = try node["recordName"].string()
            let z = try BodyNode(value: .object(members), path: node.path)["zoneID"].zoneID() ?? .default
            let tag = type == .delete ? try node["recordChangeTag"].optionalString() : nil
            return .delete(RecordID(recordName: name, zoneID: z), ifChangeTag: tag)
        }
        if type == .create && !members.contains(where: { $0.0 == "recordName" }) {
            members.append(("recordName", .string(UUID().uuidString)))
        }
        let full = BodyNode(value: .object(members), path: node.path)
        var record = try full.decode { (j) throws(WebServicesJSONError) in try Record(webServicesJSON: j) }
        if type == .create { record.recordChangeTag = nil }
        if rule.needsTag && record.recordChangeTag == nil {
            throw node["recordChangeTag"].fail(
                "\(type.rawValue) needs the record's recordChangeTag (or use force\(type == .update ? "Update" : "Replace"))"
            )
        }
        return .save(record, rule.policy, mergingFields: rule.merging)
    }

    // MARK: records/lookup

    func lookup(_ body: JSONBody, db: Database) async throws(WebServicesError) -> JSONValue {
        let zone = try body["zoneID"].zoneID() ?? .default
        let desiredKeys = try body["desiredKeys"].strings(limit: 1_000)
        var ids: [RecordID] = []
        for r in try body["records"].array(limit: limits.maximumOperations) {
            ids.append(RecordID(recordName: try r["recordName"].string(), zoneID: try r["zoneID"].zoneID() ?? zone))
        }
        if ids.isEmpty { throw body["records"].fail("no records to look up") }
        do throws(CirrusError) {
            let found = try await db.records(for: ids)
            return .object([
                ("records", .array(found.map { Self.recordJSON(($0.0, $0.1.map { $0.projected(to: desiredKeys) })) }))
            ])
        } catch {
            throw WebServicesError(error)
        }
    }
}
