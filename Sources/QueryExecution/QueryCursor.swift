// QueryCursor: where a query's last page ended — the query itself and the position of the last
// record — as an opaque, signed, printable token. Format: docs/cursor-format.md (never change
// the meaning of a field; add a version).

import QueryPlanner
import RecordLog
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
    public var query: Query
    /// The zone the query runs in; nil means every zone.
    public var zone: ZoneID?
    public var desiredKeys: [String]?
    /// The order key of the last record returned.
    public var position: OrderKey

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
        let mac = HMAC.sha256(key: secret, message: w.bytes).prefix(16)
        return Base64URL.encode(w.bytes + mac)
    }

    /// Reads and verifies a token. With `expecting`, the cursor must belong to that query.
    public init(token: String, secret: [UInt8], expecting: Query? = nil) throws(CursorError) {
        guard let raw = Base64URL.decode(token) else { throw .malformed("not base64url") }
        guard raw.count > 17 else { throw .malformed("too short") }
        let body = Array(raw.dropLast(16))
        guard raw[0] == Self.version else { throw .unsupportedVersion(raw[0]) }
        let mac = HMAC.sha256(key: secret, message: body).prefix(16)
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
        guard QueryPlanner.fingerprint(query) == fingerprint else { throw CodecError("fingerprint mismatch", offset: 1) }
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
        return QueryCursor(scope: scope, query: query, zone: zone, desiredKeys: keys, position: OrderKey(values: values, recordID: id))
    }
}

func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    var d: UInt8 = 0
    for i in a.indices { d |= a[i] ^ b[i] }
    return d == 0
}

/// HMAC (RFC 2104) over SHA-256.
enum HMAC {
    static func sha256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var k = key.count > 64 ? SHA256.digest(key) : key
        k += [UInt8](repeating: 0, count: 64 - k.count)
        let inner = SHA256.digest(k.map { $0 ^ 0x36 } + message)
        return SHA256.digest(k.map { $0 ^ 0x5C } + inner)
    }
}

/// Base64 with the URL-safe alphabet and no padding (RFC 4648 §5).
enum Base64URL {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static func encode(_ b: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((b.count + 2) / 3 * 4)
        var i = 0
        while i + 3 <= b.count {
            let n = UInt32(b[i]) << 16 | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2])
            for s in [18, 12, 6, 0] { out.append(alphabet[Int((n >> UInt32(s)) & 63)]) }
            i += 3
        }
        let rest = b.count - i
        if rest > 0 {
            var n = UInt32(b[i]) << 16
            if rest == 2 { n |= UInt32(b[i + 1]) << 8 }
            for s in [18, 12, 6, 0].prefix(rest + 1) { out.append(alphabet[Int((n >> UInt32(s)) & 63)]) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func decode(_ s: String) -> [UInt8]? {
        var values: [UInt32] = []
        for c in s.utf8 {
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): values.append(UInt32(c - 65))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): values.append(UInt32(c - 97 + 26))
            case UInt8(ascii: "0")...UInt8(ascii: "9"): values.append(UInt32(c - 48 + 52))
            case UInt8(ascii: "-"): values.append(62)
            case UInt8(ascii: "_"): values.append(63)
            default: return nil
            }
        }
        if values.count % 4 == 1 { return nil }
        var out: [UInt8] = []
        var i = 0
        while i < values.count {
            let chunk = values[i..<min(i + 4, values.count)]
            var n: UInt32 = 0
            for (j, v) in chunk.enumerated() { n |= v << UInt32(18 - 6 * j) }
            let bytes = chunk.count - 1
            for j in 0..<bytes { out.append(UInt8((n >> UInt32(16 - 8 * j)) & 0xFF)) }
            i += 4
        }
        return out
    }
}
