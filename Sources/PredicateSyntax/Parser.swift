// Parser: tokens → SyntaxTree, predicate level; plus the public entry points.
//
// A hand-written recursive-descent parser over the token array. This file owns the predicate
// grammar (OR < AND < NOT < primary; comparisons with modifiers and options) and the shared
// machinery: token cursor, error construction, limits. Expressions are in
// Parser+Expressions.swift, literal decoding in Parser+Literals.swift.
//
//   predicate  := and (("OR" | "||") and)*
//   and        := not (("AND" | "&&") not)*
//   not        := ("NOT" | "!") not | primary
//   primary    := "TRUEPREDICATE" | "FALSEPREDICATE" | "(" predicate ")" | comparison
//   comparison := ["ANY" | "SOME" | "ALL" | "NONE"] expression operator ["[" letters "]"] expression
//
// A "(" at the start of a primary is a parenthesized predicate exactly when the tokens up to
// its matching ")" hold, outside any nested bracket, a token only predicates have (a
// comparison operator, AND/OR/NOT, a modifier, TRUEPREDICATE/FALSEPREDICATE), or when they are
// one parenthesized group that is itself such a predicate: `(a + 1) * 2 == 4` vs
// `(a == 1) AND b == 2` vs `((a == 1))`. Expressions never contain those tokens at their own
// level, so the decision is exact and needs no backtracking.

/// Parses NSPredicate format strings into `Predicate` trees.
///
/// ```swift
/// let p = try PredicateParser.parse("kind == 'cafe' AND rating >= 4")
/// print(p.formatString)   // kind == 'cafe' AND rating >= 4
/// ```
public enum PredicateParser {
    /// Parses a whole predicate. Any well-formed NSPredicate parses, whether CloudKit supports
    /// it or not; only malformed text (or text beyond `limits`) throws.
    public static func parse(_ text: String, limits: ParserLimits = .default) throws(SyntaxError) -> Predicate {
        try run(text, limits) { (p: inout Parser) throws -> Predicate in try p.parseWholePredicate() }
    }

    /// Parses a single expression, e.g. `distanceToLocation:fromLocation:(location, %@)`.
    public static func parseExpression(
        _ text: String, limits: ParserLimits = .default
    ) throws(SyntaxError) -> Expression {
        try run(text, limits) { (p: inout Parser) throws -> Expression in try p.parseWholeExpression() }
    }

    private static func run<T>(
        _ text: String, _ limits: ParserLimits, _ body: (inout Parser) throws -> T
    ) throws(SyntaxError) -> T {
        let length = text.utf8.count
        if length > limits.maxLength {
            throw SyntaxError(
                "predicate is too long (\(length) bytes; the limit is \(limits.maxLength))",
                range: SourceRange(limits.maxLength, length))
        }
        var text = text
        let result: Result<T, SyntaxError> = text.withUTF8 { buffer in
            // Inside the parser errors travel untyped (one register through every frame of the
            // recursion); only SyntaxError is ever thrown, and the type is restored here.
            do {
                var parser = try Parser(buffer, limits: limits)
                return .success(try body(&parser))
            } catch let error as SyntaxError {
                return .failure(error)
            } catch {
                return .failure(SyntaxError("internal error: \(error)", range: SourceRange(0, 0)))
            }
        }
        return try result.get()
    }
}

struct Parser {
    let src: UnsafeBufferPointer<UInt8>
    let tokens: [Token]
    let limits: ParserLimits
    /// Index of the current token; never past the final `.end`.
    var i = 0
    /// Current syntactic nesting (bounded by `limits.maxDepth`).
    var depth = 0
    /// Height of the node the last parse function returned (bounded by `limits.maxTreeHeight`).
    var height = 0
    /// Placeholders seen so far, to number them in source order.
    var placeholderCount = 0
    /// `isPredicateParen` answers, computed on first use.
    var predicateParens: [Bool]? = nil

    init(_ src: UnsafeBufferPointer<UInt8>, limits: ParserLimits) throws {
        self.src = src
        self.limits = limits
        self.tokens = try Lexer.tokenize(src)
    }

    // MARK: Token cursor

    var token: Token { tokens[i] }

    func kind(at j: Int) -> TokenKind { j < tokens.count ? tokens[j].kind : .end }

    @discardableResult
    mutating func advance() -> Token {
        let t = tokens[i]
        if i < tokens.count - 1 { i += 1 }
        return t
    }

    func isPunct(_ p: Punct) -> Bool { token.kind == .punct(p) }

    mutating func eat(_ p: Punct) -> Token? {
        isPunct(p) ? advance() : nil
    }

    /// The source text of a token (or of `start..<end`).
    func text(_ t: Token) -> String { text(t.start, t.end) }

    func text(_ start: Int, _ end: Int) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: src[start..<end]), as: UTF8.self)
    }

    /// The token's text shortened for messages.
    func shown(_ t: Token) -> String {
        let s = text(t)
        return s.unicodeScalars.count > 24 ? String(String.UnicodeScalarView(s.unicodeScalars.prefix(24))) + "…" : s
    }

    // MARK: Errors and limits

    /// "expected X, found 'y'", or "unexpected end of predicate" at the end.
    func expected(_ what: String, hint: String? = nil) -> SyntaxError {
        if token.kind == .end {
            return SyntaxError("unexpected end of predicate", range: token.range, hint: hint ?? "expected \(what)")
        }
        return SyntaxError("expected \(what), found '\(shown(token))'", range: token.range, hint: hint)
    }

    /// Consumes the closer of `open`, or reports which opener is left unclosed.
    @discardableResult
    mutating func expectClose(_ close: Punct, opening open: Token) throws -> Token {
        if let t = eat(close) { return t }
        throw unclosed(close, open)
    }

    @inline(never)
    func unclosed(_ close: Punct, _ open: Token) -> SyntaxError {
        let closer = close == .rightParen ? ")" : close == .rightBracket ? "]" : "}"
        let message = "expected '\(closer)' to close '\(text(open))' at \(open.start)"
        if token.kind == .end {
            return SyntaxError(message, range: token.range, hint: "the predicate ended first")
        }
        return SyntaxError(message, range: token.range, hint: "found '\(shown(token))'")
    }

    mutating func expect(_ p: Punct, _ what: String) throws {
        guard eat(p) != nil else { throw expected(what) }
    }

    mutating func enter(_ t: Token) throws {
        depth += 1
        if depth > limits.maxDepth {
            throw SyntaxError("nesting is too deep (the limit is \(limits.maxDepth))", range: t.range)
        }
    }

    mutating func leave() { depth -= 1 }

    /// Records the height of a node just built and enforces the limit.
    mutating func setHeight(_ h: Int, _ range: SourceRange) throws {
        if h > limits.maxTreeHeight {
            throw SyntaxError(
                "predicate is too complex (tree height over \(limits.maxTreeHeight))", range: range,
                hint: "use IN {…} instead of long OR chains, or split the query")
        }
        height = h
    }

    // MARK: Predicates

    mutating func parseWholePredicate() throws -> Predicate {
        if token.kind == .end {
            throw SyntaxError(
                "empty predicate", range: SourceRange(0, src.count), hint: "TRUEPREDICATE matches everything")
        }
        let p = try parsePredicate()
        if token.kind != .end {
            throw SyntaxError(
                "unexpected '\(shown(token))' after the end of the predicate", range: token.range,
                hint: "join predicates with AND or OR")
        }
        return p
    }

    mutating func parseWholeExpression() throws -> Expression {
        if token.kind == .end {
            throw SyntaxError("empty expression", range: SourceRange(0, src.count))
        }
        let e = try parseExpression()
        if token.kind != .end {
            throw SyntaxError("unexpected '\(shown(token))' after the end of the expression", range: token.range)
        }
        return e
    }

    /// OR level. (Loop bodies live in `parseJunctionRight` to keep this frame small.)
    mutating func parsePredicate() throws -> Predicate {
        var left = try parseAnd()
        while token.kind == .keyword(.or) || token.kind == .punct(.orOr) {
            left = try parseJunctionRight(or: true, left)
        }
        return left
    }

    mutating func parseAnd() throws -> Predicate {
        var left = try parseNot()
        while token.kind == .keyword(.and) || token.kind == .punct(.andAnd) {
            left = try parseJunctionRight(or: false, left)
        }
        return left
    }

    /// The AND/OR token and the right operand; the left operand's height is in `height`.
    mutating func parseJunctionRight(or: Bool, _ left: Predicate) throws -> Predicate {
        let h = height
        advance()
        let right = try or ? parseAnd() : parseNot()
        let range = left.range.union(right.range)
        try setHeight(Swift.max(h, height) + 1, range)
        return Predicate(or ? .or(left, right) : .and(left, right), range: range)
    }

    mutating func parseNot() throws -> Predicate {
        guard token.kind == .keyword(.not) || token.kind == .punct(.bang) else { return try parsePrimaryPredicate() }
        let t = advance()
        try enter(t)
        let inner = try parseNot()
        leave()
        let range = t.range.union(inner.range)
        try setHeight(height + 1, range)
        return Predicate(.not(inner), range: range)
    }

    mutating func parsePrimaryPredicate() throws -> Predicate {
        switch token.kind {
        case .keyword(.truePredicate):
            height = 1
            return Predicate(.truePredicate, range: advance().range)
        case .keyword(.falsePredicate):
            height = 1
            return Predicate(.falsePredicate, range: advance().range)
        case .punct(.leftParen) where isPredicateParen(i):
            let open = advance()
            try enter(open)
            var p = try parsePredicate()
            let close = try expectClose(.rightParen, opening: open)
            leave()
            p.range = open.range.union(close.range)
            return p
        default:
            return try parseComparison()
        }
    }

    /// Whether the "(" at token `open` starts a parenthesized predicate (see the file header).
    mutating func isPredicateParen(_ open: Int) -> Bool {
        if predicateParens == nil { predicateParens = Self.predicateParens(tokens) }
        return predicateParens?[open] ?? false
    }

    /// For every "(" token, whether it opens a parenthesized predicate. One pass over all
    /// tokens with a stack of open brackets, so nested parentheses cost O(tokens) in total.
    static func predicateParens(_ tokens: [Token]) -> [Bool] {
        struct Frame {
            var open: Int
            var sawPredicateToken = false
            var items = 0
            var firstIsParen = false
            var firstIsPredicate = false
        }
        var result = [Bool](repeating: false, count: tokens.count)
        var stack: [Frame] = []
        func finish(_ f: Frame) {
            let isPredicate = f.sawPredicateToken || (f.items == 1 && f.firstIsParen && f.firstIsPredicate)
            if tokens[f.open].kind == .punct(.leftParen) { result[f.open] = isPredicate }
            if !stack.isEmpty, stack[stack.count - 1].items == 1 {
                stack[stack.count - 1].firstIsPredicate = isPredicate
            }
        }
        for (j, t) in tokens.enumerated() {
            switch t.kind {
            case .punct(.leftParen), .punct(.leftBracket), .punct(.leftBrace):
                if !stack.isEmpty {
                    stack[stack.count - 1].items += 1
                    if stack[stack.count - 1].items == 1 {
                        stack[stack.count - 1].firstIsParen = t.kind == .punct(.leftParen)
                    }
                }
                stack.append(Frame(open: j))
            case .punct(.rightParen), .punct(.rightBracket), .punct(.rightBrace):
                if let f = stack.popLast() { finish(f) }
            case .end:
                break
            default:
                if !stack.isEmpty {
                    stack[stack.count - 1].items += 1
                    if onlyInPredicates(t.kind) { stack[stack.count - 1].sawPredicateToken = true }
                }
            }
        }
        while let f = stack.popLast() { finish(f) }
        return result
    }

    static func onlyInPredicates(_ k: TokenKind) -> Bool {
        switch k {
        case .punct(.equal), .punct(.notEqual), .punct(.less), .punct(.lessOrEqual), .punct(.greater),
            .punct(.greaterOrEqual), .punct(.andAnd), .punct(.orOr), .punct(.bang):
            return true
        case .keyword(let w):
            switch w {
            case .and, .or, .not, .any, .some, .all, .none, .truePredicate, .falsePredicate: return true
            default: return w.comparisonOperator != nil
            }
        default:
            return false
        }
    }

    static func comparisonOperator(_ k: TokenKind) -> ComparisonOperator? {
        switch k {
        case .punct(.equal): .equal
        case .punct(.notEqual): .notEqual
        case .punct(.less): .less
        case .punct(.lessOrEqual): .lessOrEqual
        case .punct(.greater): .greater
        case .punct(.greaterOrEqual): .greaterOrEqual
        case .keyword(let w): w.comparisonOperator
        default: nil
        }
    }

    mutating func parseComparison() throws -> Predicate {
        let start = token
        var modifier = ComparisonModifier.direct
        switch token.kind {
        case .keyword(.any), .keyword(.some): modifier = .any
        case .keyword(.all): modifier = .all
        case .keyword(.none): modifier = .none
        default: break
        }
        if modifier != .direct { advance() }
        let left = try parseExpression()
        let leftHeight = height
        let (op, options, operatorRange) = try parseOperatorAndOptions()
        let right = try parseExpression()
        let range = start.range.union(right.range)
        try setHeight(Swift.max(leftHeight, height) + 1, range)
        let comparison = Comparison(
            modifier: modifier, left: left, op: op, options: options, right: right, operatorRange: operatorRange)
        return Predicate(.comparison(comparison), range: range)
    }

    /// `==`, `CONTAINS[cd]`, …: the operator, its options and their range.
    mutating func parseOperatorAndOptions() throws -> (ComparisonOperator, ComparisonOptions, SourceRange) {
        let opToken = token
        guard let op = Self.comparisonOperator(opToken.kind) else {
            throw expected("a comparison operator", hint: "a predicate compares two expressions, e.g. name == 'x'")
        }
        advance()
        var options = ComparisonOptions()
        var operatorEnd = opToken.end
        if let open = eat(.leftBracket) {
            options = try parseOptions()
            operatorEnd = try expectClose(.rightBracket, opening: open).end
        }
        return (op, options, SourceRange(opToken.start, operatorEnd))
    }

    /// The letters of `[cdnl]` (any order and case; repeats allowed).
    mutating func parseOptions() throws -> ComparisonOptions {
        let word = token
        switch word.kind {
        case .identifier, .keyword: break
        default: throw expected("comparison options such as [cd]", hint: "options are c, d, n and l")
        }
        advance()
        var options = ComparisonOptions()
        var j = word.start
        while j < word.end {
            switch src[j] | 0x20 {
            case UInt8(ascii: "c"): options.insert(.caseInsensitive)
            case UInt8(ascii: "d"): options.insert(.diacriticInsensitive)
            case UInt8(ascii: "n"): options.insert(.normalized)
            case UInt8(ascii: "l"): options.insert(.localeSensitive)
            default:
                var end = j + 1
                while end < word.end, src[end] & 0xC0 == 0x80 { end += 1 }
                throw SyntaxError(
                    "unknown comparison option '\(text(j, end))'", range: SourceRange(j, end),
                    hint:
                        "options are c (case-insensitive), d (diacritic-insensitive), n (normalized), l "
                        + "(locale-sensitive)"
                )
            }
            j += 1
        }
        return options
    }
}
