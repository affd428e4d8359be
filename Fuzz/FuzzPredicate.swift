// FuzzPredicate: the libFuzzer entry point for the predicate front end.
//
// Built by scripts/fuzz.sh with `-sanitize=fuzzer,address` (libFuzzer supplies `main`). For
// each input it runs every check in `checks`; a check traps (fatalError) when a property
// breaks, and libFuzzer saves the input as a crash artifact. Lexer and parser must never crash
// on any input; when an input parses, printing it must give text that parses to the same tree
// and prints the same again. The same bytes are also read as choices that build a tree
// (TreeBuilder), which must survive print-then-parse unchanged.
//
// To fuzz a later stage (the QueryChecker), add its module to MODULES in scripts/fuzz.sh,
// import it here and append a check to `checks`.

import PredicateSyntax

/// Each check gets the input as text. Keep them independent: one property per check.
let checks: [@Sendable (String) -> Void] = [
    predicateRoundTrip,
    expressionRoundTrip,
]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let text = String(decoding: bytes, as: UTF8.self)
    for check in checks { check(text) }
    builtTreeRoundTrip(bytes)
    return 0
}

/// parse(print(t)) == t for the tree the input bytes describe.
func builtTreeRoundTrip(_ bytes: UnsafeBufferPointer<UInt8>) {
    var builder = TreeBuilder(bytes)
    let tree = builder.predicate(6)
    let printed = tree.formatString
    let again: Predicate
    do { again = try PredicateParser.parse(printed) } catch {
        fatalError("printed tree does not parse\nprinted: \(printed)\nerror:   \(error)")
    }
    if again != tree { fatalError("built tree changed in print-then-parse\nprinted: \(printed)\nagain:   \(again.formatString)") }
}

/// parse(print(parse(x))) == parse(x), and print is a fixed point after one parse.
func predicateRoundTrip(_ text: String) {
    let tree: Predicate
    do { tree = try PredicateParser.parse(text) } catch {
        // Errors must point inside the input (or at its end).
        let n = text.utf8.count
        if error.range.start < 0 || error.range.start > error.range.end || (error.range.end > n && n <= ParserLimits.default.maxLength) {
            fatalError("error range \(error.range) outside input of \(n) bytes: \(error)")
        }
        return
    }
    let printed = tree.formatString
    let again: Predicate
    do { again = try PredicateParser.parse(printed) } catch {
        fatalError("printed predicate does not parse\ninput:   \(text)\nprinted: \(printed)\nerror:   \(error)")
    }
    if again != tree { fatalError("round trip changed the tree\ninput:   \(text)\nprinted: \(printed)\nagain:   \(again.formatString)") }
    if again.formatString != printed { fatalError("printing is not a fixed point\ninput: \(text)\nprinted: \(printed)") }
}

/// The same property for a lone expression.
func expressionRoundTrip(_ text: String) {
    guard let tree = try? PredicateParser.parseExpression(text) else { return }
    let printed = tree.formatString
    guard let again = try? PredicateParser.parseExpression(printed) else {
        fatalError("printed expression does not parse\ninput:   \(text)\nprinted: \(printed)")
    }
    if again != tree { fatalError("expression round trip changed the tree\ninput:   \(text)\nprinted: \(printed)") }
}
