// TextTable: aligned plain-text tables that fit a terminal width, and the short cell text of
// field values. Used by `cirrus query` and the REPL. Widths count Characters, with East Asian
// wide characters counted as two columns so CJK and Thai names line up.

import RecordModel

/// An aligned table of strings.
///
/// ```swift
/// let t = TextTable(header: ["recordName", "name"], rows: [["louvre", "Louvre"]])
/// print(t.render(width: 80))
/// // recordName  name
/// // ----------  ------
/// // louvre      Louvre
/// ```
public struct TextTable: Sendable {
    /// The column titles; their count is the table's number of columns.
    public var header: [String]
    /// The cells, row by row; a short row is padded with empty cells, extra cells are dropped.
    public var rows: [[String]]
    /// Columns aligned right (numbers), by index.
    public var rightAligned: Set<Int>

    /// A table of `rows` under `header`, left-aligned except the columns in `rightAligned`.
    public init(header: [String], rows: [[String]], rightAligned: Set<Int> = []) {
        self.header = header
        self.rows = rows
        self.rightAligned = rightAligned
    }

    /// The table, at most `width` columns wide: the widest columns shrink first (never below 6
    /// or their header), and cut values end in `…`.
    public func render(width: Int) -> String {
        let n = header.count
        guard n > 0 else { return "" }
        var widths = (0..<n).map { i in
            rows.reduce(displayWidth(header[i])) { max($0, displayWidth(i < $1.count ? $1[i] : "")) }
        }
        let gap = 2
        let budget = max(n * 6 + (n - 1) * gap, width)
        while widths.reduce(0, +) + (n - 1) * gap > budget {
            guard let i = widths.indices.max(by: { widths[$0] < widths[$1] }), widths[i] > 6 else { break }
            widths[i] -= 1
        }
        func line(_ cells: [String]) -> String {
            var parts: [String] = []
            for i in 0..<n {
                let c = truncate(i < cells.count ? cells[i] : "", to: widths[i])
                let pad = String(repeating: " ", count: max(0, widths[i] - displayWidth(c)))
                parts.append(rightAligned.contains(i) ? pad + c : c + pad)
            }
            var s = parts.joined(separator: String(repeating: " ", count: gap))
            while s.hasSuffix(" ") { s.removeLast() }
            return s
        }
        var out = line(header) + "\n"
        out += widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ") + "\n"
        for r in rows { out += line(r) + "\n" }
        return out
    }
}

/// Columns a string takes on a terminal (wide East Asian characters count two).
public func displayWidth(_ s: String) -> Int {
    s.unicodeScalars.reduce(0) { w, u in w + scalarWidth(u) }
}

private func scalarWidth(_ u: Unicode.Scalar) -> Int {
    let v = u.value
    if v == 0 || (0x300...0x36F).contains(v) || (0x0E31 == v) || (0x0E34...0x0E3A).contains(v)
        || (0x0E47...0x0E4E).contains(v)
    {
        return 0  // combining marks (Latin diacritics, Thai vowel and tone marks)
    }
    if (0x1100...0x115F).contains(v) || (0x2E80...0xA4CF).contains(v) || (0xAC00...0xD7A3).contains(v)
        || (0xF900...0xFAFF).contains(v) || (0xFF00...0xFF60).contains(v) || (0x20000...0x3FFFD).contains(v)
    {
        return 2
    }
    return 1
}

/// `s` cut to at most `width` columns, ending in `…` when cut.
public func truncate(_ s: String, to width: Int) -> String {
    if displayWidth(s) <= width { return s }
    var out = ""
    var w = 0
    for ch in s {
        let cw = displayWidth(String(ch))
        if w + cw > width - 1 { break }
        out.append(ch)
        w += cw
    }
    return out + "…"
}

extension FieldValue {
    /// Short text for a table cell: strings bare, locations `lat, lon`, references by name,
    /// lists comma-separated, dates ISO 8601.
    public var cellText: String {
        switch self {
        case .string(let s): return s.replacingControlCharacters
        case .location(let l): return "\(l.latitude), \(l.longitude)"
        case .reference(let r): return r.recordID.recordName
        case .list(let items): return items.map(\.cellText).joined(separator: ", ")
        default: return description
        }
    }
}

extension String {
    /// Newlines and tabs shown as spaces so a cell stays on one line.
    var replacingControlCharacters: String {
        String(String.UnicodeScalarView(unicodeScalars.map { $0.value < 0x20 ? " " : $0 }))
    }
}
