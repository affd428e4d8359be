// SQLName: PostgreSQL identifiers for CloudKit names, always double-quoted.
//
// CloudKit names reach 255 characters; PostgreSQL truncates identifiers at 63 bytes. A name that
// fits is kept whole after its prefix (readable in psql and EXPLAIN); a longer one keeps a
// prefix of it and adds 8 hex digits of its FNV-1a hash, so distinct names stay distinct
// (deterministic: the same name always maps to the same identifier — never change the rule,
// existing tables are named by it).

/// Identifier spelling for generated tables, columns and indexes.
enum SQLName {
    static let maximumBytes = 63

    /// `prefix + name`, shortened with a hash when longer than 63 bytes.
    static func make(_ prefix: String, _ name: String) -> String {
        let full = prefix + name
        if full.utf8.count <= maximumBytes { return full }
        var h: UInt32 = 0x811C_9DC5
        for b in name.utf8 {
            h ^= UInt32(b)
            h = h &* 0x0100_0193
        }
        let hex = String(h, radix: 16)
        let tag = "_" + String(repeating: "0", count: 8 - hex.count) + hex
        var kept = ""
        for ch in full.unicodeScalars {
            if kept.utf8.count + String(ch).utf8.count + tag.utf8.count > maximumBytes { break }
            kept.unicodeScalars.append(ch)
        }
        return kept + tag
    }

    /// `"name"` with embedded quotes doubled: safe in any SQL position an identifier goes.
    static func quote(_ name: String) -> String { "\"" + doubling("\"", in: name) + "\"" }

    /// `text` as a standard SQL string literal: in single quotes, each quote doubled.
    static func literal(_ text: String) -> String { "'" + doubling("'", in: text) + "'" }

    /// `text` with every `mark` written twice, scalar by scalar. (`replacingOccurrences` compares
    /// characters: a quote followed by a combining mark is another character, and stayed single.)
    static func doubling(_ mark: Unicode.Scalar, in text: String) -> String {
        var out = String.UnicodeScalarView()
        for u in text.unicodeScalars {
            if u == mark { out.append(u) }
            out.append(u)
        }
        return String(out)
    }

    /// `"namespace"."table"`.
    static func qualified(_ namespace: String, _ table: String) -> String { quote(namespace) + "." + quote(table) }
}
