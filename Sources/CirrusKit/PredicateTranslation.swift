// From an NSPredicate (a format string with arguments, NSPredicate(value:), or an
// NSCompoundPredicate of those) to one format string and the façade's PredicateArguments.
// Compound predicates are written out with parentheses — OR and NOT included, so that the
// checker, not this file, says what CloudKit refuses and where.

import PredicateSyntax
import RecordModel

enum PredicateTranslation {
    /// The format string and arguments of `predicate`.
    static func flatten(_ predicate: NSPredicate) throws(CKError) -> (String, [PredicateArgument]) {
        if let compound = predicate as? NSCompoundPredicate {
            var parts: [String] = []
            var arguments: [PredicateArgument] = []
            for sub in compound.subpredicates {
                let (f, a) = try flatten(sub)
                parts.append("(\(f))")
                arguments += a
            }
            switch compound.compoundPredicateType {
            case .and: return (parts.isEmpty ? "TRUEPREDICATE" : parts.joined(separator: " AND "), arguments)
            case .or: return (parts.isEmpty ? "FALSEPREDICATE" : parts.joined(separator: " OR "), arguments)
            case .not: return ("NOT \(parts.first ?? "(TRUEPREDICATE)")", arguments)
            @unknown default:
                throw CKError(.invalidArguments, "an NSCompoundPredicate of an unknown type")
            }
        }
        if let payload = predicate.cirrusPayload {
            let (format, kinds) = scan(payload.format)
            var arguments: [PredicateArgument] = []
            for (i, a) in payload.arguments.enumerated() {
                arguments.append(try argument(a, index: i, isKey: i < kinds.count && kinds[i] == .key))
            }
            return (format, arguments)
        }
        // NSPredicate(value:) — or a block predicate of the caller's, which CloudKit refuses.
        if predicate.isEqual(NSPredicate(value: true)) { return ("TRUEPREDICATE", []) }
        if predicate.isEqual(NSPredicate(value: false)) { return ("FALSEPREDICATE", []) }
        throw CKError(
            .invalidArguments,
            "block predicates are not supported: CloudKit takes predicates made with NSPredicate(format:), "
                + "NSPredicate(value:) and NSCompoundPredicate")
    }

    /// One argument: a key for `%K`, else a value.
    static func argument(_ a: Any, index: Int, isKey: Bool) throws(CKError) -> PredicateArgument {
        if isKey, let k = (a as? String) ?? (a as? NSString).map({ $0 as String }) {
            return .key(k == "recordID" ? "recordName" : k)
        }
        if let v = value(a) { return .value(v) }
        if isNil(a) {
            throw CKError(
                .invalidArguments,
                "argument \(index + 1) is nil: CloudKit compares no field with nil (leave the comparison out)")
        }
        throw CKError(
            .invalidArguments,
            "argument \(index + 1) is \(type(of: a)), which CloudKit cannot compare: pass a string, number, Date, "
                + "Data, CLLocation, CKRecord.Reference, CKRecord, CKRecord.ID or an array of them")
    }

    /// Whether `a` is an optional holding nothing.
    static func isNil(_ a: Any) -> Bool {
        let m = Mirror(reflecting: a)
        return m.displayStyle == .optional && m.children.isEmpty
    }

    /// The FieldValue of an argument: records and record ids mean references to them.
    static func value(_ a: Any) -> FieldValue? {
        switch a {
        case let r as CKRecord: return .reference(Reference(recordID: r.recordID.cirrus))
        case let id as CKRecordID: return .reference(Reference(recordID: id.cirrus))
        case is NSNull: return nil
        case let list as [Any]:
            var out: [FieldValue] = []
            for item in list {
                guard let v = value(item), !v.isList else { return nil }
                out.append(v)
            }
            return .list(out)
        case let list as NSArray: return value(list.map { $0 })
        default: return RecordValues.field(a, asset: { _ in nil })
        }
    }

    /// The format string with the key `recordID` renamed `recordName` (Cirrus's name for the
    /// record-name system field) outside quotes, and the kind of each placeholder in order.
    static func scan(_ format: String) -> (String, [Placeholder.Specifier.Kind]) {
        let s = Array(format.unicodeScalars)
        var out = String.UnicodeScalarView()
        var kinds: [Placeholder.Specifier.Kind] = []
        var i = 0
        func isIdent(_ c: Unicode.Scalar) -> Bool { c == "_" || c.properties.isAlphabetic || ("0"..."9").contains(c) }
        while i < s.count {
            let c = s[i]
            if c == "'" || c == "\"" {
                out.append(c)
                i += 1
                while i < s.count {
                    let d = s[i]
                    out.append(d)
                    i += 1
                    if d == "\\", i < s.count {
                        out.append(s[i])
                        i += 1
                    } else if d == c {
                        break
                    }
                }
            } else if c == "%" {
                var j = i + 1
                if j < s.count, s[j] == "%" {
                    out.append(contentsOf: "%%".unicodeScalars)
                    i = j + 1
                    continue
                }
                while j < s.count, "hlqLztj".unicodeScalars.contains(s[j]) { j += 1 }
                let end = min(j, s.count - 1)
                let text = String(String.UnicodeScalarView(s[i...end]))
                kinds.append(Placeholder.Specifier(rawValue: text)?.kind ?? .object)
                out.append(contentsOf: s[i...end])
                i = end + 1
            } else if c == "$" || c == "#" || c == "@" || isIdent(c) {
                var j = i + 1
                while j < s.count, isIdent(s[j]) { j += 1 }
                let word = String(String.UnicodeScalarView(s[i..<j]))
                let previous = out.last { $0 != " " }
                if word == "recordID" && previous != "." {
                    out.append(contentsOf: "recordName".unicodeScalars)
                } else {
                    out.append(contentsOf: s[i..<j])
                }
                i = j
            } else {
                out.append(c)
                i += 1
            }
        }
        return (String(out), kinds)
    }
}
