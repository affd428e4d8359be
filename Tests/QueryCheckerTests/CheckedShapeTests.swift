// CheckedShape against the full checker: every case of the verdict table, and a corpus of
// placeholder predicates, is checked with one set of arguments to make its shape; the shape is
// then bound to other arguments of the same types — valid ones and ones that fail a value check
// (NaN, an empty text search, an invalid centre, a heterogeneous or too long list) — and must
// give exactly what a full check with those arguments gives, or nil (never a result where the
// full check throws, never another result).

import PredicateSyntax
import RecordModel
import Testing

@testable import QueryChecker

/// Values of each argument kind, valid and not, for redrawing an argument of the same type.
private let pools: [UInt8: [FieldValue]] = [
    1: [.string("cafe"), .string("museum"), .string(""), .string("  "), .string("ab cd"), .string("Ünïcode")],
    2: [.int64(0), .int64(5), .int64(-3), .int64(.max), .int64(.min)],
    3: [.double(0.5), .double(-1), .double(.nan), .double(.infinity), .double(1e300), .double(5)],
    4: [.date(Timestamp(millisecondsSince1970: 0)), .date(Timestamp(millisecondsSince1970: 1_700_000_000_000))],
    5: [.bytes([0]), .bytes([0xFF, 1]), .bytes([])],
    6: [
        .location(eiffel), .location(Location(latitude: -33.9, longitude: 151.2)),
        .location(Location(latitude: 100, longitude: 0)), .location(Location(latitude: 0, longitude: .nan)),
    ],
    7: [
        .reference(Reference(recordID: RecordID(recordName: "a"))),
        .reference(Reference(recordID: RecordID(recordName: "b"))),
    ],
    8: [.asset(Asset(contentHash: String(repeating: "0", count: 64), size: 1))],
    9: [
        .list([]), .list([.string("a")]), .list([.string("a"), .string("b")]), .list([.int64(1), .double(2.5)]),
        .list([.string("a"), .int64(1)]), .list([.list([.int64(1)])]), .list([.double(.nan)]),
        .list((0..<5).map { .int64($0) }), .list([.int64(1), .int64(2)]),
        .list([.date(Timestamp(millisecondsSince1970: 5))]),
    ],
]

/// Predicates whose arguments take every path of the checker, with arguments to shape them.
private let corpus: [(String, [PredicateArgument])] = [
    ("kind == %@", [.value(.string("cafe"))]),
    ("kind == %@ AND population > %@", [.value(.string("cafe")), .value(.int64(10))]),
    ("%@ < population AND rating >= %@", [.value(.int64(10)), .value(.double(2.5))]),
    ("population > %d", [.value(.int64(3))]),
    ("rating > %f", [.value(.double(3))]),
    ("rating > %f", [.value(.int64(3))]),
    ("name == %s", [.value(.string("x"))]),
    ("NOT (kind == %@)", [.value(.string("cafe"))]),
    ("NOT (tags CONTAINS %@)", [.value(.string("a"))]),
    ("kind IN %@", [.value(.list([.string("a"), .string("b")]))]),
    ("NOT (kind IN %@)", [.value(.list([.string("a")]))]),
    ("tags CONTAINS %@", [.value(.string("a"))]),
    ("%@ CONTAINS kind", [.value(.list([.string("a")]))]),
    ("ANY tags IN %@", [.value(.list([.string("a")]))]),
    ("ANY tags == %@", [.value(.string("a"))]),
    ("ALL %@ IN tags", [.value(.list([.string("a")]))]),
    ("ANY tags BEGINSWITH %@", [.value(.string("a"))]),
    ("name BEGINSWITH %@", [.value(.string("Pa"))]),
    ("self CONTAINS %@", [.value(.string("cafe paris"))]),
    ("allTokens TOKENMATCHES[cdl] %@", [.value(.string("cafe"))]),
    ("ALL tokenize(%@, 'Cdl') IN allTokens", [.value(.string("cafe"))]),
    ("distanceToLocation:fromLocation:(location, %@) < %@", [here, .value(.double(5))]),
    ("distanceToLocation:fromLocation:(location, %@) <= %@", [here, .value(.int64(5))]),
    ("%@ > distanceToLocation:fromLocation:(location, %@)", [.value(.double(5)), here]),
    ("distanceToLocation:fromLocation:(location, %@) < 5", [here]),
    (
        "distanceToLocation:fromLocation:(location, %@) < %@ AND kind == %@",
        [here, .value(.double(1)), .value(.string("a"))]
    ),
    ("population BETWEEN %@", [.value(.list([.int64(1), .int64(5)]))]),
    ("population BETWEEN {%@, %@}", [.value(.int64(1)), .value(.int64(5))]),
    ("population BETWEEN {%@, %@}", [.value(.double(1)), .value(.int64(5))]),
    ("population BETWEEN {%@, 5} AND kind == %@", [.value(.int64(1)), .value(.string("a"))]),
    ("rating BETWEEN {%@, %@}", [.value(.double(1)), .value(.double(5))]),
    (
        "founded BETWEEN {%@, %@}",
        [.value(.date(Timestamp(millisecondsSince1970: 5))), .value(.date(Timestamp(millisecondsSince1970: 9)))]
    ),
    ("population > -%@", [.value(.int64(3))]),
    ("kind IN {%@, 'b'}", [.value(.string("a"))]),
    ("%K == %@", [.key("kind"), .value(.string("a"))]),
    ("recordName == %@", [.value(.reference(Reference(recordID: RecordID(recordName: "a"))))]),
    ("recordName == %@", [.value(.string("a"))]),
    ("founded < %@", [.value(.date(Timestamp(millisecondsSince1970: 5)))]),
    ("founded < now() AND kind == %@", [.value(.string("a"))]),
    ("owner == %@", [.value(.reference(Reference(recordID: RecordID(recordName: "a"))))]),
    ("data == %@", [.value(.bytes([1]))]),
    ("scores CONTAINS %@", [.value(.int64(1))]),
    ("kind == 'cafe' AND population > %@", [.value(.int64(10))]),
    ("FALSEPREDICATE AND kind == %@", [.value(.string("a"))]),
    ("TRUEPREDICATE AND kind == %@", [.value(.string("a"))]),
    ("kind == %@ AND kind == %@", [.value(.string("a")), .value(.string("b"))]),
]

private let schemas: [SchemaChoice] = [.none, .development, .production, .productionListable]

/// `context` with `arguments` (and the maximum list count low, so that lists can be too long).
private func with(_ context: CheckContext, _ arguments: [PredicateArgument]) -> CheckContext {
    var c = context
    c.arguments = arguments
    c.maximumListCount = 4
    return c
}

/// The full check's result, or its error's message.
private func full(
    _ tree: Predicate, _ sorts: [SortDescriptor], _ context: CheckContext
) -> Result<CheckedPredicate, PredicateError> {
    Result(catching: { () throws(PredicateError) -> CheckedPredicate in
        try QueryChecker.check(tree, sorts: sorts, context: context)
    })
}

/// Arguments of the same types as `arguments`, values drawn from the pools.
private func redraw(_ arguments: [PredicateArgument], _ rng: inout some RandomNumberGenerator) -> [PredicateArgument] {
    arguments.map {
        guard case .value(let v) = $0, let pool = pools[ArgumentShape.kind(v)] else { return $0 }
        return .value(pool.randomElement(using: &rng)!)
    }
}

@Suite struct CheckedShapeTests {
    /// Checks that `shape` bound to `arguments` agrees with the full check; returns whether it bound.
    @discardableResult
    private func agree(
        _ shape: CheckedShape, _ tree: Predicate, _ sorts: [SortDescriptor], _ context: CheckContext,
        _ text: String
    ) -> Bool {
        let bound = shape.bind(sorts: sorts, context: context)
        let expected = full(tree, sorts, context)
        guard let bound else { return false }
        switch expected {
        case .success(let checked):
            #expect(bound == checked, "\(text) with \(context.arguments)")
        case .failure(let e):
            Issue.record("\(text) with \(context.arguments): bound, but the full check throws \(e.message)")
        }
        return true
    }

    @Test func verdictTableCasesBoundToTheirOwnArgumentsAgree() throws {
        var shaped = 0
        for v in acceptedShapes + schemaShapes {
            guard let tree = try? PredicateParser.parse(v.predicate) else { continue }
            var ctx = context(for: v)
            ctx.source = v.predicate
            guard let (checked, shape) = try? QueryChecker.checkShaped(tree, sorts: [], context: ctx) else { continue }
            #expect(checked == (try QueryChecker.check(tree, sorts: [], context: ctx)), "\(v.predicate)")
            guard let shape else { continue }
            shaped += 1
            #expect(agree(shape, tree, [], ctx, v.predicate), "\(v.predicate): its own arguments do not bind")
        }
        #expect(shaped >= 40, "only \(shaped) verdict cases have a shape")
    }

    @Test(arguments: schemas)
    func boundToOtherArgumentsOfTheSameTypesAgreesWithTheFullCheck(_ schema: SchemaChoice) throws {
        var rng = SplitMix(seed: 0xC0FFEE)
        var shapedTexts = 0
        var bound = 0
        var refused = 0
        for (text, args) in corpus {
            let tree = try PredicateParser.parse(text)
            let base = with(context(for: ok(text, "", args: args, schema: schema)), args)
            guard let (_, shape) = try? QueryChecker.checkShaped(tree, sorts: [], context: base), let shape else {
                continue
            }
            shapedTexts += 1
            for _ in 0..<60 {
                let next = with(base, redraw(args, &rng))
                if ArgumentShape(next.arguments) != ArgumentShape(args) { continue }
                if agree(shape, tree, [], next, text) { bound += 1 } else { refused += 1 }
            }
        }
        #expect(shapedTexts >= 20, "only \(shapedTexts) corpus texts have a shape")
        #expect(bound > 500 && refused > 100, "bound \(bound), refused \(refused)")
    }

    @Test func argumentsReachingFiltersOtherwiseAreNotShaped() throws {
        let unshaped = [
            "rating > %f", "population BETWEEN %@", "founded BETWEEN {%@, %@}", "population > -%@",
            "kind IN {%@, 'b'}", "%K == %@", "ALL tokenize(%@, 'Cdl') IN allTokens", "founded < now() AND kind == %@",
            "FALSEPREDICATE AND kind == %@", "recordName == %@",
        ]
        for (text, args) in corpus where unshaped.contains(text) {
            let tree = try PredicateParser.parse(text)
            let ctx = with(context(for: ok(text, "", args: args, schema: .development)), args)
            guard let (_, shape) = try? QueryChecker.checkShaped(tree, sorts: [], context: ctx) else { continue }
            // `rating > %f` with an INT64 is converted; with a DOUBLE it is the argument itself.
            if text == "rating > %f", case .value(.double) = args[0] { continue }
            if text == "recordName == %@", case .value(.reference) = args[0] { continue }
            #expect(shape == nil, "\(text) with \(args) has a shape")
        }
        let tree = try PredicateParser.parse("kind == $K")
        var ctx = context(for: ok("", "", schema: .development))
        ctx.variables = ["K": .value(.string("a"))]
        #expect(try QueryChecker.checkShaped(tree, sorts: [], context: ctx).1 == nil)
    }

    @Test func betweenTwoPlaceholdersBindsBothBounds() throws {
        let tree = try PredicateParser.parse("population BETWEEN {%@, %@}")
        let ctx = with(context(for: ok("", "", schema: .development)), [.value(.int64(1)), .value(.int64(5))])
        let shape = try #require(try QueryChecker.checkShaped(tree, sorts: [], context: ctx).1)
        let same = with(ctx, [.value(.int64(7)), .value(.int64(9))])
        let bound = try #require(shape.bind(sorts: [], context: same))
        #expect(bound.predicate.filters.map(\.comparator) == [.greaterThanOrEquals, .lessThanOrEquals])
        #expect(bound.predicate.filters.map(\.fieldValue) == [.int64(7), .int64(9)])
        #expect(bound == (try QueryChecker.check(tree, sorts: [], context: same)))
    }

    @Test func sortDescriptorsAreCheckedAtEveryBind() throws {
        let tree = try PredicateParser.parse("kind == %@")
        let ctx = with(context(for: ok("", "", schema: .development)), [.value(.string("a"))])
        let shape = try #require(try QueryChecker.checkShaped(tree, sorts: [], context: ctx).1)
        let good: [SortDescriptor] = [.distance(field: "location", from: eiffel)]
        let bad: [SortDescriptor] = [.distance(field: "location", from: Location(latitude: 91, longitude: 0))]
        #expect(agree(shape, tree, good, ctx, "sorted by distance"))
        #expect(shape.bind(sorts: bad, context: ctx) == nil)
        #expect(shape.bind(sorts: [.field("tags", ascending: true)], context: ctx) == nil)
        #expect(shape.bind(sorts: [.field("population", ascending: false)], context: ctx) != nil)

        // Made with sorts: the same fields and directions need only their centres checked;
        // other sorts are checked in full.
        for schema in schemas {
            let base = with(context(for: ok("", "", schema: schema)), [.value(.string("a"))])
            let made: [SortDescriptor] = [
                .field("population", ascending: true), .distance(field: "location", from: eiffel),
            ]
            guard let (_, shaped) = try? QueryChecker.checkShaped(tree, sorts: made, context: base),
                let shape = shaped
            else { continue }
            let sydney = Location(latitude: -33.9, longitude: 151.2)
            let cases: [[SortDescriptor]] = [
                made, [.field("population", ascending: true), .distance(field: "location", from: sydney)],
                [
                    .field("population", ascending: true),
                    .distance(field: "location", from: Location(latitude: 0, longitude: 181)),
                ],
                [.field("population", ascending: false), .distance(field: "location", from: sydney)],
                [.field("tags", ascending: true), .distance(field: "location", from: sydney)],
                [.field("population", ascending: true)], [], [.distance(field: "rating", from: sydney)],
                [.field("recordChangeTag", ascending: true)], [.field("nope", ascending: true)],
            ]
            var bound = 0
            for sorts in cases where agree(shape, tree, sorts, base, "sorted \(sorts) on \(schema)") { bound += 1 }
            #expect(bound >= 2, "\(schema): \(bound) bound")
        }
    }
}

/// A small deterministic generator (SplitMix64).
private struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
