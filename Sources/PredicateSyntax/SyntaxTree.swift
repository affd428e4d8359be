// SyntaxTree: the unchecked tree of an NSPredicate format string.
//
// Owns the node types of the *whole* NSPredicate grammar (CKQUERY.md §1); it does not know which
// part CloudKit accepts (that is QueryChecker's job). Every node carries the source range it was
// parsed from, in UTF-8 byte offsets. Node equality ignores ranges, so a tree parsed from the
// printer's output equals the original (`parse(print(t)) == t`).
//
// Each case's documentation shows the canonical text the printer writes for it.

/// A half-open range of UTF-8 byte offsets into the source text.
public struct SourceRange: Sendable, Hashable, CustomStringConvertible {
    /// Offset of the first byte.
    public var start: Int
    /// Offset one past the last byte; equal to `start` for a position.
    public var end: Int

    /// The range `start..<end`.
    public init(_ start: Int, _ end: Int) {
        self.start = start
        self.end = end
    }

    /// The empty range used for nodes built in code rather than parsed.
    public static let none = SourceRange(0, 0)

    /// The smallest range covering both.
    public func union(_ other: SourceRange) -> SourceRange {
        if self == .none { return other }
        if other == .none { return self }
        return SourceRange(Swift.min(start, other.start), Swift.max(end, other.end))
    }

    /// `start..<end`, e.g. `8..<10`.
    public var description: String { "\(start)..<\(end)" }
}

/// A predicate node: a comparison, a compound, or a constant predicate.
///
/// ```swift
/// let p = try PredicateParser.parse("ANY tags == 'cafe' AND rating >= 4")
/// if case .and(let l, _) = p.kind, case .comparison(let c) = l.kind {
///     c.modifier   // .any
///     c.op         // .equal
/// }
/// ```
public struct Predicate: Sendable, Hashable {
    /// What the node is.
    public var kind: Kind
    /// Where the node was parsed from (ignored by `==`).
    public var range: SourceRange

    /// A node of `kind` (with the range it was parsed from, or ``SourceRange/none`` when built in code).
    public init(_ kind: Kind, range: SourceRange = .none) {
        self.kind = kind
        self.range = range
    }

    /// The node kinds, each shown with the text the printer writes for it.
    public indirect enum Kind: Sendable, Hashable {
        /// `TRUEPREDICATE`
        case truePredicate
        /// `FALSEPREDICATE`
        case falsePredicate
        /// `NOT p`
        case not(Predicate)
        /// `p AND q` (AND and `&&`; left-associative, so `a AND b AND c` is `and(and(a, b), c)`)
        case and(Predicate, Predicate)
        /// `p OR q` (OR and `||`; left-associative)
        case or(Predicate, Predicate)
        /// `[ANY|ALL|NONE] lhs OP[options] rhs`
        case comparison(Comparison)
    }

    /// Compares the kinds, ignoring source ranges.
    public static func == (a: Predicate, b: Predicate) -> Bool { a.kind == b.kind }
    /// Hashes the kind, ignoring source ranges.
    public func hash(into h: inout Hasher) { h.combine(kind) }
}

/// `[modifier] left op[options] right`
public struct Comparison: Sendable, Hashable {
    /// `ANY`, `ALL`, `NONE`, or no modifier (``ComparisonModifier/direct``).
    public var modifier: ComparisonModifier
    /// The left operand.
    public var left: Expression
    /// The operator.
    public var op: ComparisonOperator
    /// The options in brackets after the operator, e.g. `[cd]`.
    public var options: ComparisonOptions
    /// The right operand.
    public var right: Expression
    /// Range of the operator token including its options, e.g. `==` or `CONTAINS[cd]` (ignored by `==`).
    public var operatorRange: SourceRange

    /// A comparison, without a modifier (``ComparisonModifier/direct``) or options unless given.
    public init(
        modifier: ComparisonModifier = .direct, left: Expression, op: ComparisonOperator,
        options: ComparisonOptions = [], right: Expression, operatorRange: SourceRange = .none
    ) {
        self.modifier = modifier
        self.left = left
        self.op = op
        self.options = options
        self.right = right
        self.operatorRange = operatorRange
    }

    /// Compares modifier, operands, operator and options, ignoring source ranges.
    public static func == (a: Comparison, b: Comparison) -> Bool {
        a.modifier == b.modifier && a.left == b.left && a.op == b.op && a.options == b.options && a.right == b.right
    }

    /// Hashes what `==` compares.
    public func hash(into h: inout Hasher) {
        h.combine(modifier)
        h.combine(left)
        h.combine(op)
        h.combine(options)
        h.combine(right)
    }
}

/// The aggregate modifier before a comparison. `SOME` parses as `.any`.
public enum ComparisonModifier: Sendable, Hashable {
    /// no modifier
    case direct
    /// `ANY` / `SOME`
    case any
    /// `ALL`
    case all
    /// `NONE`
    case none
}

/// Comparison operators. Every spelling maps to one case; the printer writes the first spelling.
public enum ComparisonOperator: Sendable, Hashable, CaseIterable {
    /// `==` (also `=`)
    case equal
    /// `!=` (also `<>`)
    case notEqual
    /// `<`
    case less
    /// `<=` (also `=<`)
    case lessOrEqual
    /// `>`
    case greater
    /// `>=` (also `=>`)
    case greaterOrEqual
    /// `BETWEEN`
    case between
    /// `IN`
    case `in`
    /// `CONTAINS`
    case contains
    /// `BEGINSWITH`
    case beginsWith
    /// `ENDSWITH`
    case endsWith
    /// `LIKE`
    case like
    /// `MATCHES`
    case matches
    /// `TOKENMATCHES`
    case tokenMatches
    /// `UTI-CONFORMS-TO`
    case utiConformsTo
    /// `UTI-EQUALS`
    case utiEquals

    /// The canonical spelling.
    public var spelling: String {
        switch self {
        case .equal: "=="
        case .notEqual: "!="
        case .less: "<"
        case .lessOrEqual: "<="
        case .greater: ">"
        case .greaterOrEqual: ">="
        case .between: "BETWEEN"
        case .in: "IN"
        case .contains: "CONTAINS"
        case .beginsWith: "BEGINSWITH"
        case .endsWith: "ENDSWITH"
        case .like: "LIKE"
        case .matches: "MATCHES"
        case .tokenMatches: "TOKENMATCHES"
        case .utiConformsTo: "UTI-CONFORMS-TO"
        case .utiEquals: "UTI-EQUALS"
        }
    }
}

/// Comparison options `[c]`, `[d]`, `[n]`, `[l]`, printed in the order `cdnl`.
public struct ComparisonOptions: OptionSet, Sendable, Hashable {
    /// The option bits: 1 `c`, 2 `d`, 4 `n`, 8 `l`.
    public let rawValue: UInt8
    /// Options from their bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// `c`: case-insensitive.
    public static let caseInsensitive = ComparisonOptions(rawValue: 1)
    /// `d`: diacritic-insensitive.
    public static let diacriticInsensitive = ComparisonOptions(rawValue: 2)
    /// `n`: normalized.
    public static let normalized = ComparisonOptions(rawValue: 4)
    /// `l`: locale-sensitive.
    public static let localeSensitive = ComparisonOptions(rawValue: 8)

    /// The letters inside the brackets, e.g. `cd`; empty when no option is set.
    public var letters: String {
        var s = ""
        if contains(.caseInsensitive) { s += "c" }
        if contains(.diacriticInsensitive) { s += "d" }
        if contains(.normalized) { s += "n" }
        if contains(.localeSensitive) { s += "l" }
        return s
    }
}

/// An expression node: a literal, key, placeholder, function call, arithmetic and the rest.
///
/// ```swift
/// let e = try PredicateParser.parseExpression("distanceToLocation:fromLocation:(location, %@)")
/// if case .function(let name, let arguments) = e.kind {
///     name             // "distanceToLocation:fromLocation:"
///     arguments.count  // 2
/// }
/// ```
public struct Expression: Sendable, Hashable {
    /// What the node is.
    public var kind: Kind
    /// Where the node was parsed from (ignored by `==`).
    public var range: SourceRange

    /// A node of `kind` (with the range it was parsed from, or ``SourceRange/none`` when built in code).
    public init(_ kind: Kind, range: SourceRange = .none) {
        self.kind = kind
        self.range = range
    }

    /// The node kinds, each shown with the text the printer writes for it.
    public indirect enum Kind: Sendable, Hashable {
        /// A literal: `'text'`, `42`, `1.5`, `TRUE`, `NULL`, …
        case constant(Literal)
        /// `SELF`
        case evaluatedObject
        /// A key: `name`, or `#IN` for a reserved word used as a key.
        case key(String)
        /// Member access `base.name`; collection operators are members whose name starts with
        /// `@` (`tags.@count`, `@avg.price` parses as key `@avg` then member `price`).
        case member(Expression, String)
        /// `$NAME`
        case variable(String)
        /// `%@`, `%K`, `%d`, … — `index` counts the placeholders from 0 in source order.
        case placeholder(Placeholder)
        /// `{a, b, c}` (possibly empty)
        case aggregate([Expression])
        /// `base[index]`
        case subscripted(Expression, Subscript)
        /// `-x`
        case negate(Expression)
        /// `a + b`, `a - b`, `a * b`, `a / b`, `a ** b`
        case arithmetic(ArithmeticOperator, Expression, Expression)
        /// A function call: `now()`, `tokenize(s, 'Cdl')`, `sum:({1, 2})`,
        /// `distanceToLocation:fromLocation:(location, %@)`. `name` is written as in the source,
        /// without the `(`; selector-style names keep their colons.
        case function(name: String, arguments: [Expression])
        /// `FUNCTION(target, 'selector', args…)`
        case functionExpression(target: Expression, selector: String, arguments: [Expression])
        /// `CAST(value, 'NSDate')` (the type is an expression, usually a string literal)
        case cast(Expression, Expression)
        /// `SUBQUERY(collection, $variable, predicate)`
        case subquery(collection: Expression, variable: String, predicate: Predicate)
        /// `TERNARY(predicate, a, b)`
        case ternary(Predicate, Expression, Expression)
        /// `ANYKEY`
        case anyKey
    }

    /// Compares the kinds, ignoring source ranges.
    public static func == (a: Expression, b: Expression) -> Bool { a.kind == b.kind }
    /// Hashes the kind, ignoring source ranges.
    public func hash(into h: inout Hasher) { h.combine(kind) }
}

/// Literal values.
public enum Literal: Sendable, Hashable {
    /// `'text'` — printed with single quotes and escapes (`\'`, `\\`, `\n`, `\t`, `\uXXXX` for
    /// other control characters).
    case string(String)
    /// An integer that fits Int64 (decimal, `0x`, `0o`, `0b` forms). A `-` directly before a
    /// number literal is folded into it, so `-5` is `integer(-5)`.
    case integer(Int64)
    /// A decimal or exponent number (`1.5`, `2e3`), or an integer too large for Int64.
    case double(Double)
    /// `TRUE`/`YES` or `FALSE`/`NO`
    case boolean(Bool)
    /// `NULL`/`NIL`
    case null
}

/// Subscripts: `[expr]`, `[FIRST]`, `[LAST]`, `[SIZE]`.
public enum Subscript: Sendable, Hashable {
    /// `[expr]`
    case index(Expression)
    /// `[FIRST]`
    case first
    /// `[LAST]`
    case last
    /// `[SIZE]`
    case size
}

/// Arithmetic operators, by precedence: `**` binds tightest (right-associative), then `*` `/`,
/// then `+` `-` (left-associative). Unary minus binds tighter than `*` but looser than `**`.
public enum ArithmeticOperator: String, Sendable, Hashable, CaseIterable {
    /// `a + b`
    case add = "+"
    /// `a - b`
    case subtract = "-"
    /// `a * b`
    case multiply = "*"
    /// `a / b`
    case divide = "/"
    /// `a ** b`
    case power = "**"
}

/// A placeholder and its position among the placeholders of the format string.
public struct Placeholder: Sendable, Hashable {
    /// A printf-style conversion as NSPredicate's format parser takes it: `%@` (an object),
    /// `%K` (a key path), and the numeric, character, string and pointer conversions with their
    /// length modifiers (`%d %i %o %u %x %X` with `hh h l ll q z t j`; `%f %F %e %E %g %G %a %A`
    /// with `l L`; `%c %C %s %S %p`).
    public struct Specifier: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// What the conversion takes.
        public enum Kind: Sendable, Hashable {
            case object, key, integer, floatingPoint, character, string, pointer
        }

        /// The specifier as written, e.g. `%lld`.
        public let rawValue: String
        /// What the conversion takes.
        public let kind: Kind

        /// A specifier from its text (`%` + length modifier + conversion); nil if NSPredicate
        /// would not take it.
        public init?(rawValue: String) {
            // Read as bytes: every specifier is ASCII, `%` + at most two modifier letters + the
            // conversion (no sets or substrings made per placeholder the lexer meets).
            let u = rawValue.utf8
            guard u.count >= 2, u.count <= 4, u.first == UInt8(ascii: "%") else { return nil }
            let kind: Kind
            switch u[u.index(before: u.endIndex)] {
            case UInt8(ascii: "@"): kind = .object
            case UInt8(ascii: "K"): kind = .key
            case UInt8(ascii: "d"), UInt8(ascii: "i"), UInt8(ascii: "o"), UInt8(ascii: "u"), UInt8(ascii: "x"),
                UInt8(ascii: "X"):
                kind = .integer
            case UInt8(ascii: "f"), UInt8(ascii: "F"), UInt8(ascii: "e"), UInt8(ascii: "E"), UInt8(ascii: "g"),
                UInt8(ascii: "G"), UInt8(ascii: "a"), UInt8(ascii: "A"):
                kind = .floatingPoint
            case UInt8(ascii: "c"), UInt8(ascii: "C"): kind = .character
            case UInt8(ascii: "s"), UInt8(ascii: "S"): kind = .string
            case UInt8(ascii: "p"): kind = .pointer
            default: return nil
            }
            // The modifier's bytes (none, one or two), as one number.
            var modifier = 0
            for b in u.dropFirst().dropLast() { modifier = modifier << 8 | Int(b) }
            if modifier != 0 {
                switch kind {
                case .integer: guard Self.integerModifiers.contains(modifier) else { return nil }
                case .floatingPoint: guard Self.floatingPointModifiers.contains(modifier) else { return nil }
                default: return nil
                }
            }
            self.rawValue = rawValue
            self.kind = kind
        }

        /// The length modifiers each kind takes, as `init?(rawValue:)` reads them (bytes as one number).
        private static let integerModifiers = ["hh", "h", "l", "ll", "q", "z", "t", "j"].map(modifierNumber)
        private static let floatingPointModifiers = ["l", "L"].map(modifierNumber)
        private static func modifierNumber(_ s: String) -> Int { s.utf8.reduce(0) { $0 << 8 | Int($1) } }

        private init(_ text: String, _ kind: Kind) {
            rawValue = text
            self.kind = kind
        }

        /// `%@` any object
        public static let object = Specifier("%@", .object)
        /// `%K` a key path
        public static let key = Specifier("%K", .key)
        /// `%d` an integer
        public static let d = Specifier("%d", .integer)
        /// `%i` an integer
        public static let i = Specifier("%i", .integer)
        /// `%ld` a long integer
        public static let ld = Specifier("%ld", .integer)
        /// `%lld` a 64-bit integer
        public static let lld = Specifier("%lld", .integer)
        /// `%u` an unsigned integer
        public static let u = Specifier("%u", .integer)
        /// `%f` a floating-point number
        public static let f = Specifier("%f", .floatingPoint)
        /// `%g` a floating-point number
        public static let g = Specifier("%g", .floatingPoint)
        /// `%e` a floating-point number
        public static let e = Specifier("%e", .floatingPoint)

        /// A sample of every kind and length modifier (for generators and tests).
        public static let allCases: [Specifier] = [
            "%@", "%K", "%d", "%i", "%ld", "%lld", "%u", "%hhd", "%hd", "%qd", "%zu", "%x", "%lX", "%o", "%f", "%lf",
            "%Lf", "%g", "%e", "%E", "%a", "%la", "%A", "%c", "%s", "%S", "%p",
        ].compactMap { Specifier(rawValue: $0) }

        /// Whether the specifier takes an integer argument (`%d %i %o %u %x %X` and modifiers).
        public var isInteger: Bool { kind == .integer }
        /// Whether the specifier takes a floating-point argument (`%f %e %g %a`, any case, and modifiers).
        public var isFloatingPoint: Bool { kind == .floatingPoint }

        /// The specifier as written.
        public var description: String { rawValue }
    }

    /// The conversion, e.g. `%@` or `%lld`.
    public var specifier: Specifier
    /// 0-based position among the placeholders in the source.
    public var index: Int

    /// A placeholder with its specifier and 0-based position among the placeholders.
    public init(_ specifier: Specifier, index: Int) {
        self.specifier = specifier
        self.index = index
    }
}
