// subscriptions/list, subscriptions/lookup, subscriptions/modify.
//
//   {"subscriptionID": "cafes", "subscriptionType": "query",
//    "query": {"recordType": "Place", "filterBy": [ … ]}, "firesOn": ["create", "update", "delete"],
//    "firesOnce": false}
//   {"subscriptionID": "work", "subscriptionType": "zone", "zoneID": {"zoneName": "Work"}}
//
// A query subscription's `filterBy` becomes a format string and arguments (the same path as
// records/query) and the façade checks it like a query. Subscriptions belong to the identity
// that saved them: another user's are neither listed, looked up, replaced nor deleted.
// Notifications are delivered as Server-Sent Events (WebServicesAPI+Notifications.swift).

import Cirrus
import QueryChecker
import RecordModel

extension WebServicesAPI {
    func listSubscriptions(db: Database) async throws(WebServicesError) -> JSONValue {
        do throws(CirrusError) {
            let all = try await db.allSubscriptions()
            return .object([("subscriptions", .array(all.map { Self.subscriptionJSON($0, schema: db.schema) }))])
        } catch {
            throw WebServicesError(error)
        }
    }

    func lookupSubscriptions(_ body: JSONBody, db: Database) async throws(WebServicesError) -> JSONValue {
        var ids: [String] = []
        for s in try body["subscriptions"].array(limit: limits.maximumOperations) {
            ids.append(try s["subscriptionID"].string())
        }
        if ids.isEmpty { throw body["subscriptions"].fail("no subscriptions to look up") }
        let mine: [String: Subscription]
        do throws(CirrusError) {
            mine = Dictionary(try await db.allSubscriptions().map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        } catch {
            throw WebServicesError(error)
        }
        return .object([
            (
                "subscriptions",
                .array(
                    ids.map { id in
                        mine[id].map { Self.subscriptionJSON($0, schema: db.schema) }
                            ?? Self.subscriptionError(WebServicesError(.notFound, "no subscription \"\(id)\""), id: id)
                    })
            )
        ])
    }

    func modifySubscriptions(_ body: JSONBody, db: Database) async throws(WebServicesError) -> JSONValue {
        enum Op {
            case save(Subscription, mustExist: Bool?)
            case delete(String)
        }
        var ops: [Op] = []
        for op in try body["operations"].array(limit: limits.maximumOperations) {
            let type = try op["operationType"].string()
            switch type {
            case "create", "update":
                ops.append(.save(try Self.subscription(op["subscription"]), mustExist: type == "update"))
            case "delete":
                ops.append(.delete(try op["subscription"]["subscriptionID"].string()))
            default:
                throw op["operationType"].fail("unknown operation type \"\(type)\" (create, update, delete)")
            }
        }
        if ops.isEmpty { throw body["operations"].fail("no operations") }
        var out: [JSONValue] = []
        for op in ops {
            switch op {
            case .save(let s, let mustExist):
                do throws(CirrusError) {
                    let exists = try await db.allSubscriptions().contains { $0.id == s.id }
                    if mustExist == true && !exists {
                        out.append(
                            Self.subscriptionError(
                                WebServicesError(.notFound, "no subscription \"\(s.id)\" to update"), id: s.id))
                        continue
                    }
                    if mustExist == false && exists {
                        out.append(
                            Self.subscriptionError(
                                WebServicesError(.exists, "subscription \"\(s.id)\" already exists"), id: s.id))
                        continue
                    }
                    let saved = try await db.save(s)
                    // Its notifications are kept from now on, whether or not a client listens yet.
                    _ = try? notifications.feed(db)
                    out.append(Self.subscriptionJSON(saved, schema: db.schema))
                } catch {
                    out.append(Self.subscriptionError(WebServicesError(error), id: s.id))
                }
            case .delete(let id):
                do throws(CirrusError) {
                    try await db.deleteSubscription(withID: id)
                    out.append(.object([("subscriptionID", .string(id)), ("deleted", .bool(true))]))
                } catch {
                    out.append(Self.subscriptionError(WebServicesError(error), id: id))
                }
            }
        }
        return .object([("subscriptions", .array(out))])
    }

    /// Reads one subscription object.
    static func subscription(_ node: BodyNode) throws(WebServicesError) -> Subscription {
        guard case .object? = node.value else { throw node.fail("expected a subscription object") }
        let id = try node["subscriptionID"].string()
        guard !id.isEmpty, id.utf8.count <= 255 else { throw node["subscriptionID"].fail("1 to 255 bytes") }
        let type = try node["subscriptionType"].string()
        switch type {
        case "zone":
            guard let zone = try node["zoneID"].zoneID() else {
                throw node["zoneID"].fail("missing; expected a zoneID")
            }
            return Subscription(id: id, zoneID: zone)
        case "query":
            let q = node["query"]
            let recordType = try q["recordType"].string()
            var filters: [QueryFilter] = []
            for f in try q["filterBy"].array(limit: 200) {
                filters.append(try f.decode { (j) throws(WebServicesJSONError) in try QueryFilter(webServicesJSON: j) })
            }
            var firesOn: Subscription.FiresOn = []
            let names = try node["firesOn"].strings(limit: 3) ?? ["create", "update", "delete"]
            for (i, name) in names.enumerated() {
                switch name {
                case "create": firesOn.insert(.creation)
                case "update": firesOn.insert(.update)
                case "delete": firesOn.insert(.deletion)
                default:
                    throw node["firesOn"].fail("[\(i)]: unknown event \"\(name)\" (create, update, delete)")
                }
            }
            if firesOn.isEmpty { throw node["firesOn"].fail("empty; name at least one of create, update, delete") }
            if try node["firesOnce"].bool(default: false) { firesOn.insert(.once) }
            let (format, arguments) = (filters.isEmpty ? QueryPredicate.all : .filters(filters)).predicateFormat
            return Subscription(
                id: id, recordType: recordType, predicate: format, arguments: arguments, firesOn: firesOn)
        default:
            throw node["subscriptionType"].fail("unknown subscription type \"\(type)\" (query, zone)")
        }
    }

    /// The subscription object; a query's predicate is checked again to give its filters back.
    static func subscriptionJSON(_ s: Subscription, schema: Schema) -> JSONValue {
        var m: [(String, JSONValue)] = [("subscriptionID", .string(s.id))]
        switch s.kind {
        case .zone(let z):
            m += [("subscriptionType", .string("zone")), ("zoneID", z.webServicesJSON)]
        case .query(let type, let predicate, let arguments, let firesOn):
            var query: [(String, JSONValue)] = [("recordType", .string(type))]
            let context = CheckContext(arguments: arguments, schema: schema, recordType: type)
            if let checked = try? QueryChecker.parseAndCheck(predicate, context: context).checked {
                query.append(("filterBy", .array(checked.predicate.filters.map(\.webServicesJSON))))
            } else {
                // The schema changed under it (a field retyped in development): show the text.
                query.append(("predicate", .string(predicate)))
            }
            var events: [JSONValue] = []
            if firesOn.contains(.creation) { events.append(.string("create")) }
            if firesOn.contains(.update) { events.append(.string("update")) }
            if firesOn.contains(.deletion) { events.append(.string("delete")) }
            m += [
                ("subscriptionType", .string("query")), ("query", .object(query)), ("firesOn", .array(events)),
                ("firesOnce", .bool(firesOn.contains(.once))),
            ]
        }
        return .object(m)
    }

    static func subscriptionError(_ e: WebServicesError, id: String) -> JSONValue {
        guard case .object(var m) = e.json else { return e.json }
        m.append(("subscriptionID", .string(id)))
        return .object(m)
    }
}
