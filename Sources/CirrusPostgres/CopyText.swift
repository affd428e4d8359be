// CopyText: rows as PostgreSQL's `COPY … FROM STDIN` text format, built as bytes (imports,
// PostgresStore+Import.swift; the columns and values: BatchColumns in PostgresStore+Batch.swift).

import CirrusFacade
import Foundation
import Indexes
import NIOCore
import PostgresNIO
import RecordModel

/// `COPY … FROM STDIN` in text format: one line per row, columns separated by tabs, `\N` for
/// NULL, backslash, tab, newline and carriage return escaped. Built as UTF-8 bytes (an import
/// writes a few hundred bytes per record).
enum CopyText {
    /// `v` escaped for a column of a COPY text line.
    static func escape(_ v: String, into out: inout [UInt8]) {
        for b in v.utf8 {
            switch b {
            case 0x5C: out += [0x5C, 0x5C]  // \
            case 0x09: out += [0x5C, 0x74]  // \t
            case 0x0A: out += [0x5C, 0x6E]  // \n
            case 0x0D: out += [0x5C, 0x72]  // \r
            default: out.append(b)
            }
        }
    }

    static let null: [UInt8] = [0x5C, 0x4E]  // \N
    static let hexPrefix: [UInt8] = [0x5C, 0x5C, 0x78]  // \\x: bytea's `\x`, its backslash escaped
    static let digits = Array("0123456789abcdef".utf8)

    /// Appends the COPY line of a row (as ``BatchColumns/row(_:copy:)`` made it, `copy: true`).
    static func line(_ row: BatchRow, _ columns: BatchColumns, tenant: [UInt8], into out: inout [UInt8]) {
        let inputs = row.texts
        for (k, cell) in columns.cells.enumerated() {
            if k > 0 { out.append(0x09) }
            switch cell {
            case .tenant: out += tenant
            case .null: out += null
            case .text(let i), .tsvector(let i):
                if let v = inputs[i] { escape(v, into: &out) } else { out += null }
            case .bytea(let i):
                if let v = inputs[i] {
                    out += hexPrefix
                    out += v.utf8
                } else {
                    out += null
                }
            case .data:
                out += hexPrefix
                out.reserveCapacity(out.count + row.data.count * 2)
                for b in row.data {
                    out.append(digits[Int(b >> 4)])
                    out.append(digits[Int(b & 15)])
                }
            case .geography(let lon, let lat):
                // Hex EWKB (little-endian point with SRID 4326): PostGIS reads it faster than
                // EWKT's decimal text, and the doubles travel exactly.
                guard let x = inputs[lon].flatMap(Double.init), let y = inputs[lat].flatMap(Double.init) else {
                    out += null
                    continue
                }
                var wkb: [UInt8] = [0x01, 0x01, 0x00, 0x00, 0x20, 0xE6, 0x10, 0x00, 0x00]
                for v in [x, y] {
                    withUnsafeBytes(of: v.bitPattern.littleEndian) { wkb += $0 }
                }
                for b in wkb {
                    out.append(digits[Int(b >> 4)])
                    out.append(digits[Int(b & 15)])
                }
            }
        }
        out.append(0x0A)
    }

    /// A tsvector's text (`'a' 'b'`) of tokens: each quoted, `'` doubled and `\` escaped.
    static func tsvector(_ tokens: [String]) -> String {
        var out: [UInt8] = []
        for (i, t) in tokens.enumerated() {
            if i > 0 { out.append(0x20) }
            out.append(0x27)
            for b in t.utf8 {
                if b == 0x27 { out.append(0x27) } else if b == 0x5C { out.append(0x5C) }
                out.append(b)
            }
            out.append(0x27)
        }
        return String(decoding: out, as: UTF8.self)
    }
}
