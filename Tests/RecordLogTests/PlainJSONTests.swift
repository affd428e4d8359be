import CirrusTestSupport
import RecordModel
import Testing

/// `Record.plainWebServicesJSON` against the general reader as the model: whatever line it
/// takes, it makes exactly the record `Record(webServicesJSON: JSONValue.parse(line))` makes;
/// every other line (other shapes, every error) it declines.
@Suite struct PlainJSONTests {
    /// The plain reader's record for `line` (nil: declined), checked against the general one.
    @discardableResult
    func check(_ line: String, _ comment: String = "") -> Record? {
        let fast = Array(line.utf8).withUnsafeBufferPointer(Record.plainWebServicesJSON)
        guard let fast else { return nil }
        let slow = try? Record(webServicesJSON: JSONValue.parse(line))
        #expect(slow.map { identical(fast, $0) } == true, "\(comment) \(line)")
        return fast
    }

    /// Lines the exporter writes, records of every field type with and without zones, system
    /// fields and change tags: taken unless a field's type cannot be written plainly, and read
    /// as the general reader reads them.
    @Test func exportedLinesReadAsTheGeneralReaderReadsThem() {
        var g = SeededRandom(seed: 9)
        var taken = 0
        for _ in 0..<3000 {
            var line = ""
            TestRecords.record(&g).webServicesJSON.write(to: &line)
            if check(line) != nil { taken += 1 }
        }
        #expect(taken > 1500, "\(taken) of 3000 lines taken")
    }

    static let sample = """
        {"recordName": "g1", "recordType": "City", "fields": {"name": {"value": "Vila \\"x\\" \\u00e9", "type": "STRING"}, \
        "location": {"value": {"latitude": 42.5, "longitude": 1.5}, "type": "LOCATION"}, \
        "population": {"type": "INT64", "value": -1418}, "alt": {"value": ["a", "b\\n"], "type": "STRING_LIST"}, \
        "n": {"value": [1, 2, -3], "type": "INT64_LIST"}, "d": {"value": 2.5e3, "type": "DOUBLE"}, \
        "e": {"value": [], "type": "STRING_LIST"}}}
        """

    /// Members in either order, spaces, escapes, empty lists are taken; the sample with one
    /// byte changed to a JSON-significant one, cut short, or given another member or a repeated
    /// key is declined or read as the general reader reads it.
    @Test func variationsAreDeclinedOrAgree() {
        let plain = check(Self.sample)
        #expect(plain != nil)
        #expect(plain?.fields["population"] == .int64(-1418))
        #expect(check("  {\"fields\":{},\"recordType\":\"T\" , \"recordName\":\"a\"}  ") != nil)
        for declined in [
            #"{"recordName": "a", "recordType": "T", "recordName": "b"}"#,
            #"{"recordName": "a", "recordType": "T", "pluginFields": {}}"#,
            #"{"recordName": "a", "recordType": "T", "fields": {"x": {"value": 1}}}"#,
            #"{"recordName": "a", "recordType": "T", "fields": {"x": {"value": 1, "type": "int64"}}}"#,
            #"{"recordName": "a", "recordType": "T", "fields": {"x": {"value": 1, "type": "INT64", "type": "INT64"}}}"#,
            #"{"recordName": "a", "recordType": "T", "fields": {"x": {"value": 1.0, "type": "INT64"}}}"#,
            #"{"recordName": "a", "recordType": "T", "fields": {"x": {"value": "1", "type": "INT64"}}} x"#,
            #"{"recordName": 1, "recordType": "T"}"#,
        ] {
            #expect(check(declined) == nil, "\(declined)")
        }
        let bytes = Array(Self.sample.utf8)
        let significant = Array("\"\\,:{}[] x1-.e".utf8)
        var taken = 0
        for i in bytes.indices {
            check(String(decoding: bytes[..<i], as: UTF8.self), "cut at \(i)")
            for c in significant where c != bytes[i] {
                var m = bytes
                m[i] = c
                if check(String(decoding: m, as: UTF8.self), "byte \(i)") != nil { taken += 1 }
            }
        }
        #expect(taken > 100, "\(taken) variations taken")
    }
}
