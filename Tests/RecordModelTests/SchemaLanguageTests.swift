import Testing

@testable import RecordModel

@Suite struct SchemaLanguageTests {
    let sample = """
        DEFINE SCHEMA
            // roles other than the built-in ones are accepted and ignored
            CREATE ROLE Editor;

            RECORD TYPE Place (
                "___createTime" TIMESTAMP SORTABLE,
                "___recordID"   REFERENCE QUERYABLE,
                name            STRING QUERYABLE SORTABLE SEARCHABLE,
                tags            LIST<STRING> QUERYABLE,
                location        LOCATION QUERYABLE,
                photo           ASSET,
                population      INT64 QUERYABLE SORTABLE,
                GRANT WRITE TO "_creator",
                GRANT CREATE, READ TO "_icloud",
                GRANT READ TO "_world"
            );
            RECORD TYPE "Users" (
                name STRING
            );
        """

    @Test func readsACktoolSchema() throws {
        let s = try Schema(schemaLanguage: sample, environment: .production)
        let place = try #require(s.recordTypes["Place"])
        #expect(place.fields["name"]?.options == [.queryable, .sortable, .searchable])
        #expect(place.fields["tags"]?.type == .list(.string))
        #expect(place.fields["photo"]?.type == .asset)
        #expect(place.fields["photo"]?.options == [])
        #expect(place.systemFieldOptions == [.creationDate: .sortable, .recordName: .queryable])
        #expect(
            place.grants == [
                Grant([.write], to: "_creator"), Grant([.create, .read], to: "_icloud"), Grant([.read], to: "_world"),
            ])
        #expect(s.recordTypes["Users"]?.grants == Grant.defaults)
        #expect(s.environment == .production)
    }

    @Test func printThenReadIsTheSameSchema() throws {
        let s = try Schema(schemaLanguage: sample, environment: .development)
        let again = try Schema(schemaLanguage: s.schemaLanguage, environment: .development)
        #expect(again == s)
    }

    @Test(arguments: [
        (
            "DEFINE SCHEMA RECORD TYPE A ( x BOOLEAN )", 1, 33,
            "unknown field type BOOLEAN; expected STRING, INT64, DOUBLE, TIMESTAMP, BYTES, LOCATION, REFERENCE, ASSET or LIST<…>"
        ),
        (
            "DEFINE SCHEMA\nRECORD TYPE A ( x STRING FAST )", 2, 26,
            "unknown index option FAST; expected QUERYABLE, SORTABLE or SEARCHABLE"
        ),
        (
            "DEFINE SCHEMA RECORD TYPE A ( x INT64 SEARCHABLE )", 1, 31,
            "SEARCHABLE applies to STRING fields only (x is INT64)"
        ),
        ("DEFINE SCHEMA RECORD TYPE A ( x STRING, x INT64 )", 1, 41, "field x is defined twice in A"),
        ("DEFINE SCHEMA RECORD TYPE A ( x LIST<LIST<STRING>> )", 1, 31, "lists cannot be nested"),
        ("RECORD TYPE A ()", 1, 1, "expected DEFINE"),
        ("DEFINE SCHEMA RECORD TYPE A ( GRANT FLY TO \"_world\" )", 1, 37, "expected READ, CREATE or WRITE"),
        ("DEFINE SCHEMA RECORD TYPE \"A", 1, 27, "unterminated quoted name"),
    ])
    func errorsSayWhereAndWhat(text: String, line: Int, column: Int, message: String) {
        #expect(throws: SchemaLanguageError(message: message, line: line, column: column)) {
            try Schema(schemaLanguage: text, environment: .development)
        }
    }
}
