// Prepared queries on every engine this run reaches: errors come at `prepare`; a prepared query
// run with other arguments answers what the same query written with them answers (checked
// against the saved records); a wrong number or type of arguments is refused, as is a value the
// checker refuses.

import Cirrus
import CirrusTestSupport
import RecordModel
import Testing

@Suite(.serialized) struct PreparedQueryEngineTests {
    static func places() -> [Record] {
        (0..<60).map { i in
            Record(
                recordType: "Place", recordID: RecordID(recordName: String(format: "p%02d", i)),
                fields: ["kind": .string(["cafe", "bar", "park"][i % 3]), "population": .int64(Int64(i * 10))])
        }
    }

    @Test(arguments: Engine.available)
    func aPreparedQueryAnswersAsTheQueryWrittenWithItsArguments(_ engine: Engine) async throws {
        try await withFixture(engine) { f in
            let db = try await f.database(.private(owner: "_alice"), as: .user("_alice"))
            let saved = Self.places()
            _ = try await db.modifyRecords(saving: saved, deleting: [])
            let prepared = try db.prepare(
                RecordQuery(
                    recordType: "Place", predicate: "kind == %@ AND population > %@", arguments: ["cafe", 0],
                    sortDescriptors: [.field("population", ascending: false)]))
            #expect(prepared.requiredIndexes.map(\.field).sorted() == ["kind", "population"])
            for (kind, bound) in [("cafe", Int64(0)), ("bar", 200), ("park", 590), ("zoo", 0), ("cafe", 300)] {
                let args: [PredicateArgument] = [.value(.string(kind)), .value(.int64(bound))]
                let got = try await db.records(matching: prepared, arguments: args, resultsLimit: 100).matchResults
                    .map { try $0.1.get().recordID.recordName }
                var matching: [(population: Int64, name: String)] = []
                for r in saved {
                    guard case .int64(let p)? = r["population"], r["kind"] == .string(kind), p > bound else { continue }
                    matching.append((p, r.recordID.recordName))
                }
                let want = matching.sorted { $0.population > $1.population }.map(\.name)
                #expect(got == want, "\(kind), \(bound)")
                let written = try await db.records(
                    matching: RecordQuery(
                        recordType: "Place", predicate: "kind == %@ AND population > %@", arguments: args,
                        sortDescriptors: [.field("population", ascending: false)]), resultsLimit: 100
                ).matchResults.map { try $0.1.get().recordID.recordName }
                #expect(got == written)
            }
            // Pages and cursors as with any query.
            let first = try await db.records(matching: prepared, arguments: ["bar", 0], resultsLimit: 7)
            #expect(first.matchResults.count == 7 && first.queryCursor != nil)
        }
    }

    @Test(arguments: Engine.available)
    func errorsComeAtPrepareAndWrongArgumentsAreRefused(_ engine: Engine) async throws {
        try await withFixture(engine) { f in
            let db = try await f.database(.private(owner: "_alice"), as: .user("_alice"))
            _ = try await db.modifyRecords(saving: Self.places(), deleting: [])
            let syntax = await caught { try db.prepare(RecordQuery(recordType: "Place", predicate: "kind == ")) }
            #expect(syntax?.code == .invalidArguments && syntax?.message.contains("^") == true)
            let unknown = await caught { try db.prepare(RecordQuery(recordType: "Place", predicate: "nope == 1")) }
            #expect(unknown?.code == .invalidArguments)
            let typed = await caught {
                try db.prepare(RecordQuery(recordType: "Place", predicate: "population > %@", arguments: ["x"]))
            }
            #expect(typed?.code == .invalidArguments)
            let other = try await f.database(.private(owner: "_alice"), as: .user("_bob"))
            #expect(await code { try other.prepare(RecordQuery(recordType: "Place")) } == .permissionFailure)

            let prepared = try db.prepare(
                RecordQuery(recordType: "Place", predicate: "population > %@", arguments: [0]))
            let count = await caught { try await db.records(matching: prepared, arguments: [1, 2]) }
            #expect(count?.code == .invalidArguments && count?.message.contains("takes 1 argument; 2 given") == true)
            #expect(await code { try await db.records(matching: prepared, arguments: []) } == .invalidArguments)
            #expect(await code { try await db.records(matching: prepared, arguments: ["ten"]) } == .invalidArguments)
            #expect(
                await code { try await db.records(matching: prepared, arguments: [.value(.double(.nan))]) }
                    == .invalidArguments)
            // Still good after the refusals.
            #expect(try await db.records(matching: prepared, arguments: [580]).matchResults.count == 1)
        }
    }
}
