// JSONSalvage: what can still be read of a damaged JSON document — for `cirrus repair` of the
// JSON files beside a store (subscriptions, users, tokens and keys), which carry no checksum.
//
// The document is read as JSON is, but an array element that does not parse is dropped and the
// reading resumes at the next element that starts like the array's first one after a comma; an
// array or object cut off by the end of the text (a truncated file) is closed where the last
// whole element ended; an object member that does not parse ends the object. What was dropped is
// counted. A damaged byte that leaves the text valid JSON cannot be seen here.

extension JSONValue {
    /// The parts of `bytes` that still parse (see the file header), and how many array elements
    /// or object tails were dropped; nil when not even the outermost value starts.
    ///
    /// ```swift
    /// let (value, dropped) = JSONValue.salvage(Array(#"[{"a":1},{"a":"#.utf8))!   // ([{"a":1}], 1)
    /// ```
    public static func salvage(_ bytes: [UInt8]) -> (value: JSONValue, dropped: Int)? {
        bytes.withUnsafeBufferPointer { b in
            var s = Salvager(b: b)
            s.skipSpace()
            guard s.pos < b.count, b[s.pos] == UInt8(ascii: "{") || b[s.pos] == UInt8(ascii: "[") else { return nil }
            let v = s.value()
            return (v, s.dropped)
        }
    }
}

private struct Salvager {
    let b: UnsafeBufferPointer<UInt8>
    var pos = 0
    var dropped = 0

    mutating func skipSpace() {
        while pos < b.count, b[pos] == 0x20 || b[pos] == 0x0A || b[pos] == 0x0D || b[pos] == 0x09 { pos += 1 }
    }

    /// One strict value at `pos`, nil (and `pos` unchanged) when it does not parse.
    mutating func strict() -> JSONValue? {
        var end = pos
        var depth = 0
        var inString = false
        var escaped = false
        // The value's extent: to the matching bracket, or for a scalar to the next separator.
        while end < b.count {
            let c = b[end]
            if inString {
                if escaped {
                    escaped = false
                } else if c == UInt8(ascii: "\\") {
                    escaped = true
                } else if c == 0x22 {
                    inString = false
                }
            } else if c == 0x22 {
                inString = true
            } else if c == UInt8(ascii: "{") || c == UInt8(ascii: "[") {
                depth += 1
            } else if c == UInt8(ascii: "}") || c == UInt8(ascii: "]") {
                if depth == 0 { break }
                depth -= 1
                if depth == 0 {
                    end += 1
                    break
                }
            } else if depth == 0 && c == UInt8(ascii: ",") {
                break
            }
            end += 1
        }
        guard let v = try? JSONValue.parse(bytes: UnsafeBufferPointer(rebasing: b[pos..<end])) else { return nil }
        pos = end
        return v
    }

    mutating func value() -> JSONValue {
        skipSpace()
        guard pos < b.count else { return .null }
        if b[pos] == UInt8(ascii: "[") { return array() }
        if b[pos] == UInt8(ascii: "{") { return object() }
        return strict() ?? .null
    }

    mutating func array() -> JSONValue {
        pos += 1
        var items: [JSONValue] = []
        var first: UInt8?
        while true {
            skipSpace()
            guard pos < b.count else {
                if !items.isEmpty || first != nil { dropped += 1 }  // cut off
                return .array(items)
            }
            if b[pos] == UInt8(ascii: "]") {
                pos += 1
                return .array(items)
            }
            let start = b[pos]
            if first == nil { first = start }
            let before = pos
            var item: JSONValue?
            if start == UInt8(ascii: "{") || start == UInt8(ascii: "[") {
                var probe = self
                item = probe.strict()
                if item != nil { pos = probe.pos }
            } else {
                item = strict()
            }
            skipSpace()
            if let item, pos < b.count, b[pos] == UInt8(ascii: ",") || b[pos] == UInt8(ascii: "]") {
                items.append(item)
                if b[pos] == UInt8(ascii: ",") { pos += 1 }
                continue
            }
            if item != nil, pos >= b.count {
                items.append(item!)  // whole, but the array was cut off after it
                dropped += 1
                return .array(items)
            }
            dropped += 1
            guard resync(after: before, startingWith: first ?? start) else { return .array(items) }
        }
    }

    /// Moves to the next element after `p` that starts with `c` right after a comma.
    mutating func resync(after p: Int, startingWith c: UInt8) -> Bool {
        var q = p + 1
        while q < b.count {
            if b[q] == c {
                var k = q - 1
                while k > p, b[k] == 0x20 || b[k] == 0x0A || b[k] == 0x0D || b[k] == 0x09 { k -= 1 }
                if k > p, b[k] == UInt8(ascii: ",") {
                    pos = q
                    return true
                }
            }
            q += 1
        }
        pos = b.count
        return false
    }

    mutating func object() -> JSONValue {
        pos += 1
        var members: [(String, JSONValue)] = []
        while true {
            skipSpace()
            guard pos < b.count else {
                dropped += 1
                return .object(members)
            }
            if b[pos] == UInt8(ascii: "}") {
                pos += 1
                return .object(members)
            }
            guard b[pos] == 0x22, let key = stringToken() else { return end(members) }
            skipSpace()
            guard pos < b.count, b[pos] == UInt8(ascii: ":") else { return end(members) }
            pos += 1
            skipSpace()
            guard pos < b.count else { return end(members) }
            let v: JSONValue
            if b[pos] == UInt8(ascii: "[") || b[pos] == UInt8(ascii: "{") {
                v = value()
            } else if let s = strict() {
                v = s
            } else {
                return end(members)
            }
            members.append((key, v))
            skipSpace()
            if pos < b.count, b[pos] == UInt8(ascii: ",") {
                pos += 1
            } else if pos < b.count, b[pos] == UInt8(ascii: "}") {
                pos += 1
                return .object(members)
            } else {
                return end(members)
            }
        }
    }

    /// The string at `pos` (a key), nil (and `pos` unchanged) when it does not parse.
    mutating func stringToken() -> String? {
        var end = pos + 1
        var escaped = false
        while end < b.count {
            let c = b[end]
            end += 1
            if escaped {
                escaped = false
            } else if c == UInt8(ascii: "\\") {
                escaped = true
            } else if c == 0x22 {
                break
            }
        }
        guard case .string(let s)? = try? JSONValue.parse(bytes: UnsafeBufferPointer(rebasing: b[pos..<end])) else {
            return nil
        }
        pos = end
        return s
    }

    /// An object whose next member does not parse: it ends with the members before it.
    mutating func end(_ members: [(String, JSONValue)]) -> JSONValue {
        dropped += 1
        pos = b.count
        return .object(members)
    }
}
