import CirrusTestSupport
import Testing

@testable import RecordModel

@Suite struct JSONTests {
    @Test func parsesEveryKindAndKeepsIntegerPrecision() throws {
        let v = try JSONValue.parse(
            #" {"a": [1, -2.5e3, true, false, null, "x\"\u00e9\ud83d\ude00"], "big": 9007199254740993} "#)
        #expect(v["a"] == .array([.integer(1), .number(-2500), .bool(true), .bool(false), .null, .string("x\"é😀")]))
        #expect(v["big"] == .integer(9_007_199_254_740_993))
    }

    @Test(arguments: [
        ("", 0, "unexpected end of JSON"),
        ("{\"a\" 1}", 5, "expected ':'"),
        ("[1,]", 3, "unexpected character ']'"),
        ("\"abc", 0, "unterminated string"),
        ("01", 1, "unexpected text after the JSON value"),
        ("1e999", 0, "number out of range"),
        ("\"\\ud800\"", 7, "unpaired surrogate"),
        ("[1] x", 4, "unexpected text after the JSON value"),
    ])
    func reportsErrorsWithOffsets(text: String, offset: Int, message: String) {
        #expect(throws: JSONError(message, offset: offset)) { try JSONValue.parse(text) }
    }

    @Test func deepNestingIsAnErrorNotACrash() {
        let deep = String(repeating: "[", count: 100_000)
        #expect(throws: JSONError.self) { try JSONValue.parse(deep) }
    }

    @Test func writeThenParseRoundTrips() throws {
        let seed = TestSeed.next()
        var rng = SeededRandom(seed: seed)
        func gen(_ depth: Int) -> JSONValue {
            switch rng.below(depth > 3 ? 5 : 7) {
            case 0: return .null
            case 1: return .bool(rng.chance(0.5))
            case 2: return .integer(Int64(bitPattern: rng.next()))
            case 3: return .number(Double(rng.below(1_000_000)) / 7 + 0.5)
            case 4:
                return .string(String((0..<rng.below(6)).map { _ in "a\"\\\n\u{1}é😀 ".randomElement(using: &rng)! }))
            case 5: return .array((0..<rng.below(4)).map { _ in gen(depth + 1) })
            default: return .object((0..<rng.below(4)).map { i in ("k\(i)", gen(depth + 1)) })
            }
        }
        for _ in 0..<500 {
            let v = gen(0)
            #expect(try JSONValue.parse(v.jsonText) == v, "seed \(seed): \(v.jsonText)")
        }
    }
}

@Suite struct WebServicesJSONTests {
    @Test func everyTypeRoundTrips() throws {
        let values: [FieldValue] = [
            .string("héllo"), .int64(-42), .double(2.5), .date(Timestamp(millisecondsSince1970: 1_700_000_000_123)),
            .bytes([0, 1, 254, 255]),
            .location(
                Location(
                    latitude: 48.8584, longitude: 2.2945, altitude: 35, horizontalAccuracy: 5,
                    verticalAccuracy: 3, course: 90, speed: 1.5, timestamp: Timestamp(millisecondsSince1970: 7))),
            .reference(
                Reference(
                    recordID: RecordID(recordName: "artist-1", zoneID: ZoneID(zoneName: "Art", ownerName: "_u1")),
                    action: .deleteSelf)),
            .asset(Asset(contentHash: "ab12", size: 99)),
            .list([.string("a"), .string("b")]), .list([.int64(1)]),
            .list([.location(Location(latitude: -90, longitude: 180))]),
        ]
        for v in values {
            let back = try FieldValue(webServicesJSON: JSONValue.parse(v.webServicesJSON.jsonText))
            #expect(back == v)
            if case .location(let l) = v, case .location(let m) = back { #expect(l == m) }
            if case .reference(let r) = v, case .reference(let s) = back { #expect(r.action == s.action) }
        }
    }

    @Test func typeIsInferredWhenAbsent() throws {
        #expect(try FieldValue(webServicesJSON: JSONValue.parse(#"{"value": "x"}"#)) == .string("x"))
        #expect(try FieldValue(webServicesJSON: JSONValue.parse(#"{"value": 3}"#)) == .int64(3))
        #expect(try FieldValue(webServicesJSON: JSONValue.parse(#"{"value": [1, 2]}"#)) == .list([1, 2]))
        let loc = try FieldValue(webServicesJSON: JSONValue.parse(#"{"value": {"latitude": 1, "longitude": 2}}"#))
        #expect(loc == .location(Location(latitude: 1, longitude: 2)))
    }

    @Test(arguments: [
        (#"{"value": "x", "type": "INT64"}"#, #""x" is not a valid INT64 value"#),
        (#"{"value": true}"#, "boolean is not a CloudKit value (CloudKit has no boolean type: use INT64 0/1)"),
        (
            #"{"value": 1, "type": "BOOL"}"#,
            #"unknown field type "BOOL"; expected STRING, INT64, DOUBLE, TIMESTAMP, BYTES, LOCATION, REFERENCE, ASSETID or one of them with _LIST"#
        ),
        (
            #"{"value": {"latitude": 91, "longitude": 0}, "type": "LOCATION"}"#,
            "LOCATION latitude must be in -90...90 and longitude in -180...180"
        ),
        (#"{"value": "!!", "type": "BYTES"}"#, #""!!" is not valid base64 for a BYTES value"#),
        (#"{"value": 1, "type": "STRING_LIST"}"#, "a STRING_LIST value is an array, not number"),
        (
            #"{"value": {"recordName": "a", "action": "CASCADE"}, "type": "REFERENCE"}"#,
            #"unknown reference action "CASCADE"; expected NONE or DELETE_SELF"#
        ),
        (#"[1]"#, #"a field value is an object {"value": …, "type": …}"#),
    ])
    func badValuesSayWhatIsWrong(json: String, message: String) throws {
        #expect(throws: WebServicesJSONError(message)) { try FieldValue(webServicesJSON: JSONValue.parse(json)) }
    }
}
