// ShardedMap: values by record id (the store's live versions and tombstones, the container's
// delta rows), as 512 dictionary shards.
//
// Snapshots are copy-on-write values. With one big dictionary, the first commit after a reader
// took a snapshot would copy every entry (O(n)). Sharding makes
// that copy one shard (n/512 entries) plus the 512-element shard array. Shards are chosen by
// the id's hash, which is seeded per process: iteration order is not stable across runs.

import CirrusIO
import RecordModel

/// Values by record id, sharded so copy-on-write after a snapshot copies one shard.
///
/// ```swift
/// var versions = ShardedMap<UInt64>()
/// versions[RecordID(recordName: "n1")] = 7
/// let snapshot = versions                       // O(1)
/// versions[RecordID(recordName: "n2")] = 8      // copies one shard of ~n/512 entries
/// (snapshot.count, versions.count)              // (1, 2)
/// ```
public struct ShardedMap<Value: Sendable>: Sequence, Sendable {
    @usableFromInline static var shardCount: Int { 512 }
    @usableFromInline var shards: [[RecordID: Value]]
    /// Number of entries.
    public var count: Int { entries }
    @usableFromInline var entries = 0

    /// An empty map.
    public init() { shards = Array(repeating: [:], count: Self.shardCount) }

    @inlinable @inline(__always) static func shard(_ id: RecordID) -> Int { id.hashValue & (shardCount - 1) }

    /// The value for `id`; setting nil removes it. Copies at most one shard after a snapshot.
    /// Inlinable, so that a map of another module's values copies a shard with code made for
    /// them (the generic copy reads every entry through its type's witnesses).
    @inlinable public subscript(id: RecordID) -> Value? {
        get { shards[Self.shard(id)][id] }
        set {
            let s = Self.shard(id)
            if let newValue {
                if shards[s].updateValue(newValue, forKey: id) == nil { entries += 1 }
            } else if shards[s].removeValue(forKey: id) != nil {
                entries -= 1
            }
        }
    }

    /// Removes every record matching `predicate`.
    mutating func removeAll(where predicate: (RecordID, Value) -> Bool) {
        for s in shards.indices where shards[s].contains(where: { predicate($0.key, $0.value) }) {
            let before = shards[s].count
            shards[s] = shards[s].filter { !predicate($0.key, $0.value) }
            entries -= before - shards[s].count
        }
    }

    var keys: LazySequence<FlattenSequence<LazyMapSequence<[[RecordID: Value]], Dictionary<RecordID, Value>.Keys>>> {
        shards.lazy.map(\.keys).joined()
    }

    var values: LazySequence<FlattenSequence<LazyMapSequence<[[RecordID: Value]], Dictionary<RecordID, Value>.Values>>>
    {
        shards.lazy.map(\.values).joined()
    }

    /// Every entry; the order depends on the process's hash seed, so it differs between runs.
    public func makeIterator() -> FlattenSequence<[[RecordID: Value]]>.Iterator { shards.joined().makeIterator() }
}

/// Live records by id.
typealias LiveMap = ShardedMap<LiveRecord>
