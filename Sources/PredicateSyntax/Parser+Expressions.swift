// Parser+Expressions: the expression grammar.
//
// Owns arithmetic precedence, unary minus and its folding into number literals, postfix member
// access and subscripts, and every primary form (literals, keys, variables, placeholders,
// aggregates, function calls in all their spellings, SUBQUERY, TERNARY, FUNCTION, CAST).
//
//   expression := term (("+" | "-") term)*
//   term       := unary (("*" | "/") unary)*
//   unary      := "-" unary | power          -- "-" then a lone number folds: `-5` is integer(-5)
//   power      := postfix ["**" unary]       -- right-associative: a ** b ** c = a ** (b ** c)
//   postfix    := primary ("." member | "[" (FIRST | LAST | SIZE | expression) "]")*
//   member     := word | "#"word | "@"word
//
// "A lone number" means the token after the number is not `.`, `[` or `**`: `-5 ** 2` is
// negate(5 ** 2), `-5.x` is negate(5.x), while `-5 * 2` is integer(-5) * 2. The printer writes
// negate(number) as `-(5)` so the two never meet.

extension Parser {
    // The loops below keep their bodies in separate functions so the frames on the recursion
    // path stay small (debug builds give every local of a function its own stack slot).

    mutating func parseExpression() throws -> Expression {
        var left = try parseTerm()
        while true {
            switch token.kind {
            case .punct(.plus): left = try parseArithmeticRight(.add, left)
            case .punct(.minus): left = try parseArithmeticRight(.subtract, left)
            default: return left
            }
        }
    }

    mutating func parseTerm() throws -> Expression {
        var left = try parseUnary()
        while true {
            switch token.kind {
            case .punct(.star): left = try parseArithmeticRight(.multiply, left)
            case .punct(.slash): left = try parseArithmeticRight(.divide, left)
            default: return left
            }
        }
    }

    /// The operator token and the right operand of a left-associative `+ - * /`; the left
    /// operand's height is in `height`.
    mutating func parseArithmeticRight(_ op: ArithmeticOperator, _ left: Expression) throws -> Expression {
        let h = height
        advance()
        let right = try op == .add || op == .subtract ? parseTerm() : parseUnary()
        let range = left.range.union(right.range)
        try setHeight(Swift.max(h, height) + 1, range)
        return Expression(.arithmetic(op, left, right), range: range)
    }

    mutating func parseUnary() throws -> Expression {
        guard isPunct(.minus) else { return try parsePower() }
        if kind(at: i + 1) == .number {
            switch kind(at: i + 2) {
            case .punct(.dot), .punct(.leftBracket), .punct(.power): break
            default: return try parseNegativeNumber()
            }
        }
        return try parseNegation()
    }

    /// `-` and a lone number: one literal, e.g. `-5` is integer(-5). The folded minus counts a
    /// nesting level, as the `-(5)` the printer writes for negate(5) does: a tree never prints
    /// deeper than the source it came from.
    mutating func parseNegativeNumber() throws -> Expression {
        let minus = advance()
        try enter(minus)
        leave()
        let number = advance()
        height = 1
        return Expression(.constant(try numberLiteral(number, negative: true)), range: minus.range.union(number.range))
    }

    mutating func parseNegation() throws -> Expression {
        let minus = advance()
        try enter(minus)
        let operand = try parseUnary()
        leave()
        let range = minus.range.union(operand.range)
        try setHeight(height + 1, range)
        return Expression(.negate(operand), range: range)
    }

    mutating func parsePower() throws -> Expression {
        let base = try parsePostfix()
        guard isPunct(.power) else { return base }
        let baseHeight = height
        let op = advance()
        try enter(op)
        let exponent = try parseUnary()
        leave()
        let range = base.range.union(exponent.range)
        try setHeight(Swift.max(baseHeight, height) + 1, range)
        return Expression(.arithmetic(.power, base, exponent), range: range)
    }

    mutating func parsePostfix() throws -> Expression {
        var e = try parsePrimary()
        while true {
            if isPunct(.dot) {
                e = try parseMember(of: e)
            } else if isPunct(.leftBracket) {
                e = try parseSubscript(of: e)
            } else {
                return e
            }
        }
    }

    /// `.name` after `base` (whose height is in `height`).
    mutating func parseMember(of base: Expression) throws -> Expression {
        let h = height
        advance()
        let (name, end) = try parseMemberName()
        let range = base.range.union(SourceRange(end, end))
        try setHeight(h + 1, range)
        return Expression(.member(base, name), range: range)
    }

    /// `[FIRST]`, `[LAST]`, `[SIZE]` or `[expression]` after `base` (whose height is in `height`).
    mutating func parseSubscript(of base: Expression) throws -> Expression {
        let h = height
        let open = advance()
        try enter(open)
        let sub: Subscript
        var subHeight = 0
        switch (token.kind, kind(at: i + 1)) {
        case (.keyword(.first), .punct(.rightBracket)): sub = .first
        case (.keyword(.last), .punct(.rightBracket)): sub = .last
        case (.keyword(.size), .punct(.rightBracket)): sub = .size
        default:
            sub = .index(try parseExpression())
            subHeight = height
        }
        if case .index = sub {} else { advance() }
        let close = try expectClose(.rightBracket, opening: open)
        leave()
        let range = base.range.union(close.range)
        try setHeight(Swift.max(h, subHeight) + 1, range)
        return Expression(.subscripted(base, sub), range: range)
    }

    /// After `.`: `name`, `#name` or `@name`; returns the name and the end offset.
    mutating func parseMemberName() throws -> (String, Int) {
        let t = token
        switch t.kind {
        case .identifier:
            advance()
            return (text(t), t.end)
        case .escapedKey:
            advance()
            return (text(t.start + 1, t.end), t.end)
        case .punct(.at):
            advance()
            let word = try parseCollectionOperatorWord()
            return ("@" + text(word), word.end)
        case .keyword:
            throw reservedWord(t)
        default:
            throw expected("a key after '.'")
        }
    }

    /// The word after `@` (reserved words are fine there: `@size` is not a key).
    mutating func parseCollectionOperatorWord() throws -> Token {
        switch token.kind {
        case .identifier, .keyword: return advance()
        default: throw expected("a collection operator name after '@'", hint: "e.g. @count, @sum, @avg, @min, @max")
        }
    }

    func reservedWord(_ t: Token) -> SyntaxError {
        SyntaxError("'\(text(t))' is a reserved word", range: t.range, hint: "write #\(text(t)) to use it as a key")
    }

    // parsePrimary only dispatches: in debug builds a frame holds every local of every case,
    // and this function sits on the recursion path of every nesting level.
    mutating func parsePrimary() throws -> Expression {
        switch token.kind {
        case .number, .string, .escapedKey, .variable, .placeholder: return try parseLeaf()
        case .identifier: return try parseIdentifierPrimary()
        case .punct(.at): return try parseLeadingCollectionOperator()
        case .punct(.leftBrace): return try parseAggregate()
        case .punct(.leftParen): return try parseParenthesizedExpression()
        case .keyword(let w): return try parseKeywordPrimary(w)
        default: throw expected("an expression")
        }
    }

    mutating func parseLeaf() throws -> Expression {
        let t = advance()
        let kind: Expression.Kind
        switch t.kind {
        case .number: kind = .constant(try numberLiteral(t, negative: false))
        case .string(let plain): kind = .constant(.string(try stringValue(t, plain: plain)))
        case .escapedKey: kind = .key(text(t.start + 1, t.end))
        case .variable: kind = .variable(text(t.start + 1, t.end))
        case .placeholder(let spec):
            placeholderCount += 1
            kind = .placeholder(Placeholder(spec, index: placeholderCount - 1))
        default: kind = .anyKey  // unreachable: parsePrimary dispatches only the kinds above
        }
        height = 1
        return Expression(kind, range: t.range)
    }

    mutating func parseIdentifierPrimary() throws -> Expression {
        let t = token
        switch kind(at: i + 1) {
        case .punct(.leftParen):
            advance()
            return try parseCall(name: text(t), start: t)
        case .punct(.colon):
            return try parseSelectorCall()
        default:
            advance()
            height = 1
            return Expression(.key(text(t)), range: t.range)
        }
    }

    /// `@avg.price`: a key that is a collection operator.
    mutating func parseLeadingCollectionOperator() throws -> Expression {
        let at = advance()
        let word = try parseCollectionOperatorWord()
        height = 1
        return Expression(.key("@" + text(word)), range: at.range.union(word.range))
    }

    mutating func parseAggregate() throws -> Expression {
        let open = advance()
        let (elements, h, close) = try parseList(opening: open, closer: .rightBrace, what: "aggregate")
        let range = open.range.union(close.range)
        try setHeight(h + 1, range)
        return Expression(.aggregate(elements), range: range)
    }

    mutating func parseParenthesizedExpression() throws -> Expression {
        let open = advance()
        try enter(open)
        var e = try parseExpression()
        let close = try expectClose(.rightParen, opening: open)
        leave()
        e.range = open.range.union(close.range)
        return e
    }

    mutating func parseKeywordPrimary(_ w: Keyword) throws -> Expression {
        let kind: Expression.Kind
        switch w {
        case .true, .yes: kind = .constant(.boolean(true))
        case .false, .no: kind = .constant(.boolean(false))
        case .null, .nil: kind = .constant(.null)
        case .self: kind = .evaluatedObject
        case .anyKey: kind = .anyKey
        case .subquery, .ternary, .function, .cast: return try parseSpecialForm(w)
        case .first, .last, .size, .ci, .caseInsensitive: throw reservedWord(token)
        default: throw keywordInsteadOfExpression()
        }
        height = 1
        return Expression(kind, range: advance().range)
    }

    @inline(never)
    func keywordInsteadOfExpression() -> SyntaxError {
        expected("an expression", hint: "write #\(text(token)) to use it as a key")
    }

    /// `name(args…)`; the current token is the "(".
    mutating func parseCall(name: String, start: Token) throws -> Expression {
        let open = advance()
        let (arguments, h, close) = try parseList(opening: open, closer: .rightParen, what: "argument list")
        let range = start.range.union(close.range)
        try setHeight(h + 1, range)
        return Expression(.function(name: name, arguments: arguments), range: range)
    }

    /// `part:part:(args…)`: the name keeps its colons, e.g. `distanceToLocation:fromLocation:`.
    mutating func parseSelectorCall() throws -> Expression {
        let start = token
        var end = start.start
        var contiguous = true  // written without spaces: the name is one slice of the source
        var name = ""
        while token.kind == .identifier, kind(at: i + 1) == .punct(.colon) {
            let part = advance()
            let colon = advance()
            if contiguous, part.start != end || colon.start != part.end {
                contiguous = false
                name = text(start.start, end)
            }
            if !contiguous { name += text(part) + ":" }
            end = colon.end
        }
        if contiguous { name = text(start.start, end) }
        guard isPunct(.leftParen) else {
            throw expected(
                "'(' after the function name '\(name)'", hint: "e.g. distanceToLocation:fromLocation:(location, %@)")
        }
        return try parseCall(name: name, start: start)
    }

    /// Elements up to `closer`, comma-separated, possibly none. Returns them, their greatest
    /// height and the closing token.
    mutating func parseList(opening open: Token, closer: Punct, what: String) throws -> ([Expression], Int, Token) {
        try enter(open)
        var elements: [Expression] = []
        var h = 0
        if let close = eat(closer) {
            leave()
            return (elements, h, close)
        }
        while true {
            if elements.count == limits.maxAggregateCount { throw tooManyElements(what) }
            elements.append(try parseExpression())
            h = Swift.max(h, height)
            if eat(.comma) == nil { break }
        }
        let close = try expectClose(closer, opening: open)
        leave()
        return (elements, h, close)
    }

    /// SUBQUERY, TERNARY, FUNCTION and CAST: fixed shapes with a predicate or a name inside.
    mutating func parseSpecialForm(_ w: Keyword) throws -> Expression {
        let start = advance()
        guard let open = eat(.leftParen) else { throw expected("'(' after \(w.spelling)") }
        try enter(open)
        let (kind, h) =
            switch w {
            case .subquery: try parseSubqueryBody()
            case .ternary: try parseTernaryBody()
            case .function: try parseFunctionBody()
            default: try parseCastBody()
            }
        let close = try expectClose(.rightParen, opening: open)
        leave()
        let range = start.range.union(close.range)
        try setHeight(h + 1, range)
        return Expression(kind, range: range)
    }

    /// `collection, $variable, predicate` — returns the node and its children's greatest height.
    mutating func parseSubqueryBody() throws -> (Expression.Kind, Int) {
        let collection = try parseExpression()
        var h = height
        try expect(.comma, "',' after the collection of SUBQUERY")
        guard token.kind == .variable else {
            throw expected("a variable such as $x as the second argument of SUBQUERY")
        }
        let variable = text(token.start + 1, token.end)
        advance()
        try expect(.comma, "',' after the variable of SUBQUERY")
        let predicate = try parsePredicate()
        h = Swift.max(h, height)
        return (.subquery(collection: collection, variable: variable, predicate: predicate), h)
    }

    mutating func parseTernaryBody() throws -> (Expression.Kind, Int) {
        let condition = try parsePredicate()
        var h = height
        try expect(.comma, "',' after the condition of TERNARY")
        let a = try parseExpression()
        h = Swift.max(h, height)
        try expect(.comma, "',' between the two values of TERNARY")
        let b = try parseExpression()
        h = Swift.max(h, height)
        return (.ternary(condition, a, b), h)
    }

    mutating func parseFunctionBody() throws -> (Expression.Kind, Int) {
        let target = try parseExpression()
        var h = height
        try expect(.comma, "',' after the target of FUNCTION")
        guard case .string(let plain) = token.kind else {
            throw expected("the selector name as a quoted string", hint: "e.g. FUNCTION(name, 'uppercaseString')")
        }
        let selector = try stringValue(token, plain: plain)
        advance()
        var arguments: [Expression] = []
        while eat(.comma) != nil {
            if arguments.count == limits.maxAggregateCount { throw tooManyElements("argument list") }
            arguments.append(try parseExpression())
            h = Swift.max(h, height)
        }
        return (.functionExpression(target: target, selector: selector, arguments: arguments), h)
    }

    mutating func parseCastBody() throws -> (Expression.Kind, Int) {
        let value = try parseExpression()
        var h = height
        try expect(.comma, "',' after the value of CAST")
        let type = try parseExpression()
        h = Swift.max(h, height)
        return (.cast(value, type), h)
    }

    @inline(never)
    func tooManyElements(_ what: String) -> SyntaxError {
        SyntaxError("\(what) has more than \(limits.maxAggregateCount) elements", range: token.range)
    }
}
