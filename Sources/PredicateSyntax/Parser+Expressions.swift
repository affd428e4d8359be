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
    mutating func parseExpression() throws(SyntaxError) -> Expression {
        var left = try parseTerm()
        var h = height
        while true {
            let op: ArithmeticOperator
            switch token.kind {
            case .punct(.plus): op = .add
            case .punct(.minus): op = .subtract
            default: height = h; return left
            }
            advance()
            let right = try parseTerm()
            let range = left.range.union(right.range)
            try setHeight(Swift.max(h, height) + 1, range)
            h = height
            left = Expression(.arithmetic(op, left, right), range: range)
        }
    }

    mutating func parseTerm() throws(SyntaxError) -> Expression {
        var left = try parseUnary()
        var h = height
        while true {
            let op: ArithmeticOperator
            switch token.kind {
            case .punct(.star): op = .multiply
            case .punct(.slash): op = .divide
            default: height = h; return left
            }
            advance()
            let right = try parseUnary()
            let range = left.range.union(right.range)
            try setHeight(Swift.max(h, height) + 1, range)
            h = height
            left = Expression(.arithmetic(op, left, right), range: range)
        }
    }

    mutating func parseUnary() throws(SyntaxError) -> Expression {
        guard isPunct(.minus) else { return try parsePower() }
        let minus = advance()
        if token.kind == .number {
            switch kind(at: i + 1) {
            case .punct(.dot), .punct(.leftBracket), .punct(.power): break
            default:
                let number = advance()
                height = 1
                return Expression(.constant(try numberLiteral(number, negative: true)), range: minus.range.union(number.range))
            }
        }
        try enter(minus)
        let operand = try parseUnary()
        leave()
        let range = minus.range.union(operand.range)
        try setHeight(height + 1, range)
        return Expression(.negate(operand), range: range)
    }

    mutating func parsePower() throws(SyntaxError) -> Expression {
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

    mutating func parsePostfix() throws(SyntaxError) -> Expression {
        var e = try parsePrimary()
        var h = height
        while true {
            if eat(.dot) != nil {
                let (name, end) = try parseMemberName()
                let range = e.range.union(SourceRange(end, end))
                try setHeight(h + 1, range)
                e = Expression(.member(e, name), range: range)
            } else if let open = eat(.leftBracket) {
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
                let range = e.range.union(close.range)
                try setHeight(Swift.max(h, subHeight) + 1, range)
                e = Expression(.subscripted(e, sub), range: range)
            } else {
                height = h
                return e
            }
            h = height
        }
    }

    /// After `.`: `name`, `#name` or `@name`; returns the name and the end offset.
    mutating func parseMemberName() throws(SyntaxError) -> (String, Int) {
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
    mutating func parseCollectionOperatorWord() throws(SyntaxError) -> Token {
        switch token.kind {
        case .identifier, .keyword: return advance()
        default: throw expected("a collection operator name after '@'", hint: "e.g. @count, @sum, @avg, @min, @max")
        }
    }

    func reservedWord(_ t: Token) -> SyntaxError {
        SyntaxError("'\(text(t))' is a reserved word", range: t.range, hint: "write #\(text(t)) to use it as a key")
    }

    mutating func parsePrimary() throws(SyntaxError) -> Expression {
        let t = token
        func leaf(_ kind: Expression.Kind) -> Expression {
            advance()
            height = 1
            return Expression(kind, range: t.range)
        }
        switch t.kind {
        case .number:
            return leaf(.constant(try numberLiteral(t, negative: false)))
        case .string(let plain):
            return leaf(.constant(.string(try stringValue(t, plain: plain))))
        case .identifier:
            switch kind(at: i + 1) {
            case .punct(.leftParen):
                advance()
                return try parseCall(name: text(t), start: t)
            case .punct(.colon):
                return try parseSelectorCall()
            default:
                return leaf(.key(text(t)))
            }
        case .escapedKey:
            return leaf(.key(text(t.start + 1, t.end)))
        case .variable:
            return leaf(.variable(text(t.start + 1, t.end)))
        case .placeholder(let spec):
            placeholderCount += 1
            return leaf(.placeholder(Placeholder(spec, index: placeholderCount - 1)))
        case .punct(.at):
            advance()
            let word = try parseCollectionOperatorWord()
            height = 1
            return Expression(.key("@" + text(word)), range: t.range.union(word.range))
        case .punct(.leftBrace):
            let open = advance()
            let (elements, h, close) = try parseList(opening: open, closer: .rightBrace, what: "aggregate")
            let range = open.range.union(close.range)
            try setHeight(h + 1, range)
            return Expression(.aggregate(elements), range: range)
        case .punct(.leftParen):
            let open = advance()
            try enter(open)
            var e = try parseExpression()
            let close = try expectClose(.rightParen, opening: open)
            leave()
            e.range = open.range.union(close.range)
            return e
        case .keyword(let w):
            switch w {
            case .true, .yes: return leaf(.constant(.boolean(true)))
            case .false, .no: return leaf(.constant(.boolean(false)))
            case .null, .nil: return leaf(.constant(.null))
            case .self: return leaf(.evaluatedObject)
            case .anyKey: return leaf(.anyKey)
            case .subquery, .ternary, .function, .cast: return try parseSpecialForm(w)
            case .first, .last, .size, .ci, .caseInsensitive: throw reservedWord(t)
            default: throw expected("an expression", hint: "write #\(text(t)) to use it as a key")
            }
        default:
            throw expected("an expression")
        }
    }

    /// `name(args…)`; the current token is the "(".
    mutating func parseCall(name: String, start: Token) throws(SyntaxError) -> Expression {
        let open = advance()
        let (arguments, h, close) = try parseList(opening: open, closer: .rightParen, what: "argument list")
        let range = start.range.union(close.range)
        try setHeight(h + 1, range)
        return Expression(.function(name: name, arguments: arguments), range: range)
    }

    /// `part:part:(args…)`: the name keeps its colons, e.g. `distanceToLocation:fromLocation:`.
    mutating func parseSelectorCall() throws(SyntaxError) -> Expression {
        let start = token
        var name = ""
        while token.kind == .identifier, kind(at: i + 1) == .punct(.colon) {
            name += text(advance()) + ":"
            advance()
        }
        guard isPunct(.leftParen) else {
            throw expected("'(' after the function name '\(name)'", hint: "e.g. distanceToLocation:fromLocation:(location, %@)")
        }
        return try parseCall(name: name, start: start)
    }

    /// Elements up to `closer`, comma-separated, possibly none. Returns them, their greatest
    /// height and the closing token.
    mutating func parseList(opening open: Token, closer: Punct, what: String) throws(SyntaxError) -> ([Expression], Int, Token) {
        try enter(open)
        var elements: [Expression] = []
        var h = 0
        if let close = eat(closer) {
            leave()
            return (elements, h, close)
        }
        while true {
            if elements.count == limits.maxAggregateCount {
                throw SyntaxError("\(what) has more than \(limits.maxAggregateCount) elements", range: token.range)
            }
            elements.append(try parseExpression())
            h = Swift.max(h, height)
            if eat(.comma) == nil { break }
        }
        let close = try expectClose(closer, opening: open)
        leave()
        return (elements, h, close)
    }

    /// SUBQUERY, TERNARY, FUNCTION and CAST: fixed shapes with a predicate or a name inside.
    mutating func parseSpecialForm(_ w: Keyword) throws(SyntaxError) -> Expression {
        let start = advance()
        let name = w.spelling
        guard let open = eat(.leftParen) else { throw expected("'(' after \(name)") }
        try enter(open)
        let kind: Expression.Kind
        var h = 0
        switch w {
        case .subquery:
            let collection = try parseExpression()
            h = height
            try expect(.comma, "',' after the collection of SUBQUERY")
            guard token.kind == .variable else {
                throw expected("a variable such as $x as the second argument of SUBQUERY")
            }
            let variable = text(token.start + 1, token.end)
            advance()
            try expect(.comma, "',' after the variable of SUBQUERY")
            let predicate = try parsePredicate()
            kind = .subquery(collection: collection, variable: variable, predicate: predicate)
        case .ternary:
            let condition = try parsePredicate()
            h = height
            try expect(.comma, "',' after the condition of TERNARY")
            let a = try parseExpression()
            h = Swift.max(h, height)
            try expect(.comma, "',' between the two values of TERNARY")
            let b = try parseExpression()
            kind = .ternary(condition, a, b)
        case .function:
            let target = try parseExpression()
            h = height
            try expect(.comma, "',' after the target of FUNCTION")
            guard case .string(let plain) = token.kind else {
                throw expected("the selector name as a quoted string", hint: "e.g. FUNCTION(name, 'uppercaseString')")
            }
            let selector = try stringValue(token, plain: plain)
            advance()
            var arguments: [Expression] = []
            while eat(.comma) != nil {
                if arguments.count == limits.maxAggregateCount {
                    throw SyntaxError("argument list has more than \(limits.maxAggregateCount) elements", range: token.range)
                }
                arguments.append(try parseExpression())
                h = Swift.max(h, height)
            }
            kind = .functionExpression(target: target, selector: selector, arguments: arguments)
        default:  // .cast
            let value = try parseExpression()
            h = height
            try expect(.comma, "',' after the value of CAST")
            let type = try parseExpression()
            kind = .cast(value, type)
        }
        h = Swift.max(h, height)
        let close = try expectClose(.rightParen, opening: open)
        leave()
        let range = start.range.union(close.range)
        try setHeight(h + 1, range)
        return Expression(kind, range: range)
    }
}
