// Calibrate+Operators: the probes — one per operator the planner costs, each on the real
// structures a query reads (the container's `RecordTypeSnapshot`: mapped base rows and the
// delta, the layered ordered, text and spatial indexes), with cases drawn like qbench's suites.
//
// Units are what the planner multiplies its constants by: rows fetched, entries scanned, rows a
// path materializes — for text and radius paths the planner's *estimate* of them (the upper
// bound `SnapshotStatistics` gives it), since that is the number the constant multiplies — and
// comparisons (candidates × log2(k + 2)) for sorts. The top-k replicates the executor's
// `BoundedHeap` (internal to QueryExecution) with the public `BinaryHeap` and the same key
// comparison, so it times the same work.

import ArgumentParser
import Cirrus
import Foundation
import Indexes
import QueryExecution
import RecordModel

/// A position that advances across calls, so repeated passes read new rows (not the record cache's).
final class Walk {
    var next = 0
}

/// A probe's reused buffer of selected field values (held across calls, as a query holds one).
final class ValuesBuffer {
    var slots: [FieldValue?] = []
}

struct CalibrationOperators {
    let data: PlaceSet
    let snapshot: RecordTypeSnapshot
    let baseRows: Int
    var rng: Rng

    init(data: PlaceSet, snapshot: RecordTypeSnapshot, baseRows: Int, seed: UInt64) {
        self.data = data
        self.snapshot = snapshot
        self.baseRows = baseRows
        rng = Rng(state: seed)
    }

    mutating func shuffled(_ rows: Range<Int>) -> [RowID] {
        var a = rows.map { RowID($0) }
        for i in stride(from: a.count - 1, to: 0, by: -1) { a.swapAt(i, rng.below(i + 1)) }
        return a
    }

    func ordered(_ field: String) throws -> OrderedIndex {
        guard let index = snapshot.indexes.ordered[.user(field)] else {
            throw ValidationError("no ordered index on \(field)")
        }
        return index
    }

    mutating func probes() throws -> [CostProbe] {
        var probes: [CostProbe] = []
        probes += fetchProbes()
        probes += try orderedProbes()
        probes += try searchProbes()
        probes += sortProbes()
        probes += try setProbes()
        return probes
    }

    // MARK: fetches

    /// A record fetched by row id and one filter evaluated on it: from the mapped base (whole
    /// record, and only the filter and sort fields as set plans read candidates) and from the delta.
    mutating func fetchProbes() -> [CostProbe] {
        let snap = snapshot
        let byKind = RecordMatcher(
            predicate: .filters([QueryFilter(fieldName: "kind", comparator: .equals, fieldValue: .string("cafe"))]),
            searchableFields: nil)
        let byPopulation = RecordMatcher(
            predicate: .filters([
                QueryFilter(fieldName: "population", comparator: .greaterThan, fieldValue: .int64(5000))
            ]),
            searchableFields: nil)
        func probe(
            _ name: String, _ unit: String, _ rows: [RowID], fields: FieldSelection?, matcher: RecordMatcher? = nil
        ) -> CostProbe {
            let matcher = matcher ?? byKind
            let walk = Walk()
            let values = ValuesBuffer()
            let reader = fields.map { snap.valueReader($0) }
            return CostProbe(name: name, unit: unit, cases: 1000) { _ in
                let row = rows[walk.next]
                walk.next = walk.next + 1 == rows.count ? 0 : walk.next + 1
                if let reader {
                    // What a set plan does per candidate: the filter's and sort key's fields read
                    // from the row's bytes into a reused buffer, the filter tested on them.
                    guard reader.values(row, into: &values.slots) else { return 0 }
                    _ = matcher.matches(values: values.slots)
                    return 1
                }
                guard let record = snap.record(row) else { return 0 }
                _ = matcher.matches(record)
                return 1
            }
        }
        let base = shuffled(0..<baseRows)
        let delta = shuffled(baseRows..<snapshot.rowCount)
        return [
            probe("fetch.base", "base row fetched whole + 1 filter", base, fields: nil),
            probe(
                "fetch.base.fields", "base row, 2 fields read from its bytes + 1 filter", base,
                fields: FieldSelection(["kind", "population"])),
            probe(
                "fetch.base.column", "base row, 1 field read from its layer's column + 1 filter", base,
                fields: FieldSelection(["population"]), matcher: byPopulation),
            probe("fetch.delta", "delta row fetched whole + 1 filter", delta, fields: nil),
        ]
    }

    // MARK: ordered index

    /// Entries of an ordered scan (a stream's step), and rows of a range, an IN lookup, a list
    /// element lookup and a prefix materialized as sorted row-id sets (what set plans read).
    mutating func orderedProbes() throws -> [CostProbe] {
        let population = try ordered("population")
        let name = try ordered("name")
        let kind = try ordered("kind")
        let tags = try ordered("tags")
        let n = data.places.count
        let sortedPopulation = data.places.map(\.population).sorted()
        let starts = (0..<200).map { _ in data.places[rng.below(n)] }
        func scan(_ index: OrderedIndex, _ lower: [FieldValue], name: String) -> CostProbe {
            CostProbe(name: name, unit: "entry scanned in order", cases: lower.count) { i in
                var seen = 0
                index.scan(ValueRange(lower: .included(lower[i]), upper: .unbounded)) { _ in
                    seen += 1
                    return seen < 1000
                }
                return seen
            }
        }
        func ranges(_ fraction: Double) -> [ValueRange] {
            let length = max(1, Int(Double(n) * fraction))
            return (0..<100).map { _ in
                let r = rng.below(n - length)
                return ValueRange(
                    lower: .included(.int64(sortedPopulation[r])),
                    upper: .excluded(.int64(sortedPopulation[r + length])))
            }
        }
        func range(_ rs: [ValueRange], name: String) -> CostProbe {
            CostProbe(name: name, unit: "row of a range, as a sorted set", cases: rs.count) { i in
                Postings.sortedUnique(population.rows(in: rs[i])).count
            }
        }
        let kindSets = (0..<100).map { _ in (0..<3).map { _ in FieldValue.string(data.places[rng.below(n)].kind) } }
        let tagValues = (0..<100).map { _ in FieldValue.string(PlaceSet.tags[rng.below(PlaceSet.tags.count)]) }
        let prefixes = (0..<200).map { _ in FieldValue.string(String(data.places[rng.below(n)].name.prefix(3))) }
        return [
            scan(population, starts.map { .int64($0.population) }, name: "entry.int64"),
            scan(name, starts.map { .string($0.name) }, name: "entry.string"),
            range(ranges(0.01), name: "range.1%"),
            range(ranges(0.1), name: "range.10%"),
            CostProbe(name: "lookup.in3", unit: "row of IN (3 values), as a sorted set", cases: kindSets.count) { i in
                kind.rows(equalToAnyOf: kindSets[i]).count
            },
            CostProbe(name: "lookup.list", unit: "row of a list element lookup", cases: tagValues.count) { i in
                tags.rows(equalToAnyOf: [tagValues[i]]).count
            },
            CostProbe(name: "prefix", unit: "row of a 3-letter prefix, as a sorted set", cases: prefixes.count) { i in
                Postings.sortedUnique(name.rows(beginningWith: prefixes[i])).count
            },
        ]
    }

    // MARK: text and spatial

    /// Text searches and radius queries per row the planner estimates, and nearest-first steps.
    mutating func searchProbes() throws -> [CostProbe] {
        guard let text = snapshot.indexes.text, let spatial = snapshot.indexes.spatial["location"] else {
            throw ValidationError("the snapshot lacks the text or spatial index")
        }
        let stats = snapshot.statistics
        let n = data.places.count
        func pool(_ lo: Int, _ hi: Int) -> [String] {
            let w = data.words(withFrequencyIn: max(1, lo)...max(1, hi))
            return w.isEmpty ? [data.vocabulary[0]] : w
        }
        let anyPool = pool(n / 10_000, n / 1_000)
        let allPool = pool(n / 100, n / 20)
        let anyWords = (0..<200).map { _ in anyPool[rng.below(anyPool.count)] + " " + anyPool[rng.below(anyPool.count)]
        }
        let allWords = (0..<200).map { _ in allPool[rng.below(allPool.count)] + " " + allPool[rng.below(allPool.count)]
        }
        let anyEstimate = anyWords.map { stats.estimatedTextCount($0, all: false) }
        let allEstimate = allWords.map { stats.estimatedTextCount($0, all: true) }
        let centres = (0..<200).map { _ in centre() }
        func radius(_ km: Double) -> CostProbe {
            let estimate = centres.map { stats.estimatedRadiusCount("location", center: $0, km: km) }
            return CostProbe(name: "radius.\(Int(km))km", unit: "estimated row of a radius", cases: centres.count) {
                i in
                _ = spatial.rows(withinKm: km, of: centres[i])
                return estimate[i]
            }
        }
        func nearest(_ steps: Int) -> CostProbe {
            CostProbe(name: "nearest.\(steps)", unit: "step of nearest-first browsing", cases: centres.count) { i in
                var it = spatial.nearest(to: centres[i])
                var k = 0
                while k < steps, it.next() != nil { k += 1 }
                return k
            }
        }
        return [
            CostProbe(name: "text.any", unit: "estimated row of a text ANY", cases: anyWords.count) { i in
                _ = text.rows(matchingAny: [anyWords[i]])
                return anyEstimate[i]
            },
            CostProbe(name: "text.all", unit: "estimated row of a text ALL", cases: allWords.count) { i in
                _ = text.rows(matchingAll: [allWords[i]])
                return allEstimate[i]
            },
            radius(1), radius(10), radius(50),
            nearest(21), nearest(210),
        ]
    }

    /// A centre near a data point (jittered ~1 km), as the radius suites draw them.
    mutating func centre() -> Location {
        let p = data.places[rng.below(data.places.count)]
        return Location(
            latitude: max(-90, min(90, p.latitude + (rng.unit() - 0.5) * 0.006)),
            longitude: max(-180, min(180, p.longitude + (rng.unit() - 0.5) * 0.006)))
    }

    // MARK: sorting

    /// Comparisons of order keys in a top-20 and in a full sort (population descending, then
    /// record id, as eq-sort pages), and of row ids when a set is sorted.
    mutating func sortProbes() -> [CostProbe] {
        let n = data.places.count
        let keys = (0..<4000).map { _ -> OrderKey in
            let p = data.places[rng.below(n)]
            return OrderKey(values: [.int64(p.population)], recordID: RecordID(recordName: p.recordName))
        }
        let chunk = 2000
        let rowLists = (0..<10).map { _ in (0..<10_000).map { _ in RowID(rng.below(n)) } }
        return [
            CostProbe(
                name: "compare.topk", unit: "key comparison in a top-20 (candidates × log2 22)", cases: 2,
                run: { i in
                    var heap = BinaryHeap(order: ReversedKeyOrder(), capacity: 21)
                    for key in keys[(i * chunk)..<((i + 1) * chunk)] {
                        if heap.count < 21 {
                            heap.push(key)
                        } else if let top = heap.top, KeyOrder.compare(key, top) < 0 {
                            heap.replaceTop(key)
                        }
                    }
                    return heap.count > 0 ? chunk : 0
                }, unitsPerResult: log2(22)),
            CostProbe(
                name: "compare.sort", unit: "key comparison in a full sort (n × log2 n)", cases: 2,
                run: { i in
                    let sorted = keys[(i * chunk)..<((i + 1) * chunk)].sorted { KeyOrder.compare($0, $1) < 0 }
                    return sorted.count
                }, unitsPerResult: log2(Double(chunk + 2))),
            CostProbe(
                name: "rowsort", unit: "row id comparison in a set's sort (n × log2 n)", cases: rowLists.count,
                run: { i in Postings.sortedUnique(rowLists[i]).isEmpty ? 0 : rowLists[i].count },
                unitsPerResult: log2(10_002)),
        ]
    }

    // MARK: sets

    /// Intersections of two row-id sets (per input row) and the full scan's row enumeration.
    mutating func setProbes() throws -> [CostProbe] {
        let kind = try ordered("kind")
        let population = try ordered("population")
        let snap = snapshot
        let pairs = (0..<50).map { _ -> ([RowID], [RowID]) in
            let k = kind.rows(equalTo: .string(PlaceSet.kinds[rng.below(8)]))
            let lo = Int64(50 + rng.below(500))
            let p = Postings.sortedUnique(
                population.rows(in: ValueRange(lower: .included(.int64(lo)), upper: .excluded(.int64(lo * 4)))))
            return (k, p)
        }
        return [
            CostProbe(name: "intersect", unit: "input row of a 2-set intersection", cases: pairs.count) { i in
                _ = Postings.intersect([pairs[i].0, pairs[i].1])
                return pairs[i].0.count + pairs[i].1.count
            },
            CostProbe(name: "scan.rows", unit: "row of the full scan's row list", cases: 1) { _ in
                snap.allRows().count
            },
        ]
    }
}

/// The executor's order-key comparison for `population DESC, recordID` (its `Ordering`).
enum KeyOrder {
    @inline(__always)
    static func compare(_ a: OrderKey, _ b: OrderKey) -> Int {
        let c = -FieldValue.compare(a.values[0], b.values[0])
        if c != 0 { return c }
        if a.recordID == b.recordID { return 0 }
        return a.recordID < b.recordID ? -1 : 1
    }
}

/// The executor's bounded top-k heap order: the largest kept key on top.
struct ReversedKeyOrder: HeapOrder {
    func less(_ a: OrderKey, _ b: OrderKey) -> Bool { KeyOrder.compare(b, a) < 0 }
}
