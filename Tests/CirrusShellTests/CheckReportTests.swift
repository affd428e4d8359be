import QueryChecker
import RecordModel
import Testing

@testable import CirrusShell

@Suite struct CheckReportTests {
    @Test func acceptedTextShowsCanonicalFormAndFilters() {
        let r = CheckReport(predicate: "kind='cafe'  and population>=5", context: CheckContext())
        #expect(r.isAccepted)
        #expect(
            r.text == """
                accepted
                canonical: kind == 'cafe' AND population >= 5
                filters:
                  kind EQUALS "cafe"
                  population GREATER_THAN_OR_EQUALS 5

                """)
    }

    @Test func rejectedTextHasCaretAndHint() {
        let r = CheckReport(predicate: "name LIKE 'caf*'", context: CheckContext())
        #expect(!r.isAccepted)
        #expect(r.text.hasPrefix("rejected\n  name LIKE 'caf*'\n       ^^^^\nerror: LIKE is not supported\nhint: "))
    }

    @Test func jsonOfAnAcceptedPredicateHasWebServicesFilters() {
        let args: [PredicateArgument] = [.value(.location(Location(latitude: 1, longitude: 2)))]
        let r = CheckReport(
            predicate: "distanceToLocation:fromLocation:(location, %@) < 2", context: CheckContext(arguments: args))
        #expect(r.json["accepted"] == .bool(true))
        guard case .array(let filters) = r.json["filters"], let f = filters.first else {
            Issue.record("no filters in \(r.json.jsonText)")
            return
        }
        #expect(f["comparator"] == .string("NEAR"))
        #expect(f["distance"] == .number(2000))
        #expect(f["fieldValue"]?["type"] == .string("LOCATION"))
    }

    @Test func warningsAreShownWithTheirPosition() {
        let r = CheckReport(predicate: "FALSEPREDICATE", context: CheckContext())
        #expect(r.text.contains("warning: FALSEPREDICATE is documented by CloudKit but rejected by its validator"))
        guard case .array(let w) = r.json["warnings"] else {
            Issue.record("no warnings")
            return
        }
        #expect(w.first?["start"] == .integer(0))
        #expect(w.first?["end"] == .integer(14))
    }
}

@Suite struct CheckJSONLinesTests {
    func run(_ line: String) -> JSONValue? { CheckJSONLines.check(line: line, number: 7, base: CheckContext()) }

    @Test func acceptedLineCarriesItsNumberAndFilters() {
        let out = run(#"{"predicate": "kind == %@", "args": [{"type": "STRING", "value": "cafe"}]}"#)
        #expect(out?["line"] == .integer(7))
        #expect(out?["accepted"] == .bool(true))
        #expect(out?["canonical"] == .string("kind == %@"))
    }

    @Test func rejectedLineCarriesMessageAndRange() {
        let out = run(#"{"predicate": "a == 1 OR b == 2"}"#)
        #expect(out?["accepted"] == .bool(false))
        #expect(out?["error"]?["message"] == .string("OR predicates are not supported"))
        #expect(out?["error"]?["start"] == .integer(7))
        #expect(out?["error"]?["end"] == .integer(9))
    }

    @Test(arguments: [
        ("not json", "invalid JSON: invalid literal at byte 0"),
        (#"{"args": []}"#, "a request is an object with a string \"predicate\""),
        (#"{"predicate": "a == %@", "args": 5}"#, "\"args\" must be an array"),
        (
            #"{"predicate": "a == %@", "args": [true]}"#,
            "argument true: boolean is not a CloudKit value (CloudKit has no boolean type: use INT64 0/1)"
        ),
        (
            #"{"predicate": "a == %K", "args": [{"type": "KEY"}]}"#,
            "a KEY argument needs a string \"value\" (the field name)"
        ),
    ])
    func badLinesGiveAnErrorObject(line: String, message: String) {
        let out = run(line)
        #expect(out?["accepted"] == .bool(false))
        #expect(out?["error"]?["message"] == .string(message))
        #expect(out?["error"]?["kind"] == .string("input"))
    }

    @Test func blankLinesAreSkipped() {
        #expect(run("   ") == nil)
    }

    @Test func keyArgumentsAndVariables() {
        let out = run(
            #"{"predicate": "%K == $V", "args": [{"type": "KEY", "value": "kind"}], "variables": {"V": "x"}}"#)
        #expect(out?["accepted"] == .bool(true))
    }
}
