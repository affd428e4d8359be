// Manifest: the `CURRENT` file naming the live log segments and — after a checkpoint — the data
// segments and the sequence they cover (docs/storage-format.md), and segment file names.
//
//   cirrus-log 1                         cirrus-log 3
//   segments 2 3                         segments 7
//   crc 1a2b3c4d                         checkpoint 120345 horizon 118000
//                                        state 3
//                                        table <owner hex> <type hex> 4:5 9:10 12:-
//                                        crc 1a2b3c4d
//
// `crc` is the CRC-32C (hex) of the bytes before its line. Version 1 is written while no
// checkpoint exists, so stores that never checkpoint keep their old, readable manifest. A table
// line lists its layers oldest first, each `ROWS:INDEXES` (BaseRows.swift). Version 2 (one layer
// per table, `table ROWS INDEXES <owner hex> <type hex>`) is still read.
//
// Replaced only by write-tmp → fsync → rename → fsync(dir) (FileSystem.writeAtomically), so a
// crash leaves the old or the new list, never a mix.

import CirrusIO
import Foundation

/// Which database and record type a table's data segment holds: the zone owner as stored
/// (`__defaultOwner__` for the public database, the user record name for a private one).
public struct TableKey: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The zone owner: `__defaultOwner__` for the public database, else the user record name.
    public var owner: String
    /// The record type.
    public var recordType: String
    /// The table of `recordType` in `owner`'s database.
    public init(owner: String, recordType: String) {
        self.owner = owner
        self.recordType = recordType
    }
    /// Orders by owner, then record type.
    public static func < (a: TableKey, b: TableKey) -> Bool { (a.owner, a.recordType) < (b.owner, b.recordType) }
    /// `<owner>/<recordType>`.
    public var description: String { "\(owner)/\(recordType)" }
}

/// The data segments of one table: its rows, and its indexes (nil until the façade wrote them).
public struct TableFiles: Sendable, Hashable {
    /// The data segment holding the table's rows.
    public var rows: UInt64
    /// The data segment holding its index sections; nil until the façade wrote them.
    public var indexes: UInt64?
    /// A table's data segments.
    public init(rows: UInt64, indexes: UInt64?) {
        self.rows = rows
        self.indexes = indexes
    }
}

/// What a checkpoint covers: every entry up to `sequence` lives in the data segments.
public struct ManifestCheckpoint: Sendable, Hashable {
    /// The last sequence the data segments include; replay starts after it.
    public var sequence: UInt64
    /// Change-token horizon (deletions at or below it are forgotten).
    public var horizon: UInt64
    /// The data segment holding the checkpoint state.
    public var state: UInt64
    /// Data segments of each table's layers, oldest first.
    public var tables: [TableKey: [TableFiles]]
}

/// The list of live segments.
public struct Manifest: Sendable, Hashable {
    /// File name of the manifest.                                              never change
    public static let fileName = "CURRENT"
    /// The most layers a table line may list (a checkpoint keeps far fewer); more is damage.
    public static let maximumLayers = 64
    /// The live log segments, in replay order (oldest first).
    public var segments: [UInt64]
    /// The last checkpoint; nil while the store has never checkpointed (version 1 manifest).
    public var checkpoint: ManifestCheckpoint?

    /// A manifest listing `segments` and the last checkpoint.
    public init(segments: [UInt64], checkpoint: ManifestCheckpoint? = nil) {
        self.segments = segments
        self.checkpoint = checkpoint
    }

    /// Every data segment the manifest names.
    public var dataSegments: Set<UInt64> {
        guard let c = checkpoint else { return [] }
        var out: Set<UInt64> = [c.state]
        for f in c.tables.values.joined() {
            out.insert(f.rows)
            if let i = f.indexes { out.insert(i) }
        }
        return out
    }

    static func hex(_ s: String) -> String { s.utf8.map { String(format: "%02x", $0) }.joined() }

    /// The UTF-8 text that `s` spells in pairs of hex digits; nil when it does not.
    static func unhex(_ s: ArraySlice<UInt8>) -> String? {
        guard s.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(s.count / 2)
        var i = s.startIndex
        while i < s.endIndex {
            guard let v = number(s[i..<(i + 2)], radix: 16) else { return nil }
            bytes.append(UInt8(v))
            i += 2
        }
        guard bytes.withUnsafeBytes({ ByteReader.isValidUTF8($0) }) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `seg-<16 hex digits>.log`.                                              never change
    public static func segmentFileName(_ n: UInt64) -> String {
        NumberedFileName(prefix: "seg-", suffix: ".log").name(n)
    }

    /// The segment number of a segment file name, or nil.
    public static func segmentNumber(fileName: String) -> UInt64? {
        NumberedFileName(prefix: "seg-", suffix: ".log").number(fileName)
    }

    /// The file's bytes.
    public var encoded: [UInt8] {
        var body = checkpoint == nil ? "cirrus-log 1\nsegments" : "cirrus-log 3\nsegments"
        for s in segments { body += " \(s)" }
        body += "\n"
        if let c = checkpoint {
            body += "checkpoint \(c.sequence) horizon \(c.horizon)\nstate \(c.state)\n"
            for (k, layers) in c.tables.sorted(by: { $0.key < $1.key }) {
                body += "table \(Self.hex(k.owner)) \(Self.hex(k.recordType))"
                for f in layers { body += " \(f.rows):\(f.indexes.map(String.init) ?? "-")" }
                body += "\n"
            }
        }
        let crc = CRC32C.checksum(Array(body.utf8))
        return Array((body + "crc " + String(crc, radix: 16) + "\n").utf8)
    }

    /// A checkpoint's lines as a state segment's `tables` section: the manifest's `checkpoint`,
    /// `state` and `table` lines and their `crc` line (no `cirrus-log` or `segments` line).
    static func encodeCheckpoint(_ cp: ManifestCheckpoint) -> [UInt8] {
        let full = String(decoding: Manifest(segments: [1], checkpoint: cp).encoded, as: UTF8.self)
        let body = full.split(separator: "\n", omittingEmptySubsequences: false).dropFirst(2).dropLast()
            .filter { !$0.hasPrefix("crc ") }.map { $0 + "\n" }.joined()
        return Array((body + "crc " + String(CRC32C.checksum(Array(body.utf8)), radix: 16) + "\n").utf8)
    }

    /// The checkpoint of a `tables` section, nil when it is damaged.
    static func decodeCheckpoint(_ bytes: [UInt8]) -> ManifestCheckpoint? {
        guard let text = String(validating: bytes, as: UTF8.self), let crcAt = text.range(of: "crc ") else {
            return nil
        }
        let body = String(text[..<crcAt.lowerBound])
        let crc = String(text[crcAt.upperBound...].filter { !$0.isWhitespace })
        guard UInt32(crc, radix: 16) == CRC32C.checksum(Array(body.utf8)) else { return nil }
        let whole = "cirrus-log 3\nsegments 1\n" + body
        guard
            case .success(let m) = decode(
                Array((whole + "crc " + String(CRC32C.checksum(Array(whole.utf8)), radix: 16) + "\n").utf8))
        else { return nil }
        return m.checkpoint
    }

    /// Parses the file; the reason when it is damaged. Read as bytes, never as `String`: a fresh
    /// process opens with this, and the first use of each of the standard library's text
    /// algorithms (splitting, validating, radix parsing) costs more than the whole parse.
    public static func decode(_ bytes: [UInt8]) -> Result<Manifest, CodecError> {
        guard bytes.withUnsafeBytes({ ByteReader.isValidUTF8($0) }) else {
            return .failure(CodecError("not UTF-8", offset: 0))
        }
        let marker: [UInt8] = [0x63, 0x72, 0x63, 0x20]  // "crc "
        guard let at = bytes.indices.first(where: { bytes[$0...].starts(with: marker) }) else {
            return .failure(CodecError("no crc line", offset: 0))
        }
        let crcDigits = bytes[(at + marker.count)...].filter { ![0x20, 0x09, 0x0A, 0x0B, 0x0C, 0x0D].contains($0) }
        guard let crc = number(crcDigits, radix: 16), crc <= UInt32.max, crc == CRC32C.checksum(Array(bytes[..<at]))
        else {
            return .failure(CodecError("checksum mismatch", offset: 0))
        }
        let lines = bytes[..<at].split(separator: 0x0A)
        func isLine(_ k: Int, _ text: String) -> Bool { k < lines.count && lines[k].elementsEqual(text.utf8) }
        let v2 = isLine(0, "cirrus-log 2")
        let v3 = isLine(0, "cirrus-log 3")
        guard (lines.count == 2 && isLine(0, "cirrus-log 1")) || ((v2 || v3) && lines.count >= 4),
            lines[1].starts(with: "segments".utf8)
        else {
            return .failure(CodecError("unknown manifest version or layout", offset: 0))
        }
        var segs: [UInt64] = []
        for part in lines[1].split(separator: 0x20).dropFirst() {
            guard let n = number(part) else {
                return .failure(CodecError("bad segment number \(text(part))", offset: 0))
            }
            segs.append(n)
        }
        guard !segs.isEmpty, segs == segs.sorted() else {
            return .failure(CodecError("segment list empty or out of order", offset: 0))
        }
        guard v2 || v3 else { return .success(Manifest(segments: segs)) }
        let cp = lines[2].split(separator: 0x20)
        let st = lines[3].split(separator: 0x20)
        guard cp.count == 4, cp[0].elementsEqual("checkpoint".utf8), cp[2].elementsEqual("horizon".utf8),
            let seq = number(cp[1]), let hz = number(cp[3]),
            st.count == 2, st[0].elementsEqual("state".utf8), let state = number(st[1])
        else { return .failure(CodecError("bad checkpoint lines", offset: 0)) }
        var tables: [TableKey: [TableFiles]] = [:]
        for line in lines.dropFirst(4) {
            let p = line.split(separator: 0x20, omittingEmptySubsequences: false)
            let bad = CodecError("bad table line '\(text(line))'", offset: 0)
            guard p.count >= 4, p[0].elementsEqual("table".utf8) else { return .failure(bad) }
            if v2 {
                guard p.count == 5, let n = number(p[1]), let indexes = optionalNumber(p[2]), let o = unhex(p[3]),
                    let t = unhex(p[4])
                else { return .failure(bad) }
                tables[TableKey(owner: o, recordType: t)] = [TableFiles(rows: n, indexes: indexes)]
                continue
            }
            guard p.count - 3 <= maximumLayers, let o = unhex(p[1]), let t = unhex(p[2]) else { return .failure(bad) }
            var layers: [TableFiles] = []
            for f in p.dropFirst(3) {
                let rowsAndIndexes = f.split(separator: 0x3A, omittingEmptySubsequences: false)  // ":"
                guard rowsAndIndexes.count == 2, let n = number(rowsAndIndexes[0]),
                    let indexes = optionalNumber(rowsAndIndexes[1])
                else { return .failure(bad) }
                layers.append(TableFiles(rows: n, indexes: indexes))
            }
            guard tables.updateValue(layers, forKey: TableKey(owner: o, recordType: t)) == nil else {
                return .failure(CodecError("table \(o)/\(t) listed twice", offset: 0))
            }
        }
        return .success(
            Manifest(
                segments: segs, checkpoint: ManifestCheckpoint(sequence: seq, horizon: hz, state: state, tables: tables)
            ))
    }

    /// The number `digits` spell (ASCII, `radix` 10 or 16, lower or upper case); nil when they are
    /// empty, hold anything else, or overflow a UInt64.
    static func number<C: Collection<UInt8>>(_ digits: C, radix: UInt64 = 10) -> UInt64? {
        guard !digits.isEmpty else { return nil }
        var n: UInt64 = 0
        for c in digits {
            let d: UInt64
            switch c {
            case 0x30...0x39: d = UInt64(c - 0x30)
            case 0x61...0x66 where radix == 16: d = UInt64(c - 0x61 + 10)
            case 0x41...0x46 where radix == 16: d = UInt64(c - 0x41 + 10)
            default: return nil
            }
            let (m, o1) = n.multipliedReportingOverflow(by: radix)
            let (s, o2) = m.addingReportingOverflow(d)
            guard !o1, !o2 else { return nil }
            n = s
        }
        return n
    }

    /// A layer's index segment: a number, or `-` for none (`.some(nil)`); nil when it is neither.
    static func optionalNumber(_ field: ArraySlice<UInt8>) -> UInt64?? {
        if field.elementsEqual([0x2D]) { return .some(nil) }
        return number(field).map { .some($0) }
    }

    /// The bytes as text, for messages.
    static func text(_ bytes: ArraySlice<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }
}

/// The names of the store's numbered files: a prefix, the number in 16 zero-padded hex digits, a
/// suffix (`seg-<16 hex digits>.log`, `dat-<16 hex digits>.seg`). Both ends are ASCII.
struct NumberedFileName {
    let prefix: String
    let suffix: String

    /// The file name of number `n`.
    func name(_ n: UInt64) -> String {
        let h = String(n, radix: 16)
        return prefix + String(repeating: "0", count: max(0, 16 - h.count)) + h + suffix
    }

    /// The number of file name `fileName`, or nil when it is not one of these names.
    func number(_ fileName: String) -> UInt64? {
        guard fileName.hasPrefix(prefix), fileName.hasSuffix(suffix),
            fileName.utf8.count == prefix.utf8.count + 16 + suffix.utf8.count
        else { return nil }
        return UInt64(fileName.dropFirst(prefix.count).dropLast(suffix.count), radix: 16)
    }
}
