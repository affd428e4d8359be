// Cursor suites: a later page of a sorted query. Cirrus resumes from a cursor (a seek to the
// position it carries); SQLite either skips rows with OFFSET or, in the keyset variant, seeks
// past the last row of the previous page with a row-value comparison — the best a SQLite user
// can do. The cursors are obtained once, before timing, by paging from the first page; the
// timed operation is fetching page N from its cursor (the data does not change meanwhile).
// With `--postgres`, Cirrus-on-PostgreSQL pages the same way with its keyset cursors, obtained
// the same way before timing.

import Cirrus
import CirrusPostgres
import Foundation
import RecordModel

extension SuiteBuilder {
    /// PostgreSQL's cursor for page `page` (1-based, ≥ 2) of 20 of `q`: the first page and the
    /// ones after it up to the page before. `.some(nil)` when the query has fewer pages (the
    /// timed fetch then fails the agreement check, as it should); nil without `--postgres`.
    func postgresCursor(_ q: RecordQuery, page: Int) async throws -> PostgresCursor?? {
        guard let p = postgres else { return nil }
        var cursor = try await p.page(q, limit: 20).1
        for _ in 2..<max(2, page) {
            guard let cur = cursor else { break }
            cursor = try await p.next(cur, limit: 20).1
        }
        return .some(cursor)
    }

    /// Fetching the page after `cursor` on PostgreSQL (no rows without a cursor).
    func pgNext(_ cursor: PostgresCursor??) -> (() async throws -> [String])? {
        guard let p = postgres, let cursor else { return nil }
        return {
            guard let cursor else { return [] }
            return namesOf(try await p.next(cursor, limit: 20).0)
        }
    }

    /// Nearest-first, page `page` (1-based) of 20, via the cursor of the page before.
    mutating func nearestPage(_ page: Int) async throws -> ReadSuite {
        let s = sqlite, c = cirrus
        var cases: [Case] = []
        for _ in 0..<count {
            let centre = centre()
            let q = query("TRUEPREDICATE", [], sort: [.distance(field: "location", from: centre)])
            var (_, cursor) = try await cirrus.page(q, limit: 20)
            for _ in 2..<max(2, page) {
                guard let cur = cursor else { break }
                cursor = try await cirrus.next(cur, limit: 20).1
            }
            guard let cur = cursor else { continue }
            let pgCursor = try await postgresCursor(q, page: page)
            let offset = (page - 1) * 20
            cases.append(
                Case(
                    label: Self.label(q) + " page \(page)", ordered: true,
                    cirrus: { namesOf(try await c.next(cur, limit: 20).0) },
                    sqlite: {
                        namesOf(try s.nearest(lat: centre.latitude, lon: centre.longitude, offset: offset, limit: 20))
                    },
                    postgres: pgNext(pgCursor),
                    postgresSQL: hand(
                        PostgresSQLPeer.Nearest(
                            longitude: centre.longitude, latitude: centre.latitude, offset: Int64(offset)))))
        }
        return ReadSuite(
            name: "nearest-page", title: "nearest-first, page \(page) via cursor", target: 10, cases: cases)
    }

    /// `kind == k` by population descending, page `page` of 20 (the deepest the kind has when
    /// fewer), via the cursor; SQLite with OFFSET, and with keyset paging as the alternative.
    mutating func deepPage(_ page: Int) async throws -> ReadSuite {
        let s = sqlite, c = cirrus
        var cases: [Case] = []
        var keyset: [() throws -> [String]] = []
        // The most common kinds, so that the deep page exists.
        var counts: [String: Int] = [:]
        for i in data.places.indices { counts[data.places.kind(at: i), default: 0] += 1 }
        let kinds = counts.sorted { $0.value > $1.value || ($0.value == $1.value && $0.key < $1.key) }.prefix(
            max(1, min(count, 4)))
        var deepest = page
        for (kind, total) in kinds {
            let pageNo = max(2, min(page, total / 20))
            deepest = min(deepest, pageNo)
            let q = query("kind == %@", [.string(kind)], sort: [.field("population", ascending: false)])
            var (rows, cursor) = try await cirrus.page(q, limit: 20)
            for _ in 2..<pageNo {
                guard let cur = cursor else { break }
                (rows, cursor) = try await cirrus.next(cur, limit: 20)
            }
            guard let cur = cursor, let last = rows.last, case .int64(let lastPop)? = last["population"] else {
                continue
            }
            let lastName = last.recordID.recordName
            let pgCursor = try await postgresCursor(q, page: pageNo)
            let offset = (pageNo - 1) * 20
            cases.append(
                Case(
                    label: Self.label(q) + " page \(pageNo)", ordered: true,
                    cirrus: { namesOf(try await c.next(cur, limit: 20).0) },
                    sqlite: {
                        namesOf(
                            try s.places(
                                "WHERE p.kind = ? ORDER BY p.population DESC, p.recordName LIMIT 20 OFFSET ?",
                                [.text(kind), .int(Int64(offset))]))
                    },
                    postgres: pgNext(pgCursor),
                    postgresSQL: hand(
                        PostgresSQLPeer.KindAfter(kind: kind, population: lastPop, recordName: lastName))))
            keyset.append({
                namesOf(
                    try s.places(
                        "WHERE p.kind = ? AND (p.population < ? OR (p.population = ? AND p.recordName > ?)) "
                            + "ORDER BY p.population DESC, p.recordName LIMIT 20",
                        [.text(kind), .int(lastPop), .int(lastPop), .text(lastName)]))
            })
        }
        return ReadSuite(
            name: "deep-page", title: "deep page \(deepest) via cursor (vs OFFSET)", target: 20, cases: cases,
            alternative: (label: "SQLite keyset", run: keyset))
    }
}
