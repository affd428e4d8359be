// FoundRows: rows the planner's statistics found while estimating, handed to the execution of the
// same query on the same snapshot so it does not find them again.

import Foundation
import Indexes
import RecordModel

/// Rows found while a query was planned, for that query's execution to take instead of
/// finding them again.
///
/// A circle with few rows is cheaper to count exactly — by finding its rows — than to
/// estimate and then search again at execution: ``SnapshotStatistics`` made with a
/// `FoundRows` (``QuerySnapshot/statistics(keeping:)``) probes each circle's rows within a
/// small budget (`SpatialIndex.probe`), answers the planner with their exact count and keeps
/// them here; ``QueryExecutor/run(_:on:after:pageSize:zone:desiredKeys:visible:resume:found:)``
/// given the same object reads a radius node's rows from it. One per query: both sides must
/// work on the same snapshot, and nothing here outlives the query (it is no cache).
///
/// ```swift
/// let found = FoundRows()
/// let plan = QueryPlanner.plan(query, statistics: snapshot.statistics(keeping: found), limit: 20)
/// let page = try QueryExecutor.run(plan, on: snapshot, pageSize: 20, found: found)
/// ```
public final class FoundRows: @unchecked Sendable {
    // @unchecked: `radii` is read and written only under `lock`.
    private let lock = NSLock()
    private var radii: [(field: String, center: Location, km: Double, rows: [RowID])] = []

    /// An empty set of found rows, for one query.
    public init() {}

    /// The node budget of a probe (`SpatialIndex.probe`): enough for nearly all the circles a
    /// query returns whole in a page or two, while a circle past it costs a bounded share of its
    /// descent.
    public static let radiusBudget = 256

    /// Keeps the rows of the circle (`field`, `center`, `km`), replacing earlier ones of it.
    func keep(field: String, center: Location, km: Double, rows: [RowID]) {
        lock.withLock {
            radii.removeAll { $0.field == field && $0.center == center && $0.km == km }
            radii.append((field, center, km, rows))
        }
    }

    /// The rows kept for the circle, nil when none were.
    func rows(field: String, center: Location, km: Double) -> [RowID]? {
        lock.withLock { radii.first { $0.field == field && $0.center == center && $0.km == km }?.rows }
    }
}
