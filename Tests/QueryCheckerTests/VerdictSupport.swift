// Support for the verdict table: one case per line, accepted ones with their canonical filters,
// rejected ones with message, kind and the exact source text the error points at.

import PredicateSyntax
import QueryChecker
import RecordModel

/// Which schema a case is checked against.
enum SchemaChoice: Sendable {
    case none
    case development
    case production
    case productionListable
}

enum Expectation: Sendable {
    /// The filters joined by " AND ", or "ALL" / "NONE"; and the number of warnings.
    case accept(String, warnings: Int)
    /// Message, the substring the error range must cover exactly (nil: don't check), and kind.
    case reject(String, at: String?, kind: PredicateError.Kind)
}

struct Verdict: Sendable, CustomStringConvertible {
    var predicate: String
    var args: [PredicateArgument]
    var variables: [String: PredicateArgument]
    var schema: SchemaChoice
    var expect: Expectation
    var description: String { predicate }
}

func ok(
    _ p: String, _ filters: String, args: [PredicateArgument] = [], vars: [String: PredicateArgument] = [:],
    schema: SchemaChoice = .none, warnings: Int = 0
) -> Verdict {
    Verdict(predicate: p, args: args, variables: vars, schema: schema, expect: .accept(filters, warnings: warnings))
}

func bad(
    _ p: String, _ message: String, at: String?, args: [PredicateArgument] = [],
    vars: [String: PredicateArgument] = [:],
    schema: SchemaChoice = .none, kind: PredicateError.Kind = .unsupported
) -> Verdict {
    Verdict(predicate: p, args: args, variables: vars, schema: schema, expect: .reject(message, at: at, kind: kind))
}

func syntax(_ p: String) -> Verdict {
    Verdict(predicate: p, args: [], variables: [:], schema: .none, expect: .reject("", at: nil, kind: .syntax))
}

/// Fixed "now" of every check in the table: 2023-11-14T22:13:20.000Z.
let fixedNow = Timestamp(millisecondsSince1970: 1_700_000_000_000)

let eiffel = Location(latitude: 48.8584, longitude: 2.2945)
let here: PredicateArgument = .value(.location(eiffel))

func placeType(production: Bool, listable: Bool = false) -> RecordTypeSchema {
    func f(_ n: String, _ t: FieldType, _ prod: IndexOptions) -> FieldSchema {
        FieldSchema(name: n, type: t, options: production ? prod : IndexOptions.automatic(for: t))
    }
    return RecordTypeSchema(
        name: "Place",
        fields: [
            f("name", .string, [.queryable]),
            f("kind", .string, [.queryable]),
            f("population", .int64, [.sortable]),
            f("rating", .double, [.queryable, .sortable]),
            f("founded", .date, [.queryable]),
            f("tags", .list(.string), [.queryable]),
            f("scores", .list(.int64), [.queryable]),
            f("location", .location, []),
            f("photo", .asset, []),
            f("owner", .reference, [.queryable]),
            f("data", .bytes, [.queryable]),
        ],
        systemFieldOptions: listable ? [.recordName: .queryable] : [:])
}

func context(for v: Verdict) -> CheckContext {
    var schema: Schema? = nil
    switch v.schema {
    case .none: break
    case .development:
        schema = Schema(
            environment: .development, recordTypes: [placeType(production: false), RecordTypeSchema(name: "Users")])
    case .production:
        schema = Schema(environment: .production, recordTypes: [placeType(production: true)])
    case .productionListable:
        schema = Schema(environment: .production, recordTypes: [placeType(production: true, listable: true)])
    }
    return CheckContext(
        arguments: v.args, variables: v.variables, schema: schema, recordType: schema == nil ? nil : "Place",
        now: fixedNow)
}

/// The text form the table compares accepted predicates with.
func summary(_ p: QueryPredicate) -> String {
    switch p {
    case .all: "ALL"
    case .none: "NONE"
    case .filters(let f): f.map(\.description).joined(separator: " AND ")
    }
}

/// The UTF-8 byte range of the first occurrence of `needle` in `haystack`.
func byteRange(of needle: String, in haystack: String) -> SourceRange? {
    let h = Array(haystack.utf8)
    let n = Array(needle.utf8)
    guard !n.isEmpty, n.count <= h.count else { return nil }
    for i in 0...(h.count - n.count) where Array(h[i..<(i + n.count)]) == n {
        return SourceRange(i, i + n.count)
    }
    return nil
}
