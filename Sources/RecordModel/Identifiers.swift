// Identifiers of CloudKit objects: zones, records, references and assets.
//
// These are plain values. Validation of names (CloudKit's rules) lives in Validation.swift so
// that decoding a stored value never fails on a rule that may change.

import Foundation

/// A record zone: its name and the user record name of its owner.
///
/// ```swift
/// let zone = ZoneID(zoneName: "Notes", ownerName: ZoneID.defaultOwnerName)
/// ```
public struct ZoneID: Sendable, Hashable, Comparable, Codable {
    /// CloudKit's name of the default zone.
    public static let defaultZoneName = "_defaultZone"
    /// CloudKit's placeholder for "the current user" as a zone owner.
    public static let defaultOwnerName = "__defaultOwner__"
    /// The default zone of the current user.
    public static let `default` = ZoneID(zoneName: defaultZoneName, ownerName: defaultOwnerName)

    /// The zone's name (``defaultZoneName`` for the default zone).
    public var zoneName: String
    /// The user record name of the zone's owner (``defaultOwnerName`` for the current user).
    public var ownerName: String

    /// A zone of `ownerName` (the current user by default).
    public init(zoneName: String, ownerName: String = ZoneID.defaultOwnerName) {
        self.zoneName = zoneName
        self.ownerName = ownerName
    }

    /// Whether this is the default zone (which has no atomic batches and no change fetching).
    public var isDefaultZone: Bool { zoneName == ZoneID.defaultZoneName }

    /// Orders by zone name, then owner, comparing Unicode scalars (UTF-8 bytes).
    public static func < (a: ZoneID, b: ZoneID) -> Bool {
        let c = compareUTF8(a.zoneName, b.zoneName)
        return c != 0 ? c < 0 : compareUTF8(a.ownerName, b.ownerName) < 0
    }
}

/// A record's identity: its name, unique within its zone.
public struct RecordID: Sendable, Hashable, Comparable, Codable {
    /// The record name, unique within the zone.
    public var recordName: String
    /// The zone the record lives in.
    public var zoneID: ZoneID

    /// A record id in `zoneID` (the default zone unless given).
    public init(recordName: String, zoneID: ZoneID = .default) {
        self.recordName = recordName
        self.zoneID = zoneID
    }

    /// Orders by record name, then zone — the order of references in an index.
    public static func < (a: RecordID, b: RecordID) -> Bool {
        let c = compareUTF8(a.recordName, b.recordName)
        return c != 0 ? c < 0 : a.zoneID < b.zoneID
    }
}

/// A reference from one record to another. Compared and indexed by the target's `RecordID`.
public struct Reference: Sendable, Hashable, Codable {
    /// What happens to the referring record when the target is deleted.
    public enum Action: String, Sendable, Hashable, Codable {
        /// Nothing.
        case none = "NONE"
        /// The referring record is deleted too (same zone only).
        case deleteSelf = "DELETE_SELF"
    }

    /// The target record.
    public var recordID: RecordID
    /// What deleting the target does to the referring record.
    public var action: Action

    /// A reference to `recordID`, with no delete action unless given.
    public init(recordID: RecordID, action: Action = .none) {
        self.recordID = recordID
        self.action = action
    }
}

/// A file stored beside a record, addressed by the hash of its content. Never queryable; its
/// bytes do not count towards the record's 1 MB data limit.
public struct Asset: Sendable, Hashable, Codable {
    /// Lower-case hex SHA-256 of the file's content.
    public var contentHash: String
    /// Size of the file in bytes.
    public var size: Int64

    /// An asset with its content's lower-case hex SHA-256 and its size in bytes.
    public init(contentHash: String, size: Int64) {
        self.contentHash = contentHash
        self.size = size
    }
}

/// Three-way comparison of two strings by Unicode scalar values, which is the order of their
/// UTF-8 bytes. Swift's `<` on `String` uses canonical equivalence instead, which is not what
/// CloudKit does, so every ordering in Cirrus goes through this.
@inlinable
public func compareUTF8(_ a: String, _ b: String) -> Int {
    if let r = a.utf8.withContiguousStorageIfAvailable({ pa in
        b.utf8.withContiguousStorageIfAvailable { pb in
            compareBytes(UnsafeRawBufferPointer(pa), UnsafeRawBufferPointer(pb))
        }
    }), let r {
        return r
    }
    var a = a
    var b = b
    return a.withUTF8 { pa in
        b.withUTF8 { pb in compareBytes(UnsafeRawBufferPointer(pa), UnsafeRawBufferPointer(pb)) }
    }
}

/// Three-way comparison of two byte buffers, lexicographic (memcmp, then the length).
@inlinable
public func compareBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
    let n = min(a.count, b.count)
    if n > 0, let pa = a.baseAddress, let pb = b.baseAddress {
        let c = memcmp(pa, pb, n)
        if c != 0 { return c < 0 ? -1 : 1 }
    }
    return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
}

/// The first 16 bytes of a record name as two big-endian words: comparing keys orders record
/// ids as `RecordID.<` does wherever the keys differ, so a sort by id compares two integers and
/// reads the names only where their first 16 bytes agree (``RecordID/orderedByID(_:)``).
public struct RecordIDOrderKey: Sendable, Hashable, Comparable {
    /// Bytes 0–7 and 8–15 of the name's UTF-8, big-endian, zero-padded.
    public let high: UInt64, low: UInt64

    /// The key of `id`.
    @inlinable
    public init(_ id: RecordID) {
        var h: UInt64 = 0
        var l: UInt64 = 0
        var name = id.recordName
        name.withUTF8 { p in
            for i in 0..<16 {
                let byte = UInt64(i < p.count ? p[i] : 0)
                if i < 8 { h |= byte << (56 - 8 * UInt64(i)) } else { l |= byte << (56 - 8 * UInt64(i - 8)) }
            }
        }
        high = h
        low = l
    }

    /// Whether `a` orders before `b` (the ids then order the same way).
    @inlinable
    public static func < (a: RecordIDOrderKey, b: RecordIDOrderKey) -> Bool {
        a.high != b.high ? a.high < b.high : a.low < b.low
    }
}

extension RecordID {
    /// The positions of `ids` in ascending id order: sorted on ``RecordIDOrderKey``s, names
    /// compared only where keys tie (a zero-padded key also ties a name with its extension by
    /// zero bytes, which the full comparison then orders).
    public static func orderedByID(_ ids: [RecordID]) -> [Int] {
        var keyed: [(RecordIDOrderKey, Int)] = []
        keyed.reserveCapacity(ids.count)
        for (i, id) in ids.enumerated() { keyed.append((RecordIDOrderKey(id), i)) }
        ids.withUnsafeBufferPointer { ids in
            keyed.sort { a, b in
                if a.0 != b.0 { return a.0 < b.0 }
                return ids[a.1] < ids[b.1]
            }
        }
        return keyed.map(\.1)
    }
}

/// Three-way comparison of byte strings, lexicographic.
@inlinable
public func compareBytes(_ a: [UInt8], _ b: [UInt8]) -> Int {
    let n = min(a.count, b.count)
    for i in 0..<n where a[i] != b[i] {
        return a[i] < b[i] ? -1 : 1
    }
    return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
}
