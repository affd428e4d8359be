// SubscriptionStore: subscriptions persisted beside the log, so they survive reopening.
//
// File: <environment store>/subscriptions.json, rewritten atomically (write-lock held, so the
// last write is the latest state) whenever a subscription is saved, deleted or fires once:
//
//     [{"owner": "_alice", "subscriber": "_alice", "id": "cafes", "recordType": "Place",
//       "predicate": "kind == %@", "arguments": [{"value": {"type": "STRING", "value": "cafe"}}],
//       "firesOn": 3},
//      {"owner": "_alice", "subscriber": "_alice", "id": "z", "zone": "Work"}]
//
// On open every query subscription is checked again against the schema (the schema only
// grows, so this passes unless the file was edited); one that no longer checks is dropped.

import RecordLog
import RecordModel

extension ContainerCore {
    var subscriptionsPath: String { joinPath(storeDirectory, "subscriptions.json") }

    /// Writes every subscription (write lock held).
    func persistSubscriptions() {
        if options.readOnly { return }
        let all = stateLock.withLock { subscriptions }
        var items: [JSONValue] = []
        for owner in all.keys.sorted() {
            for (_, s) in (all[owner] ?? [:]).sorted(by: { $0.key < $1.key }) {
                var m: [(String, JSONValue)] = [
                    ("owner", .string(owner)), ("subscriber", s.subscriber.userRecordName.map { .string($0) } ?? .null), ("id", .string(s.id)),
                ]
                switch s.kind {
                case .zone(let z): m.append(("zone", .string(z.zoneName)))
                case .query(let type, let predicate, let args, let firesOn):
                    m.append(("recordType", .string(type)))
                    m.append(("predicate", .string(predicate)))
                    m.append(("arguments", .array(args.map { a in
                        switch a {
                        case .key(let k): .object([("key", .string(k))])
                        case .value(let v): .object([("value", v.webServicesJSON)])
                        }
                    })))
                    m.append(("firesOn", .integer(Int64(firesOn.rawValue))))
                }
                items.append(.object(m))
            }
        }
        try? options.fileSystem.writeAtomically(subscriptionsPath, Array(JSONValue.array(items).jsonText.utf8))
    }

    /// Reads the subscriptions file, checking each query subscription again (at open).
    func loadSubscriptions() {
        guard let bytes = try? options.fileSystem.read(subscriptionsPath),
            let json = try? JSONValue.parse(String(decoding: bytes, as: UTF8.self)), case .array(let items) = json
        else { return }
        for item in items {
            guard let owner = item["owner"]?.stringValue, let id = item["id"]?.stringValue else { continue }
            let subscriber: Identity = item["subscriber"]?.stringValue.map { .user($0) } ?? .anonymous
            var s: Subscription
            if let zone = item["zone"]?.stringValue {
                s = Subscription(id: id, zoneID: ZoneID(zoneName: zone))
            } else if let type = item["recordType"]?.stringValue, let predicate = item["predicate"]?.stringValue,
                case .array(let argsJSON)? = item["arguments"], let fires = item["firesOn"]?.int64Value
            {
                var args: [PredicateArgument] = []
                for a in argsJSON {
                    if let k = a["key"]?.stringValue {
                        args.append(.key(k))
                    } else if let v = a["value"], let value = try? FieldValue(webServicesJSON: v) {
                        args.append(.value(value))
                    }
                }
                s = Subscription(
                    id: id, recordType: type, predicate: predicate, arguments: args,
                    firesOn: Subscription.FiresOn(rawValue: UInt8(truncatingIfNeeded: fires)))
            } else {
                continue
            }
            _ = try? storeSubscription(s, owner: owner, identity: subscriber)
        }
    }
}
