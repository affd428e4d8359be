// SubscriptionRules: what every engine decides the same way about subscriptions — a
// subscription checked into what decides whether it fires (its predicate parsed and checked by
// QueryChecker against the schema, as a query's), whether a checked subscription fires for one
// change of a record and with which reason, and the text form of a query subscription's
// arguments that engines store (subscriptions.json on the embedded engine,
// `cirrus_subscriptions.arguments` on PostgreSQL). Where subscriptions are kept, whether a zone
// exists, who may save them and how notifications travel are each engine's.

import PredicateSyntax
import QueryChecker
import QueryExecution
import RecordModel

/// The checks and the firing rule of subscriptions, shared by every `DatabaseBackend`.
///
/// ```swift
/// let s = try SubscriptionRules.check(
///     Subscription(id: "cafes", recordType: "Place", predicate: "kind == %@", arguments: ["cafe"]),
///     schema: db.schema, now: Timestamp(millisecondsSince1970: 0))
/// SubscriptionRules.reason(s, old: nil, new: cafe)   // .recordCreated
/// ```
public enum SubscriptionRules {
    /// `s` with its predicate checked against `schema` at `now` (a query subscription), ready for
    /// ``reason(_:old:new:)``; a zone subscription is returned as it is (whether its zone exists
    /// is the engine's to check). invalidArguments naming the subscription when the predicate
    /// does not parse or the checker refuses it (the checker's message, rendered under the text).
    public static func check(_ s: Subscription, schema: Schema, now: Timestamp) throws(CirrusError) -> Subscription {
        guard case .query(let type, let text, let args, _) = s.kind else { return s }
        let tree: PredicateSyntax.Predicate
        do {
            tree = try PredicateParser.parse(text)
        } catch {
            throw CirrusError(.invalidArguments, "subscription \"\(s.id)\": \(error)")
        }
        var checked = s
        do {
            let q = try QueryChecker.check(
                tree, context: CheckContext(arguments: args, schema: schema, recordType: type, now: now, source: text))
            checked.matcher = RecordMatcher(predicate: q.predicate, schema: schema.recordTypes[type])
        } catch {
            throw CirrusError(.invalidArguments, "subscription \"\(s.id)\": \(error.rendered(source: text))")
        }
        return checked
    }

    /// What a change of one record is: created (no `old`), deleted (no `new`) or updated; nil
    /// when both are nil.
    public static func reason(old: Record?, new: Record?) -> RecordNotification.Reason? {
        switch (old, new) {
        case (nil, nil): nil
        case (nil, _): .recordCreated
        case (_, nil): .recordDeleted
        default: .recordUpdated
        }
    }

    /// Whether the subscription `s` (as ``check(_:schema:now:)`` returned it) fires for a change
    /// of one record from `old` to `new` (nil: absent), and with which reason; nil when it does
    /// not. A zone subscription fires on every change in its zone. A query subscription fires on
    /// a creation that matches (`.creation`), a deletion of a record that matched (`.deletion`),
    /// and an update after which or before which the record matches (`.update`: entering and
    /// leaving the matches are both updates). A query subscription that was not checked never
    /// fires.
    public static func reason(_ s: Subscription, old: Record?, new: Record?) -> RecordNotification.Reason? {
        guard let reason = reason(old: old, new: new), let any = new ?? old else { return nil }
        switch s.kind {
        case .zone(let z):
            return any.recordID.zoneID.zoneName == z.zoneName ? reason : nil
        case .query(let type, _, _, let f):
            guard let m = s.matcher else { return nil }
            let before = old.map { $0.recordType == type && m.matches($0) } ?? false
            let after = new.map { $0.recordType == type && m.matches($0) } ?? false
            switch reason {
            case .recordCreated: return after && f.contains(.creation) ? reason : nil
            case .recordDeleted: return before && f.contains(.deletion) ? reason : nil
            case .recordUpdated: return (before || after) && f.contains(.update) ? reason : nil
            }
        }
    }

    /// The notification `s` sends for a change from `old` to `new`, or nil when it does not
    /// fire (``reason(_:old:new:)``). The notification carries `new` (nil for a deletion).
    public static func notification(_ s: Subscription, old: Record?, new: Record?) -> RecordNotification? {
        guard let reason = reason(s, old: old, new: new), let any = new ?? old else { return nil }
        return RecordNotification(
            subscriptionID: s.id, recordID: any.recordID, recordType: any.recordType, reason: reason, record: new)
    }

    /// Whether `s` is removed after the first commit it fires on (a query subscription with
    /// `.once`).
    public static func firesOnce(_ s: Subscription) -> Bool {
        if case .query(_, _, _, let f) = s.kind { return f.contains(.once) }
        return false
    }

    /// A query subscription's arguments as stored: a JSON array whose items are
    /// `{"key": name}` or `{"value": <Web Services field value>}` — the form of
    /// subscriptions.json; never change it.
    ///
    /// ```swift
    /// SubscriptionRules.argumentsJSON(["cafe"]).jsonText
    /// // [{"value":{"type":"STRING","value":"cafe"}}]
    /// ```
    public static func argumentsJSON(_ arguments: [PredicateArgument]) -> JSONValue {
        .array(
            arguments.map { a in
                switch a {
                case .key(let k): .object([("key", .string(k))])
                case .value(let v): .object([("value", v.webServicesJSON)])
                }
            })
    }

    /// The arguments ``argumentsJSON(_:)`` stored; internalError naming the item that is
    /// neither a key nor a value that decodes.
    public static func arguments(fromJSON json: JSONValue) throws(CirrusError) -> [PredicateArgument] {
        guard case .array(let items) = json else {
            throw CirrusError(.internalError, "subscription arguments are not a JSON array")
        }
        var args: [PredicateArgument] = []
        for (i, a) in items.enumerated() {
            if let k = a["key"]?.stringValue {
                args.append(.key(k))
            } else if let v = a["value"] {
                do {
                    args.append(.value(try FieldValue(webServicesJSON: v)))
                } catch {
                    throw CirrusError(.internalError, "argument \(i) does not decode: \(error)")
                }
            } else {
                throw CirrusError(.internalError, "argument \(i) is neither a key nor a value")
            }
        }
        return args
    }
}
