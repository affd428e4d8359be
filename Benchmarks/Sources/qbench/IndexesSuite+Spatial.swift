// Spatial and text parts of the `indexes` suite.

import Foundation
import Indexes
import RecordModel

extension IndexesSuite {
    func runSpatial(_ data: DataSet, _ rng: inout Rng, _ sink: inout Int) throws {
        let n = data.locations.count
        let pts = (0..<n).map { (RowID($0), data.locations[$0]) }
        var spatial = SpatialIndex()
        let tb = Measure.time { spatial = SpatialIndex(points: pts, nodeSize: nodeSize, fanout: fanout, packing: .str) }
        Measure.print(Stat(name: "spatial build (geohash + STR R-tree)", median: tb, p99: tb, note: "1 run"))
        var hilbert = SpatialIndex()
        let th = Measure.time {
            hilbert = SpatialIndex(points: pts, nodeSize: nodeSize, fanout: fanout, packing: .hilbert)
        }
        Measure.print(Stat(name: "spatial build (geohash + Hilbert R-tree)", median: th, p99: th, note: "1 run"))
        // Query centres: data points jittered by ~1 km.
        let centres = (0..<(samples * 4)).map { _ -> Location in
            let l = data.locations[rng.below(n)]
            return Location(latitude: max(-90, min(90, l.latitude + (rng.unit() - 0.5) * 0.02)), longitude: l.longitude)
        }
        let avg = centres.prefix(1000).map { spatial.rows(withinKm: 10, of: $0).count }.reduce(0, +) / 1000
        Measure.print(
            Measure.run("radius 10 km, R-tree", samples: samples, batch: 4) { i in
                sink &+= spatial.rows(withinKm: 10, of: centres[i], using: .rtree).count
            }, target: "≤ 10 µs", note: "avg \(avg) rows")
        Measure.print(
            Measure.run("radius 10 km, R-tree (Hilbert packing)", samples: samples, batch: 4) { i in
                sink &+= hilbert.rows(withinKm: 10, of: centres[i], using: .rtree).count
            })
        Measure.print(
            Measure.run("nearest: first 20 (Hilbert packing)", samples: samples, batch: 4) { i in
                var it = hilbert.nearest(to: centres[i])
                sink &+= it.next(20).count
            })
        hilbert = SpatialIndex()
        Measure.print(
            Measure.run("radius 10 km, geohash cells", samples: samples, batch: 4) { i in
                sink &+= spatial.rows(withinKm: 10, of: centres[i], using: .geohash).count
            }, note: "avg \(avg) rows")
        Measure.print(
            Measure.run("radius estimate (geohash counts)", samples: samples, batch: 4) { i in
                sink &+= spatial.estimatedCount(withinKm: 10, of: centres[i])
            })
        Measure.print(
            Measure.run("nearest: first 20", samples: samples, batch: 4) { i in
                var it = spatial.nearest(to: centres[i])
                sink &+= it.next(20).count
            }, target: "≤ 15 µs")
        var pageTimes: [Double] = []
        for i in 0..<(samples / 4) {
            var it = spatial.nearest(to: centres[i])
            _ = it.next(20)
            let t0 = Measure.now()
            for _ in 0..<4 { sink &+= it.next(20).count }
            pageTimes.append(Double(Measure.now() - t0) / 4)
        }
        pageTimes.sort()
        Measure.print(
            Stat(
                name: "nearest: each further 20 (live iterator)", median: pageTimes[pageTimes.count / 2],
                p99: pageTimes[pageTimes.count * 99 / 100], note: ""), target: "≈ first 20")
        // Stateless resume (a cursor): page p of 20 starts strictly after row 20·(p − 1).
        for page in [5, 100, 500] {
            var resumeTimes: [Double] = []
            for i in 0..<max(1, samples / (page >= 100 ? 40 : 4)) {
                var it = spatial.nearest(to: centres[i])
                let before = it.next(20 * (page - 1))
                guard let last = before.last else { continue }
                let t0 = Measure.now()
                var r = spatial.nearest(to: centres[i], after: last.position)
                sink &+= r.next(20).count
                resumeTimes.append(Double(Measure.now() - t0))
            }
            resumeTimes.sort()
            guard !resumeTimes.isEmpty else { continue }
            Measure.print(
                Stat(
                    name: "nearest: page \(page) resumed from position", median: resumeTimes[resumeTimes.count / 2],
                    p99: resumeTimes[resumeTimes.count * 99 / 100],
                    note: "stateless resume after \(20 * (page - 1)) rows"),
                target: page == 500 ? "≤ 2× first 20" : "")
        }
        // Dynamic writes: amortized cost including buffer → delta → base repacks.
        var moved = spatial
        let moves = min(n, 200_000)
        let tm = Measure.time {
            for i in 0..<moves { moved.insert(row: RowID(i), location: data.locations[(i * 7919) % n]) }
        }
        Measure.print(
            Stat(
                name: "spatial move (remove+insert), amortized", median: tm / Double(moves), p99: tm / Double(moves),
                note: "\(moves) moves incl. repacks"))
        var mit = moved.nearest(to: centres[0])
        sink &+= mit.next(20).count
        let ab = spatial.approximateBytes
        Measure.print(
            Stat(
                name: "memory/entry R-tree layers", median: Double(ab.rtree) / Double(n),
                p99: Double(ab.rtree) / Double(n),
                note: "bytes; lat+lon+row = 20 B", bytes: true), target: "≤ 40 B")
        Measure.print(
            Stat(
                name: "memory/entry geohash B+tree", median: Double(ab.geohash) / Double(n),
                p99: Double(ab.geohash) / Double(n),
                note: "bytes; cell+row = 12 B", bytes: true), target: "≤ 24 B")
        Measure.print(
            Stat(
                name: "memory/row dense arrays (vector, cell, tier)", median: Double(ab.dense) / Double(n),
                p99: Double(ab.dense) / Double(n), note: "bytes", bytes: true))

        guard !noGeos else { return }
        var geos: GEOSPointTree?
        let tg = Measure.time {
            geos = GEOSPointTree(points: pts)
            _ = geos?.rows(withinKm: 1, of: centres[0])  // GEOS builds the tree on first query
        }
        guard let geos else { return }
        Measure.print(Stat(name: "GEOS STRtree build (+ first query)", median: tg, p99: tg, note: "1 run"))
        Measure.print(
            Measure.run("radius 10 km, GEOS STRtree", samples: samples, batch: 4) { i in
                sink &+= geos.rows(withinKm: 10, of: centres[i]).count
            })
        Measure.print(
            Measure.run("nearest 1, GEOS nearest_generic", samples: samples / 4, batch: 1) { i in
                sink &+= Int(geos.nearestRow(to: centres[i]) ?? 0)
            }, note: "planar bound: approximate")
        Measure.print(
            Measure.run("nearest 1, our distance browsing", samples: samples, batch: 4) { i in
                var it = spatial.nearest(to: centres[i])
                sink &+= Int(it.next()?.row ?? 0)
            })
    }

    func runText(_ data: DataSet, _ rng: inout Rng, _ sink: inout Int) {
        let n = data.texts.count
        var text = TextIndex()
        let tb = Measure.time { text = TextIndex(rows: (0..<n).lazy.map { (RowID($0), [data.texts[$0]]) }) }
        Measure.print(Stat(name: "text build, \(n) docs × 8 words", median: tb, p99: tb, note: "1 run"))
        let dfs = data.vocabulary.map { text.documentFrequency(token: $0) }
        let rare = data.vocabulary.indices.filter { (5...50).contains(dfs[$0]) }.map { data.vocabulary[$0] }
        let mid = data.vocabulary.indices.filter { (n / 100...n / 20).contains(dfs[$0]) }.map { data.vocabulary[$0] }
        guard !rare.isEmpty, mid.count >= 2 else {
            print("text: not enough rare/mid words at this size")
            return
        }
        let rq = (0..<(samples * 16)).map { _ in [rare[rng.below(rare.count)]] }
        Measure.print(
            Measure.run("text: rare word (df 5–50)", samples: samples, batch: 16) { i in
                sink &+= text.rows(matchingAll: rq[i]).count
            }, target: "≤ 5 µs", note: "\(rare.count) such words")
        let mq = (0..<(samples * 2)).map { _ in [mid[rng.below(mid.count)], mid[rng.below(mid.count)]] }
        let avgDf = mid.map { text.documentFrequency(token: $0) }.reduce(0, +) / mid.count
        Measure.print(
            Measure.run("text: two mid words ANDed (df 1–5%)", samples: samples, batch: 2) { i in
                sink &+= text.rows(matchingAll: mq[i]).count
            }, target: "≤ 100 µs", note: "\(mid.count) words, avg df \(avgDf)")
        Measure.print(
            Measure.run("text: two mid words ORed", samples: samples / 4, batch: 2) { i in
                sink &+= text.rows(matchingAny: mq[i]).count
            })
        let nonAscii = (0..<(samples * 16)).map { _ in "Café " + rare[rng.below(rare.count)] }
        Measure.print(
            Measure.run("text: tokenize non-ASCII query (NFKD path)", samples: samples, batch: 16) { i in
                sink &+= TextTokenizer.tokens(nonAscii[i]).count
            })
        let mem = Double(text.approximateBytes) / Double(text.postingCount)
        Measure.print(
            Stat(name: "memory/posting text index", median: mem, p99: mem, note: "bytes; row id = 4 B", bytes: true),
            target: "≤ 8 B")
    }
}
