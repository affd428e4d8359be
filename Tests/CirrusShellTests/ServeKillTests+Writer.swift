// ServeKillWriter: one writing client of ServeKillTests and its model — every record name it
// used and what the server acknowledged for it. It owns building records/modify batches, reading
// their answers and checking a server's records against what was acknowledged; starting and
// killing servers is ServeKillTests'.
//
// A write is acknowledged when its request got HTTP 200 with the whole body, and its item in
// `records` is the record (or `deleted: true`), not an error object. A request that got no whole
// answer (the server was killed) is in flight: each of its records may be as acknowledged before
// or as the request asked, and the next check finds out which and carries on from there.

import CirrusTestSupport
import Foundation
import RecordModel

/// What a writer knows of one record name.
enum KnownState: Sendable, Equatable {
    /// Acknowledged with exactly these fields and this change tag.
    case live(fields: RecordFields, tag: String)
    /// Acknowledged deleted.
    case deleted
}

/// A record as a server holds it: absent, or present with its fields and tag.
enum FoundState: Sendable {
    case absent
    case present(Record)
}

/// One operation of a records/modify batch and the state it asks for.
struct WriteOperation: Sendable {
    enum Kind: String, Sendable { case create, update, replace, delete }
    var name: String
    var kind: Kind
    /// What was acknowledged before (nil: the name was never acknowledged).
    var before: KnownState?
    /// The fields sent (none for a delete).
    var sent: RecordFields
    /// The fields the record has once this is done (nil for a delete): `sent`, merged over the
    /// earlier fields for an update.
    var after: RecordFields?

    var json: JSONValue {
        var record: [(String, JSONValue)] = [("recordName", .string(name)), ("recordType", .string("Item"))]
        if case .live(_, let tag)? = before { record.append(("recordChangeTag", .string(tag))) }
        if kind != .delete { record.append(("fields", ServeKillWriter.fieldsJSON(sent))) }
        return .object([("operationType", .string(kind.rawValue)), ("record", .object(record))])
    }
}

/// Which writers have had an answer in this round, so that the kill falls under load from all of
/// them (a kill before the first answer would test nothing). Shared between the writers' threads
/// and the task that kills.
final class WriterProgress: @unchecked Sendable {
    // @unchecked: `writers` is only touched under `lock`.
    private let lock = NSLock()
    private var writers: Set<Int> = []

    func answered(by writer: Int) { _ = lock.withLock { writers.insert(writer) } }

    /// How many writers have had an answer.
    var count: Int { lock.withLock { writers.count } }
}

/// A client writing its own records (`w<index>-<n>`) as one user, and what was acknowledged.
struct ServeKillWriter: Sendable {
    let index: Int
    /// The user's web auth token.
    let webAuthToken: String
    var rng: SeededRandom
    var known: [String: KnownState] = [:]
    /// The operations of the request whose answer never came.
    var inFlight: [WriteOperation] = []
    var nextName = 0
    /// Operations acknowledged, requests answered, over every round.
    var acknowledged = 0
    var answered = 0
    /// Answers a live server should never give (a refused item, another record than sent).
    var unexpected: [String] = []
    /// Why the last request got no answer (the kill, normally).
    var lastFailure = ""
    /// Operations in flight at a kill that the server turned out to have done, and not done: both
    /// stay above zero when kills land in the middle of commits, as they should.
    var inFlightDone = 0
    var inFlightNotDone = 0

    init(index: Int, webAuthToken: String, seed: UInt64) {
        self.index = index
        self.webAuthToken = webAuthToken
        rng = SeededRandom(seed: seed)
    }

    /// Sends batches to `modifyPath` on `port` until one gets no answer (the server was killed)
    /// or `deadline` passes; each answer is counted in `progress`.
    mutating func write(
        port: Int, modifyPath: String, until deadline: ContinuousClock.Instant, progress: WriterProgress
    ) {
        while ContinuousClock.now < deadline {
            let batch = nextBatch()
            let body = JSONValue.object([("operations", .array(batch.map(\.json)))]).jsonText
            switch LoopbackHTTP.post(port: port, path: modifyPath, body: Array(body.utf8)) {
            case .failure(let f):
                inFlight += batch
                lastFailure = f.description
                return
            case .success(let answer):
                guard answer.status == 200,
                    let json = try? JSONValue.parse(String(decoding: answer.body, as: UTF8.self)),
                    case .array(let items)? = json["records"], items.count == batch.count
                else {
                    // Not an acknowledgement: what it did is checked as for a request in flight.
                    unexpected.append(
                        "HTTP \(answer.status): \(String(decoding: answer.body.prefix(300), as: UTF8.self))")
                    inFlight += batch
                    return
                }
                answered += 1
                progress.answered(by: index)
                for (op, item) in zip(batch, items) { acknowledge(op, item) }
            }
        }
    }

    /// Records what the server answered for `op`.
    mutating func acknowledge(_ op: WriteOperation, _ item: JSONValue) {
        if let code = item["serverErrorCode"]?.stringValue {
            // Refused, so nothing was written: the name keeps its earlier state, which the next
            // check holds the server to.
            unexpected.append("\(op.kind.rawValue) \(op.name): \(code) \(item["reason"]?.stringValue ?? "")")
            return
        }
        guard item["recordName"]?.stringValue == op.name else {
            unexpected.append("\(op.kind.rawValue) \(op.name) answered as \(item.jsonText)")
            inFlight.append(op)  // answered for another record: unknown what this one became
            return
        }
        guard let after = op.after else {
            if item["deleted"] == .bool(true) {
                known[op.name] = .deleted
                acknowledged += 1
            } else {
                unexpected.append("delete \(op.name) answered \(item.jsonText)")
                inFlight.append(op)
            }
            return
        }
        guard let record = try? Record(webServicesJSON: item), let tag = record.recordChangeTag else {
            unexpected.append("\(op.kind.rawValue) \(op.name) answered \(item.jsonText)")
            inFlight.append(op)
            return
        }
        if Self.fieldsJSON(record.fields) != Self.fieldsJSON(after) {
            unexpected.append(
                "\(op.kind.rawValue) \(op.name) acknowledged \(Self.fieldsJSON(record.fields).jsonText), "
                    + "sent for \(Self.fieldsJSON(after).jsonText)")
        }
        // What the server acknowledged is what it must keep, even when it is not what was asked.
        known[op.name] = .live(fields: record.fields, tag: tag)
        acknowledged += 1
    }

    /// 1 to 20 operations on distinct names: creates, and updates, replaces and deletes of
    /// acknowledged records with the change tag the server gave.
    mutating func nextBatch() -> [WriteOperation] {
        let count = 1 + rng.below(20)
        var live = known.compactMap { name, state in
            if case .live = state { return name } else { return nil }
        }
        live.sort()  // dictionary order differs between runs; the seed must replay the batch
        var batch: [WriteOperation] = []
        for _ in 0..<count {
            let roll = rng.below(100)
            guard roll >= 45, !live.isEmpty else {
                let name = "w\(index)-\(nextName)"
                nextName += 1
                let f = fields(full: true)
                batch.append(WriteOperation(name: name, kind: .create, before: nil, sent: f, after: f))
                continue
            }
            let name = live.remove(at: rng.below(live.count))
            guard case .live(let old, _)? = known[name] else { continue }
            switch roll {
            case ..<70:
                let f = fields(full: false)
                let merged = old.merging(f) { _, new in new }
                batch.append(WriteOperation(name: name, kind: .update, before: known[name], sent: f, after: merged))
            case ..<85:
                let f = fields(full: true)
                batch.append(WriteOperation(name: name, kind: .replace, before: known[name], sent: f, after: f))
            default:
                batch.append(WriteOperation(name: name, kind: .delete, before: known[name], sent: [:], after: nil))
            }
        }
        return batch
    }

    /// Fields of every kind the test compares exactly: a full set always has `writer` and `step`,
    /// a partial one (for an update) `step` and some others.
    mutating func fields(full: Bool) -> RecordFields {
        var f: RecordFields = ["step": .int64(Int64(rng.below(1 << 30)))]
        if full { f.updateValue(.int64(Int64(index)), forKey: "writer") }
        if rng.chance(0.6) { f.updateValue(.string(text()), forKey: "text") }
        // Multiples of 1/64 print and parse back to the same Double.
        if rng.chance(0.5) { f.updateValue(.double(Double(rng.below(1 << 20)) / 64 - 4096), forKey: "ratio") }
        if rng.chance(0.4) {
            let words = ["brick", "été", "東京", "quote\"d", "back\\slash", "🚀"]
            f.updateValue(.list((0...rng.below(3)).map { _ in .string(words[rng.below(words.count)]) }), forKey: "tags")
        }
        if rng.chance(0.3) {
            f.updateValue(.list((0...rng.below(4)).map { _ in .int64(Int64(rng.below(1000)) - 500) }), forKey: "counts")
        }
        return f
    }

    /// Up to 2,000 characters, sometimes none, with escapes JSON must carry.
    mutating func text() -> String {
        let pieces = ["a", "b", "z", " ", "é", "ß", "東", "🚀", "\n", "\"", "\\", "\t", "0"]
        let length = rng.chance(0.1) ? rng.below(2_000) : rng.below(40)
        return String((0..<length).map { _ in pieces[rng.below(pieces.count)] }.joined())
    }

    /// Every name this writer has written or tried to.
    var names: [String] { Set(known.keys).union(inFlight.map(\.name)).sorted() }

    /// Holds `found` (every name in `names`) to what was acknowledged, settles the requests in
    /// flight by what the server kept, and returns what does not hold.
    mutating func check(_ found: [String: FoundState]) -> [String] {
        var problems: [String] = []
        let pending = Set(inFlight.map(\.name))
        for (name, state) in known.sorted(by: { $0.key < $1.key }) where !pending.contains(name) {
            let got = found[name] ?? .absent
            if !Self.matches(state, got) {
                problems.append("\(name): acknowledged \(Self.describe(state)), found \(Self.describe(got))")
            }
        }
        for op in inFlight {
            let got = found[op.name] ?? .absent
            if Self.matches(op.before, got) {  // the write did not happen
                inFlightNotDone += 1
                continue
            }
            inFlightDone += 1
            switch (op.after, got) {
            case (nil, .absent): known[op.name] = .deleted
            case (let after?, .present(let r)) where Self.fieldsJSON(r.fields) == Self.fieldsJSON(after):
                if let tag = r.recordChangeTag {
                    known[op.name] = .live(fields: r.fields, tag: tag)
                } else {
                    problems.append("\(op.name) has no change tag")
                }
            default:
                problems.append(
                    "\(op.name): \(op.kind.rawValue) in flight, found \(Self.describe(got)), neither "
                        + "\(op.before.map(Self.describe) ?? "absent") nor what was asked")
            }
        }
        inFlight = []
        return problems
    }

    static func matches(_ state: KnownState?, _ got: FoundState) -> Bool {
        switch (state, got) {
        case (nil, .absent), (.deleted?, .absent): return true
        case (.live(let fields, let tag)?, .present(let r)):
            return r.recordType == "Item" && r.recordChangeTag == tag
                && fieldsJSON(r.fields) == fieldsJSON(fields)
        default: return false
        }
    }

    /// Fields as Web Services JSON, sorted by name: each value with its type, so an INT64 does not
    /// equal the DOUBLE of the same number (as FieldValue's `==` would have it).
    static func fieldsJSON(_ fields: RecordFields) -> JSONValue {
        .object(fields.map { ($0.key, $0.value.webServicesJSON) }.sorted { $0.0 < $1.0 })
    }

    static func describe(_ state: KnownState) -> String {
        switch state {
        case .live(let fields, let tag): "tag \(tag) \(fieldsJSON(fields).jsonText.prefix(120))"
        case .deleted: "deleted"
        }
    }

    static func describe(_ state: FoundState) -> String {
        switch state {
        case .absent: "absent"
        case .present(let r): "tag \(r.recordChangeTag ?? "none") \(fieldsJSON(r.fields).jsonText.prefix(120))"
        }
    }
}
