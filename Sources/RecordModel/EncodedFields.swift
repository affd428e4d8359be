// EncodedFields: a record's user fields kept as the bytes the store wrote, decoded when read.
//
// A query result used to build every field of every returned record — each string made and
// validated, each list an array of values — although most callers read a few fields of each
// record, or only its id. Fields held encoded cost one copy of their bytes; the first field read
// by name decodes that field alone; a second read by name, or anything that needs them all
// (iteration, equality, a write), decodes them all once and keeps the result.
//
// The bytes are either a copy made for the record, or — for a record read from a mapped data
// segment — the segment's own bytes, kept valid by holding the mapping: no allocation and no copy
// per record, and a record that outlives a compaction keeps its old (unlinked) segment mapped
// until it is released.
//
// Invariants, established by whoever makes the value (the codec, which checks them before it
// hands the bytes over): the bytes are well formed — every tag, length, UTF-8 string and
// reference action is valid, so decoding them again cannot fail — and the names are ASCII,
// strictly ascending and unique, so `count` is the number of fields and a lookup may stop at
// the first name past the one it looks for. RecordModel does not know the byte format: the
// codec supplies a `FieldDecoding`.

import Synchronization

/// Decodes a record's encoded fields: supplied by the codec that wrote them. A class (one per
/// segment's name table), so a record holds it by one retained reference.
package protocol FieldDecoding: AnyObject, Sendable {
    /// Every field of `bytes`, in ascending name order.
    func decodeAll(_ bytes: UnsafeRawBufferPointer) -> [RecordFields.Field]
    /// The value of the field `name` in `bytes`, nil when the fields have none.
    func decode(_ name: String, in bytes: UnsafeRawBufferPointer) -> FieldValue?
}

/// A record's user fields as the store wrote them (see the file's head for the invariants), and
/// once something needed them all, decoded.
@usableFromInline
final class EncodedFields: Sendable {
    /// The encoded fields: a copy, or bytes inside a mapping that `owner` keeps.
    private let storage: Bytes
    /// How many fields `bytes` holds.
    @usableFromInline let count: Int
    let decoder: any FieldDecoding
    /// What has been decoded: every field, once a caller needed them all or read fields by name
    /// more than once; and how many reads by name came before. A lock, not a race: records are
    /// `Sendable`, and two threads may read one record's fields at once.
    private let decoded = Mutex<(fields: [RecordFields.Field]?, readsByName: Int)>((nil, 0))

    /// Where the bytes are.
    enum Bytes: @unchecked Sendable {
        // @unchecked: `bytes` of `.inside` lie in memory that `owner` keeps valid and unchanged
        // (a mapped, immutable segment) for as long as it lives.
        case copied([UInt8])
        case inside(owner: any AnyObject & Sendable, bytes: UnsafeRawBufferPointer)
    }

    init(bytes: Bytes, count: Int, decoder: any FieldDecoding) {
        storage = bytes
        self.count = count
        self.decoder = decoder
    }

    /// Calls `body` with the encoded fields.
    @inline(__always) func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        switch storage {
        case .copied(let a): return a.withUnsafeBytes(body)
        case .inside(let owner, let b): return withExtendedLifetime(owner) { body(b) }
        }
    }

    /// Every field, in ascending name order: decoded at the first call, kept after.
    @usableFromInline var fields: [RecordFields.Field] {
        decoded.withLock { state in
            if let kept = state.fields { return kept }
            let all = withBytes { decoder.decodeAll($0) }
            state.fields = all
            return all
        }
    }

    /// The value of the field `name`. The first read by name decodes that field alone (a record
    /// returned once and read once, as most results are, decodes nothing else); a record read by
    /// name again — one a cache hands out to query after query — has all its fields decoded
    /// once and kept, so later reads are a binary search.
    /// (`counting` false: a read that is one of a known set, as `keeping` makes — not counted.)
    @usableFromInline func value(_ name: String, counting: Bool = true) -> FieldValue? {
        let kept: [RecordFields.Field]? = decoded.withLock { state in
            if state.fields == nil {
                guard counting else { return nil }
                state.readsByName += 1
                guard state.readsByName > 1 else { return nil }
                state.fields = withBytes { decoder.decodeAll($0) }
            }
            return state.fields
        }
        guard let kept else { return withBytes { decoder.decode(name, in: $0) } }
        let (i, found) = RecordFields.search(kept, name)
        return found ? kept[i].value : nil
    }
}
