// The remote backend: every database call is a CloudKit Web Services request (records/lookup,
// records/modify, records/query, zones/*, records/changes, changes/database, subscriptions/*,
// assets/*, users/*) built and read with RecordModel's Web Services JSON. A query's predicate is
// checked here first, without a schema — the same checker, so the same message, caret and hint
// as embedded — and sent as the `filterBy` list; the server checks it against its schema.

import Cirrus
import QueryChecker
import RecordModel

import struct QueryChecker.PredicateError

/// A container on a Web Services server.
struct RemoteContainer: ContainerBackend {
    let client: WebServicesClient

    func database(_ scope: CKDatabase.Scope) -> any DatabaseBackend {
        switch scope {
        case .public: return RemoteDatabase(client: client, name: "public")
        case .private: return RemoteDatabase(client: client, name: "private")
        case .shared:
            return FailingBackend(error: CKError(.badDatabase, "the shared database is not supported by Cirrus"))
        }
    }

    func accountStatus() async throws(CKError) -> CKAccountStatus {
        do {
            _ = try await client.post("public", "users/caller", .object([]))
            return .available
        } catch  where error.code == .notAuthenticated && !client.hasUser {
            return .noAccount
        }
    }

    func userRecordName() async throws(CKError) -> String {
        let j = try await client.post("public", "users/caller", .object([]))
        guard let name = j["userRecordName"]?.stringValue else {
            throw CKError(.internalError, "users/caller answered no userRecordName")
        }
        return name
    }

    func discover(_ lookup: UserLookupInfo) async throws(CKError) -> FoundUser? {
        let info: JSONValue
        switch lookup {
        case .emailAddress(let e): info = .object([("emailAddress", .string(e))])
        case .phoneNumber(let p): info = .object([("phoneNumber", .string(p))])
        case .userRecordName(let n): info = .object([("userRecordName", .string(n))])
        }
        let j = try await client.post("public", "users/discover", .object([("lookupInfos", .array([info]))]))
        guard case .array(let users)? = j["users"], let u = users.first, let name = u["userRecordName"]?.stringValue
        else { return nil }
        let n = u["nameComponents"]
        return FoundUser(
            userRecordName: name, givenName: n?["givenName"]?.stringValue, familyName: n?["familyName"]?.stringValue)
    }
}

/// One database on a Web Services server.
struct RemoteDatabase: DatabaseBackend {
    let client: WebServicesClient
    /// `public` or `private`.
    let name: String
    /// Web Services' limit of operations per request.
    static let batch = 200

    func post(_ operation: String, _ members: [(String, JSONValue)]) async throws(CKError) -> JSONValue {
        try await client.post(name, operation, .object(members))
    }

    func records(
        for ids: [RecordID], desiredKeys: [String]?
    ) async throws(CKError) -> [(
        RecordID, Result<Record, CKError>
    )] {
        var out: [(RecordID, Result<Record, CKError>)] = []
        for start in stride(from: 0, to: ids.count, by: Self.batch) {
            let chunk = ids[start..<min(ids.count, start + Self.batch)]
            var body: [(String, JSONValue)] = [
                (
                    "records",
                    .array(
                        chunk.map {
                            .object([("recordName", .string($0.recordName)), ("zoneID", $0.zoneID.webServicesJSON)])
                        })
                )
            ]
            if let desiredKeys { body.append(("desiredKeys", .array(desiredKeys.map { .string($0) }))) }
            let items = try await post("records/lookup", body)["records"]?.arrayValue ?? []
            for (i, id) in chunk.enumerated() {
                out.append((id, i < items.count ? Self.record(items[i]) : .failure(CKError(.unknownItem, "not found"))))
            }
        }
        return out
    }

    /// A record object or an error object.
    static func record(_ j: JSONValue) -> Result<Record, CKError> {
        if j["serverErrorCode"] != nil { return .failure(RemoteErrors.error(j)) }
        do throws(WebServicesJSONError) {
            return .success(try Record(webServicesJSON: j))
        } catch {
            return .failure(CKError(.internalError, "the server answered a record that does not read: \(error)"))
        }
    }

    func modify(
        _ operations: [RecordOperation], atomically: Bool
    ) async throws(CKError) -> [(
        RecordID, Result<Record?, CKError>
    )] {
        var out: [(RecordID, Result<Record?, CKError>)] = []
        for start in stride(from: 0, to: operations.count, by: Self.batch) {
            let chunk = Array(operations[start..<min(operations.count, start + Self.batch)])
            let ops = chunk.map(Self.operationJSON)
            let items =
                try await post("records/modify", [("operations", .array(ops)), ("atomic", .bool(atomically))])[
                    "records"]?
                .arrayValue ?? []
            for (i, op) in chunk.enumerated() {
                let id: RecordID
                switch op {
                case .save(let r, _, _): id = r.recordID
                case .delete(let d, _): id = d
                }
                guard i < items.count else {
                    out.append((id, .failure(CKError(.internalError, "no result"))))
                    continue
                }
                let item = items[i]
                if item["deleted"]?.boolValue == true {
                    out.append((id, .success(nil)))
                } else if item["serverErrorCode"]?.stringValue == "EXISTS" {
                    // A new record whose name is taken: CloudKit's serverRecordChanged, with the server's record.
                    var e = RemoteErrors.error(item)
                    if case .success(let server)? = try? await records(for: [id], desiredKeys: nil).first?.1 {
                        e = e.adding(
                            CKRecordChangedErrorServerRecordKey,
                            CKRecord(server, asset: { CKAsset(stored: $0, file: nil) }))
                    }
                    out.append((id, .failure(e)))
                } else {
                    out.append((id, Self.record(item).map { $0 }))
                }
            }
        }
        return out
    }

    /// The Web Services operation of a façade operation: a new record is `create`, a fetched
    /// one `update` (its changed keys merged) or `replace` (when a key was removed) — all
    /// check the change tag —, `.changedKeys` is `forceUpdate`, `.allKeys` `forceReplace`;
    /// deletions are `forceDelete` (CloudKit deletes whatever the tag).
    static func operationJSON(_ op: RecordOperation) -> JSONValue {
        switch op {
        case .save(let r, let policy, let merging):
            let type: String =
                switch policy {
                case .ifServerRecordUnchanged: r.recordChangeTag == nil ? "create" : merging ? "update" : "replace"
                case .changedKeys: "forceUpdate"
                case .allKeys: "forceReplace"
                }
            return .object([("operationType", .string(type)), ("record", r.webServicesJSON)])
        case .delete(let id, let tag):
            var rec: [(String, JSONValue)] = [
                ("recordName", .string(id.recordName)), ("zoneID", id.zoneID.webServicesJSON),
            ]
            if let tag { rec.append(("recordChangeTag", .string(tag))) }
            return .object([
                ("operationType", .string(tag == nil ? "forceDelete" : "delete")), ("record", .object(rec)),
            ])
        }
    }

    func query(_ q: RecordQuery, zone: ZoneID?, desiredKeys: [String]?, limit: Int) async throws(CKError) -> QueryPage {
        let filters = try Self.check(q)
        guard let filters else { return QueryPage(matches: [], cursor: nil) }
        return try await runQuery(q, filters: filters, zone: zone, desiredKeys: desiredKeys, limit: limit, marker: nil)
    }

    func query(
        continuing cursor: CKQueryCursor, desiredKeys: [String]?, limit: Int
    ) async throws(CKError)
        -> QueryPage
    {
        let filters = try Self.check(cursor.query) ?? []
        return try await runQuery(
            cursor.query, filters: filters, zone: cursor.zoneID, desiredKeys: desiredKeys, limit: limit,
            marker: cursor.marker)
    }

    /// The query's filters, checked here without a schema (nil: it matches nothing).
    static func check(_ q: RecordQuery) throws(CKError) -> [QueryFilter]? {
        let context = CheckContext(
            arguments: q.arguments, variables: q.variables, now: Timestamp(Date()), source: q.predicate)
        do throws(PredicateError) {
            let checked = try QueryChecker.check(q.predicate, context: context)
            try QueryChecker.checkSort(q.sortDescriptors, context: context)
            switch checked.predicate {
            case .none: return nil
            case .all: return []
            case .filters(let f): return f
            }
        } catch {
            throw CKError(.invalidArguments, error.range == .none ? error.message : error.rendered(source: q.predicate))
        }
    }

    func runQuery(
        _ q: RecordQuery, filters: [QueryFilter], zone: ZoneID?, desiredKeys: [String]?, limit: Int, marker: String?
    ) async throws(CKError) -> QueryPage {
        var body: [(String, JSONValue)] = [
            (
                "query",
                .object([
                    ("recordType", .string(q.recordType)), ("filterBy", .array(filters.map(\.webServicesJSON))),
                    ("sortBy", .array(q.sortDescriptors.map { $0.webServicesJSON })),
                ])
            )
        ]
        if let zone { body.append(("zoneID", zone.webServicesJSON)) }
        if let desiredKeys { body.append(("desiredKeys", .array(desiredKeys.map { .string($0) }))) }
        if limit > 0 { body.append(("resultsLimit", .integer(Int64(min(limit, Self.batch))))) }
        if let marker { body.append(("continuationMarker", .string(marker))) }
        let j = try await post("records/query", body)
        let matches = (j["records"]?.arrayValue ?? []).map { item -> (RecordID, Result<Record, CKError>) in
            let id = RecordID(recordName: item["recordName"]?.stringValue ?? "", zoneID: zone ?? .default)
            return (id, Self.record(item))
        }
        let next = j["continuationMarker"]?.stringValue.map { CKQueryCursor(marker: $0, query: q, zoneID: zone) }
        return QueryPage(matches: matches, cursor: next)
    }

    func allZones() async throws(CKError) -> [ZoneID] {
        try await post("zones/list", []).zoneIDs
    }

    func modifyZones(
        saving: [ZoneID], deleting: [ZoneID]
    ) async throws(CKError) -> (
        saved: [(ZoneID, Result<ZoneID, CKError>)], deleted: [(ZoneID, Result<Void, CKError>)]
    ) {
        let ops: [JSONValue] =
            saving.map {
                .object([("operationType", .string("create")), ("zone", .object([("zoneID", $0.webServicesJSON)]))])
            }
            + deleting.map {
                .object([("operationType", .string("delete")), ("zone", .object([("zoneID", $0.webServicesJSON)]))])
            }
        guard !ops.isEmpty else { return ([], []) }
        let items = try await post("zones/modify", [("operations", .array(ops))])["zones"]?.arrayValue ?? []
        func item(_ i: Int) -> CKError? {
            guard i < items.count else { return CKError(.internalError, "no result") }
            return items[i]["serverErrorCode"] == nil ? nil : RemoteErrors.error(items[i])
        }
        let saved = saving.enumerated().map { i, z in
            (z, item(i).map { Result<ZoneID, CKError>.failure($0) } ?? .success(z))
        }
        let deleted = deleting.enumerated().map { j, z in
            (z, item(saving.count + j).map { Result<Void, CKError>.failure($0) } ?? .success(()))
        }
        return (saved, deleted)
    }

    func zoneChanges(_ zone: ZoneID, since token: Data?, limit: Int?) async throws(CKError) -> ZoneChangePage {
        var body: [(String, JSONValue)] = [("zoneID", zone.webServicesJSON)]
        if let token { body.append(("syncToken", .string(String(decoding: token, as: UTF8.self)))) }
        if let limit, limit > 0 { body.append(("resultsLimit", .integer(Int64(min(limit, Self.batch))))) }
        let j = try await post("records/changes", body)
        var changed: [Record] = []
        var deleted: [(RecordID, String)] = []
        for item in j["records"]?.arrayValue ?? [] {
            let rname = item["recordName"]?.stringValue ?? ""
            if item["deleted"]?.boolValue == true {
                deleted.append((RecordID(recordName: rname, zoneID: zone), item["recordType"]?.stringValue ?? ""))
            } else if case .success(let r) = Self.record(item) {
                changed.append(r)
            }
        }
        return ZoneChangePage(
            changed: changed, deleted: deleted, token: Data((j["syncToken"]?.stringValue ?? "").utf8),
            moreComing: j["moreComing"]?.boolValue ?? false)
    }

    func databaseChanges(since token: Data?, limit: Int?) async throws(CKError) -> DatabaseChangePage {
        var body: [(String, JSONValue)] = []
        if let token { body.append(("syncToken", .string(String(decoding: token, as: UTF8.self)))) }
        if let limit, limit > 0 { body.append(("resultsLimit", .integer(Int64(min(limit, Self.batch))))) }
        let j = try await post("changes/database", body)
        var changed: [ZoneID] = []
        var deleted: [ZoneID] = []
        for z in j["zones"]?.arrayValue ?? [] {
            guard let zj = z["zoneID"], let id = try? ZoneID(webServicesJSON: zj) else { continue }
            if z["deleted"]?.boolValue == true { deleted.append(id) } else { changed.append(id) }
        }
        return DatabaseChangePage(
            changed: changed, deleted: deleted, token: Data((j["syncToken"]?.stringValue ?? "").utf8),
            moreComing: j["moreComing"]?.boolValue ?? false)
    }

    func save(_ subscription: Subscription) async throws(CKError) -> Subscription {
        let json = try Self.subscriptionJSON(subscription)
        for type in ["create", "update"] {
            let op: JSONValue = .object([("operationType", .string(type)), ("subscription", json)])
            let items = try await post("subscriptions/modify", [("operations", .array([op]))])["subscriptions"]?
                .arrayValue
            guard let item = items?.first else { throw CKError(.internalError, "no result for the subscription") }
            if item["serverErrorCode"]?.stringValue == "EXISTS" && type == "create" { continue }
            if item["serverErrorCode"] != nil { throw RemoteErrors.error(item) }
            return subscription
        }
        return subscription
    }

    /// The Web Services subscription object (a query's predicate checked here, sent as filters).
    static func subscriptionJSON(_ s: Subscription) throws(CKError) -> JSONValue {
        switch s.kind {
        case .zone(let z):
            return .object([
                ("subscriptionID", .string(s.id)), ("subscriptionType", .string("zone")), ("zoneID", z.webServicesJSON),
            ])
        case .query(let type, let predicate, let arguments, let firesOn):
            let filters = try check(RecordQuery(recordType: type, predicate: predicate, arguments: arguments)) ?? []
            var events: [JSONValue] = []
            if firesOn.contains(.creation) { events.append(.string("create")) }
            if firesOn.contains(.update) { events.append(.string("update")) }
            if firesOn.contains(.deletion) { events.append(.string("delete")) }
            return .object([
                ("subscriptionID", .string(s.id)), ("subscriptionType", .string("query")),
                (
                    "query",
                    .object([("recordType", .string(type)), ("filterBy", .array(filters.map(\.webServicesJSON)))])
                ),
                ("firesOn", .array(events)), ("firesOnce", .bool(firesOn.contains(.once))),
            ])
        }
    }

    func deleteSubscription(_ id: String) async throws(CKError) {
        let op: JSONValue = .object([
            ("operationType", .string("delete")), ("subscription", .object([("subscriptionID", .string(id))])),
        ])
        let items = try await post("subscriptions/modify", [("operations", .array([op]))])["subscriptions"]?.arrayValue
        if let item = items?.first, item["serverErrorCode"] != nil { throw RemoteErrors.error(item) }
    }

    func allSubscriptions() async throws(CKError) -> [Subscription] {
        var out: [Subscription] = []
        for s in try await post("subscriptions/list", [])["subscriptions"]?.arrayValue ?? [] {
            guard let id = s["subscriptionID"]?.stringValue else { continue }
            if s["subscriptionType"]?.stringValue == "zone", let z = s["zoneID"],
                let zone = try? ZoneID(webServicesJSON: z)
            {
                out.append(Subscription(id: id, zoneID: zone))
                continue
            }
            var filters: [QueryFilter] = []
            for f in s["query"]?["filterBy"]?.arrayValue ?? [] {
                if let q = try? QueryFilter(webServicesJSON: f) { filters.append(q) }
            }
            var firesOn: Subscription.FiresOn = []
            for e in s["firesOn"]?.arrayValue ?? [] {
                switch e.stringValue {
                case "create": firesOn.insert(.creation)
                case "update": firesOn.insert(.update)
                case "delete": firesOn.insert(.deletion)
                default: break
                }
            }
            if s["firesOnce"]?.boolValue == true { firesOn.insert(.once) }
            let (format, arguments) = (filters.isEmpty ? QueryPredicate.all : .filters(filters)).predicateFormat
            out.append(
                Subscription(
                    id: id, recordType: s["query"]?["recordType"]?.stringValue ?? "", predicate: format,
                    arguments: arguments, firesOn: firesOn))
        }
        return out
    }

    func storeAsset(
        _ bytes: [UInt8], record: RecordID, recordType: String, field: String
    ) async throws(CKError)
        -> Asset
    {
        let token: JSONValue = .object([
            ("recordType", .string(recordType)), ("fieldName", .string(field)),
            ("recordName", .string(record.recordName)),
        ])
        let j = try await post("assets/upload", [("tokens", .array([token]))])
        guard let url = j["tokens"]?.arrayValue.first?["url"]?.stringValue else {
            throw CKError(.internalError, "assets/upload answered no url")
        }
        let file = try await client.postBytes(url: url, bytes)
        guard let single = file["singleFile"], let hash = single["fileChecksum"]?.stringValue else {
            throw CKError(.internalError, "the asset upload answered no singleFile")
        }
        return Asset(contentHash: hash, size: single["size"]?.int64Value ?? Int64(bytes.count))
    }

    func assetFile(_ asset: Asset, of record: RecordID) async -> URL? {
        var q =
            "recordName=\(WebServicesClient.escape(record.recordName))&fileChecksum=\(asset.contentHash)&size=\(asset.size)"
        if !record.zoneID.isDefaultZone { q += "&zoneName=\(WebServicesClient.escape(record.zoneID.zoneName))" }
        guard let bytes = await client.get(path: client.basePath(name) + "/assets/download?" + q) else { return nil }
        return try? CKAsset.localFile(for: asset, bytes: bytes)
    }
}

extension JSONValue {
    /// The elements of an array (empty for anything else).
    var arrayValue: [JSONValue] {
        if case .array(let a) = self { return a }
        return []
    }

    /// A JSON boolean.
    var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// The zone ids of a `{"zones": [{"zoneID"}]}` answer.
    var zoneIDs: [ZoneID] {
        (self["zones"]?.arrayValue ?? []).compactMap { z in z["zoneID"].flatMap { try? ZoneID(webServicesJSON: $0) } }
    }
}
