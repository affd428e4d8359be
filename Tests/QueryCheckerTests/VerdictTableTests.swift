// The CKQuery verdict table: every accepted shape of CKQUERY.md §2 with its canonical filters,
// every rejection with CloudKit's message and the exact range it points at.

import PredicateSyntax
import RecordModel
import Testing

@testable import QueryChecker

let loc = "(48.8584, 2.2945)"
let ref1: PredicateArgument = .value(.reference(Reference(recordID: RecordID(recordName: "r1"))))
let nowText = "2023-11-14T22:13:20.000Z"

let acceptedShapes: [Verdict] = [
    ok("TRUEPREDICATE", "ALL"),
    ok("truepredicate", "ALL"),
    ok("FALSEPREDICATE", "NONE", warnings: 1),
    // every comparison spelling, key on the left
    ok("kind == 'cafe'", #"kind EQUALS "cafe""#),
    ok("kind = 'cafe'", #"kind EQUALS "cafe""#),
    ok("kind != 'cafe'", #"kind NOT_EQUALS "cafe""#),
    ok("kind <> 'cafe'", #"kind NOT_EQUALS "cafe""#),
    ok("population < 5", "population LESS_THAN 5"),
    ok("population <= 5", "population LESS_THAN_OR_EQUALS 5"),
    ok("population =< 5", "population LESS_THAN_OR_EQUALS 5"),
    ok("population > 5", "population GREATER_THAN 5"),
    ok("population >= 5", "population GREATER_THAN_OR_EQUALS 5"),
    ok("population => 5", "population GREATER_THAN_OR_EQUALS 5"),
    // key on the right: operator mirrored
    ok("'cafe' == kind", #"kind EQUALS "cafe""#),
    ok("'cafe' != kind", #"kind NOT_EQUALS "cafe""#),
    ok("5 < population", "population GREATER_THAN 5"),
    ok("5 <= population", "population GREATER_THAN_OR_EQUALS 5"),
    ok("5 > population", "population LESS_THAN 5"),
    ok("5 >= population", "population LESS_THAN_OR_EQUALS 5"),
    // literal forms
    ok(#"kind == "cafe""#, #"kind EQUALS "cafe""#),
    ok(#"name == 'it\'s'"#, #"name EQUALS "it's""#),
    ok("population == -5", "population EQUALS -5"),
    ok("population == 0x10", "population EQUALS 16"),
    ok("population == 0b101", "population EQUALS 5"),
    ok("population == 0o17", "population EQUALS 15"),
    ok("rating > 4.5", "rating GREATER_THAN 4.5"),
    ok("rating > 1e3", "rating GREATER_THAN 1000.0"),
    // BETWEEN → two filters
    ok("population BETWEEN {1, 10}", "population GREATER_THAN_OR_EQUALS 1 AND population LESS_THAN_OR_EQUALS 10"),
    ok(
        "population BETWEEN %@", "population GREATER_THAN_OR_EQUALS 1 AND population LESS_THAN_OR_EQUALS 2.5",
        args: [.value(.list([.int64(1), .double(2.5)]))]),
    ok(
        "founded BETWEEN {%@, %@}",
        "founded GREATER_THAN_OR_EQUALS 1970-01-01T00:00:00.001Z AND founded LESS_THAN_OR_EQUALS 1970-01-01T00:00:00.002Z",
        args: [.value(.date(Timestamp(millisecondsSince1970: 1))), .value(.date(Timestamp(millisecondsSince1970: 2)))],
        warnings: 1),
    // IN and its spellings
    ok("kind IN {'a', 'b'}", #"kind IN ["a", "b"]"#),
    ok("kind IN %@", #"kind IN ["a", "b"]"#, args: [.value(.list(["a", "b"]))]),
    ok("ANY {'a', 'b'} == kind", #"kind IN ["a", "b"]"#),
    ok("{'a', 'b'} CONTAINS kind", #"kind IN ["a", "b"]"#),
    ok("kind IN {}", "kind IN []"),
    ok("population IN {1, 2.5}", "population IN [1, 2.5]"),
    // list operators
    // Without a schema CONTAINS with a string might be meant as a substring test: a warning.
    ok("tags CONTAINS 'x'", #"tags LIST_CONTAINS "x""#, warnings: 1),
    ok("scores CONTAINS 5", "scores LIST_CONTAINS 5"),
    ok("'x' IN tags", #"tags LIST_CONTAINS "x""#),
    ok("ANY tags == 'x'", #"tags LIST_CONTAINS "x""#),
    ok("ANY 'x' == tags", #"tags LIST_CONTAINS "x""#),
    ok("SOME tags == 'x'", #"tags LIST_CONTAINS "x""#),
    ok("ANY tags IN {'x', 'y'}", #"tags LIST_CONTAINS_ANY ["x", "y"]"#),
    ok("ALL {'x', 'y'} IN tags", #"tags LIST_CONTAINS_ALL ["x", "y"]"#),
    ok("ALL %@ IN tags", #"tags LIST_CONTAINS_ALL ["x"]"#, args: [.value(.list(["x"]))]),
    ok("ANY tags BEGINSWITH 'ca'", #"tags LIST_MEMBER_BEGINS_WITH "ca""#),
    // BEGINSWITH
    ok("name BEGINSWITH 'Par'", #"name BEGINS_WITH "Par""#),
    // distance: kilometres in, metres out
    ok("distanceToLocation:fromLocation:(location, %@) < 5", "location NEAR \(loc) within 5000 m", args: [here]),
    ok("distanceToLocation:fromLocation:(location, %@) <= 5", "location NEAR \(loc) within 5000 m", args: [here]),
    ok("5 > distanceToLocation:fromLocation:(location, %@)", "location NEAR \(loc) within 5000 m", args: [here]),
    ok("5 >= distanceToLocation:fromLocation:(location, %@)", "location NEAR \(loc) within 5000 m", args: [here]),
    ok("distanceToLocation:fromLocation:(%@, location) < 2.5", "location NEAR \(loc) within 2500 m", args: [here]),
    ok("distanceToLocation:fromLocation:(location, %@) < %@", "location NEAR \(loc) within 10000 m", args: [here, 10]),
    ok(
        "distanceToLocation:fromLocation:(location, $HERE) < 0.5", "location NEAR \(loc) within 500 m",
        vars: ["HERE": here]),
    // text search
    ok("self CONTAINS 'coffee shop'", #"allTokens CONTAINS_ANY_TOKENS "coffee shop""#),
    ok("SELF CONTAINS %@", #"allTokens CONTAINS_ANY_TOKENS "tea""#, args: ["tea"]),
    ok("allTokens TOKENMATCHES[cdl] 'coffee'", #"allTokens CONTAINS_ANY_TOKENS "coffee""#),
    ok("allTokens TOKENMATCHES[ldc] 'coffee'", #"allTokens CONTAINS_ANY_TOKENS "coffee""#),
    ok("ALL tokenize('coffee shop', 'Cdl') IN allTokens", #"allTokens CONTAINS_ALL_TOKENS "coffee shop""#),
    ok("ANY tokenize(%@, 'Cdl') IN allTokens", #"allTokens CONTAINS_ANY_TOKENS "a b""#, args: ["a b"]),
    // now()
    ok("founded < now()", "founded LESS_THAN \(nowText)"),
    ok("now() > founded", "founded LESS_THAN \(nowText)"),
    // NOT flips
    ok("NOT (kind == 'a')", #"kind NOT_EQUALS "a""#),
    ok("NOT kind != 'a'", #"kind EQUALS "a""#),
    ok("!(kind == 'a')", #"kind NOT_EQUALS "a""#),
    ok("NOT (population < 5)", "population GREATER_THAN_OR_EQUALS 5"),
    ok("NOT population <= 5", "population GREATER_THAN 5"),
    ok("NOT population > 5", "population LESS_THAN_OR_EQUALS 5"),
    ok("NOT population >= 5", "population LESS_THAN 5"),
    ok("NOT 5 < population", "population LESS_THAN_OR_EQUALS 5"),
    ok("NOT (kind IN {'a'})", #"kind NOT_IN ["a"]"#),
    ok("NOT (tags CONTAINS 'x')", #"tags NOT_LIST_CONTAINS "x""#, warnings: 1),
    ok("NOT ('x' IN tags)", #"tags NOT_LIST_CONTAINS "x""#),
    ok("NOT (ANY tags IN {'x'})", #"tags NOT_LIST_CONTAINS_ANY ["x"]"#),
    ok("NOT (ALL {'x'} IN tags)", #"tags NOT_LIST_CONTAINS_ALL ["x"]"#),
    ok("NOT (name BEGINSWITH 'a')", #"name NOT_BEGINS_WITH "a""#),
    ok("NOT (ANY tags BEGINSWITH 'a')", #"tags NOT_LIST_MEMBER_BEGINS_WITH "a""#),
    // AND spellings and nesting
    ok("kind == 'a' AND population > 5", #"kind EQUALS "a" AND population GREATER_THAN 5"#),
    ok("kind == 'a' && population > 5", #"kind EQUALS "a" AND population GREATER_THAN 5"#),
    ok("kind == 'a' and population > 5", #"kind EQUALS "a" AND population GREATER_THAN 5"#),
    ok(
        "(kind == 'a' AND population > 5) AND rating < 3",
        #"kind EQUALS "a" AND population GREATER_THAN 5 AND rating LESS_THAN 3"#),
    ok(
        "kind == 'a' AND (population > 5 AND (rating < 3))",
        #"kind EQUALS "a" AND population GREATER_THAN 5 AND rating LESS_THAN 3"#),
    ok("TRUEPREDICATE AND kind == 'a'", #"kind EQUALS "a""#, warnings: 1),
    ok("kind == 'a' AND FALSEPREDICATE", "NONE", warnings: 1),
    // placeholders and variables
    ok("%K == %@", #"kind EQUALS "cafe""#, args: [.key("kind"), "cafe"]),
    ok("%K > %d", "population GREATER_THAN 7", args: [.key("population"), 7]),
    ok("rating > %f", "rating GREATER_THAN 4.0", args: [4]),
    // The printf family NSPredicate's format parser takes, with length modifiers.
    ok("population > %lld", "population GREATER_THAN 7", args: [7]),
    ok("population > %hhd", "population GREATER_THAN 7", args: [7]),
    ok("population > %qd", "population GREATER_THAN 7", args: [7]),
    ok("population > %zu", "population GREATER_THAN 7", args: [7]),
    ok("population > %x", "population GREATER_THAN 7", args: [7]),
    ok("rating > %lf", "rating GREATER_THAN 4.0", args: [4]),
    ok("rating > %a", "rating GREATER_THAN 4.5", args: [4.5]),
    ok("rating > %la", "rating GREATER_THAN 4.5", args: [4.5]),
    ok("rating > %LG", "rating GREATER_THAN 4.5", args: [4.5]),
    ok("name == %s", #"name EQUALS "x""#, args: ["x"]),
    ok("rating > %g", "rating GREATER_THAN 4.5", args: [4.5]),
    ok("population == %lld", "population EQUALS 9", args: [9]),
    ok("kind == $KIND", #"kind EQUALS "museum""#, vars: ["KIND": "museum"]),
    ok("$F == 1", "population EQUALS 1", vars: ["F": .key("population")]),
    ok("kind == '%@'", #"kind EQUALS "%@""#),
    // system fields
    ok("recordName == %@", "recordName EQUALS ref(r1)", args: [ref1]),
    ok("___recordID == %@", "recordName EQUALS ref(r1)", args: [ref1]),
    ok(
        "creationDate > %@", "creationDate GREATER_THAN 1970-01-01T00:00:00.005Z",
        args: [.value(.date(Timestamp(millisecondsSince1970: 5)))]),
    ok(
        "___createTime > %@", "creationDate GREATER_THAN 1970-01-01T00:00:00.005Z",
        args: [.value(.date(Timestamp(millisecondsSince1970: 5)))]),
    ok("recordName == 'p1'", #"recordName EQUALS "p1""#, warnings: 1),
    ok("owner == %@", "owner EQUALS ref(r1)", args: [ref1]),
    ok("parent == nil", "ALL", warnings: 1),
    ok("parent != nil", "NONE", warnings: 1),
    ok("share == NIL AND kind == 'a'", #"kind EQUALS "a""#, warnings: 1),
]

let rejectedShapes: [Verdict] = [
    // OR anywhere
    bad("a == 1 OR b == 2", "OR predicates are not supported", at: "OR"),
    bad("a == 1 || b == 2", "OR predicates are not supported", at: "||"),
    bad("(a == 1)\n  or\tb == 2", "OR predicates are not supported", at: "or"),
    bad("kind == 'a' AND (b == 1 OR c == 2)", "OR predicates are not supported", at: "OR"),
    // unsupported operators
    bad("name LIKE 'caf*'", "LIKE is not supported", at: "LIKE"),
    bad("name MATCHES '.*'", "MATCHES is not supported", at: "MATCHES"),
    bad("name ENDSWITH 'x'", "ENDSWITH is not supported", at: "ENDSWITH"),
    bad("kind UTI-CONFORMS-TO 'public.data'", "UTI-CONFORMS-TO is not supported", at: "UTI-CONFORMS-TO"),
    bad("kind UTI-EQUALS 'public.data'", "UTI-EQUALS is not supported", at: "UTI-EQUALS"),
    // options
    bad("tags CONTAINS[c] 'x'", "Predicate comparison options are not supported for expression", at: "CONTAINS[c]"),
    bad("name ==[cd] 'x'", "Predicate comparison options are not supported for expression", at: "==[cd]"),
    bad("name BEGINSWITH[d] 'x'", "Predicate comparison options are not supported for expression", at: "BEGINSWITH[d]"),
    bad("name ==[n] 'x'", "Predicate comparison options are not supported for expression", at: "==[n]"),
    bad("name ==[l] 'x'", "Predicate comparison options are not supported for expression", at: "==[l]"),
    bad(
        "allTokens TOKENMATCHES[cd] 'x'", "Predicate comparison options are not supported for expression",
        at: "TOKENMATCHES[cd]"),
    bad(
        "allTokens TOKENMATCHES 'x'", "Predicate comparison options are not supported for expression",
        at: "TOKENMATCHES"),
    bad(
        "allTokens TOKENMATCHES[cdln] 'x'", "Predicate comparison options are not supported for expression",
        at: "TOKENMATCHES[cdln]"),
    bad(
        "ALL tokenize('a', 'Cd') IN allTokens", "Predicate comparison options are not supported for expression",
        at: "'Cd'"),
    // modifiers
    bad("NONE tags == 'x'", "Aggregate operator NONE is not supported", at: "NONE tags == 'x'"),
    bad("ALL tags == 'x'", "Aggregate operator ALL not allowed for comparison expression", at: "ALL tags == 'x'"),
    bad("ANY price > 5", "Aggregate operator ANY not allowed for comparison expression", at: "ANY price > 5"),
    bad("ANY tags != 'x'", "Aggregate operator ANY not allowed for comparison expression", at: "ANY tags != 'x'"),
    bad(
        "ANY tokenize('a', 'Cdl') == allTokens", "Aggregate operator ANY not allowed for comparison expression", at: nil
    ),
    bad(
        "ALL tokenize('a', 'Cdl') == allTokens", "Aggregate operator ALL not allowed for comparison expression", at: nil
    ),
    // expressions CloudKit cannot evaluate
    bad(
        "SUBQUERY(tags, $t, $t == 'x').@count > 0", "Unexpected expression", at: "SUBQUERY(tags, $t, $t == 'x').@count"),
    bad("SUBQUERY(tags, $t, $t == 'x') == 0", "Unexpected expression", at: "SUBQUERY(tags, $t, $t == 'x')"),
    bad("tags.@count > 2", "Unexpected expression", at: "tags.@count"),
    bad("@sum.price > 2", "Unexpected expression", at: "@sum.price"),
    bad("price + 1 > 5", "Unexpected expression", at: "price + 1"),
    bad("price * 2 == 4", "Unexpected expression", at: "price * 2"),
    bad("price ** 2 == 4", "Unexpected expression", at: "price ** 2"),
    bad("-price < 5", "Unexpected expression", at: "-price"),
    bad("address.city == 'Paris'", "Unexpected expression", at: "address.city"),
    bad("FUNCTION(name, 'uppercaseString') == 'A'", "Unexpected expression", at: "FUNCTION(name, 'uppercaseString')"),
    bad("CAST(founded, 'NSNumber') > 5", "Unexpected expression", at: "CAST(founded, 'NSNumber')"),
    bad("TERNARY(a == 1, b, c) == 2", "Unexpected expression", at: "TERNARY(a == 1, b, c)"),
    bad("tags[0] == 'x'", "Unexpected expression", at: "tags[0]"),
    bad("tags[FIRST] == 'x'", "Unexpected expression", at: "tags[FIRST]"),
    bad("tags[SIZE] == 2", "Unexpected expression", at: "tags[SIZE]"),
    bad("uppercase:(name) == 'A'", "Unexpected expression", at: "uppercase:(name)"),
    bad("ANYKEY == 'x'", "Unexpected expression", at: "ANYKEY"),
    // Boolean literals are NSNumber 1 / 0 in NSPredicate: CloudKit takes them as INT64.
    ok("archived == TRUE", "archived EQUALS 1"),
    ok("archived == YES", "archived EQUALS 1"),
    ok("archived != FALSE", "archived NOT_EQUALS 0"),
    ok("archived == NO", "archived EQUALS 0"),
    // operand shapes
    bad("price == cost", "Comparing two fields is not supported", at: "price == cost"),
    bad("kind IN tags", "IN requires a collection on the right", at: "tags"),
    bad("1 == 2", "Comparing two constants is not supported", at: "1 == 2"),
    bad("'a' == 'b'", "Comparing two constants is not supported", at: "'a' == 'b'"),
    bad("SELF == %@", "Unexpected expression", at: "SELF", args: [ref1]),
    bad("kind == nil", "Comparing with nil is not supported", at: "kind == nil"),
    bad("kind != NULL", "Comparing with nil is not supported", at: "kind != NULL"),
    bad("NOT (kind == nil)", "Comparing with nil is not supported", at: "(kind == nil)"),
    bad("kind IN 'a'", "IN requires a collection on the right", at: "'a'"),
    bad("kind IN %@", "IN requires a collection on the right", at: "%@", args: ["a"]),
    bad("kind == {'a', 'b'}", "Unexpected expression", at: "{'a', 'b'}"),
    bad("{'a', 'b'} IN tags", "Unexpected expression", at: "{'a', 'b'} IN tags"),
    bad("tags CONTAINS {'a'}", "Unexpected expression", at: "{'a'}"),
    bad("tokenize('a b', 'Cdl') IN allTokens", "Unexpected expression", at: "tokenize('a b', 'Cdl') IN allTokens"),
    bad("'a' BEGINSWITH kind", "Unexpected expression", at: "'a' BEGINSWITH kind"),
    bad("kind BEGINSWITH 5", "BEGINSWITH needs a string prefix, not an INT64 value", at: "5", kind: .argument),
    bad("ANY tags BEGINSWITH 5", "BEGINSWITH needs a string prefix, not an INT64 value", at: "5", kind: .argument),
    // Fidelity sweep: BEGINSWITH is a prefix search of STRING fields only (not BYTES).
    bad(
        "data BEGINSWITH %@", "BEGINSWITH needs a string prefix, not a BYTES value", at: "%@",
        args: [.value(.bytes([0, 1]))], kind: .argument),
    bad(
        "NOT (data BEGINSWITH %@)", "BEGINSWITH needs a string prefix, not a BYTES value", at: "%@",
        args: [.value(.bytes([0, 1]))], kind: .argument),
    // Fidelity sweep: system fields have one type in every record type, so their rules hold
    // without a schema; recordChangeTag (___etag) can never be indexed.
    bad("recordChangeTag == 'x'", "Field 'recordChangeTag' is not marked queryable", at: "recordChangeTag"),
    bad("___etag != 'x'", "Field 'recordChangeTag' is not marked queryable", at: "___etag"),
    bad("recordChangeTag IN {'a'}", "Field 'recordChangeTag' is not marked queryable", at: "recordChangeTag"),
    bad(
        "creationDate BEGINSWITH 'x'", "Field 'creationDate' of type TIMESTAMP does not support BEGINSWITH",
        at: "creationDate", kind: .schema),
    bad(
        "recordName > 'a'", "Field 'recordName' of type REFERENCE cannot be compared with <, <=, > or >=",
        at: "recordName", kind: .schema),
    bad(
        "creatorUserRecordID == 'u1'", "Field 'creatorUserRecordID' is REFERENCE but the value is STRING", at: "'u1'",
        kind: .schema),
    bad(
        "modificationDate CONTAINS %@", "Field 'modificationDate' of type TIMESTAMP is not a list",
        at: "modificationDate", args: [.value(.date(Timestamp(millisecondsSince1970: 0)))], kind: .schema),
    bad(
        "ANY lastModifiedUserRecordID BEGINSWITH 'x'",
        "Field 'lastModifiedUserRecordID' of type REFERENCE is not a list of strings", at: "lastModifiedUserRecordID",
        kind: .schema),
    bad("location == %@", "Locations can only be searched by distance", at: "%@", args: [here]),
    bad("owner < %@", "A REFERENCE value can only be compared with == or !=", at: "<", args: [ref1]),
    bad("data > %@", "A BYTES value can only be compared with == or !=", at: ">", args: [.value(.bytes([1]))]),
    bad(
        "kind IN {'a', 1}", "Collection elements must all have the same type (found STRING and INT64)", at: "{'a', 1}",
        kind: .argument),
    bad("kind IN {name}", "Unexpected expression", at: "name"),
    bad("kind IN {NULL}", "Comparing with nil is not supported", at: "NULL"),
    // BETWEEN
    bad("population BETWEEN {1}", "BETWEEN requires exactly two numbers", at: "{1}"),
    bad("population BETWEEN {1, 2, 3}", "BETWEEN requires exactly two numbers", at: "{1, 2, 3}"),
    bad("population BETWEEN {'a', 'b'}", "BETWEEN requires exactly two numbers", at: "{'a', 'b'}"),
    bad("population BETWEEN 5", "BETWEEN requires exactly two numbers", at: "5"),
    bad("5 BETWEEN {1, 10}", "Unexpected expression", at: "5"),
    // NOT
    bad("NOT (a == 1 AND b == 2)", "Invalid NOT predicate", at: "NOT (a == 1 AND b == 2)"),
    bad("NOT (population BETWEEN {1, 2})", "Invalid NOT predicate", at: "NOT (population BETWEEN {1, 2})"),
    bad("NOT (self CONTAINS 'x')", "Invalid NOT predicate", at: "NOT (self CONTAINS 'x')"),
    bad(
        "NOT (ALL tokenize('x', 'Cdl') IN allTokens)", "Invalid NOT predicate",
        at: "NOT (ALL tokenize('x', 'Cdl') IN allTokens)"),
    bad(
        "NOT (distanceToLocation:fromLocation:(location, %@) < 5)", "Invalid NOT predicate",
        at: "NOT (distanceToLocation:fromLocation:(location, %@) < 5)", args: [here]),
    bad("NOT NOT (a == 1)", "Invalid NOT predicate", at: "NOT NOT (a == 1)"),
    bad("NOT TRUEPREDICATE", "Invalid NOT predicate", at: "NOT TRUEPREDICATE"),
    bad("NOT (a == 1 OR b == 2)", "Invalid NOT predicate", at: "NOT (a == 1 OR b == 2)"),
    // distance
    bad(
        "distanceToLocation:fromLocation:(location, %@) > 5",
        "Searching for locations outside of a specified circular area is not supported",
        at: "distanceToLocation:fromLocation:(location, %@) > 5", args: [here]),
    bad(
        "distanceToLocation:fromLocation:(location, %@) >= 5",
        "Searching for locations outside of a specified circular area is not supported",
        at: "distanceToLocation:fromLocation:(location, %@) >= 5", args: [here]),
    bad(
        "5 < distanceToLocation:fromLocation:(location, %@)",
        "Searching for locations outside of a specified circular area is not supported",
        at: "5 < distanceToLocation:fromLocation:(location, %@)", args: [here]),
    bad(
        "distanceToLocation:fromLocation:(location, %@) == 5", "Unexpected expression",
        at: "distanceToLocation:fromLocation:(location, %@) == 5", args: [here]),
    bad(
        "distanceToLocation:fromLocation:(location, 'x') < 5", "The distance must be measured from a location",
        at: "'x'", kind: .argument),
    bad(
        "distanceToLocation:fromLocation:(location, other) < 5", "The distance must be measured from a location",
        at: "other", kind: .argument),
    bad(
        "distanceToLocation:fromLocation:(location, %@) < 'far'",
        "The radius must be a number of kilometres, not a STRING value",
        at: "'far'", args: [here], kind: .argument),
    bad(
        "distanceToLocation:fromLocation:(location, %@) < -1",
        "The radius must be a finite, non-negative number of kilometres",
        at: "-1", args: [here], kind: .argument),
    bad(
        "distanceToLocation:fromLocation:(location) < 5", "distanceToLocation:fromLocation: takes two arguments",
        at: "distanceToLocation:fromLocation:(location)"),
    // functions
    bad("now(1) < founded", "now() takes no arguments", at: "now(1)"),
    bad("ALL tokenize('a') IN allTokens", "tokenize takes two arguments", at: "tokenize('a')"),
    bad("ALL tokenize(5, 'Cdl') IN allTokens", "The first argument of tokenize must be a string", at: "5"),
    // text search
    bad("self CONTAINS 5", "Unexpected expression", at: "5"),
    bad("self CONTAINS ''", "A text search needs at least one word", at: "''", kind: .argument),
    bad("self CONTAINS ' , '", "A text search needs at least one word", at: "' , '", kind: .argument),
    bad("allTokens TOKENMATCHES[cdl] 5", "Unexpected expression", at: "5"),
    bad("name TOKENMATCHES[cdl] 'x'", "Unexpected expression", at: "name"),
    // keys
    bad("_private == 1", "Invalid key '_private'", at: "_private"),
    bad(
        "\(String(repeating: "k", count: 256)) == 1", "Invalid key '\(String(repeating: "k", count: 256))'",
        at: String(repeating: "k", count: 256)),
    bad("%K == 1", "Invalid key '1abc'", at: "%K", args: [.key("1abc")]),
    // arguments and variables
    bad("kind == $KIND", "Unsubstituted variable $KIND", at: "$KIND", kind: .argument),
    bad("kind == %@", "Missing argument for %@ (placeholder 1)", at: "%@", kind: .argument),
    bad(
        "name == %@ AND population == %d", "Missing argument for %d (placeholder 2)", at: "%d", args: ["a"],
        kind: .argument),
    bad("%K == 'a'", "Argument 1 for %K must be a key, not a STRING value", at: "%K", args: ["kind"], kind: .argument),
    bad("kind == %@", "Argument 1 for %@ is a key ('x'), not a value", at: "%@", args: [.key("x")], kind: .argument),
    bad(
        "population == %d", "Argument 1 for %d must be an integer, not a STRING value", at: "%d", args: ["x"],
        kind: .argument),
    bad(
        "population == %d", "Argument 1 for %d must be an integer, not a DOUBLE value", at: "%d", args: [1.5],
        kind: .argument),
    bad(
        "rating == %f", "Argument 1 for %f must be a number, not a STRING value", at: "%f", args: ["x"], kind: .argument
    ),
    bad("name == %s", "Argument 1 for %s must be a string, not an INT64 value", at: "%s", args: [5], kind: .argument),
    bad(
        "name == %c", "Argument 1 for %c: CloudKit takes no character values", at: "%c", args: ["x"], kind: .argument),
    bad("name == %p", "Argument 1 for %p: CloudKit takes no pointer values", at: "%p", args: ["x"], kind: .argument),
    bad(
        "photo == %@", "Assets cannot be compared", at: "%@", args: [.value(.asset(Asset(contentHash: "00", size: 1)))],
        kind: .argument),
    bad(
        "rating == %@", "A number argument is not finite (nan)", at: "%@", args: [.value(.double(.nan))],
        kind: .argument),
    bad(
        "kind IN %@", "Lists of lists are not supported", at: "%@", args: [.value(.list([.list(["a"])]))],
        kind: .argument),
    // malformed text is a syntax error, not a CKQuery rejection
    syntax("kind =="),
    syntax("kind == 'abc"),
    syntax("(kind == 'a'"),
    syntax("kind == 'a' AND"),
    syntax("kind 'a'"),
    syntax(""),
    syntax("kind == 'a' )"),
    syntax("kind IN {1, 2"),
    syntax("kind ==[x] 'a'"),
]

let schemaShapes: [Verdict] = [
    // development: fields and types checked, every index present
    ok("kind == 'cafe' AND population > 5", #"kind EQUALS "cafe" AND population GREATER_THAN 5"#, schema: .development),
    ok("population == 2.5", "population EQUALS 2.5", schema: .development),
    ok("rating == 4", "rating EQUALS 4", schema: .development),
    ok("tags CONTAINS 'x'", #"tags LIST_CONTAINS "x""#, schema: .development),
    ok("ANY scores IN {1, 2}", "scores LIST_CONTAINS_ANY [1, 2]", schema: .development),
    ok("self CONTAINS 'x'", #"allTokens CONTAINS_ANY_TOKENS "x""#, schema: .development),
    ok(
        "distanceToLocation:fromLocation:(location, %@) < 1", "location NEAR \(loc) within 1000 m", args: [here],
        schema: .development),
    ok("recordName == 'p1'", #"recordName EQUALS "p1""#, schema: .development, warnings: 1),
    ok("data == %@", "data EQUALS bytes(AQ==)", args: [.value(.bytes([1]))], schema: .development),
    bad(
        "name CONTAINS 'caf'", "CONTAINS on a String field is not a substring search", at: "CONTAINS",
        schema: .development),
    bad("nope == 1", "Unknown field 'nope' in record type 'Place'", at: "nope", schema: .development, kind: .schema),
    bad("kind == 5", "Field 'kind' is STRING but the value is INT64", at: "5", schema: .development, kind: .schema),
    bad(
        "population == 'x'", "Field 'population' is INT64 but the value is STRING", at: "'x'", schema: .development,
        kind: .schema),
    bad(
        "founded > %@", "Field 'founded' is TIMESTAMP but the value is STRING", at: "%@", args: ["2020"],
        schema: .development, kind: .schema),
    bad(
        "owner == %@", "Field 'owner' is REFERENCE but the value is STRING", at: "%@", args: ["r1"],
        schema: .development, kind: .schema),
    bad("tags == 'x'", "Field 'tags' of type STRING_LIST is a list", at: "tags", schema: .development, kind: .schema),
    bad("tags IN {'x'}", "Field 'tags' is a list", at: "tags", schema: .development),
    bad(
        "population CONTAINS 5", "Field 'population' of type INT64 is not a list", at: "population",
        schema: .development, kind: .schema),
    bad(
        "data BEGINSWITH 'x'", "Field 'data' of type BYTES does not support BEGINSWITH", at: "data",
        schema: .development, kind: .schema),
    bad(
        "recordChangeTag == 'x'", "Field 'recordChangeTag' is not marked queryable", at: "recordChangeTag",
        schema: .development),
    ok("tags CONTAINS 'x'", #"tags LIST_CONTAINS "x""#, schema: .development),
    bad(
        "population BEGINSWITH 'x'", "Field 'population' of type INT64 does not support BEGINSWITH", at: "population",
        schema: .development, kind: .schema),
    bad(
        "tags BEGINSWITH 'x'", "Field 'tags' of type STRING_LIST is a list", at: "tags", schema: .development,
        kind: .schema),
    bad(
        "ANY scores BEGINSWITH 'x'", "Field 'scores' of type INT64_LIST is not a list of strings", at: "scores",
        schema: .development, kind: .schema),
    bad(
        "distanceToLocation:fromLocation:(name, %@) < 5", "Field 'name' of type STRING is not a location", at: "name",
        args: [here],
        schema: .development, kind: .schema),
    bad(
        "photo == 'x'", "Field 'photo' of type ASSETID is never queryable", at: "photo", schema: .development,
        kind: .schema),
    bad(
        "owner > 'x'", "Field 'owner' of type REFERENCE cannot be compared with <, <=, > or >=", at: "owner",
        schema: .development, kind: .schema),
    // production: index options exactly as declared
    ok("kind == 'a'", #"kind EQUALS "a""#, schema: .production),
    ok("population > 5", "population GREATER_THAN 5", schema: .production),
    ok("rating > 4 AND rating == 4.5", "rating GREATER_THAN 4 AND rating EQUALS 4.5", schema: .production),
    ok("TRUEPREDICATE", "ALL", schema: .productionListable),
    bad(
        "population == 5", "Field 'population' is not marked queryable", at: "population", schema: .production,
        kind: .schema),
    bad("kind > 'a'", "Field 'kind' is not marked sortable", at: "kind", schema: .production, kind: .schema),
    bad(
        "TRUEPREDICATE", "Field 'recordName' is not marked queryable", at: "TRUEPREDICATE", schema: .production,
        kind: .schema),
    bad(
        "self CONTAINS 'x'", "No field of record type 'Place' is marked searchable", at: "'x'", schema: .production,
        kind: .schema),
    bad(
        "creationDate > %@", "Field 'creationDate' is not marked sortable", at: "creationDate",
        args: [.value(.date(Timestamp(millisecondsSince1970: 0)))], schema: .production, kind: .schema),
    bad(
        "distanceToLocation:fromLocation:(location, %@) < 5", "Field 'location' is not marked queryable",
        at: "location", args: [here],
        schema: .production, kind: .schema),
]

@Suite struct VerdictTableTests {
    @Test func tableIsLargeEnough() {
        #expect(acceptedShapes.count + rejectedShapes.count + schemaShapes.count >= 150)
    }

    @Test(arguments: acceptedShapes + rejectedShapes + schemaShapes)
    func verdict(_ v: Verdict) {
        let ctx = context(for: v)
        switch v.expect {
        case .accept(let filters, let warnings):
            do {
                let checked = try QueryChecker.check(v.predicate, context: ctx)
                #expect(summary(checked.predicate) == filters, "\(v.predicate)")
                #expect(checked.warnings.count == warnings, "\(v.predicate): \(checked.warnings)")
            } catch {
                Issue.record("\(v.predicate) was rejected: \(error.rendered(source: v.predicate))")
            }
        case .reject(let message, let at, let kind):
            do {
                let checked = try QueryChecker.check(v.predicate, context: ctx)
                Issue.record("\(v.predicate) was accepted as \(summary(checked.predicate))")
            } catch {
                #expect(error.kind == kind, "\(v.predicate): \(error.message)")
                if kind != .syntax { #expect(error.message == message, "\(v.predicate)") }
                if kind != .syntax { #expect(error.hint != nil || !message.isEmpty) }
                if let at {
                    let expected = byteRange(of: at, in: v.predicate)
                    #expect(
                        error.range == expected,
                        "\(v.predicate): range \(error.range) should cover '\(at)'\n\(error.rendered(source: v.predicate))"
                    )
                }
            }
        }
    }
}
