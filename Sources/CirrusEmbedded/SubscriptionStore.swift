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
// Failures are loud, never silent: a save or delete whose file write fails is undone and throws;
// an unreadable or malformed file makes opening the container fail with the file's path and
// what is wrong in it (restore it, or delete it to drop every subscription). Two changes are
// not requests of their own — a fire-once subscription removed after it fired, and the zone
// subscriptions of a deleted zone — so their write is retried with the next write of the file
// and, failing that, reported by `close()` (`subscriptionsUnsaved`).
//
// On open every query subscription is checked again against the schema (the schema only
// grows, so this passes unless the file was edited: then opening fails, naming it). A zone
// subscription whose zone is gone was deleted with its zone and is dropped.

import CirrusFacade
import CirrusIO
import RecordLog
import RecordModel

extension ContainerCore {
    var subscriptionsPath: String { joinPath(storeDirectory, "subscriptions.json") }

    /// Writes every subscription (write lock held).
    func persistSubscriptions() throws(CirrusError) {
        if options.readOnly { return }
        let all = stateLock.withLock { subscriptions }
        var items: [JSONValue] = []
        for owner in all.keys.sorted() {
            for (_, s) in (all[owner] ?? [:]).sorted(by: { $0.key < $1.key }) {
                items.append(Self.subscriptionJSON(s, owner: owner))
            }
        }
        do {
            try options.fileSystem.writeAtomically(subscriptionsPath, Array(JSONValue.array(items).jsonText.utf8))
            stateLock.withLock { subscriptionsUnsaved = nil }
        } catch {
            throw CirrusError(.internalError, "cannot write \(subscriptionsPath): \(error)")
        }
    }

    /// `persistSubscriptions()` after a change that is not a request of its own (see the file
    /// header): a failure is kept and reported by the next write of the file or by `close()`.
    func persistSubscriptionsLater() {
        do {
            try persistSubscriptions()
        } catch {
            stateLock.withLock { subscriptionsUnsaved = error }
        }
    }

    static func subscriptionJSON(_ s: Subscription, owner: String) -> JSONValue {
        var m: [(String, JSONValue)] = [
            ("owner", .string(owner)), ("subscriber", s.subscriber.userRecordName.map { .string($0) } ?? .null),
            ("id", .string(s.id)),
        ]
        switch s.kind {
        case .zone(let z): m.append(("zone", .string(z.zoneName)))
        case .query(let type, let predicate, let args, let firesOn):
            m.append(("recordType", .string(type)))
            m.append(("predicate", .string(predicate)))
            m.append(("arguments", SubscriptionRules.argumentsJSON(args)))
            m.append(("firesOn", .integer(Int64(firesOn.rawValue))))
        }
        return .object(m)
    }

    /// Reads the subscriptions file, checking each query subscription again (at open). A
    /// missing file means no subscriptions; anything else that is wrong fails the open.
    func loadSubscriptions() throws(CirrusError) {
        let path = subscriptionsPath
        guard options.fileSystem.exists(path) else { return }
        func bad(_ what: String) -> CirrusError {
            CirrusError(
                .internalError,
                "\(path): \(what) (restore the file from a backup, or delete it to drop every subscription)")
        }
        let json: JSONValue
        do {
            let bytes = try options.fileSystem.read(path)
            json = try JSONValue.parse(String(decoding: bytes, as: UTF8.self))
        } catch {
            throw bad("unreadable: \(error)")
        }
        guard case .array(let items) = json else { throw bad("not a JSON array") }
        var dropped = 0
        for (n, item) in items.enumerated() {
            do throws(CirrusError) {
                try loadSubscription(item, n, bad)
            } catch {
                guard options.dropsInvalidSubscriptions else { throw error }
                dropped += 1
            }
        }
        if dropped > 0 {
            droppedSubscriptions = (dropped, items.count - dropped)
            try persistSubscriptions()
        }
    }

    /// Checks and stores one item of the subscriptions file.
    func loadSubscription(_ item: JSONValue, _ n: Int, _ bad: (String) -> CirrusError) throws(CirrusError) {
        guard let owner = item["owner"]?.stringValue, let id = item["id"]?.stringValue else {
            throw bad("item \(n) has no owner or id")
        }
        let subscriber: Identity = item["subscriber"]?.stringValue.map { .user($0) } ?? .anonymous
        let s: Subscription
        if let zone = item["zone"]?.stringValue {
            let z = ZoneID(zoneName: zone)
            // Deleted with its zone (the file's write after the deletion may have failed).
            if !zoneExists(owner: owner, z) { return }
            s = Subscription(id: id, zoneID: z)
        } else if let type = item["recordType"]?.stringValue, let predicate = item["predicate"]?.stringValue,
            let argsJSON = item["arguments"], let fires = item["firesOn"]?.int64Value
        {
            let args: [PredicateArgument]
            do {
                args = try SubscriptionRules.arguments(fromJSON: argsJSON)
            } catch {
                throw bad("subscription \"\(id)\": \(error.message)")
            }
            s = Subscription(
                id: id, recordType: type, predicate: predicate, arguments: args,
                firesOn: Subscription.FiresOn(rawValue: UInt8(truncatingIfNeeded: fires)))
        } else {
            throw bad("item \(n) (\"\(id)\") is neither a zone nor a query subscription")
        }
        do {
            _ = try storeSubscription(s, owner: owner, identity: subscriber)
        } catch {
            throw bad("subscription \"\(id)\" no longer checks: \(error)")
        }
    }
}
