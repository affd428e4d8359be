// RecordRow: a record as a row — its key, its encoded bytes (RecordLog's codec, so every field
// type round-trips exactly), and the typed column values derived from it.

import CirrusFacade
import CirrusIO
import Indexes
import RecordModel

enum RecordRow {
    /// The stored bytes of a record.
    static func encode(_ r: Record) -> [UInt8] { RecordCodec.encode(r) }

    /// A record from its stored bytes.
    static func decode(_ bytes: [UInt8]) throws(CirrusError) -> Record {
        do {
            return try RecordCodec.decode(bytes)
        } catch {
            throw CirrusError(.internalError, "a stored record does not decode: \(error)")
        }
    }

    /// `tenant = $a AND zone_name = $b AND zone_owner = $c AND record_name = $d`.
    static func keyCondition(tenant: String, _ id: RecordID, _ b: inout SQLBuilder) -> String {
        "tenant = \(b.param(tenant)) AND zone_name = \(b.param(id.zoneID.zoneName)) AND zone_owner = "
            + "\(b.param(id.zoneID.ownerName)) AND record_name = \(b.param(id.recordName))"
    }

    /// The content hashes of a record's assets, sorted, each once.
    static func assetHashes(_ r: Record) -> [String] {
        var hashes = Set<String>()
        for v in r.fields.values {
            for e in v.elements { if case .asset(let a) = e { hashes.insert(a.contentHash) } }
        }
        return hashes.sorted()
    }

    /// The search tokens of a record's searchable fields (TextTokenizer, as the text index).
    static func tokens(_ r: Record, _ layout: TableLayout) -> [String] {
        // One set for the record (each string's own token set and array cost as much again).
        var seen = Set<String>(minimumCapacity: 64)
        var out: [String] = []
        for name in layout.searchableFields {
            r.fields[name]?.forEachElement { e in
                guard case .string(let s) = e else { return }
                TextTokenizer.forEachToken(s) { t in if seen.insert(t).inserted { out.append(t) } }
            }
        }
        return out
    }

    /// Every typed column (and `tokens`) with the SQL expression of its value for `r`. A value
    /// whose list-ness differs from its field's schema type, or that has no exact form in its
    /// column's type (another family; a number its kind cannot hold), is refused.
    static func typedValues(
        _ r: Record, _ layout: TableLayout, _ b: inout SQLBuilder
    ) throws(CirrusError)
        -> [(String, String)]
    {
        var out: [(String, String)] = []
        for c in layout.sortedColumns {
            guard let v = r.fields[c.field] else {
                out.append((c.sql, "NULL"))
                if c.family == .location { out += c.vectorColumns.map { ($0, "NULL") } }
                continue
            }
            let mismatch = BatchColumns.mismatch(c, v, layout, r.recordID)
            if c.isList {
                guard case .list(let items) = v, items.allSatisfy({ c.type.exact($0) != nil }) else {
                    throw mismatch
                }
                out.append((c.sql, try b.array(items, c.type)))
            } else {
                guard c.type.exact(v) != nil else { throw mismatch }
                out.append((c.sql, try b.value(v, c.type)))
                if case .location(let l) = v {
                    let u = UnitVector(latitude: l.latitude, longitude: l.longitude)
                    let vs = c.vectorColumns
                    out.append((vs[0], "\(b.param(SQLText.double(u.x)))::float8"))
                    out.append((vs[1], "\(b.param(SQLText.double(u.y)))::float8"))
                    out.append((vs[2], "\(b.param(SQLText.double(u.z)))::float8"))
                }
            }
        }
        if !layout.searchableFields.isEmpty {
            out.append(("tokens", "array_to_tsvector(\(b.param(tokens(r, layout)))::text[])"))
        } else {
            out.append(("tokens", "NULL"))
        }
        if layout.hasAssets { out.append(("asset_refs", "\(b.param(assetHashes(r)))::text[]")) }
        return out
    }
}
