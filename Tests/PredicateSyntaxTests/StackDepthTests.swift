// Stack safety: the worst nesting the default limits allow must parse on a thread with a
// 512 KiB stack (the default for secondary threads on Darwin) in release builds. Debug builds
// give every local its own stack slot (about 12 KiB per SUBQUERY level, 4.5 KiB per
// parenthesis level, against about 3.5 KiB and 1.6 KiB in release), so there the bound is 2 MiB
// for nesting and 4 MiB for the tallest chains (printing, `==` and release of a 1 000-high
// expression tree recurse once per level).

import Foundation
import Testing

@testable import PredicateSyntax

/// Runs `body` on a fresh thread with `stackSize` bytes of stack and waits for it.
#if DEBUG
    private let smallStack = 2 * 1024 * 1024
    private let chainStack = 4 * 1024 * 1024
#else
    private let smallStack = 512 * 1024
    private let chainStack = 512 * 1024
#endif

private func onSmallStack(_ stackSize: Int = smallStack, _ body: @escaping @Sendable () -> Void) {
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        body()
        done.signal()
    }
    thread.stackSize = stackSize
    thread.start()
    done.wait()
}

@Suite struct StackDepthTests {
    /// Openers whose every level costs the most parser frames, each closed again.
    static let nestings: [(String, String)] = [
        ("(", ")"), ("NOT ", ""), ("-", ""), ("{", "}"), ("a[", "]"), ("f(", ")"), ("x ** ", ""),
        ("SUBQUERY(x, $v, ", " == 1)"), ("TERNARY(", " == 1, 1, 2)"), ("CAST(", ", 'x')"), ("FUNCTION(", ", 's')"),
        ("ANY (", ") == 1"),
    ]

    @Test(arguments: 0..<nestings.count)
    func deepestAllowedNestingFitsInASmallStack(which: Int) {
        let (open, close) = Self.nestings[which]
        onSmallStack {
            for levels in [98, 5_000] {
                var s = "a == "
                if open == "NOT " || open.hasPrefix("SUBQUERY") || open.hasPrefix("TERNARY") || open.hasPrefix("ANY") {
                    s = ""
                }
                s += String(repeating: open, count: levels) + "b" + String(repeating: close, count: levels)
                if s.hasPrefix("NOT") || open == "(" && s.hasPrefix("(") { s += " == 1" }
                if s.hasPrefix("SUBQUERY") || s.hasPrefix("TERNARY") { s += " == 1" }
                let result = Result { try PredicateParser.parse(s) }
                if levels > 100 {
                    #expect(throws: SyntaxError.self, "\(open)") { try result.get() }
                } else if case .success(let p) = result {
                    // Printing, comparing and hashing the deepest tree recurse as deep as parsing.
                    #expect((try? PredicateParser.parse(p.formatString)) == p, "\(open)")
                    _ = p.hashValue
                }
            }
        }
    }

    @Test func tallestChainsFitInASmallStack() {
        onSmallStack(chainStack) {
            for s in [
                String(repeating: "a == 1 AND ", count: 998) + "a == 1",
                "a" + String(repeating: ".b", count: 997) + " == 1",
                "a == " + String(repeating: "1 + ", count: 997) + "1",
                "a == b" + String(repeating: "[1]", count: 997),
            ] {
                let p = try? PredicateParser.parse(s)
                #expect(p != nil, "\(s.prefix(20))")
                if let p {
                    #expect((try? PredicateParser.parse(p.formatString)) == p)
                    _ = p.hashValue
                }
            }
        }
    }
}
