// BaseLayers: which rows each layer of a table's base covers (docs/storage-format.md, "Layers") —
// the row numbering the store's layers (RecordLog's BaseRows) and the indexes' mapped layers share.

/// Which rows each static layer of a table's base covers: layer k holds rows
/// `starts[k]..<starts[k + 1]` (the last one ends at `rowCount`). Row ids are absolute, so a
/// layer's index entries never change when later layers are added.
public struct BaseLayers: Sendable, Hashable {
    /// The first row of each layer, ascending.
    public private(set) var starts: [Int] = []
    /// Rows in every layer.
    public private(set) var rowCount = 0

    /// No layers.
    public init() {}

    /// Layers of the given row counts, oldest first.
    public init(rowCounts: [Int]) {
        for n in rowCounts {
            starts.append(rowCount)
            rowCount += n
        }
    }

    /// The layer holding `row`, nil when it is past every layer.
    public func layer(of row: Int) -> Int? {
        guard row >= 0, row < rowCount, !starts.isEmpty else { return nil }
        var lo = 0
        var hi = starts.count - 1
        while lo < hi {
            let m = (lo + hi + 1) / 2
            if starts[m] <= row { lo = m } else { hi = m - 1 }
        }
        return lo
    }
}
