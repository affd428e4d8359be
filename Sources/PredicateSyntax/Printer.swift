// Printer: SyntaxTree → canonical NSPredicate format string.
//
// Owns the canonical form documented on each tree case: first operator spellings, upper-case
// keywords, single-quoted strings with escapes and every `%` doubled, `#` before keys that are
// reserved words, placeholders as written, numbers that parse back to the identical value, and
// the fewest parentheses that keep the tree's shape. For every tree the parser produces,
// `parse(print(t)) == t`. (Hand-built trees with names the lexer cannot read back — a key
// `"a b"`, a function named `"in"`, a NaN — print, but do not round-trip.)
//
// Parentheses by level. Predicates: OR 0 < AND 1 < NOT/comparison 2; a left operand may sit at
// its operator's level, a right one must be one higher (left-associative). Expressions:
// `+ -` 1 < `* /` 2 < unary minus 3 < `**` 4 < postfix/primary 5; `**` takes a postfix on the
// left and a unary on the right (right-associative). A negative number literal counts as unary.

extension Predicate {
    /// The canonical format string, e.g. `name ==[c] 'x' AND (a > 1 OR b < 2)`.
    ///
    /// ```swift
    /// try PredicateParser.parse("a=1 && b<>2").formatString   // "a == 1 AND b != 2"
    /// ```
    public var formatString: String {
        var p = Printer()
        p.predicate(self, level: 0)
        return p.out
    }
}

extension Expression {
    /// The canonical format string of the expression, e.g. `(a + 1) * 2`.
    public var formatString: String {
        var p = Printer()
        p.expression(self, level: 0)
        return p.out
    }
}

extension Literal {
    /// The canonical text of the literal: `'it\'s'`, `42`, `1.5`, `1e+20`, `TRUE`, `NULL`.
    public var formatString: String {
        var p = Printer()
        p.literal(self)
        return p.out
    }
}

struct Printer {
    var out = ""

    init() { out.reserveCapacity(64) }

    mutating func predicate(_ p: Predicate, level: Int) {
        let own: Int
        switch p.kind {
        case .or: own = 0
        case .and: own = 1
        default: own = 2
        }
        if own < level { out += "(" }
        switch p.kind {
        case .truePredicate: out += "TRUEPREDICATE"
        case .falsePredicate: out += "FALSEPREDICATE"
        case .not(let inner):
            out += "NOT "
            predicate(inner, level: 2)
        case .and(let a, let b):
            predicate(a, level: 1)
            out += " AND "
            predicate(b, level: 2)
        case .or(let a, let b):
            predicate(a, level: 0)
            out += " OR "
            predicate(b, level: 1)
        case .comparison(let c):
            switch c.modifier {
            case .direct: break
            case .any: out += "ANY "
            case .all: out += "ALL "
            case .none: out += "NONE "
            }
            expression(c.left, level: 0)
            out += " "
            out += c.op.spelling
            if !c.options.isEmpty { out += "[" + c.options.letters + "]" }
            out += " "
            expression(c.right, level: 0)
        }
        if own < level { out += ")" }
    }

    static func level(_ e: Expression) -> Int {
        switch e.kind {
        case .arithmetic(.add, _, _), .arithmetic(.subtract, _, _): 1
        case .arithmetic(.multiply, _, _), .arithmetic(.divide, _, _): 2
        case .negate: 3
        case .constant(.integer(let v)) where v < 0: 3
        case .constant(.double(let v)) where v.sign == .minus: 3
        case .arithmetic(.power, _, _): 4
        default: 5
        }
    }

    mutating func expression(_ e: Expression, level: Int) {
        let parenthesize = Self.level(e) < level
        if parenthesize { out += "(" }
        switch e.kind {
        case .constant(let l): literal(l)
        case .evaluatedObject: out += "SELF"
        case .anyKey: out += "ANYKEY"
        case .key(let name): key(name)
        case .member(let base, let name):
            expression(base, level: 5)
            out += "."
            key(name)
        case .variable(let name): out += "$" + name
        case .placeholder(let p): out += p.specifier.rawValue
        case .aggregate(let elements):
            out += "{"
            list(elements)
            out += "}"
        case .subscripted(let base, let sub): subscripted(base, sub)
        case .negate(let operand): negate(operand)
        case .arithmetic(let op, let a, let b): arithmetic(op, a, b)
        case .function(let name, let arguments):
            out += name + "("
            list(arguments)
            out += ")"
        case .functionExpression(let target, let selector, let arguments):
            functionExpression(target, selector, arguments)
        case .cast(let value, let type): call("CAST", [.expression(value), .expression(type)])
        case .subquery(let collection, let variable, let p):
            call("SUBQUERY", [.expression(collection), .text("$" + variable), .predicate(p)])
        case .ternary(let p, let a, let b): call("TERNARY", [.predicate(p), .expression(a), .expression(b)])
        }
        if parenthesize { out += ")" }
    }

    mutating func subscripted(_ base: Expression, _ sub: Subscript) {
        expression(base, level: 5)
        switch sub {
        case .index(let index):
            out += "["
            expression(index, level: 0)
            out += "]"
        case .first: out += "[FIRST]"
        case .last: out += "[LAST]"
        case .size: out += "[SIZE]"
        }
    }

    mutating func negate(_ operand: Expression) {
        out += "-"
        switch operand.kind {
        case .constant(.integer(let v)) where v < 0:
            // `--5` reads back as negate(-5), at the same nesting as the source `--5`.
            expression(operand, level: 3)
        case .constant(.double(let v)) where v.sign == .minus:
            expression(operand, level: 3)
        case .constant(.integer), .constant(.double):
            // `-5` would read back as the literal -5, not as negate(5).
            out += "("
            expression(operand, level: 0)
            out += ")"
        default:
            expression(operand, level: 3)
        }
    }

    /// Left operand at the operator's level, right one a level higher (left-associative), but
    /// `**` is right-associative: its left operand binds tighter.
    mutating func arithmetic(_ op: ArithmeticOperator, _ a: Expression, _ b: Expression) {
        let (left, right) =
            switch op {
            case .add, .subtract: (1, 2)
            case .multiply, .divide: (2, 3)
            case .power: (5, 3)
            }
        expression(a, level: left)
        out += op == .power ? " ** " : " " + op.rawValue + " "
        expression(b, level: right)
    }

    mutating func functionExpression(_ target: Expression, _ selector: String, _ arguments: [Expression]) {
        out += "FUNCTION("
        expression(target, level: 0)
        out += ", "
        string(selector)
        for a in arguments {
            out += ", "
            expression(a, level: 0)
        }
        out += ")"
    }

    /// One argument of a keyword call: an expression, a predicate or literal text.
    enum CallArgument {
        case expression(Expression)
        case predicate(Predicate)
        case text(String)
    }

    /// `NAME(a, b, …)` with every argument at the lowest level.
    mutating func call(_ name: String, _ arguments: [CallArgument]) {
        out += name + "("
        for (n, a) in arguments.enumerated() {
            if n > 0 { out += ", " }
            switch a {
            case .expression(let e): expression(e, level: 0)
            case .predicate(let p): predicate(p, level: 0)
            case .text(let t): out += t
            }
        }
        out += ")"
    }

    mutating func list(_ elements: [Expression]) {
        for (n, e) in elements.enumerated() {
            if n > 0 { out += ", " }
            expression(e, level: 0)
        }
    }

    /// A key or member name: `@…` names as they are, reserved words behind `#`.
    mutating func key(_ name: String) {
        if !name.hasPrefix("@"), Keyword.isReserved(name) { out += "#" }
        out += name
    }

    mutating func literal(_ l: Literal) {
        switch l {
        case .string(let s): string(s)
        case .integer(let v): out += String(v)
        case .double(let v): out += v.description  // shortest digits that read back identically
        case .boolean(let b): out += b ? "TRUE" : "FALSE"
        case .null: out += "NULL"
        }
    }

    /// Single-quoted, with `\'`, `\\`, `\n`, `\t`, `\r`, `\uXXXX` for other controls, `%%`.
    mutating func string(_ s: String) {
        var bytes: [UInt8] = [UInt8(ascii: "'")]
        bytes.reserveCapacity(s.utf8.count + 2)
        let hex = Array("0123456789abcdef".utf8)
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "'"), UInt8(ascii: "\\"): bytes += [UInt8(ascii: "\\"), b]
            case UInt8(ascii: "%"): bytes += [b, b]
            case 0x0A: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x09: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0x0D: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x00..<0x20, 0x7F:
                bytes += [
                    UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(b >> 4)],
                    hex[Int(b & 15)],
                ]
            default: bytes.append(b)
            }
        }
        bytes.append(UInt8(ascii: "'"))
        out += String(decoding: bytes, as: UTF8.self)
    }
}
