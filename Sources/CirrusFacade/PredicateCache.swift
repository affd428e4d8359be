// PredicateCache: parsed predicate format strings, as SQLite keeps prepared statements.
//
// Applications send the same few format strings again and again with different arguments
// (`kind == %@ AND population > %@`); parsing one is a lexer and a recursive-descent parser over
// its text — about a microsecond, a tenth of a small query. The syntax tree depends on the text
// alone (arguments and the schema come in when it is checked), so the tree of a text parsed
// before is reused. Texts that do not parse are not kept: their error is produced again.
//
// Beside each tree, the checked shapes of the text (QueryChecker's CheckedShape): per record
// type, schema and argument types — never argument values — the filters the check made, to be
// bound to the next query's arguments without checking the tree again. A shape is kept with the
// schema it was checked against and used only with that very schema (`Schema.isIdentical`): a
// schema that grew or changed is another value, and the text is checked in full again.
//
// Bounded: when full, the cache starts over (a workload with more distinct texts than the
// capacity gains nothing from keeping any particular ones); a text keeps its latest few shapes.

import Foundation
import PredicateSyntax
import QueryChecker
import RecordModel

/// Syntax trees and checked shapes of recently used predicate texts, owned by one container;
/// thread-safe.
package final class PredicateCache: @unchecked Sendable {
    // @unchecked: `entries` is read and written only under `lock`.
    package static let capacity = 256

    /// An empty cache.
    package init() {}
    /// Shapes kept per text (record types × argument types × schemas in use at once).
    package static let shapesPerText = 4

    /// A text's tree and its shapes, latest last (a reference: a lookup copies neither).
    private final class Entry {
        let tree: PredicateSyntax.Predicate
        var shapes: [Shaped] = []

        init(tree: PredicateSyntax.Predicate) { self.tree = tree }
    }

    /// A shape, or that there is none, and what it was made for (a reference: a lookup copies
    /// none of its fields).
    package final class Shaped {
        let recordType: String
        let schema: Schema
        let arguments: ArgumentShape
        /// nil: the check of this text for these makes no shape (`checkShaped`), so the next
        /// check of it records nothing either.
        let shape: CheckedShape?
        /// The text's tree, for that next check.
        let tree: PredicateSyntax.Predicate

        init(
            recordType: String, schema: Schema, arguments: ArgumentShape, shape: CheckedShape?,
            tree: PredicateSyntax.Predicate
        ) {
            self.tree = tree
            self.recordType = recordType
            self.schema = schema
            self.arguments = arguments
            self.shape = shape
        }
    }

    private let lock = NSLock()
    private var entries: [String: Entry] = [:]

    /// The syntax tree of `text`, parsed now or reused; throws the parser's error.
    package func tree(_ text: String) throws(SyntaxError) -> PredicateSyntax.Predicate {
        if let t = lock.withLock({ entries[text]?.tree }) { return t }
        let t = try PredicateParser.parse(text)
        lock.withLock {
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            if entries[text] == nil { entries[text] = Entry(tree: t) }
        }
        return t
    }

    /// What is kept of `text` checked for `recordType` against this very `schema` with arguments
    /// of `arguments`' types: its shape, or that it has none; nil when nothing is kept.
    package func shaped(
        _ text: String, recordType: String, schema: Schema, arguments: ArgumentShape
    ) -> Shaped? {
        lock.withLock {
            guard let e = entries[text] else { return nil }
            var k = e.shapes.count
            while k > 0 {
                k -= 1
                let s = e.shapes[k]
                if s.schema.isIdentical(to: schema) && s.arguments == arguments && s.recordType == recordType {
                    return s
                }
            }
            return nil
        }
    }

    /// Keeps `shaped` for `text` (whose tree is kept), in place of one made for the same record
    /// type and argument types (against an older schema), or of the oldest when a text has many.
    package func remember(_ shaped: Shaped, for text: String) {
        lock.withLock {
            guard let e = entries[text] else { return }
            e.shapes.removeAll { $0.recordType == shaped.recordType && $0.arguments == shaped.arguments }
            if e.shapes.count >= Self.shapesPerText { e.shapes.removeFirst() }
            e.shapes.append(shaped)
        }
    }

    package var count: Int { lock.withLock { entries.count } }

    /// Shapes kept for `text`, and records that it has none (tests).
    package func shapeCount(_ text: String) -> Int { lock.withLock { entries[text]?.shapes.count ?? 0 } }
}
