// RecordCache: two-way sets, least recently used way replaced, admission on the second miss —
// checked against a model of the same policy over random row sequences, plus the cases spelled out.

import CirrusTestSupport
import Testing

@testable import CirrusEmbedded
@testable import CirrusFacade
@testable import RecordModel

@Suite struct RecordCacheTests {
    /// A record whose name says which row it was decoded for.
    func decoded(_ row: Int) -> Record {
        Record(recordType: "T", recordID: RecordID(recordName: "r\(row)"))
    }

    /// Reads `row` through `cache`, counting decodes; returns the record's row.
    func read(_ cache: RecordCache, _ row: Int, decodes: inout Int) -> Int? {
        var n = 0
        let r = cache.record(row) {
            n += 1
            return decoded(row)
        }
        decodes += n
        return r.flatMap { Int($0.recordID.recordName.dropFirst()) }
    }

    @Test func aFullSetAdmitsARowOnItsSecondMissInARow() {
        let cache = RecordCache(capacity: 4, tableRows: 100)  // two sets: even rows in set 0, odd in set 1
        var decodes = 0
        #expect(read(cache, 0, decodes: &decodes) == 0)
        #expect(read(cache, 2, decodes: &decodes) == 2)  // set 0 full now
        #expect(decodes == 2)
        #expect(read(cache, 0, decodes: &decodes) == 0)  // a hit; way 1 (row 2) is next to go
        #expect(decodes == 2)
        #expect(read(cache, 4, decodes: &decodes) == 4)  // first miss: not admitted
        #expect(cache.cached(4) == nil)
        #expect(cache.cached(0) != nil && cache.cached(2) != nil)
        #expect(read(cache, 4, decodes: &decodes) == 4)  // second miss in a row: admitted over row 2
        #expect(decodes == 4)
        #expect(cache.cached(4)?.recordID.recordName == "r4")
        #expect(cache.cached(2) == nil)
        #expect(cache.cached(0)?.recordID.recordName == "r0")
        // Another row's miss in between resets the ghost: neither comes in.
        _ = read(cache, 6, decodes: &decodes)
        _ = read(cache, 8, decodes: &decodes)
        _ = read(cache, 6, decodes: &decodes)
        #expect(cache.cached(6) == nil && cache.cached(8) == nil)
        // Misses in the other set do not disturb this one's ghost.
        _ = read(cache, 1, decodes: &decodes)
        _ = read(cache, 6, decodes: &decodes)
        #expect(cache.cached(6) != nil)
        #expect(cache.cached(1) != nil)  // set 1 had room
    }

    @Test func aCachedRecordsBoxIsFoundFromTheSetsBytes() {
        let cache = RecordCache(capacity: 4, tableRows: 100)  // two sets of two ways
        #expect(cache.cachedBox(0) == nil, "nothing stored yet")
        #expect(!cache.prefetchRecord(0))
        var decodes = 0
        for row in [0, 2, 1] { _ = read(cache, row, decodes: &decodes) }  // rows 0 and 2 fill set 0's two ways
        for row in [0, 2, 1] {
            guard let r = cache.cached(row) else {
                Issue.record("row \(row) is not cached")
                continue
            }
            // The box's address, as the set holds it: way 0 and way 1 both.
            #expect(cache.cachedBox(row) == UnsafeRawPointer(Unmanaged.passUnretained(r.box).toOpaque()))
            #expect(cache.prefetchRecord(row))
        }
        #expect(cache.cachedBox(3) == nil && cache.cachedBox(4) == nil)
        #expect(!cache.prefetchRecord(3))
        #expect(RecordCache(capacity: 0, tableRows: 100).cachedBox(0) == nil)
    }

    @Test func bulkReadsFillOnlyACacheThatHoldsAQuarterOfTheTable() {
        let large = RecordCache(capacity: 16_384, tableRows: 100_000)
        #expect(large.fills(resultRows: 64))
        #expect(!large.fills(resultRows: 65))
        let small = RecordCache(capacity: 16_384, tableRows: 65_536)
        #expect(small.fills(resultRows: 10_000))
        // A row of a bulk read is not added; the same row read for a small result is.
        var decodes = 0
        _ = large.record(3, fill: large.fills(resultRows: 500)) {
            decodes += 1
            return decoded(3)
        }
        #expect(large.cached(3) == nil)
        _ = large.record(3, fill: large.fills(resultRows: 20)) {
            decodes += 1
            return decoded(3)
        }
        #expect(large.cached(3) != nil)
        #expect(decodes == 2)
    }

    @Test func rowZeroAndTheLastCacheableRowAreKeptAndLargerRowsDecodedEachTime() {
        // Slots hold row + 1 (zero bytes: an empty slot), so row 0 must not read as empty, and
        // the largest row whose key fits is UInt32.max - 1.
        let cache = RecordCache(capacity: 4, tableRows: 100)
        var decodes = 0
        let last = Int(UInt32.max) - 1
        for row in [0, last] {
            #expect(read(cache, row, decodes: &decodes) == row)
            #expect(read(cache, row, decodes: &decodes) == row)
            #expect(cache.cached(row)?.recordID.recordName == "r\(row)")
        }
        #expect(decodes == 2)
        for row in [last + 1, last + 2, -1] {
            #expect(read(cache, row, decodes: &decodes) == row)
            #expect(cache.cached(row) == nil)
            #expect(cache.cachedBox(row) == nil)
        }
        #expect(decodes == 5)
    }

    @Test func aDisabledCacheDecodesEveryRead() {
        let cache = RecordCache(capacity: 0, tableRows: 100)
        var decodes = 0
        for _ in 0..<3 { #expect(read(cache, 7, decodes: &decodes) == 7) }
        #expect(decodes == 3)
        #expect(cache.cached(7) == nil)
    }

    @Test func agreesWithAModelOfThePolicy() {
        // The model: per set, [(row)] in ways 0 and 1, the next way, the ghost.
        struct ModelSet {
            var rows: [Int?] = [nil, nil]
            var next = 0
            var ghost: Int? = nil
        }
        var rng = SeededRandom(seed: 7)
        for capacity in [2, 4, 16] {
            let cache = RecordCache(capacity: capacity, tableRows: capacity * 3)
            var count = 1
            while count * 2 < capacity { count <<= 1 }
            var model = [ModelSet](repeating: ModelSet(), count: count)
            var decodes = 0
            var expectedDecodes = 0
            for _ in 0..<2_000 {
                let row = Int(rng.next() % UInt64(capacity * 3))
                let s = row % count
                if let way = model[s].rows.firstIndex(of: row) {
                    model[s].next = 1 - way
                } else {
                    expectedDecodes += 1
                    let way = model[s].next
                    if model[s].rows[way] == nil || model[s].ghost == row {
                        if model[s].rows[way] != nil { model[s].ghost = nil }
                        model[s].rows[way] = row
                        model[s].next = 1 - way
                    } else {
                        model[s].ghost = row
                    }
                }
                #expect(read(cache, row, decodes: &decodes) == row)
                #expect(decodes == expectedDecodes)
            }
            for row in 0..<capacity * 3 {
                let inModel = model[row % count].rows.contains(row)
                #expect((cache.cached(row) != nil) == inModel, "row \(row), capacity \(capacity)")
            }
        }
    }
}
