// One named test per syntax error: the message and the byte range it points at.

import Testing

@testable import PredicateSyntax

@Suite struct SyntaxErrorTests {
    @Test func unterminatedString() { expectError("a == 'x", "unterminated string", 5, 7) }
    @Test func unterminatedStringEndingInEscapedQuote() { expectError(#"a == "x\""#, "unterminated string", 5, 9) }
    @Test func unclosedParenAtEnd() { expectError("(a == 1", "expected ')' to close '(' at 0", 7, 7) }
    @Test func unclosedParenBeforeToken() {
        expectError("a == (1 + 2 AND b == 1", "expected ')' to close '(' at 5", 12, 15)
    }
    @Test func unclosedAggregate() { expectError("a IN {1, 2", "expected '}' to close '{' at 5", 10, 10) }
    @Test func unclosedSubscript() { expectError("a[1 == 2", "expected ']' to close '[' at 1", 4, 6) }
    @Test func unclosedFunctionCall() { expectError("now( == 1", "expected an expression, found '=='", 5, 7) }
    @Test func unknownOption() { expectError("a CONTAINS[cx] 'y'", "unknown comparison option 'x'", 12, 13) }
    @Test func unknownNonASCIIOption() { expectError("a ==[é] 'y'", "unknown comparison option 'é'", 5, 7) }
    @Test func emptyOptions() { expectError("a ==[] 1", "expected comparison options such as [cd], found ']'", 5, 6) }
    @Test func unexpectedEndAfterOperator() { expectError("a ==", "unexpected end of predicate", 4, 4) }
    @Test func unexpectedEndAfterKey() { expectError("a", "unexpected end of predicate", 1, 1) }
    @Test func unexpectedEndAfterAnd() { expectError("a == 1 AND", "unexpected end of predicate", 10, 10) }
    @Test func emptyPredicate() { expectError("   ", "empty predicate", 0, 3) }
    @Test func missingOperator() { expectError("a 1", "expected a comparison operator, found '1'", 2, 3) }
    @Test func trailingToken() { expectError("a == 1 b", "unexpected 'b' after the end of the predicate", 7, 8) }
    @Test func closeWithoutOpen() { expectError("a == 1)", "unexpected ')' after the end of the predicate", 6, 7) }
    @Test func unknownEscape() { expectError(#"a == '\q'"#, #"unknown escape '\q' in string"#, 6, 8) }
    @Test func shortUnicodeEscape() { expectError(#"a == '\u12'"#, #"invalid escape '\u12' in string"#, 6, 10) }
    @Test func unpairedSurrogate() { expectError(#"a == '\uD800'"#, #"unpaired surrogate in '\uD800'"#, 6, 12) }
    @Test func lowSurrogateAlone() { expectError(#"a == '\uDC00'"#, #"unpaired surrogate in '\uDC00'"#, 6, 12) }
    @Test func numberOutOfRange() { expectError("a == 1e999", "number '1e999' is out of range", 5, 10) }
    @Test func negativeNumberOutOfRange() { expectError("a == -1e999", "number '1e999' is out of range", 6, 11) }
    @Test func numberRunningIntoLetters() { expectError("a == 12ab", "invalid number '12ab'", 5, 9) }
    @Test func exponentWithoutDigits() { expectError("a == 1e", "invalid number '1e'", 5, 7) }
    @Test func hexPrefixWithoutDigits() { expectError("a == 0x", "invalid number '0x'", 5, 7) }
    @Test func binaryDigitOutOfRange() { expectError("a == 0b102", "invalid number '0b102'", 5, 10) }
    @Test func unexpectedCharacter() { expectError("a == 1 ; b", "unexpected character ';'", 7, 8) }
    @Test func controlCharacter() { expectError("a == \u{1}", "unexpected character '\\u{1}'", 5, 6) }
    @Test func singleAmpersand() { expectError("a == 1 & b == 2", "unexpected character '&'", 7, 8) }
    @Test func singleBar() { expectError("a == 1 | b == 2", "unexpected character '|'", 7, 8) }
    @Test func unknownFormatSpecifier() { expectError("a == %y", "unknown format specifier '%y'", 5, 7) }
    @Test func lengthModifierThatDoesNotFitTheConversion() {
        expectError("a == %l@", "unknown format specifier '%l@'", 5, 8)
    }
    @Test func lowercaseKeySpecifier() { expectError("%k == 1", "unknown format specifier '%k'", 0, 2) }
    @Test func percentAtEnd() { expectError("a == %", "unknown format specifier '%'", 5, 6) }
    @Test func doublePercentOutsideQuotes() {
        expectError("a == %%", "'%%' is a percent sign only inside a quoted string", 5, 7)
    }
    @Test func reservedWordAsKey() {
        expectError("size == 1", "'size' is a reserved word", 0, 4)
        #expect(syntaxError("size == 1")?.hint == "write #size to use it as a key")
    }
    @Test func reservedWordAsMember() { expectError("a.in == 1", "'in' is a reserved word", 2, 4) }
    @Test func keywordWhereExpressionExpected() { expectError("a == AND", "expected an expression, found 'AND'", 5, 8) }
    @Test func hashWithoutWord() { expectError("# == 1", "expected a key after '#'", 0, 1) }
    @Test func dollarWithoutName() { expectError("a == $", "expected a variable name after '$'", 5, 6) }
    @Test func subqueryWithoutVariable() {
        expectError(
            "SUBQUERY(a, b, b == 1).@count > 0",
            "expected a variable such as $x as the second argument of SUBQUERY, found 'b'", 12, 13)
    }
    @Test func functionSelectorNotString() {
        expectError("FUNCTION(a, b) == 1", "expected the selector name as a quoted string, found 'b'", 12, 13)
    }
    @Test func selectorNameWithoutArguments() {
        expectError("sum: == 1", "expected '(' after the function name 'sum:', found '=='", 5, 7)
    }
    @Test func ternaryMissingValues() {
        expectError("TERNARY(a == 1) == 1", "expected ',' after the condition of TERNARY, found ')'", 14, 15)
    }
    @Test func castWithoutParenthesis() { expectError("CAST == 1", "expected '(' after CAST, found '=='", 5, 7) }
    @Test func trailingCommaInAggregate() { expectError("a IN {1,}", "expected an expression, found '}'", 8, 9) }
    @Test func atWithoutName() {
        expectError("a.@ == 1", "expected a collection operator name after '@', found '=='", 4, 6)
    }
    @Test func dotWithoutName() { expectError("a. == 1", "expected a key after '.', found '=='", 3, 5) }
    @Test func comparisonAsOperand() {
        expectError("(a == 1) == 2", "unexpected '==' after the end of the predicate", 9, 11)
    }
    @Test func utiOperatorWithSpaces() {
        expectError("a UTI - EQUALS b", "expected a comparison operator, found 'UTI'", 2, 5)
    }

    @Test func renderingPointsAtTheRange() {
        let e = syntaxError("name == 'x")
        #expect(
            e?.rendered(in: "name == 'x") == "8..<10: unterminated string (close it with ')\nname == 'x\n        ^^")
        #expect(e?.description == "8..<10: unterminated string (close it with ')")
    }
}

@Suite struct UnclosedNestingTests {
    @Test func unclosedOuterParenAroundPredicate() { expectError("((a == 1)", "expected ')' to close '(' at 0", 9, 9) }
}
