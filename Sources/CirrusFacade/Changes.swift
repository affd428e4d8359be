// Change tokens and change pages of a zone and of a database, the same on every engine.

import RecordModel

/// An opaque position in a zone's history.
public struct ChangeToken: Sendable, Hashable {
    /// The token's bytes (store them to resume later).
    public let data: [UInt8]
    /// The token of bytes saved from an earlier `data`. Bytes that do not decode, or a token of
    /// another zone, make `changes(in:since:limit:)` fail with changeTokenExpired (21).
    public init(data: [UInt8]) { self.data = data }

    package init(owner: String, zoneName: String, sequence: UInt64, horizon: UInt64) {
        var d = Array("CZT2".utf8)
        for v in [sequence, horizon] { for i in 0..<8 { d.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) } }
        d += Array(owner.utf8) + [0] + Array(zoneName.utf8)
        data = d
    }

    /// The token's zone (storage form), sequence and the compaction horizon when it was issued;
    /// nil if it does not decode.
    package var decoded: (zone: ZoneID, sequence: UInt64, horizon: UInt64)? {
        guard data.count >= 21, Array(data[0..<4]) == Array("CZT2".utf8) else { return nil }
        func u64(_ at: Int) -> UInt64 {
            var v: UInt64 = 0
            for i in 0..<8 { v |= UInt64(data[at + i]) << (8 * UInt64(i)) }
            return v
        }
        let rest = data[20...]
        guard let nul = rest.firstIndex(of: 0), let owner = String(validating: rest[..<nul], as: UTF8.self),
            let name = String(validating: rest[(nul + 1)...], as: UTF8.self)
        else { return nil }
        return (ZoneID(zoneName: name, ownerName: owner), u64(4), u64(12))
    }
}

/// One page of a zone's changes.
public struct ZoneChanges: Sendable {
    /// Records created or changed since the token (latest versions).
    public var changed: [Record]
    /// Records deleted since the token.
    public var deleted: [(RecordID, recordType: String)]
    /// Where the next fetch starts.
    public var token: ChangeToken
    /// Whether more changes follow (fetch again with `token`).
    public var moreComing: Bool

    /// A page of changes (what another engine's backend returns).
    public init(changed: [Record], deleted: [(RecordID, recordType: String)], token: ChangeToken, moreComing: Bool) {
        self.changed = changed
        self.deleted = deleted
        self.token = token
        self.moreComing = moreComing
    }
}

/// An opaque position in a database's history of zones.
public struct DatabaseChangeToken: Sendable, Hashable {
    /// The token's bytes (store them to resume later).
    public let data: [UInt8]

    /// A token from bytes a previous fetch returned.
    public init(data: [UInt8]) { self.data = data }

    package init(owner: String, sequence: UInt64, horizon: UInt64, zones: [String]) {
        var d = Array("CDT1".utf8)
        for v in [sequence, horizon] { for i in 0..<8 { d.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) } }
        d += Array(owner.utf8) + [0]
        for z in zones { d += Array(z.utf8) + [0] }
        data = d
    }

    /// Owner, sequence, horizon and the zone names; nil if the bytes do not decode.
    package var decoded: (owner: String, sequence: UInt64, horizon: UInt64, zones: Set<String>)? {
        guard data.count >= 21, Array(data[0..<4]) == Array("CDT1".utf8), data.last == 0 else { return nil }
        func u64(_ at: Int) -> UInt64 {
            var v: UInt64 = 0
            for i in 0..<8 { v |= UInt64(data[at + i]) << (8 * UInt64(i)) }
            return v
        }
        var parts: [String] = []
        for p in data[20...].split(separator: 0, omittingEmptySubsequences: false).dropLast() {
            guard let s = String(validating: p, as: UTF8.self) else { return nil }
            parts.append(s)
        }
        guard let owner = parts.first else { return nil }
        return (owner, u64(4), u64(12), Set(parts.dropFirst()))
    }
}

/// One page of a database's zone changes.
public struct DatabaseChanges: Sendable {
    /// Custom zones created or with changed records since the token, oldest change first.
    public var changed: [ZoneID]
    /// Zones the token knew that have been deleted since.
    public var deleted: [ZoneID]
    /// Where the next fetch starts.
    public var token: DatabaseChangeToken
    /// Whether more changed zones follow (fetch again with `token`).
    public var moreComing: Bool

    /// A page of zone changes (what another engine's backend returns).
    public init(changed: [ZoneID], deleted: [ZoneID], token: DatabaseChangeToken, moreComing: Bool) {
        self.changed = changed
        self.deleted = deleted
        self.token = token
        self.moreComing = moreComing
    }
}
