// FuzzPredicate: the libFuzzer entry point for the predicate front end.
//
// Built by scripts/fuzz.sh with `-sanitize=fuzzer,address` (libFuzzer supplies `main`). For
// each input it runs every check in `checks`; a check traps (fatalError) when a property
// breaks, and libFuzzer saves the input as a crash artifact. Lexer and parser must never crash
// on any input; when an input parses, printing it must give text that parses to the same tree
// and prints the same again. The same bytes are also read as choices that build a tree
// (TreeBuilder), which must survive print-then-parse unchanged.
//
// The checker runs on every input that parses, with a fixed set of arguments of every kind:
// it must not crash, its error ranges must lie inside the input, and an accepted predicate must
// survive filters → format string → check unchanged. A predicate with a checked shape, bound
// to other arguments of the same types, must give what a full check with them gives (or nil).

import PredicateSyntax
import QueryChecker
import RecordModel

/// Each check gets the input as text. Keep them independent: one property per check.
let checks: [@Sendable (String) -> Void] = [
    predicateRoundTrip,
    expressionRoundTrip,
    checkerProperties,
    shapeAgreement,
]

/// Arguments of every kind, so placeholders in fuzzed input meet each of them.
let fuzzArguments: [PredicateArgument] = [
    "cafe", 42, 2.5, .value(.location(Location(latitude: 48.85, longitude: 2.29))),
    .value(.list(["a", "b"])), .key("kind"), .value(.date(Timestamp(millisecondsSince1970: 1_700_000_000_000))),
    .value(.reference(Reference(recordID: RecordID(recordName: "r1")))), .value(.bytes([0, 1])),
    .value(.list([1, 2])), .key("tags"), "a b",
]
let fuzzVariables: [String: PredicateArgument] = ["X": "x", "N": 3, "K": .key("population"), "L": fuzzArguments[3]]

/// The checker never crashes, points inside the input, and its filters format back to themselves.
func checkerProperties(_ text: String) {
    guard let tree = try? PredicateParser.parse(text) else { return }
    let context = CheckContext(arguments: fuzzArguments, variables: fuzzVariables, source: text)
    do {
        let checked = try QueryChecker.check(tree, context: context)
        let (format, args) = checked.predicate.predicateFormat
        let again: CheckedPredicate
        do { again = try QueryChecker.check(format, context: CheckContext(arguments: args)) } catch {
            fatalError("filters do not format back\ninput: \(text)\nformat: \(format)\nerror: \(error.message)")
        }
        if again.predicate != checked.predicate {
            fatalError("filters changed on the way back\ninput: \(text)\nformat: \(format)")
        }
    } catch {
        let n = text.utf8.count
        if error.range.start < 0 || error.range.start > error.range.end || error.range.end > n {
            fatalError(
                "checker error range \(error.range) outside input of \(n) bytes: \(error.message)\ninput: \(text)")
        }
    }
}

/// Other arguments of `fuzzArguments`' types: valid ones, and ones a value check refuses.
let otherArguments: [[PredicateArgument]] = [
    [
        "museum", -7, .value(.double(.nan)), .value(.location(Location(latitude: 91, longitude: 0))),
        .value(.list([])), .key("kind"), .value(.date(Timestamp(millisecondsSince1970: 0))),
        .value(.reference(Reference(recordID: RecordID(recordName: "r2")))), .value(.bytes([])),
        .value(.list(["x", 1])), .key("tags"), "  ",
    ],
    [
        "", .value(.int64(.max)), 1e300, .value(.location(Location(latitude: -33.9, longitude: 151.2))),
        .value(.list([1.5, 2])), .key("kind"), .value(.date(Timestamp(millisecondsSince1970: -5))),
        .value(.reference(Reference(recordID: RecordID(recordName: "r1")))), .value(.bytes([0xFF])),
        .value(.list([.list([1])])), .key("tags"), "Ünï code",
    ],
]

/// A checked shape bound to other arguments agrees with the full check of them.
func shapeAgreement(_ text: String) {
    guard let tree = try? PredicateParser.parse(text) else { return }
    let context = CheckContext(arguments: fuzzArguments, variables: fuzzVariables, source: text)
    guard let (_, made) = try? QueryChecker.checkShaped(tree, sorts: [], context: context), let shape = made else {
        return
    }
    for arguments in [fuzzArguments] + otherArguments {
        var other = context
        other.arguments = arguments
        guard let bound = shape.bind(sorts: [], context: other) else { continue }
        let full: CheckedPredicate
        do { full = try QueryChecker.check(tree, context: other) } catch {
            fatalError("a shape bound where the full check throws \(error.message)\ninput: \(text)")
        }
        if bound != full { fatalError("a bound shape differs from the full check\ninput: \(text)") }
    }
}

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
    if again != tree {
        fatalError("built tree changed in print-then-parse\nprinted: \(printed)\nagain:   \(again.formatString)")
    }
}

/// parse(print(parse(x))) == parse(x), and print is a fixed point after one parse.
func predicateRoundTrip(_ text: String) {
    let tree: Predicate
    do { tree = try PredicateParser.parse(text) } catch {
        // Errors must point inside the input (or at its end).
        let n = text.utf8.count
        if error.range.start < 0 || error.range.start > error.range.end
            || (error.range.end > n && n <= ParserLimits.default.maxLength)
        {
            fatalError("error range \(error.range) outside input of \(n) bytes: \(error)")
        }
        return
    }
    let printed = tree.formatString
    let again: Predicate
    do { again = try PredicateParser.parse(printed) } catch {
        fatalError("printed predicate does not parse\ninput:   \(text)\nprinted: \(printed)\nerror:   \(error)")
    }
    if again != tree {
        fatalError("round trip changed the tree\ninput:   \(text)\nprinted: \(printed)\nagain:   \(again.formatString)")
    }
    if again.formatString != printed {
        fatalError("printing is not a fixed point\ninput: \(text)\nprinted: \(printed)")
    }
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
