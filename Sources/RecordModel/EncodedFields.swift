// EncodedFields: a record's user fields kept as the bytes the store wrote, decoded when read.
//
// A query result used to build every field of every returned record — each string made and
// validated, each list an array of values — although most callers read a few fields of each
// record, or only its id. Fields held encoded cost one copy of their bytes; a field read by
// name decodes that field alone; anything that needs them all (iteration, equality, a write)
// decodes them once and keeps the result.
//
// Invariants, established by whoever makes the value (the codec, which checks them before it
// hands the bytes over): the bytes are well formed — every tag, length, UTF-8 string and
// reference action is valid, so decoding them again cannot fail — and the names are ASCII,
// strictly ascending and unique, so `count` is the number of fields and a lookup may stop at
// the first name past the one it looks for. RecordModel does not know the byte format: the
// codec supplies a `FieldDecoding`.

import Synchronization

/// Decodes a record's encoded fields: supplied by the codec that wrote them.
package protocol FieldDecoding: Sendable {
    /// Every field of `bytes`, in ascending name order.
    func decodeAll(_ bytes: UnsafeRawBufferPointer) -> [RecordFields.Field]
    /// The value of the field `name` in `bytes`, nil when the fields have none.
    func decode(_ name: String, in bytes: UnsafeRawBufferPointer) -> FieldValue?
}

/// A record's user fields as the store wrote them (see the file's head for the invariants), and
/// once something needed them all, decoded.
@usableFromInline
final class EncodedFields: Sendable {
    /// The encoded fields.
    let bytes: [UInt8]
    /// How many fields `bytes` holds.
    @usableFromInline let count: Int
    let decoder: any FieldDecoding
    /// Every field decoded, once the first caller needed them all. A lock, not a race: records
    /// are `Sendable`, and two threads may read one record's fields at once.
    private let decoded = Mutex<[RecordFields.Field]?>(nil)

    init(bytes: [UInt8], count: Int, decoder: any FieldDecoding) {
        self.bytes = bytes
        self.count = count
        self.decoder = decoder
    }

    /// Every field, in ascending name order: decoded at the first call, kept after.
    @usableFromInline var fields: [RecordFields.Field] {
        decoded.withLock { kept in
            if let kept { return kept }
            let all = bytes.withUnsafeBytes { decoder.decodeAll($0) }
            kept = all
            return all
        }
    }

    /// The value of the field `name`: from the decoded fields when they are kept, else decoded
    /// from the bytes alone (nothing kept).
    @usableFromInline func value(_ name: String) -> FieldValue? {
        if let all = decoded.withLock({ $0 }) {
            let (i, found) = RecordFields.search(all, name)
            return found ? all[i].value : nil
        }
        return bytes.withUnsafeBytes { decoder.decode(name, in: $0) }
    }
}
