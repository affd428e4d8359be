// Comparison shapes: which `[ANY|ALL] lhs OP rhs` CloudKit accepts and the filter each becomes.
//
// The table of accepted shapes is CKQUERY.md §2. Each rejected shape has its own message and
// hint; the range points at the part that is wrong (an operand, the operator, the modifier).

import PredicateSyntax
import RecordModel

extension Checker {
    mutating func comparison(_ c: Comparison, whole: SourceRange, negated: Bool) throws(PredicateError) {
        if !c.options.isEmpty && c.op != .tokenMatches {
            throw PredicateError(
                .unsupported, "Predicate comparison options are not supported for expression",
                hint:
                    "CloudKit compares strings exactly; for case- or diacritic-insensitive matching use a token "
                    + "search (self CONTAINS 'word') or store a normalized copy of the field",
                range: c.operatorRange)
        }
        switch c.modifier {
        case .none:
            throw PredicateError(
                .unsupported, "Aggregate operator NONE is not supported",
                hint: "for a list field write NOT (k CONTAINS c) or NOT (ANY k IN {…})", range: whole)
        case .all: try allComparison(c, whole)
        case .any: try anyComparison(c, whole)
        case .direct: try directComparison(c, whole, negated: negated)
        }
    }

    // MARK: - direct comparisons

    private mutating func directComparison(_ c: Comparison, _ whole: SourceRange, negated: Bool) throws(PredicateError)
    {
        switch c.op {
        case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual:
            try relational(c, whole, negated: negated)
        case .between: try between(c, whole)
        case .in: try inComparison(c, whole)
        case .contains: try contains(c, whole)
        case .beginsWith:
            let l = try term(c.left)
            let r = try term(c.right)
            guard case .field(let f, let fr) = l else {
                if r.isField {
                    throw unexpected("write the field first: k BEGINSWITH 'prefix'", at: whole)
                }
                throw notAField(l)
            }
            try addPrefix(f, fr, r, .beginsWith)
        case .tokenMatches: try tokenMatches(c, whole)
        case .endsWith:
            throw PredicateError(
                .unsupported, "ENDSWITH is not supported",
                hint: "store the reversed string in another field and use BEGINSWITH on it", range: c.operatorRange)
        case .like:
            throw PredicateError(
                .unsupported, "LIKE is not supported",
                hint: "use BEGINSWITH for a prefix, or a token search (self CONTAINS 'word') for words",
                range: c.operatorRange)
        case .matches:
            throw PredicateError(
                .unsupported, "MATCHES is not supported",
                hint: "CloudKit has no regular expressions; use BEGINSWITH or a token search",
                range: c.operatorRange)
        case .utiConformsTo, .utiEquals:
            throw PredicateError(.unsupported, "\(c.op.spelling) is not supported", range: c.operatorRange)
        }
    }

    private mutating func relational(_ c: Comparison, _ whole: SourceRange, negated: Bool) throws(PredicateError) {
        let l = try term(c.left)
        let r = try term(c.right)
        switch (l, r) {
        case (.distance(let f, let fr, let center, let dr), .value(let radius, let rr)):
            try near(f, fr, center, dr, radius, rr, c.op, whole)
        case (.value(let radius, let rr), .distance(let f, let fr, let center, let dr)):
            try near(f, fr, center, dr, radius, rr, c.op.mirrored, whole)
        case (.field(let f, let fr), .value(let v, let vr)):
            try addRelational(f, fr, c.op, v, vr, c.operatorRange)
        case (.value(let v, let vr), .field(let f, let fr)):
            try addRelational(f, fr, c.op.mirrored, v, vr, c.operatorRange)
        case (.field(let f, _), .null), (.null, .field(let f, _)):
            try nilComparison(f, c.op, whole, negated: negated)
        case (.field, .field):
            throw PredicateError(
                .unsupported, "Comparing two fields is not supported",
                hint: "CloudKit compares a field with a constant; compare with a value (%@) instead", range: whole)
        case (.evaluatedObject, _), (_, .evaluatedObject):
            throw PredicateError(
                .unsupported, "Unexpected expression",
                hint: "SELF cannot be compared; to match one record use recordName == %@ with a reference",
                range: l.isSelf ? l.range : r.range)
        case (.value, .value), (.value, .null), (.null, .value), (.null, .null):
            throw PredicateError(
                .unsupported, "Comparing two constants is not supported",
                hint: "one side of a comparison must be a field", range: whole)
        case (.distance, _), (_, .distance):
            throw PredicateError(
                .unsupported, "Unexpected expression",
                hint: "compare the distance with a number of kilometres: distanceToLocation:fromLocation:(k, %@) < 5",
                range: whole)
        default:
            throw unexpected(nil, at: l.isField ? r.range : l.range)
        }
    }

    private mutating func near(
        _ f: String, _ fr: SourceRange, _ center: Location, _ call: SourceRange, _ radius: FieldValue,
        _ rr: SourceRange, _ op: ComparisonOperator, _ whole: SourceRange
    ) throws(PredicateError) {
        switch op {
        case .less, .lessOrEqual: break
        case .greater, .greaterOrEqual:
            throw PredicateError(
                .unsupported, "Searching for locations outside of a specified circular area is not supported",
                hint: "CloudKit can only search inside a circle: distanceToLocation:fromLocation:(k, %@) < r",
                range: whole)
        default:
            throw PredicateError(
                .unsupported, "Unexpected expression",
                hint: "a distance is compared with < or <= (inside a circle of that many kilometres)", range: whole)
        }
        let km: Double
        switch radius {
        case .int64(let i): km = Double(i)
        case .double(let d): km = d
        default:
            throw PredicateError(
                .argument, "The radius must be a number of kilometres, not \(withArticle(radius.typeName)) value",
                range: rr)
        }
        guard km.isFinite, km >= 0 else {
            throw PredicateError(.argument, "The radius must be a finite, non-negative number of kilometres", range: rr)
        }
        guard center.hasValidCoordinates else {
            throw PredicateError(
                .argument, "The centre of a distance search must have latitude in -90...90 and longitude in -180...180",
                range: whole)
        }
        var source: CheckedShape.ValueSource? = nil
        if let recorder {
            // The centre and the radius: each an argument taken whole, or fixed by the text.
            let cr = recorder.centers.last(where: { $0.call == call })?.center ?? .none
            source = .near(
                center: recorder.take(cr, .location(center), context.arguments),
                radius: recorder.take(rr, radius, context.arguments))
        }
        try add(
            QueryFilter(fieldName: f, comparator: .near, fieldValue: .location(center), distance: Self.metres(km)),
            fieldRange: fr, valueRange: rr, source: source)
    }

    private mutating func addRelational(
        _ f: String, _ fr: SourceRange, _ op: ComparisonOperator, _ v: FieldValue, _ vr: SourceRange,
        _ opRange: SourceRange
    ) throws(PredicateError) {
        if v.isList {
            throw unexpected("to compare with several values use IN: \(f) IN {…}", at: vr)
        }
        let comparator: Comparator
        switch op {
        case .equal: comparator = .equals
        case .notEqual: comparator = .notEquals
        case .less: comparator = .lessThan
        case .lessOrEqual: comparator = .lessThanOrEquals
        case .greater: comparator = .greaterThan
        default: comparator = .greaterThanOrEquals
        }
        switch v {
        case .location:
            throw PredicateError(
                .unsupported, "Locations can only be searched by distance",
                hint: "write distanceToLocation:fromLocation:(\(f), %@) < r", range: vr)
        case .reference where comparator.isRange, .bytes where comparator.isRange:
            throw PredicateError(
                .unsupported, "A \(v.typeName) value can only be compared with == or !=", range: opRange)
        default: break
        }
        try add(QueryFilter(fieldName: f, comparator: comparator, fieldValue: v), fieldRange: fr, valueRange: vr)
    }

    /// `k == nil` / `k != nil`: CloudKit allows it only for the system keys `parent` and `share`.
    /// Cirrus records have neither, so `== nil` matches every record and `!= nil` none.
    private mutating func nilComparison(
        _ f: String, _ op: ComparisonOperator, _ whole: SourceRange, negated: Bool
    ) throws(PredicateError) {
        guard f == "parent" || f == "share", op == .equal || op == .notEqual else {
            throw PredicateError(
                .unsupported, "Comparing with nil is not supported",
                hint:
                    "CloudKit cannot search for missing values; store an explicit marker value (e.g. an INT64 flag) "
                    + "instead",
                range: whole)
        }
        let matchesAll = (op == .equal) != negated
        warn(
            "Cirrus records have no \(f); \(f) \(op == .equal ? "==" : "!=") nil matches "
                + "\(matchesAll ? "every" : "no") record",
            whole)
        if !matchesAll { matchesNothing = true }
    }

    private mutating func between(_ c: Comparison, _ whole: SourceRange) throws(PredicateError) {
        let l = try term(c.left)
        let r = try term(c.right)
        guard case .field(let f, let fr) = l else {
            throw unexpected("write k BETWEEN {lo, hi} with the field on the left", at: l.range)
        }
        guard let items = r.collection, items.count == 2 else {
            throw PredicateError(
                .unsupported, "BETWEEN requires exactly two numbers", hint: "write \(f) BETWEEN {lo, hi}",
                range: r.range)
        }
        let numeric = items.allSatisfy { $0.scalarType?.isNumeric == true }
        let dates = items.allSatisfy { $0.scalarType == .date }
        guard numeric || dates else {
            throw PredicateError(
                .unsupported, "BETWEEN requires exactly two numbers", hint: "write \(f) BETWEEN {lo, hi} with numbers",
                range: r.range)
        }
        if dates {
            warn("BETWEEN with dates is a Cirrus extension; for CloudKit write \(f) >= %@ AND \(f) <= %@", r.range)
        }
        // Each bound's source for a shape: the aggregate's element, a placeholder taken
        // unchanged or a constant (`{%@, %@}` binds as `k >= %@ AND k <= %@` would). A
        // placeholder whose value changed on the way stays untaken, and the query unshaped.
        var sources: [CheckedShape.ValueSource?] = [nil, nil]
        if let recorder, case .aggregate(let elements) = c.right.kind, elements.count == 2 {
            for k in 0..<2 {
                let i = recorder.take(elements[k].range, items[k], context.arguments)
                sources[k] = i.map { .argument($0) } ?? .fixed
            }
        }
        try add(
            QueryFilter(fieldName: f, comparator: .greaterThanOrEquals, fieldValue: items[0]), fieldRange: fr,
            valueRange: r.range, source: sources[0])
        try add(
            QueryFilter(fieldName: f, comparator: .lessThanOrEquals, fieldValue: items[1]), fieldRange: fr,
            valueRange: r.range, source: sources[1])
    }

    private mutating func inComparison(_ c: Comparison, _ whole: SourceRange) throws(PredicateError) {
        let l = try term(c.left)
        let r = try term(c.right)
        switch (l, r) {
        case (.field(let f, let fr), .value(.list(let items), let vr)):
            if let fs = fieldSchema(f), fs.type.isList {
                throw PredicateError(
                    .unsupported, "Field '\(f)' is a list",
                    hint: "to match any element write ANY \(f) IN {…}; all elements: ALL {…} IN \(f)", range: fr)
            }
            try add(
                QueryFilter(fieldName: f, comparator: .in, fieldValue: .list(items)), fieldRange: fr, valueRange: vr)
        case (.field, _):
            throw PredicateError(
                .unsupported, "IN requires a collection on the right",
                hint: "write k IN {a, b} or pass an array argument (%@)", range: r.range)
        case (.value(let v, let vr), .field(let f, let fr)) where !v.isList:
            try add(QueryFilter(fieldName: f, comparator: .listContains, fieldValue: v), fieldRange: fr, valueRange: vr)
        case (.value(.list, _), .field(let f, _)):
            throw PredicateError(
                .unsupported, "Unexpected expression",
                hint: "for all of the values write ALL {…} IN \(f); for any of them ANY \(f) IN {…}", range: whole)
        case (.tokenize, .field):
            throw PredicateError(
                .unsupported, "Unexpected expression",
                hint:
                    "write ALL tokenize(%@, 'Cdl') IN allTokens (all words) or ANY tokenize(%@, 'Cdl') IN allTokens "
                    + "(any word)",
                range: whole)
        default:
            throw unexpected("write k IN {a, b} or c IN k (k a list field)", at: whole)
        }
    }

    private mutating func contains(_ c: Comparison, _ whole: SourceRange) throws(PredicateError) {
        let l = try term(c.left)
        let r = try term(c.right)
        switch (l, r) {
        case (.evaluatedObject, .value(.string(let words), let vr)):
            try addTokens(words, .containsAnyTokens, vr)
        case (.evaluatedObject, _):
            throw unexpected("a text search takes a string of words: self CONTAINS 'w1 w2'", at: r.range)
        case (.value(.list(let items), let vr), .field(let f, let fr)):
            try add(
                QueryFilter(fieldName: f, comparator: .in, fieldValue: .list(items)), fieldRange: fr, valueRange: vr)
        case (.field(let f, let fr), .value(let v, let vr)) where !v.isList:
            if let fs = fieldSchema(f), !fs.type.isList, fs.type.scalar == .string {
                throw PredicateError(
                    .unsupported, "CONTAINS on a String field is not a substring search",
                    hint:
                        "CloudKit's CONTAINS tests list membership; to find words in text use self CONTAINS 'word' "
                        + "(SEARCHABLE fields), for a prefix use BEGINSWITH",
                    range: c.operatorRange)
            }
            if typeSchema == nil, SystemField.named(f) == nil, case .string = v {
                warn(
                    "Without a schema the type of '\(f)' is unknown: CONTAINS tests list membership (LIST_CONTAINS); "
                        + "if '\(f)' is a String field CloudKit rejects it (words: self CONTAINS 'w'; prefix: "
                        + "BEGINSWITH)",
                    c.operatorRange)
            }
            try add(QueryFilter(fieldName: f, comparator: .listContains, fieldValue: v), fieldRange: fr, valueRange: vr)
        case (.field(let f, _), .value):
            throw PredicateError(
                .unsupported, "Unexpected expression",
                hint: "for all of the values write ALL {…} IN \(f); for any of them ANY \(f) IN {…}", range: r.range)
        case (.field, .field):
            throw PredicateError(.unsupported, "Comparing two fields is not supported", range: whole)
        default:
            throw unexpected(
                "write k CONTAINS c (k a list field), {a, b} CONTAINS k, or self CONTAINS 'words'", at: whole)
        }
    }

    private mutating func tokenMatches(_ c: Comparison, _ whole: SourceRange) throws(PredicateError) {
        guard c.options == [.caseInsensitive, .diacriticInsensitive, .localeSensitive] else {
            throw PredicateError(
                .unsupported, "Predicate comparison options are not supported for expression",
                hint: "TOKENMATCHES requires exactly the options [cdl]", range: c.operatorRange)
        }
        let l = try term(c.left)
        let r = try term(c.right)
        guard case .field(allTokensKey, _) = l else {
            throw unexpected("write allTokens TOKENMATCHES[cdl] 'words'", at: l.range)
        }
        guard case .value(.string(let words), let vr) = r else {
            throw unexpected("TOKENMATCHES takes a string of words", at: r.range)
        }
        try addTokens(words, .containsAnyTokens, vr)
    }

    // MARK: - ANY / ALL

    private mutating func anyComparison(_ c: Comparison, _ whole: SourceRange) throws(PredicateError) {
        let l = try term(c.left)
        let r = try term(c.right)
        switch (c.op, l, r) {
        case (.equal, .value(.list(let items), let vr), .field(let f, let fr)):
            try add(
                QueryFilter(fieldName: f, comparator: .in, fieldValue: .list(items)), fieldRange: fr, valueRange: vr)
        case (.equal, .field(let f, let fr), .value(let v, let vr)) where !v.isList,
            (.equal, .value(let v, let vr), .field(let f, let fr)) where !v.isList:
            try add(QueryFilter(fieldName: f, comparator: .listContains, fieldValue: v), fieldRange: fr, valueRange: vr)
        case (.in, .field(let f, let fr), .value(.list(let items), let vr)):
            try add(
                QueryFilter(fieldName: f, comparator: .listContainsAny, fieldValue: .list(items)), fieldRange: fr,
                valueRange: vr)
        case (.in, .tokenize(let words, let tr), .field(allTokensKey, _)):
            try addTokens(words, .containsAnyTokens, tr)
        case (.beginsWith, .field(let f, let fr), _):
            try addPrefix(f, fr, r, .listMemberBeginsWith)
        default:
            throw PredicateError(
                .unsupported, "Aggregate operator ANY not allowed for comparison expression",
                hint:
                    "ANY is allowed in ANY k == c, ANY k IN {…}, ANY k BEGINSWITH c (k a list field), ANY {…} == k "
                    + "and ANY tokenize(…) IN allTokens",
                range: whole)
        }
    }

    private mutating func allComparison(_ c: Comparison, _ whole: SourceRange) throws(PredicateError) {
        let l = try term(c.left)
        let r = try term(c.right)
        switch (c.op, l, r) {
        case (.in, .value(.list(let items), let vr), .field(let f, let fr)):
            try add(
                QueryFilter(fieldName: f, comparator: .listContainsAll, fieldValue: .list(items)), fieldRange: fr,
                valueRange: vr)
        case (.in, .tokenize(let words, let tr), .field(allTokensKey, _)):
            try addTokens(words, .containsAllTokens, tr)
        default:
            throw PredicateError(
                .unsupported, "Aggregate operator ALL not allowed for comparison expression",
                hint: "ALL is allowed only in ALL {…} IN k (k a list field) and ALL tokenize(%@, 'Cdl') IN allTokens",
                range: whole)
        }
    }

    // MARK: - helpers

    private mutating func addPrefix(
        _ f: String, _ fr: SourceRange, _ r: Term, _ comparator: Comparator
    ) throws(PredicateError) {
        guard case .value(let v, let vr) = r, !v.isList else {
            throw unexpected("BEGINSWITH takes a string prefix", at: r.range)
        }
        guard case .string = v else {
            throw PredicateError(
                .argument, "BEGINSWITH needs a string prefix, not \(withArticle(v.typeName)) value",
                hint: "BEGINSWITH searches STRING fields (and ANY k BEGINSWITH, STRING_LIST fields)", range: vr)
        }
        try add(QueryFilter(fieldName: f, comparator: comparator, fieldValue: v), fieldRange: fr, valueRange: vr)
    }

    private mutating func addTokens(
        _ words: String, _ comparator: Comparator, _ range: SourceRange
    ) throws(PredicateError) {
        guard words.contains(where: { $0.isLetter || $0.isNumber }) else {
            throw PredicateError(.argument, "A text search needs at least one word", range: range)
        }
        try add(
            QueryFilter(fieldName: allTokensKey, comparator: comparator, fieldValue: .string(words)),
            fieldRange: range, valueRange: range)
    }

    private func notAField(_ t: Term) -> PredicateError {
        unexpected("expected a field name here", at: t.range)
    }
}

extension Term {
    var isSelf: Bool {
        if case .evaluatedObject = self { return true }
        return false
    }
}

extension ComparisonOperator {
    /// The operator with its operands swapped: `c < k` is `k > c`.
    var mirrored: ComparisonOperator {
        switch self {
        case .less: .greater
        case .lessOrEqual: .greaterOrEqual
        case .greater: .less
        case .greaterOrEqual: .lessOrEqual
        default: self
        }
    }
}
