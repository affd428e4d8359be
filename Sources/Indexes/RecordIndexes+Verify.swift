// RecordIndexes+Verify: do a table's indexes (mapped sections + delta) hold exactly what its rows
// say? `cirrus verify` builds the indexes afresh from the rows and compares every entry.

import RecordModel

extension RecordIndexes {
    /// Every difference between these indexes and `rebuilt` (built from the same rows with the
    /// same row ids), as readable lines; empty when they agree.
    public func differences(from rebuilt: RecordIndexes) -> [String] {
        var out: [String] = []
        if rowCount != rebuilt.rowCount {
            out.append("\(recordType): \(rowCount) rows indexed, \(rebuilt.rowCount) rows stored")
        }
        for (field, want) in rebuilt.ordered {
            guard let got = ordered[field] else {
                out.append("\(recordType).\(field): ordered index missing")
                continue
            }
            if got.count != want.count {
                out.append("\(recordType).\(field): \(got.count) entries, rows hold \(want.count)")
            }
            if got.rows(in: .all) != want.rows(in: .all) {
                out.append("\(recordType).\(field): ordered entries differ from the rows")
            }
        }
        if let want = rebuilt.text {
            if let got = text {
                var tokens = Set(want.terms.keys)
                for t in got.terms.keys { tokens.insert(t) }
                for b in got.bases {
                    for i in 0..<b.terms {
                        let a = b.bytesAt + b.termOffset(i)
                        let e = b.bytesAt + b.termOffset(i + 1)
                        if a >= b.bytesAt, a <= e, e <= b.s.count {
                            tokens.insert(String(decoding: b.s.bytes[a..<e], as: UTF8.self))
                        }
                    }
                }
                for t in tokens where (got.posting(t) ?? []) != (want.posting(t) ?? []) {
                    out.append("\(recordType): text postings of '\(t)' differ from the rows")
                    break
                }
            } else {
                out.append("\(recordType): text index missing")
            }
        }
        let everywhere = Location(latitude: 0, longitude: 0)
        for (name, want) in rebuilt.spatial {
            guard let got = spatial[name] else {
                out.append("\(recordType).\(name): spatial index missing")
                continue
            }
            if got.count != want.count
                || got.rows(withinKm: 20_100, of: everywhere) != want.rows(withinKm: 20_100, of: everywhere)
            {
                out.append("\(recordType).\(name): spatial points differ from the rows")
            }
        }
        return out
    }
}
