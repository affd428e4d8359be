// Container+Statistics: figures of the container's store for monitoring (`cirrus serve`'s
// /metrics): the log, the live records and zones, the delta waiting for a checkpoint, commits.

import CirrusFacade
import RecordLog

/// Figures of one environment's store, read at one moment.
///
/// ```swift
/// let s = container.statistics()
/// print(s.liveRecords, s.deltaRecords, s.logBytes)
/// ```
public struct ContainerStatistics: Sendable, Hashable {
    /// Live log segments (the commits since the last checkpoint).
    public var logSegments: Int
    /// Bytes in the live log segments.
    public var logBytes: Int
    /// Live records of every database.
    public var liveRecords: Int
    /// Custom zones of every database.
    public var zones: Int
    /// Records changed since the last checkpoint (the in-memory delta).
    public var deltaRecords: Int
    /// Commits acknowledged since the container was opened.
    public var commits: Int
    /// Layers of data segments over every table (one per table when compacted; a checkpoint keeps
    /// O(log n) per table, and every query reads each of its table's).
    public var tableLayers: Int = 0
    /// Tables merged into one layer because their reads had spent the merge's cost on the extra
    /// layers (`ContainerOptions.readMergeBudget`), since the container was opened: merges started.
    public var readMerges: Int = 0
}

extension Container {
    /// The store's figures now; cheap (counters, and a size per live log segment).
    public func statistics() -> ContainerStatistics {
        guard let core = embedded else {
            return ContainerStatistics(
                logSegments: 0, logBytes: 0, liveRecords: 0, zones: 0, deltaRecords: 0, commits: 0)
        }
        let s = core.store.stats()
        return ContainerStatistics(
            logSegments: s.segments, logBytes: s.logBytes, liveRecords: s.liveRecords, zones: s.zones,
            deltaRecords: core.store.deltaCount, commits: s.commits,
            tableLayers: core.store.snapshot().base.values.reduce(0) { $0 + $1.layers.count },
            readMerges: core.stateLock.withLock { core.readMerges })
    }
}
