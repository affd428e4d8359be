// Schema rules: with a schema and a record type, every filter's field must exist, the operator
// must fit the field's type (CKQUERY.md §3), the value must fit the field, and in production the
// field must carry the index option the operator needs (`Field 'x' is not marked queryable`).

import PredicateSyntax
import RecordModel

/// A field as the checker sees it: a user field, or a system field with its declared options.
struct ResolvedField {
    var type: FieldType
    var options: IndexOptions
    var isSystem: Bool
}

extension Checker {
    /// The user field's schema, when a schema applies and has it.
    func fieldSchema(_ name: String) -> FieldSchema? { typeSchema?.fields[name] }

    func checkRecordType(_ range: SourceRange) throws(PredicateError) {
        guard let schema = context.schema, let t = context.recordType else { return }
        if t == Schema.usersRecordType {
            throw PredicateError(
                .schema, "Type 'Users' cannot be queried", hint: "the Users type is reserved by CloudKit", range: range)
        }
        // `typeSchema` is the type's schema, looked up once when the checker was made.
        if typeSchema == nil {
            throw PredicateError(
                .schema, "Did not find record type: \(t)",
                hint: schema.recordTypes.isEmpty
                    ? nil : "record types: \(schema.sortedRecordTypes.map(\.name).joined(separator: ", "))",
                range: range)
        }
    }

    /// TRUEPREDICATE in production lists the type through the `recordName` index.
    func requireListable(_ range: SourceRange) throws(PredicateError) {
        guard let schema = context.schema, schema.environment == .production, let ts = typeSchema else { return }
        if !(ts.systemFieldOptions[.recordName] ?? []).contains(.queryable) {
            throw PredicateError(
                .schema, "Field 'recordName' is not marked queryable",
                hint:
                    "listing every record of a type needs a QUERYABLE index on recordName (___recordID) in the "
                    + "production schema",
                range: range)
        }
    }

    func resolve(_ name: String, _ range: SourceRange) throws(PredicateError) -> ResolvedField? {
        guard let ts = typeSchema else { return nil }
        if let sys = SystemField.named(name) {
            return ResolvedField(type: sys.fieldType, options: ts.systemFieldOptions[sys] ?? [], isSystem: true)
        }
        guard let f = ts.fields[name] else {
            throw PredicateError(
                .schema, "Unknown field '\(name)' in record type '\(ts.name)'",
                hint: ts.fields.isEmpty ? nil : "fields: \(ts.sortedFields.map(\.name).joined(separator: ", "))",
                range: range)
        }
        return ResolvedField(type: f.type, options: f.options, isSystem: false)
    }

    /// Appends a filter after the schema checks that apply. With a recorder, notes where its
    /// value came from: `source`, or else the argument resolved at exactly `valueRange` when the
    /// value is that argument unchanged, or else the text.
    mutating func add(
        _ f: QueryFilter, fieldRange: SourceRange, valueRange: SourceRange,
        source: CheckedShape.ValueSource? = nil
    ) throws(PredicateError) {
        if let recorder {
            recorder.added.append(f)
            recorder.sources.append(
                source ?? recorder.take(valueRange, f.fieldValue, context.arguments).map { .argument($0) } ?? .fixed)
        }
        defer { filters.append(f) }
        if f.fieldName == SystemField.recordChangeTag.rawValue {
            throw PredicateError(
                .unsupported, "Field 'recordChangeTag' is not marked queryable",
                hint:
                    "CloudKit cannot index recordChangeTag (___etag): saves compare it (ifServerRecordUnchanged), "
                    + "queries cannot",
                range: fieldRange)
        }
        guard let ts = typeSchema, let schema = context.schema else {
            // A system field has the same type in every record type: its rules apply without a schema.
            if let sys = SystemField.named(f.fieldName), !f.comparator.isTokenSearch {
                let field = ResolvedField(type: sys.fieldType, options: [], isSystem: true)
                try checkOperatorFits(f, field, fieldRange)
                try checkValueFits(f, field, valueRange)
            }
            return
        }
        let production = schema.environment == .production
        if f.comparator.isTokenSearch {
            let searchable = ts.fields.values.contains { $0.options.contains(.searchable) }
            let anyString = ts.fields.values.contains { $0.type.scalar == .string }
            if production ? !searchable : !anyString {
                throw PredicateError(
                    .schema, "No field of record type '\(ts.name)' is marked searchable",
                    hint: "mark a String field SEARCHABLE to search its words", range: fieldRange)
            }
            return
        }
        guard let field = try resolve(f.fieldName, fieldRange) else { return }
        try checkOperatorFits(f, field, fieldRange)
        try checkValueFits(f, field, valueRange)
        if production {
            let needed: IndexOptions = f.comparator.isRange ? .sortable : .queryable
            if !field.options.contains(needed) {
                throw PredicateError(
                    .schema, "Field '\(f.fieldName)' is not marked \(needed == .sortable ? "sortable" : "queryable")",
                    hint:
                        "add the \(needed == .sortable ? "SORTABLE" : "QUERYABLE") index option to '\(f.fieldName)' "
                        + "in the schema and deploy it to production",
                    range: fieldRange)
            }
        }
    }

    private func checkOperatorFits(
        _ f: QueryFilter, _ field: ResolvedField, _ range: SourceRange
    ) throws(PredicateError) {
        let t = field.type
        func reject(_ what: String, _ hint: String? = nil) -> PredicateError {
            PredicateError(
                .schema, "Field '\(f.fieldName)' of type \(t.webServicesName) \(what)", hint: hint, range: range)
        }
        switch f.comparator {
        case .equals, .notEquals, .in, .notIn:
            if t.isList {
                throw reject(
                    "is a list",
                    "for list membership write \(f.fieldName) CONTAINS c, ANY \(f.fieldName) IN {…} or ALL {…} IN "
                        + "\(f.fieldName)"
                )
            }
            if t.scalar == .location {
                throw reject("cannot be compared with ==", "search locations with distanceToLocation:fromLocation:")
            }
            if t.scalar == .asset { throw reject("is never queryable") }
        case .lessThan, .lessThanOrEquals, .greaterThan, .greaterThanOrEquals:
            if t.isList || ![.string, .int64, .double, .date].contains(t.scalar) {
                throw reject(
                    "cannot be compared with <, <=, > or >=",
                    "ranges work on String, INT64, DOUBLE and TIMESTAMP fields")
            }
        case .beginsWith, .notBeginsWith:
            if t.isList { throw reject("is a list", "write ANY \(f.fieldName) BEGINSWITH c") }
            if t.scalar != .string {
                throw reject(
                    "does not support BEGINSWITH",
                    "BEGINSWITH is a prefix search of a STRING field's QUERYABLE index; "
                        + (t.scalar == .bytes ? "BYTES fields are compared with == or !=" : "compare with ==, <, >"))
            }
        case .listContains, .notListContains, .listContainsAny, .notListContainsAny, .listContainsAll,
            .notListContainsAll:
            if !t.isList {
                throw reject("is not a list", "compare a single value with == or IN")
            }
            if t.scalar == .asset { throw reject("is never queryable") }
        case .listMemberBeginsWith, .notListMemberBeginsWith:
            if !(t.isList && t.scalar == .string) {
                throw reject("is not a list of strings", "ANY k BEGINSWITH c works on STRING_LIST fields")
            }
        case .near:
            if t != .location {
                throw reject("is not a location", "distanceToLocation:fromLocation: needs a LOCATION field")
            }
        case .containsAllTokens, .containsAnyTokens:
            break
        }
    }

    private mutating func checkValueFits(
        _ f: QueryFilter, _ field: ResolvedField, _ range: SourceRange
    ) throws(PredicateError) {
        if f.comparator == .near { return }
        // A list's elements, or the scalar itself (`elements` would make it an array first).
        if case .list(let items) = f.fieldValue {
            for v in items { try checkElementFits(v, f, field, range) }
        } else {
            try checkElementFits(f.fieldValue, f, field, range)
        }
    }

    /// One value (a scalar, or an element of the list) of `f` against its field's type.
    private mutating func checkElementFits(
        _ v: FieldValue, _ f: QueryFilter, _ field: ResolvedField, _ range: SourceRange
    ) throws(PredicateError) {
        guard let got = v.scalarType else { return }
        let expected = field.type.scalar
        let ok: Bool
        switch expected {
        case .int64, .double: ok = got.isNumeric
        case .reference:
            ok = got == .reference || (got == .string && f.fieldName == SystemField.recordName.rawValue)
            if ok && got == .string {
                warn(
                    "CloudKit compares recordName with a record ID or reference; pass a REFERENCE argument to be "
                        + "portable",
                    range)
            }
        default: ok = got == expected
        }
        if !ok {
            throw PredicateError(
                .schema, "Field '\(f.fieldName)' is \(field.type.webServicesName) but the value is \(v.typeName)",
                hint: "compare with \(withArticle(expected.webServicesName)) value", range: range)
        }
    }
}

extension QueryChecker {
    /// Checks sort descriptors against a schema: the field exists, its type can be sorted, and in
    /// production it is SORTABLE (a location sort needs the field QUERYABLE).
    public static func checkSort(_ sorts: [SortDescriptor], context: CheckContext) throws(PredicateError) {
        if sorts.isEmpty { return }
        try Checker(context: context).checkSort(sorts)
    }
}

extension Checker {
    /// `QueryChecker.checkSort(_:context:)` with this checker's context and type schema.
    func checkSort(_ sorts: [SortDescriptor]) throws(PredicateError) {
        for s in sorts where SystemField(name: s.fieldName) == .recordChangeTag {
            throw PredicateError(
                .unsupported, "Field 'recordChangeTag' is not marked sortable",
                hint: "CloudKit cannot index recordChangeTag (___etag); sort by modificationDate instead", range: .none)
        }
        guard let ts = typeSchema, let schema = context.schema else { return }
        for s in sorts {
            guard let field = try resolve(s.fieldName, .none) else { continue }
            switch s {
            case .field(let name, _):
                if field.type.isList || ![.string, .int64, .double, .date].contains(field.type.scalar) {
                    throw PredicateError(
                        .schema, "Field '\(name)' of type \(field.type.webServicesName) cannot be sorted",
                        hint: "sort by a String, INT64, DOUBLE or TIMESTAMP field, or by distance for a LOCATION",
                        range: .none)
                }
                if schema.environment == .production, !field.options.contains(.sortable) {
                    throw PredicateError(
                        .schema, "Field '\(name)' is not marked sortable",
                        hint: "add SORTABLE to '\(name)' in \(ts.name)", range: .none)
                }
            case .distance(let name, let from):
                if field.type != .location {
                    throw PredicateError(
                        .schema, "Field '\(name)' of type \(field.type.webServicesName) is not a location", range: .none
                    )
                }
                if !from.hasValidCoordinates {
                    throw PredicateError(
                        .argument, "The sort location must have latitude in -90...90 and longitude in -180...180",
                        range: .none)
                }
                if schema.environment == .production, !field.options.contains(.queryable) {
                    throw PredicateError(
                        .schema, "Field '\(name)' is not marked queryable",
                        hint: "add QUERYABLE to '\(name)' in \(ts.name)", range: .none)
                }
            }
        }
    }
}
