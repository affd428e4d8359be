// PredicateCache: parsed predicate format strings, as SQLite keeps prepared statements.
//
// Applications send the same few format strings again and again with different arguments
// (`kind == %@ AND population > %@`); parsing one is a lexer and a recursive-descent parser over
// its text — about a microsecond, a tenth of a small query. The syntax tree depends on the text
// alone (arguments and the schema come in when it is checked), so the tree of a text parsed
// before is reused. Texts that do not parse are not kept: their error is produced again.
// Bounded: when full, the cache starts over (a workload with more distinct texts than the
// capacity gains nothing from keeping any particular ones).

import Foundation
import PredicateSyntax

/// Syntax trees of recently parsed predicate texts, owned by one container; thread-safe.
final class PredicateCache: @unchecked Sendable {
    // @unchecked: `trees` is read and written only under `lock`.
    static let capacity = 256

    private let lock = NSLock()
    private var trees: [String: PredicateSyntax.Predicate] = [:]

    /// The syntax tree of `text`, parsed now or reused; throws the parser's error.
    func tree(_ text: String) throws(SyntaxError) -> PredicateSyntax.Predicate {
        if let t = lock.withLock({ trees[text] }) { return t }
        let t = try PredicateParser.parse(text)
        lock.withLock {
            if trees.count >= Self.capacity { trees.removeAll(keepingCapacity: true) }
            trees[text] = t
        }
        return t
    }

    var count: Int { lock.withLock { trees.count } }
}
