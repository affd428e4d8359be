// Terms: the operands of a CKQuery comparison, after substitution.
//
// An expression of the syntax tree is resolved to one of the few things a CKQuery comparison
// may name: a field, a constant value (literal, argument, aggregate, `now()`), nil, SELF, a
// distance from a location field, or a `tokenize(…)` call. Everything else is rejected here
// with its own message and range, so comparison rules never see arithmetic or key paths.

import PredicateSyntax
import RecordModel

/// A resolved operand.
enum Term {
    case field(String, SourceRange)
    case value(FieldValue, SourceRange)
    case null(SourceRange)
    case evaluatedObject(SourceRange)
    /// `distanceToLocation:fromLocation:(field, center)`
    case distance(field: String, fieldRange: SourceRange, center: Location, SourceRange)
    /// `tokenize(text, 'Cdl')`
    case tokenize(String, SourceRange)

    var range: SourceRange {
        switch self {
        case .field(_, let r), .value(_, let r), .null(let r), .evaluatedObject(let r): r
        case .distance(_, _, _, let r), .tokenize(_, let r): r
        }
    }

    var isField: Bool {
        if case .field = self { return true }
        return false
    }

    /// The list elements when this is a collection constant (an aggregate or an array argument).
    var collection: [FieldValue]? {
        if case .value(.list(let items), _) = self { return items }
        return nil
    }

    var scalarValue: FieldValue? {
        if case .value(let v, _) = self, !v.isList { return v }
        return nil
    }
}

/// The field name reserved for token searches.
let allTokensKey = QueryFilter.allTokensFieldName
/// The name of the distance function in its selector spelling.
let distanceFunctionName = "distanceToLocation:fromLocation:"

extension Checker {
    /// Resolves an expression to a term, or throws why CloudKit cannot use it.
    func term(_ e: Expression) throws(PredicateError) -> Term {
        switch e.kind {
        case .key(let name):
            return .field(try fieldName(name, e.range), e.range)
        case .constant(let lit):
            switch lit {
            case .string(let s): return .value(.string(s), e.range)
            case .integer(let i): return .value(.int64(i), e.range)
            case .double(let d): return .value(.double(d), e.range)
            case .null: return .null(e.range)
            case .boolean(let b):
                // NSPredicate parses TRUE/YES and FALSE/NO as NSNumber 1 and 0, which CloudKit
                // takes as INT64 (it has no boolean type).
                return .value(.int64(b ? 1 : 0), e.range)
            }
        case .evaluatedObject:
            return .evaluatedObject(e.range)
        case .placeholder(let p):
            return try placeholder(p, e.range)
        case .variable(let name):
            recorder?.unshapeable = true
            guard let arg = context.variables[name] else {
                throw PredicateError(
                    .argument, "Unsubstituted variable $\(name)",
                    hint: ("bind $\(name) to a value before the query runs (variables: "
                        + "\(Set(context.variables.keys).sorted().joined(separator: ", ")))")
                        .replacingOccurrences(of: " (variables: )", with: ""),
                    range: e.range)
            }
            switch arg {
            case .key(let k): return .field(try fieldName(k, e.range), e.range)
            case .value(let v): return .value(try checkedArgumentValue(v, e.range), e.range)
            }
        case .aggregate(let items):
            return .value(.list(try aggregate(items, e.range)), e.range)
        case .function(let name, let args):
            return try function(name, args, e.range)
        case .negate(let inner):
            if case .value(let v, _) = try term(inner) {
                switch v {
                case .int64(let i) where i != .min: return .value(.int64(-i), e.range)
                case .double(let d): return .value(.double(-d), e.range)
                default: break
                }
            }
            throw unexpected(Self.refusal(e.kind), at: e.range)
        case .member(let base, let name):
            if name.hasPrefix("@") || isCollectionOperatorKey(base) {
                throw unexpected(
                    "collection operators such as \(name.hasPrefix("@") ? name : "@count") are not supported; store "
                        + "the aggregate in its own field",
                    at: e.range)
            }
            throw unexpected(
                "key paths are not supported: name a field of the record itself, without dots", at: e.range)
        case .arithmetic, .subscripted, .subquery, .functionExpression, .cast, .ternary, .anyKey:
            throw unexpected(Self.refusal(e.kind), at: e.range)
        }
    }

    /// The hint of the error for an expression of `kind` that no term can be: arithmetic
    /// (`.negate` of anything but a number too), indexing, SUBQUERY, FUNCTION, CAST, TERNARY, ANYKEY.
    private static func refusal(_ kind: Expression.Kind) -> String {
        switch kind {
        case .negate, .arithmetic: "arithmetic is not supported; compute the value before the query"
        case .subscripted: "indexing ([i], [FIRST], [LAST], [SIZE]) is not supported"
        case .subquery: "SUBQUERY is not supported; use list operators (ANY k == c, ANY k IN {…}) on a list field"
        case .functionExpression: "FUNCTION(…) is not supported"
        case .cast: "CAST is not supported; pass a date argument (%@) instead"
        case .ternary: "TERNARY is not supported"
        case .anyKey: "ANYKEY is not supported; name a field"
        // The kinds `term` takes (or refuses with a message of its own) never come here.
        case .constant, .evaluatedObject, .key, .member, .variable, .placeholder, .aggregate, .function:
            "this expression is not supported"
        }
    }

    private func isCollectionOperatorKey(_ e: Expression) -> Bool {
        if case .key(let k) = e.kind { return k.hasPrefix("@") }
        if case .member(let b, let n) = e.kind { return n.hasPrefix("@") || isCollectionOperatorKey(b) }
        return false
    }

    /// Validates a key: `[A-Za-z][A-Za-z0-9_]*`, ≤ 255 characters, or a system field's schema
    /// name (`___recordID`, …), which is mapped to its query name.
    func fieldName(_ name: String, _ range: SourceRange) throws(PredicateError) -> String {
        // Schema spellings of system fields (`___recordID`) map to their query names; every
        // other valid key (including `recordName`) is returned as is.
        if name.utf8.first == UInt8(ascii: "_"), let system = SystemField(name: name) { return system.rawValue }
        if name.hasPrefix("@") {
            throw unexpected(
                "collection operators such as \(name) are not supported; store the aggregate in its own field",
                at: range)
        }
        guard Self.isPlainKey(name) else {
            throw PredicateError(
                .unsupported, "Invalid key '\(name)'",
                hint:
                    "field names start with a letter and contain only letters, digits and '_' (at most 255 characters)",
                range: range)
        }
        return name
    }

    /// `[A-Za-z][A-Za-z0-9_]*`, 1…255 bytes — checked over the contiguous UTF-8 bytes (this runs
    /// for every key of every predicate).
    static func isPlainKey(_ name: String) -> Bool {
        var copy = name
        return copy.withUTF8 { b in
            guard !b.isEmpty, b.count <= 255 else { return false }
            for i in 0..<b.count {
                let c = b[i]
                let letter = (c &- 0x41) < 26 || (c &- 0x61) < 26
                if i == 0 ? !letter : !(letter || (c &- 0x30) < 10 || c == 0x5F) { return false }
            }
            return true
        }
    }

    private func placeholder(_ p: Placeholder, _ range: SourceRange) throws(PredicateError) -> Term {
        guard p.index < context.arguments.count else {
            throw PredicateError(
                .argument, "Missing argument for \(p.specifier.rawValue) (placeholder \(p.index + 1))",
                hint:
                    "the predicate has more placeholders than the \(context.arguments.count) "
                    + "argument\(context.arguments.count == 1 ? "" : "s") given",
                range: range)
        }
        recorder?.placeholders.append((range, p.index, false))
        let arg = context.arguments[p.index]
        switch (p.specifier, arg) {
        case (.key, .key(let k)):
            return .field(try fieldName(k, range), range)
        case (.key, .value(let v)):
            throw PredicateError(
                .argument, "Argument \(p.index + 1) for %K must be a key, not \(withArticle(v.typeName)) value",
                hint: "pass {\"type\": \"KEY\", \"value\": \"fieldName\"}, or use %@ for a value", range: range)
        case (_, .key(let k)):
            throw PredicateError(
                .argument, "Argument \(p.index + 1) for \(p.specifier.rawValue) is a key ('\(k)'), not a value",
                hint: "use %K for keys", range: range)
        case (.object, .value(let v)):
            return .value(try checkedArgumentValue(v, range), range)
        case (let s, .value(let v)) where s.isInteger:
            guard case .int64 = v else {
                throw PredicateError(
                    .argument,
                    "Argument \(p.index + 1) for \(s.rawValue) must be an integer, not \(withArticle(v.typeName)) "
                        + "value",
                    hint: "use %@ for values of other types", range: range)
            }
            return .value(v, range)
        case (let s, .value(let v)) where s.kind == .string:
            guard case .string = v else {
                throw PredicateError(
                    .argument,
                    "Argument \(p.index + 1) for \(s.rawValue) must be a string, not \(withArticle(v.typeName)) value",
                    hint: "use %@ for values of other types", range: range)
            }
            return .value(v, range)
        case (let s, .value) where s.kind == .character || s.kind == .pointer:
            throw PredicateError(
                .argument,
                "Argument \(p.index + 1) for \(s.rawValue): CloudKit takes no "
                    + "\(s.kind == .pointer ? "pointer" : "character") values",
                hint: "use %@ with a string or a number", range: range)
        case (let s, .value(let v)):
            switch v {
            case .double: return .value(v, range)
            case .int64(let i): return .value(.double(Double(i)), range)
            default:
                throw PredicateError(
                    .argument,
                    "Argument \(p.index + 1) for \(s.rawValue) must be a number, not \(withArticle(v.typeName)) value",
                    hint: "use %@ for values of other types", range: range)
            }
        }
    }

    /// Rejects argument values CloudKit cannot compare (assets, NaN, mixed lists, over-long lists).
    func checkedArgumentValue(_ v: FieldValue, _ range: SourceRange) throws(PredicateError) -> FieldValue {
        switch v {
        case .asset:
            throw PredicateError(
                .argument, "Assets cannot be compared", hint: "assets are never queryable", range: range)
        case .double(let d) where !d.isFinite:
            throw PredicateError(.argument, "A number argument is not finite (\(d))", range: range)
        case .list(let items):
            if items.count > context.maximumListCount {
                throw PredicateError(
                    .argument,
                    "A list argument has \(items.count) elements, more than the limit of \(context.maximumListCount)",
                    range: range)
            }
            for item in items {
                if item.isList { throw PredicateError(.argument, "Lists of lists are not supported", range: range) }
                _ = try checkedArgumentValue(item, range)
            }
            try requireHomogeneous(items, range)
            return v
        default:
            return v
        }
    }

    private func requireHomogeneous(_ items: [FieldValue], _ range: SourceRange) throws(PredicateError) {
        guard let first = items.first else { return }
        for item in items.dropFirst() where item.familyRank != first.familyRank {
            throw PredicateError(
                .argument,
                "Collection elements must all have the same type (found \(first.typeName) and \(item.typeName))",
                range: range)
        }
    }

    private func aggregate(_ items: [Expression], _ range: SourceRange) throws(PredicateError) -> [FieldValue] {
        if items.count > context.maximumListCount {
            throw PredicateError(
                .unsupported,
                "An aggregate has \(items.count) elements, more than the limit of \(context.maximumListCount)",
                range: range)
        }
        var values: [FieldValue] = []
        values.reserveCapacity(items.count)
        for item in items {
            switch try term(item) {
            case .value(let v, let r):
                if v.isList { throw unexpected("aggregates cannot contain lists", at: r) }
                values.append(v)
            case .null(let r):
                throw PredicateError(
                    .unsupported, "Comparing with nil is not supported", hint: "aggregates cannot contain NULL",
                    range: r)
            default:
                throw unexpected("aggregate elements must be constants or arguments, not fields", at: item.range)
            }
        }
        try requireHomogeneous(values, range)
        return values
    }

    private func function(_ name: String, _ args: [Expression], _ range: SourceRange) throws(PredicateError) -> Term {
        switch name {
        case "now":
            guard args.isEmpty else { throw PredicateError(.unsupported, "now() takes no arguments", range: range) }
            recorder?.unshapeable = true
            return .value(.date(context.now), range)
        case "tokenize":
            guard args.count == 2 else {
                throw PredicateError(
                    .unsupported, "tokenize takes two arguments", hint: "write tokenize(%@, 'Cdl')", range: range)
            }
            guard case .value(.string(let text), _) = try term(args[0]) else {
                throw PredicateError(
                    .unsupported, "The first argument of tokenize must be a string",
                    hint: "write tokenize(%@, 'Cdl') with a string argument", range: args[0].range)
            }
            guard case .constant(.string(let opts)) = args[1].kind,
                Set(opts.lowercased()) == Set("cdl"), opts.count == 3
            else {
                throw PredicateError(
                    .unsupported, "Predicate comparison options are not supported for expression",
                    hint: "tokenize requires exactly the options 'Cdl' (case-, diacritic- and locale-insensitive)",
                    range: args[1].range)
            }
            return .tokenize(text, range)
        case distanceFunctionName:
            guard args.count == 2 else {
                throw PredicateError(
                    .unsupported, "distanceToLocation:fromLocation: takes two arguments",
                    hint: "write distanceToLocation:fromLocation:(location, %@)", range: range)
            }
            let a = try term(args[0])
            let b = try term(args[1])
            switch (a, b) {
            case (.field(let f, let fr), .value(.location(let c), let cr)),
                (.value(.location(let c), let cr), .field(let f, let fr)):
                recorder?.centers.append((call: range, center: cr))
                return .distance(field: f, fieldRange: fr, center: c, range)
            case (.field, let other), (let other, .field):
                throw PredicateError(
                    .argument, "The distance must be measured from a location",
                    hint: "pass a LOCATION argument: distanceToLocation:fromLocation:(location, %@)", range: other.range
                )
            default:
                throw PredicateError(
                    .unsupported, "Unexpected expression",
                    hint: "distanceToLocation:fromLocation: takes a Location field and a location argument",
                    range: range)
            }
        default:
            throw PredicateError(
                .unsupported, "Unexpected expression",
                hint: "CloudKit supports only the functions now(), tokenize(…) and distanceToLocation:fromLocation:(…)",
                range: range)
        }
    }
}
