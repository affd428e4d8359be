// Compare+Mixed: reads while a writer keeps committing. The reads are the equality + sort +
// limit queries; the writer updates the population of 100 records per commit, as fast as it
// can, with the run's durability — in Cirrus through `modifyRecords` (.changedKeys) on another
// task, in SQLite on another thread with its own connection (WAL: readers do not block on the
// writer). No agreement check here: the data changes under the reads by design.

import Cirrus
import Foundation
import RecordModel

/// A flag and a counter shared with the writer.
final class WriterState: @unchecked Sendable {
    private let lock = NSLock()
    private var stopped = false
    private var finished = false
    private var written = 0
    private var failure: String?
    private var latencies: [Double] = []

    var isStopped: Bool { lock.withLock { stopped } }
    var isFinished: Bool { lock.withLock { finished } }
    var count: Int { lock.withLock { written } }
    var error: String? { lock.withLock { failure } }
    func stop() { lock.withLock { stopped = true } }
    func finish() { lock.withLock { finished = true } }
    func add(_ n: Int) { lock.withLock { written += n } }
    func fail(_ e: String) { lock.withLock { failure = e } }
    func took(_ ns: Double) { lock.withLock { latencies.append(ns) } }
    /// Median and p99 of the commits' latencies, and the longest.
    var commitLatency: (median: Double, p99: Double, max: Double) {
        let l = lock.withLock { latencies.sorted() }
        guard !l.isEmpty else { return (0, 0, 0) }
        return (l[l.count / 2], l[min(l.count - 1, l.count * 99 / 100)], l[l.count - 1])
    }
}

extension Compare {
    static func latency(_ s: WriterState) -> String {
        let l = s.commitLatency
        return "\(Measure.format(l.median)) / \(Measure.format(l.p99)) / \(Measure.format(l.max))"
    }

    func mixedSuite(
        _ cirrus: CirrusPeer, _ sqlite: SQLitePeer, _ data: PlaceSet, _ builder: inout SuiteBuilder,
        progress: Progress
    ) async throws -> SuiteResult {
        let reads = builder.equalitySort().cases
        let n = data.places.count
        let names = (0..<min(n, 20_000)).map { data.places[($0 &* 7919) % n].recordName }

        let cState = WriterState()
        let db = cirrus.db
        let cStart = Measure.now()
        let writer = Task.detached {
            var k = 0
            while !cState.isStopped {
                let batch = (0..<100).map { j in
                    Record(
                        recordType: "Place", recordID: RecordID(recordName: names[(k + j) % names.count]),
                        fields: ["population": .int64(Int64((k + j) % 1000))])
                }
                k += 100
                let t0 = Measure.now()
                do {
                    let r = try await db.modifyRecords(saving: batch, deleting: [], savePolicy: .changedKeys)
                    if let e = r.partialFailure { cState.fail("\(e)") }
                } catch {
                    cState.fail("\(error)")
                }
                cState.took(Double(Measure.now() - t0))
                cState.add(100)
            }
            cState.finish()
        }
        let cf = try await time("mixed Cirrus (writer running)", reads.map(\.cirrus), progress: progress)
        cState.stop()
        await writer.value
        let cRate = Double(cState.count) / (Double(Measure.now() - cStart) / 1e9)
        if let e = cState.error { throw SQLiteError(message: "mixed suite: the Cirrus writer failed: \(e)") }

        let sState = WriterState()
        let path = sqlite.path
        let sync = storeDurability.1
        let sStart = Measure.now()
        Thread.detachNewThread {
            defer { sState.finish() }
            do {
                let w = try SQLitePeer(path: path, synchronous: sync)
                var k = 0
                while !sState.isStopped {
                    let t0 = Measure.now()
                    try w.updatePopulation((0..<100).map { j in (names[(k + j) % names.count], Int64((k + j) % 1000)) })
                    sState.took(Double(Measure.now() - t0))
                    k += 100
                    sState.add(100)
                }
            } catch {
                sState.fail("\(error)")
            }
        }
        let sf = try await time(
            "mixed SQLite (writer running)", reads.map { c in { try c.sqlite() } }, progress: progress)
        sState.stop()
        while !sState.isFinished { try await Task.sleep(nanoseconds: 5_000_000) }
        let sRate = Double(sState.count) / (Double(Measure.now() - sStart) / 1e9)
        if let e = sState.error { throw SQLiteError(message: "mixed suite: the SQLite writer failed: \(e)") }
        return SuiteResult(
            suite: "mixed", title: "mixed: eq-sort reads + a writer", cirrus: cf, sqlite: sf,
            speedup: sf.medianNs / cf.medianNs,
            note: String(format: "writer: Cirrus %.0f, SQLite %.0f updates/s (100/commit)", cRate, sRate)
                + "; commit median / p99 / max: Cirrus \(Self.latency(cState)), SQLite \(Self.latency(sState))",
            cases: reads.count)
    }
}
