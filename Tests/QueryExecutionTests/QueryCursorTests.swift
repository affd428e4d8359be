import CirrusTestSupport
import QueryChecker
import RecordModel
import Testing

@testable import QueryExecution

@Suite struct QueryCursorTests {
    let secret = [UInt8](repeating: 7, count: 32)

    func cursor(
        _ p: String = "kind == 'cafe' AND population > 5", _ args: [PredicateArgument] = []
    ) throws -> QueryCursor {
        let q = Query(
            recordType: "Place", predicate: try QueryChecker.check(p, context: CheckContext(arguments: args)).predicate,
            sortDescriptors: [
                .field("population", ascending: false),
                .distance(field: "location", from: Location(latitude: 1, longitude: 2)),
            ])
        return QueryCursor(
            scope: "private:_u1", query: q, zone: ZoneID(zoneName: "Z"), desiredKeys: ["a", "b"],
            position: OrderKey(
                values: [.int64(9), .double(0.25)], recordID: RecordID(recordName: "r-9", zoneID: ZoneID(zoneName: "Z"))
            ))
    }

    @Test func hmacMatchesRFC4231() {
        let mac = CursorMAC.sha256(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
        #expect(
            mac.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test func base64URLRoundTripsAndRejectsOtherAlphabets() {
        #expect(Base64URL.encode(Array("foob".utf8)) == "Zm9vYg")
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
        for n in 0..<40 {
            let b = (0..<n).map { UInt8(($0 * 37 + n) % 256) }
            #expect(Base64URL.decode(Base64URL.encode(b)) == b)
        }
        #expect(Base64URL.decode("ab+c") == nil)
        #expect(Base64URL.decode("abcde") == nil)
    }

    @Test func aCursorSurvivesItsToken() throws {
        let c = try cursor(
            "kind IN {'a', 'b'} AND distanceToLocation:fromLocation:(location, %@) < 3 AND data == %@",
            [.value(.location(Location(latitude: -33.9, longitude: 151.2))), .value(.bytes([1, 2]))])
        #expect(try QueryCursor(token: c.token(secret: secret), secret: secret) == c)
        #expect(try QueryCursor(token: c.token(secret: secret), secret: secret, expecting: c.query) == c)
    }

    @Test func randomFilterListsSurviveTokens() throws {
        let seed = TestSeed.next()
        var rng = SeededRandom(seed: seed)
        let preds = [
            "TRUEPREDICATE", "FALSEPREDICATE", "a == 1", "b != 'x'", "c IN {1, 2}", "ALL {'x'} IN t",
            "self CONTAINS 'w'",
            "d > %@", "NOT (e BEGINSWITH 'q')", "ANY t BEGINSWITH 'z'", "recordName == %@",
        ]
        for _ in 0..<200 {
            let p = preds[rng.below(preds.count)]
            let arg: PredicateArgument =
                p.contains("recordName")
                ? .value(.reference(Reference(recordID: RecordID(recordName: "n\(rng.below(9))"))))
                : .value(.date(Timestamp(millisecondsSince1970: Int64(rng.below(1000)))))
            let q = Query(
                recordType: "T", predicate: try QueryChecker.check(p, context: CheckContext(arguments: [arg])).predicate
            )
            let c = QueryCursor(
                scope: "public", query: q, zone: rng.chance(0.5) ? nil : .default,
                desiredKeys: rng.chance(0.5) ? nil : [],
                position: OrderKey(values: [], recordID: RecordID(recordName: "r\(rng.below(100))")))
            #expect(try QueryCursor(token: c.token(secret: secret), secret: secret) == c, "seed \(seed)")
        }
    }

    @Test func aTamperedTokenIsRejected() throws {
        var bytes = Base64URL.decode(try cursor().token(secret: secret))!
        bytes[20] ^= 1
        #expect(throws: CursorError.notIssuedHere) { try QueryCursor(token: Base64URL.encode(bytes), secret: secret) }
    }

    @Test func aTokenOfAnotherDatabaseIsRejected() throws {
        let other = [UInt8](repeating: 8, count: 32)
        #expect(throws: CursorError.notIssuedHere) {
            try QueryCursor(token: try cursor().token(secret: other), secret: secret)
        }
    }

    @Test func aTokenOfAnotherQueryIsRejected() throws {
        let c = try cursor()
        let different = try cursor("kind == 'bar'").query
        #expect(throws: CursorError.otherQuery) {
            try QueryCursor(token: c.token(secret: secret), secret: secret, expecting: different)
        }
    }

    @Test func malformedTokensSayWhy() throws {
        #expect(throws: CursorError.malformed("not base64url")) {
            try QueryCursor(token: "not a token!", secret: secret)
        }
        #expect(throws: CursorError.malformed("too short")) { try QueryCursor(token: "AQID", secret: secret) }
        let token = try cursor().token(secret: secret)
        let truncated = Base64URL.decode(token)!.dropLast(17)
        #expect(throws: CursorError.self) { try QueryCursor(token: Base64URL.encode(Array(truncated)), secret: secret) }
    }

    @Test func anotherVersionIsRejected() throws {
        var bytes = Base64URL.decode(try cursor().token(secret: secret))!
        bytes[0] = 2
        #expect(throws: CursorError.unsupportedVersion(2)) {
            try QueryCursor(token: Base64URL.encode(bytes), secret: secret)
        }
    }
}
