// QueryCursor: where a query's last page ended — the query itself and the position of the last
// record — as an opaque, signed, printable token. Format: docs/cursor-format.md (never change
// the meaning of a field; add a version).

import CirrusIO
import Crypto
import Foundation
import QueryPlanner
import RecordModel

/// A continuation of a query, returned with a page when more records may follow.
///
/// ```swift
/// let (records, cursor) = try await db.records(matching: query, resultsLimit: 20)
/// if let cursor { let more = try await db.records(continuingMatchFrom: cursor) }
/// ```
public struct QueryCursor: Sendable, Hashable {
    /// The database that issued it (`public`, `private:<user>`).
    public var scope: String
    /// The query, which a token given with another query does not continue (``CursorError/otherQuery``).
    public var query: Query
    /// The zone the query runs in; nil means every zone.
    public var zone: ZoneID?
    /// The keys the pages are projected to; nil means whole records.
    public var desiredKeys: [String]?
    /// The order key of the last record returned.
    public var position: OrderKey

    /// A cursor from its parts.
    public init(scope: String, query: Query, zone: ZoneID?, desiredKeys: [String]?, position: OrderKey) {
        self.scope = scope
        self.query = query
        self.zone = zone
        self.desiredKeys = desiredKeys
        self.position = position
    }
}

/// A token that is not a valid cursor here.
public enum CursorError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not base64url, truncated, or with bytes that do not decode.
    case malformed(String)
    /// Written by another version of the format.
    case unsupportedVersion(UInt8)
    /// The signature does not match: tampered, or issued by another database.
    case notIssuedHere
    /// Given together with a query it was not issued for.
    case otherQuery

    /// One sentence for the user, e.g. `the cursor belongs to another query`.
    public var description: String {
        switch self {
        case .malformed(let why): "the cursor is malformed (\(why))"
        case .unsupportedVersion(let v): "the cursor has format version \(v); this Cirrus reads version 1"
        case .notIssuedHere: "the cursor was not issued by this database, or it was altered"
        case .otherQuery: "the cursor belongs to another query"
        }
    }
}

extension QueryCursor {
    static let version: UInt8 = 1

    /// The token: base64url of the body and its 16-byte HMAC-SHA256 under `secret`.
    public func token(secret: [UInt8]) -> String {
        var w = ByteWriter()
        w.u8(Self.version)
        w.u64(QueryPlanner.fingerprint(query))
        w.string(scope)
        if let zone {
            w.u8(1)
            w.string(zone.zoneName)
            w.string(zone.ownerName)
        } else {
            w.u8(0)
        }
        CursorCoding.write(query, &w)
        if let keys = desiredKeys {
            w.u8(1)
            w.varint(UInt64(keys.count))
            for k in keys { w.string(k) }
        } else {
            w.u8(0)
        }
        w.varint(UInt64(position.values.count))
        for v in position.values { CursorCoding.write(v, &w) }
        CursorCoding.write(position.recordID, &w)
        let mac = CursorMAC.sha256(key: secret, message: w.bytes).prefix(16)
        return Base64URL.encode(w.bytes + mac)
    }

    /// Reads and verifies a token. With `expecting`, the cursor must belong to that query.
    public init(token: String, secret: [UInt8], expecting: Query? = nil) throws(CursorError) {
        guard let raw = Base64URL.decode(token) else { throw .malformed("not base64url") }
        guard raw.count > 17 else { throw .malformed("too short") }
        let body = Array(raw.dropLast(16))
        guard raw[0] == Self.version else { throw .unsupportedVersion(raw[0]) }
        let mac = CursorMAC.sha256(key: secret, message: body).prefix(16)
        guard constantTimeEqual(Array(mac), Array(raw.suffix(16))) else { throw .notIssuedHere }
        let decoded = body.withUnsafeBytes { buf -> Result<QueryCursor, CodecError> in
            do throws(CodecError) { return .success(try Self.decodeBody(buf)) } catch { return .failure(error) }
        }
        switch decoded {
        case .success(let c): self = c
        case .failure(let e): throw .malformed(e.description)
        }
        if let expecting, QueryPlanner.fingerprint(expecting) != QueryPlanner.fingerprint(query) { throw .otherQuery }
    }
}

extension QueryCursor {
    static func decodeBody(_ buf: UnsafeRawBufferPointer) throws(CodecError) -> QueryCursor {
        var r = ByteReader(buf, offset: 1)
        let fingerprint = try r.u64()
        let scope = try r.string()
        var zone: ZoneID? = nil
        if try r.u8() == 1 { zone = ZoneID(zoneName: try r.string(), ownerName: try r.string()) }
        let query = try CursorCoding.readQuery(&r)
        guard QueryPlanner.fingerprint(query) == fingerprint else {
            throw CodecError("fingerprint mismatch", offset: 1)
        }
        var keys: [String]? = nil
        if try r.u8() == 1 {
            var k: [String] = []
            for _ in 0..<(try CursorCoding.count(&r)) { k.append(try r.string()) }
            keys = k
        }
        var values: [FieldValue] = []
        for _ in 0..<(try CursorCoding.count(&r)) { values.append(try CursorCoding.readValue(&r, depth: 0)) }
        let id = try CursorCoding.readRecordID(&r)
        guard r.isAtEnd else { throw CodecError("trailing bytes", offset: r.offset) }
        return QueryCursor(
            scope: scope, query: query, zone: zone, desiredKeys: keys, position: OrderKey(values: values, recordID: id))
    }
}

func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    var d: UInt8 = 0
    for i in a.indices { d |= a[i] ^ b[i] }
    return d == 0
}

/// The cursor token's MAC: HMAC-SHA256 (swift-crypto).
enum CursorMAC {
    static func sha256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key)))
    }
}

/// Base64 with the URL-safe alphabet and no padding (RFC 4648 §5), on Foundation's base64.
enum Base64URL {
    static func encode(_ b: [UInt8]) -> String {
        var s = Data(b).base64EncodedString()
        while s.hasSuffix("=") { s.removeLast() }
        return String(s.map { $0 == "+" ? "-" : ($0 == "/" ? "_" : $0) })
    }

    /// Nil unless `s` is unpadded base64url: only the URL-safe alphabet, a length that is not
    /// 1 more than a multiple of 4.
    static func decode(_ s: String) -> [UInt8]? {
        var t = ""
        t.reserveCapacity(s.utf8.count + 3)
        for c in s.unicodeScalars {
            switch c {
            case "A"..."Z", "a"..."z", "0"..."9": t.unicodeScalars.append(c)
            case "-": t += "+"
            case "_": t += "/"
            default: return nil
            }
        }
        if t.utf8.count % 4 == 1 { return nil }
        t += String(repeating: "=", count: (4 - t.utf8.count % 4) % 4)
        return Data(base64Encoded: t).map(Array.init)
    }
}
