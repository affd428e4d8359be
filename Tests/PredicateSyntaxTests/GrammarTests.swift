// Grammar tests: each literal form, operator spelling, option, modifier, precedence rule and
// function form parses to the expected tree and prints canonically.

import Testing

@testable import PredicateSyntax

@Suite struct LiteralTests {
    @Test func integers() throws {
        #expect(try parseExpr("42") == int(42))
        #expect(try parseExpr("007") == int(7))
        #expect(try parseExpr("0x1F") == int(31))
        #expect(try parseExpr("0XfF") == int(255))
        #expect(try parseExpr("0o17") == int(15))
        #expect(try parseExpr("0b101") == int(5))
        #expect(try parseExpr("9223372036854775807") == int(.max))
        #expect(try parseExpr("-9223372036854775808") == int(.min))
        #expect(try parseExpr("-0x10") == int(-16))
    }

    @Test func integerOverflowBecomesDouble() throws {
        #expect(try parseExpr("9223372036854775808") == dbl(9223372036854775808.0))
        #expect(try parseExpr("-9223372036854775809") == dbl(-9223372036854775809.0))
        #expect(try parseExpr("99999999999999999999") == dbl(1e20))
        #expect(try parseExpr("0xFFFFFFFFFFFFFFFFFF") == dbl(4722366482869645213695.0))
    }

    @Test func doubles() throws {
        #expect(try parseExpr("1.5") == dbl(1.5))
        #expect(try parseExpr(".5") == dbl(0.5))
        #expect(try parseExpr("2e3") == dbl(2000))
        #expect(try parseExpr("2E+3") == dbl(2000))
        #expect(try parseExpr("1e-7") == dbl(1e-7))
        #expect(try parseExpr("5.0") == dbl(5))
        #expect(try parseExpr("-1.25") == dbl(-1.25))
        #expect(try parseExpr("1e-400") == dbl(0))
    }

    @Test func numbersPrintSoTheyReadBackAsTheSameCase() throws {
        #expect(try canon("a == 1e20") == "a == 1e+20")
        #expect(try canon("a == 5.0") == "a == 5.0")
        #expect(try canon("a == 0x10") == "a == 16")
        #expect(try canon("a == -5") == "a == -5")
        #expect(try canon("a == 1e-7") == "a == 1e-07")
        #expect(try parse("a == 1e+20") == cmp(k("a"), .equal, dbl(1e20)))
    }

    @Test func strings() throws {
        #expect(try parseExpr("'abc'") == str("abc"))
        #expect(try parseExpr("\"abc\"") == str("abc"))
        #expect(try parseExpr("'say \"hi\"'") == str("say \"hi\""))
        #expect(try parseExpr("\"it's\"") == str("it's"))
        #expect(try parseExpr(#"'a\nb\tc\rd\0e'"#) == str("a\nb\tc\rd\0e"))
        #expect(try parseExpr(#"'\'\"\\'"#) == str("'\"\\"))
        #expect(try parseExpr(#"'\u00e9\u00C9'"#) == str("éÉ"))
        #expect(try parseExpr(#"'\uD83D\uDE00'"#) == str("😀"))
        #expect(try parseExpr("'héllo 😀'") == str("héllo 😀"))
        #expect(try parseExpr("''") == str(""))
    }

    @Test func percentInsideQuotes() throws {
        #expect(try parseExpr("'%@'") == str("%@"))
        #expect(try parseExpr("'%%'") == str("%"))
        #expect(try parseExpr("'100%'") == str("100%"))
        #expect(try parseExpr("'%%@ %K'") == str("%@ %K"))
        #expect(try canon("a == '50% %@'") == "a == '50%% %%@'")
    }

    @Test func stringsPrintSingleQuotedWithEscapes() throws {
        #expect(try canon(#"a == "it's \\ \n""#) == #"a == 'it\'s \\ \n'"#)
        #expect(try canon(#"a == '\u0001\u007f\t'"#) == #"a == '\u0001\u007f\t'"#)
        #expect(try canon(#"a == '\0'"#) == #"a == '\u0000'"#)
    }

    @Test func keywordLiterals() throws {
        #expect(try parseExpr("TRUE") == lit(.boolean(true)))
        #expect(try parseExpr("yes") == lit(.boolean(true)))
        #expect(try parseExpr("False") == lit(.boolean(false)))
        #expect(try parseExpr("NO") == lit(.boolean(false)))
        #expect(try parseExpr("null") == lit(.null))
        #expect(try parseExpr("NIL") == lit(.null))
        #expect(try parseExpr("self") == Expression(.evaluatedObject))
        #expect(try parseExpr("ANYKEY") == Expression(.anyKey))
        #expect(try canon("a == yes AND b == nil AND self == no") == "a == TRUE AND b == NULL AND SELF == FALSE")
    }

    @Test func aggregates() throws {
        #expect(try parseExpr("{}") == agg())
        #expect(try parseExpr("{1, 'a', {2}}") == agg(int(1), str("a"), agg(int(2))))
        #expect(try canon("a IN {1,2 ,3}") == "a IN {1, 2, 3}")
    }
}

@Suite struct OperatorTests {
    @Test(arguments: [
        ("=", ComparisonOperator.equal), ("==", .equal), ("!=", .notEqual), ("<>", .notEqual), ("<", .less),
        ("<=", .lessOrEqual), ("=<", .lessOrEqual), (">", .greater), (">=", .greaterOrEqual), ("=>", .greaterOrEqual),
        ("BETWEEN", .between), ("in", .in), ("Contains", .contains), ("BEGINSWITH", .beginsWith),
        ("endswith", .endsWith), ("LIKE", .like), ("MATCHES", .matches), ("TOKENMATCHES", .tokenMatches),
        ("UTI-CONFORMS-TO", .utiConformsTo), ("uti-equals", .utiEquals),
    ])
    func comparisonSpelling(spelling: String, op: ComparisonOperator) throws {
        let p = try parse("a \(spelling) b")
        #expect(p == cmp(k("a"), op, k("b")))
        #expect(p.formatString == "a \(op.spelling) b")
    }

    @Test func operatorsWithoutSpaces() throws {
        #expect(try parse("a=-1") == cmp(k("a"), .equal, int(-1)))
        #expect(try parse("a<>b") == cmp(k("a"), .notEqual, k("b")))
        #expect(try parse("a=<b") == cmp(k("a"), .lessOrEqual, k("b")))
        #expect(try parse("a=>b") == cmp(k("a"), .greaterOrEqual, k("b")))
    }

    @Test func utiNeedsItsHyphensAttached() throws {
        // With spaces it is arithmetic on keys `uti` and `equals`.
        #expect(try parse("uti - equals == 1") == cmp(arith(.subtract, k("uti"), k("equals")), .equal, int(1)))
    }

    @Test(arguments: ["c", "d", "n", "l", "cd", "dc", "cdl", "CD", "cdnl", "cc"])
    func options(letters: String) throws {
        let p = try parse("a CONTAINS[\(letters)] 'x'")
        guard case .comparison(let c) = p.kind else { Issue.record("not a comparison"); return }
        var expected = ComparisonOptions()
        for ch in letters.lowercased() {
            expected.insert(
                ["c": .caseInsensitive, "d": .diacriticInsensitive, "n": .normalized, "l": .localeSensitive][ch]!)
        }
        #expect(c.options == expected)
        #expect(p.formatString == "a CONTAINS[\(expected.letters)] 'x'")
    }

    @Test func optionsOnSymbolicOperatorsAndTheirRange() throws {
        let p = try parse("a ==[cd] 'x'")
        guard case .comparison(let c) = p.kind else { Issue.record("not a comparison"); return }
        #expect(c.options == [.caseInsensitive, .diacriticInsensitive])
        #expect(c.operatorRange == SourceRange(2, 8))
        #expect(try canon("a LIKE [c] 'x'") == "a LIKE[c] 'x'")
    }

    @Test func modifiers() throws {
        #expect(try parse("ANY a == 1") == cmp(k("a"), .equal, int(1), modifier: .any))
        #expect(try parse("some a == 1") == cmp(k("a"), .equal, int(1), modifier: .any))
        #expect(try parse("ALL a > 1") == cmp(k("a"), .greater, int(1), modifier: .all))
        #expect(try parse("NONE a < 1") == cmp(k("a"), .less, int(1), modifier: .none))
        #expect(try canon("SOME tags IN {'a'}") == "ANY tags IN {'a'}")
        #expect(try canon("NOT ANY a == 1") == "NOT ANY a == 1")
    }

    @Test func compoundSpellings() throws {
        #expect(try parse("a == 1 && b == 2") == and(eq("a", 1), eq("b", 2)))
        #expect(try parse("a == 1 || b == 2") == or(eq("a", 1), eq("b", 2)))
        #expect(try parse("!a == 1") == not(eq("a", 1)))
        #expect(try canon("a == 1 and b == 2 or not c == 3") == "a == 1 AND b == 2 OR NOT c == 3")
    }

    @Test func constantPredicates() throws {
        #expect(try parse("TRUEPREDICATE") == Predicate(.truePredicate))
        #expect(try parse("falsepredicate") == Predicate(.falsePredicate))
        #expect(
            try parse("TRUEPREDICATE AND NOT FALSEPREDICATE")
                == and(Predicate(.truePredicate), not(Predicate(.falsePredicate))))
    }
}

@Suite struct PrecedenceTests {
    @Test func notBindsTighterThanAndTighterThanOr() throws {
        let p = try parse("a == 1 OR b == 2 AND NOT c == 3")
        #expect(p == or(eq("a", 1), and(eq("b", 2), not(eq("c", 3)))))
        #expect(p.formatString == "a == 1 OR b == 2 AND NOT c == 3")
    }

    @Test func andAndOrAreLeftAssociative() throws {
        #expect(try parse("a == 1 AND b == 2 AND c == 3") == and(and(eq("a", 1), eq("b", 2)), eq("c", 3)))
        #expect(try parse("a == 1 OR b == 2 OR c == 3") == or(or(eq("a", 1), eq("b", 2)), eq("c", 3)))
        #expect(try canon("a == 1 AND (b == 2 AND c == 3)") == "a == 1 AND (b == 2 AND c == 3)")
        #expect(try canon("(a == 1 AND b == 2) AND c == 3") == "a == 1 AND b == 2 AND c == 3")
    }

    @Test func parenthesesOverridePrecedence() throws {
        #expect(try parse("(a == 1 OR b == 2) AND c == 3") == and(or(eq("a", 1), eq("b", 2)), eq("c", 3)))
        #expect(try parse("NOT (a == 1 AND b == 2)") == not(and(eq("a", 1), eq("b", 2))))
        #expect(try canon("NOT (a == 1 AND b == 2)") == "NOT (a == 1 AND b == 2)")
        #expect(try canon("((a == 1))") == "a == 1")
        #expect(try canon("NOT NOT a == 1") == "NOT NOT a == 1")
    }

    @Test func parenthesizedExpressionVersusPredicate() throws {
        #expect(
            try parse("(a + 1) * 2 == 4") == cmp(arith(.multiply, arith(.add, k("a"), int(1)), int(2)), .equal, int(4)))
        #expect(try parse("(a == 1) AND b == 2") == and(eq("a", 1), eq("b", 2)))
        #expect(try parse("(a) == 1") == eq("a", 1))
        #expect(try parse("((a)) == 1") == eq("a", 1))
        #expect(try parse("((a == 1) AND (b) == 2)") == and(eq("a", 1), eq("b", 2)))
        #expect(try parse("({1, 2}) CONTAINS a") == cmp(agg(int(1), int(2)), .contains, k("a")))
        #expect(
            try parse("(SUBQUERY(x, $y, $y == 1).@count) > 0").formatString == "SUBQUERY(x, $y, $y == 1).@count > 0")
    }

    @Test func arithmeticPrecedence() throws {
        #expect(try parseExpr("1 + 2 * 3") == arith(.add, int(1), arith(.multiply, int(2), int(3))))
        #expect(try parseExpr("1 - 2 - 3") == arith(.subtract, arith(.subtract, int(1), int(2)), int(3)))
        #expect(try parseExpr("8 / 4 / 2") == arith(.divide, arith(.divide, int(8), int(4)), int(2)))
        #expect(try parseExpr("2 ** 3 ** 2") == arith(.power, int(2), arith(.power, int(3), int(2))))
        #expect(try parseExpr("2 * 3 ** 2") == arith(.multiply, int(2), arith(.power, int(3), int(2))))
        #expect(try parseExpr("(1 + 2) * 3").formatString == "(1 + 2) * 3")
        #expect(try parseExpr("1 - (2 - 3)").formatString == "1 - (2 - 3)")
        #expect(try parseExpr("(2 ** 3) ** 2").formatString == "(2 ** 3) ** 2")
    }

    @Test func unaryMinus() throws {
        #expect(try parseExpr("-5") == int(-5))
        #expect(try parseExpr("- 5") == int(-5))
        #expect(try parseExpr("-a") == Expression(.negate(k("a"))))
        #expect(try parseExpr("-(5)") == Expression(.negate(int(5))))
        #expect(try parseExpr("-2 ** 2") == Expression(.negate(arith(.power, int(2), int(2)))))
        #expect(try parseExpr("-5 * 2") == arith(.multiply, int(-5), int(2)))
        #expect(try parseExpr("2 ** -1") == arith(.power, int(2), int(-1)))
        #expect(try parseExpr("a - -1") == arith(.subtract, k("a"), int(-1)))
        #expect(try parseExpr("--a") == Expression(.negate(Expression(.negate(k("a"))))))
        #expect(try parseExpr("-a * b") == arith(.multiply, Expression(.negate(k("a"))), k("b")))
        #expect(Expression(.negate(int(5))).formatString == "-(5)")
        #expect(arith(.power, int(-2), int(2)).formatString == "(-2) ** 2")
        #expect(member(int(-2), "x").formatString == "(-2).x")
    }
}

@Suite struct ExpressionFormTests {
    @Test func keyPathsAndCollectionOperators() throws {
        #expect(try parseExpr("a.b.c") == member(member(k("a"), "b"), "c"))
        #expect(try parseExpr("tags.@count") == member(k("tags"), "@count"))
        #expect(try parseExpr("@avg.price") == member(k("@avg"), "price"))
        #expect(
            try parseExpr("items.@distinctUnionOfObjects.name")
                == member(member(k("items"), "@distinctUnionOfObjects"), "name"))
        #expect(try canon("tags.@count > 2 AND @sum.x == 1") == "tags.@count > 2 AND @sum.x == 1")
        #expect(try parseExpr("SELF.name") == member(Expression(.evaluatedObject), "name"))
        #expect(try parseExpr("$x.name") == member(Expression(.variable("x")), "name"))
    }

    @Test func subscripts() throws {
        #expect(try parseExpr("a[0]") == Expression(.subscripted(k("a"), .index(int(0)))))
        #expect(try parseExpr("a[first]") == Expression(.subscripted(k("a"), .first)))
        #expect(try parseExpr("a[LAST]") == Expression(.subscripted(k("a"), .last)))
        #expect(try parseExpr("a[Size]") == Expression(.subscripted(k("a"), .size)))
        #expect(try parseExpr("a[#size]") == Expression(.subscripted(k("a"), .index(k("size")))))
        #expect(
            try parseExpr("a[i + 1].b")
                == member(Expression(.subscripted(k("a"), .index(arith(.add, k("i"), int(1))))), "b"))
        #expect(try parseExpr("a[#size]").formatString == "a[#size]")
    }

    @Test func functionCalls() throws {
        #expect(try parseExpr("now()") == fn("now"))
        #expect(try parseExpr("tokenize(s, 'Cdl')") == fn("tokenize", k("s"), str("Cdl")))
        #expect(try parseExpr("sum:({1,2})") == fn("sum:", agg(int(1), int(2))))
        #expect(
            try parseExpr("distanceToLocation:fromLocation:(location, %@)")
                == fn("distanceToLocation:fromLocation:", k("location"), ph(.object, 0)))
        #expect(
            try parseExpr("distanceToLocation: fromLocation: (location, %@)").formatString
                == "distanceToLocation:fromLocation:(location, %@)")
        #expect(try parseExpr("a:b :c: d:(1)") == fn("a:b:c:d:", int(1)))
        #expect(try parseExpr("a:b:c :d:(1)") == fn("a:b:c:d:", int(1)))
        #expect(
            try canon("distanceToLocation:fromLocation:(location,%@) < 5")
                == "distanceToLocation:fromLocation:(location, %@) < 5")
    }

    @Test func functionExpression() throws {
        #expect(
            try parseExpr("FUNCTION(name, 'uppercaseString')")
                == Expression(.functionExpression(target: k("name"), selector: "uppercaseString", arguments: [])))
        #expect(
            try parseExpr("function(SELF, 'x:y:', 1, 'a')")
                == Expression(
                    .functionExpression(
                        target: Expression(.evaluatedObject), selector: "x:y:", arguments: [int(1), str("a")])))
        #expect(try parseExpr("FUNCTION(a, \"s\", 1)").formatString == "FUNCTION(a, 's', 1)")
    }

    @Test func cast() throws {
        #expect(try parseExpr("CAST(x, 'NSDate')") == Expression(.cast(k("x"), str("NSDate"))))
        #expect(try parseExpr("cast(123.5, \"NSDate\")").formatString == "CAST(123.5, 'NSDate')")
    }

    @Test func subquery() throws {
        let e = try parseExpr("SUBQUERY(items, $i, $i.price > 5 AND $i.qty == 1).@count")
        let inner = and(
            cmp(member(Expression(.variable("i")), "price"), .greater, int(5)),
            cmp(member(Expression(.variable("i")), "qty"), .equal, int(1)))
        #expect(e == member(Expression(.subquery(collection: k("items"), variable: "i", predicate: inner)), "@count"))
        #expect(e.formatString == "SUBQUERY(items, $i, $i.price > 5 AND $i.qty == 1).@count")
    }

    @Test func ternary() throws {
        let e = try parseExpr("TERNARY(a == 1, 'x', b + 1)")
        #expect(e == Expression(.ternary(eq("a", 1), str("x"), arith(.add, k("b"), int(1)))))
        #expect(e.formatString == "TERNARY(a == 1, 'x', b + 1)")
    }

    @Test func hashEscapesReservedWordsAsKeys() throws {
        #expect(try parse("#IN == 1") == eq("IN", 1))
        #expect(try parse("#size == 1") == eq("size", 1))
        #expect(try parse("#name == 1") == eq("name", 1))
        #expect(try parse("a.#first == 1") == cmp(member(k("a"), "first"), .equal, int(1)))
        #expect(try canon("#size == 1 AND #name == 2 AND a.#in == 3") == "#size == 1 AND name == 2 AND a.#in == 3")
        #expect(try canon("#TruePredicate == 1") == "#TruePredicate == 1")
    }

    @Test func placeholdersAreNumberedInSourceOrder() throws {
        let p = try parse("%K == %@ AND b IN {%d, %i, %ld, %lld, %u} AND c BETWEEN {%f, %g} AND %e < d")
        #expect(p.formatString == "%K == %@ AND b IN {%d, %i, %ld, %lld, %u} AND c BETWEEN {%f, %g} AND %e < d")
        var found: [Placeholder] = []
        func walk(_ e: Expression) {
            switch e.kind {
            case .placeholder(let p): found.append(p)
            case .aggregate(let es): es.forEach(walk)
            default: break
            }
        }
        func walk(_ p: Predicate) {
            switch p.kind {
            case .and(let a, let b): walk(a); walk(b)
            case .comparison(let c): walk(c.left); walk(c.right)
            default: break
            }
        }
        walk(p)
        #expect(found.map(\.index) == Array(0..<10))
        #expect(found.map(\.specifier) == [.key, .object, .d, .i, .ld, .lld, .u, .f, .g, .e])
    }

    @Test func variables() throws {
        #expect(try parse("a == $VAR") == cmp(k("a"), .equal, Expression(.variable("VAR"))))
        #expect(try parse("$in == 1") == cmp(Expression(.variable("in")), .equal, int(1)))
    }

    @Test func cloudKitShapesParse() throws {
        for s in [
            "allTokens TOKENMATCHES[cdl] 'w1 w2'", "ALL tokenize('a b', 'Cdl') IN allTokens",
            "SELF CONTAINS 'w1 w2'", "k BETWEEN {1, 5}", "date > now()", "ANY tags BEGINSWITH 'x'",
            "distanceToLocation:fromLocation:(location, %@) < 5 AND kind == 'cafe'",
        ] {
            #expect(try parse(s).formatString == s)
        }
    }

    @Test func rangesAreByteOffsets() throws {
        let p = try parse("é == 'ü' AND b < 2")
        guard case .and(let l, let r) = p.kind, case .comparison(let c) = l.kind else { Issue.record("shape"); return }
        #expect(p.range == SourceRange(0, 20))
        #expect(c.left.range == SourceRange(0, 2))
        #expect(c.operatorRange == SourceRange(3, 5))
        #expect(c.right.range == SourceRange(6, 10))
        #expect(r.range == SourceRange(15, 20))
    }
}

@Suite struct WhitespaceTests {
    @Test func unicodeSpacesSeparateTokens() throws {
        #expect(try parse("a\u{A0}==\u{2003}1\u{3000}AND\u{FEFF}b\u{2028}==\u{200B}2") == and(eq("a", 1), eq("b", 2)))
        #expect(try parse("\t\r\na\n==\u{0B}1\u{0C}") == eq("a", 1))
    }

    @Test func nonASCIILettersAreKeyCharacters() throws {
        #expect(try parse("préis_€ == 1") == eq("préis_€", 1))
    }

    @Test func escapeSignsNeedANameRightAfter() {
        expectError("#\u{A0}a == 1", "expected a key after '#'", 0, 1)
    }
}
