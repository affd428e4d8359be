// Records on PostgreSQL: every field type round-trips, save policies and change tags, atomic
// batches, tenant isolation, and errors (never crashes) for bad input and unreachable servers.

import CirrusFacade
import CirrusPostgres
import RecordModel
import Testing

@Suite(.enabled(if: PG.available, PG.disabledReason))
struct PostgresRecordTests {
    static let noteSchema = Schema(
        environment: .development,
        recordTypes: [
            RecordTypeSchema(
                name: "Note",
                fields: [
                    FieldSchema(name: "title", type: .string, options: [.queryable, .sortable, .searchable]),
                    FieldSchema(name: "count", type: .int64, options: [.queryable, .sortable]),
                    FieldSchema(name: "ratio", type: .double, options: [.queryable, .sortable]),
                    FieldSchema(name: "when", type: .date, options: [.queryable, .sortable]),
                    FieldSchema(name: "blob", type: .bytes, options: [.queryable]),
                    FieldSchema(name: "place", type: .location, options: [.queryable]),
                    FieldSchema(name: "parent", type: .reference, options: [.queryable]),
                    FieldSchema(name: "file", type: .asset),
                    FieldSchema(name: "tags", type: .list(.string), options: [.queryable]),
                    FieldSchema(name: "counts", type: .list(.int64), options: [.queryable]),
                    FieldSchema(name: "ratios", type: .list(.double), options: [.queryable]),
                    FieldSchema(name: "dates", type: .list(.date), options: [.queryable]),
                    FieldSchema(name: "blobs", type: .list(.bytes), options: [.queryable]),
                    FieldSchema(name: "places", type: .list(.location), options: [.queryable]),
                    FieldSchema(name: "parents", type: .list(.reference), options: [.queryable]),
                    FieldSchema(name: "files", type: .list(.asset)),
                ]),
            RecordTypeSchema(name: "Other", fields: [FieldSchema(name: "title", type: .string, options: [.queryable])]),
        ])

    func noteStore(_ name: String, _ db: PostgresTenant.Database = .public) async throws -> PostgresStore {
        let s = try await PG.store(PG.freshContainer(name), db)
        try await s.apply(schema: Self.noteSchema)
        return s
    }

    @Test func everyFieldTypeRoundTrips() async throws {
        let store = try await noteStore("roundtrip")
        let zone = ZoneID(zoneName: "Work", ownerName: "_alice")
        let loc = Location(
            latitude: -33.8688, longitude: 151.2093, altitude: 58.5, horizontalAccuracy: 5, verticalAccuracy: 3,
            course: 270.25, speed: 1.5, timestamp: Timestamp(millisecondsSince1970: 1_700_000_000_123))
        // A deleteSelf reference needs its target, an asset its stored bytes.
        let ref = Reference(recordID: RecordID(recordName: "p1", zoneID: zone), action: .deleteSelf)
        _ = try await store.save(Record(recordType: "Note", recordID: ref.recordID), by: "_alice")
        let asset = try await store.storeAsset(Array("twelve bytes".utf8))
        #expect(asset.size == 12)
        var r = Record(recordType: "Note", recordID: RecordID(recordName: "n1", zoneID: zone))
        r["title"] = "Café 東京 \u{1F600} 'quoted' \"double\" \\ back"
        r["count"] = .int64(Int64.min)
        r["ratio"] = .double(-0.1)
        r["when"] = .date(Timestamp(millisecondsSince1970: -12_345))
        r["blob"] = .bytes([0, 1, 0xFF, 0x7F])
        r["place"] = .location(loc)
        r["parent"] = .reference(ref)
        r["file"] = .asset(asset)
        r["tags"] = .list(["a", "", "ü"])
        r["counts"] = .list([.int64(Int64.max), .int64(0)])
        r["ratios"] = .list([.double(1e-300), .double(1.5e300)])
        r["dates"] = .list([.date(Timestamp(millisecondsSince1970: 0))])
        r["blobs"] = .list([.bytes([]), .bytes([9])])
        r["places"] = .list([.location(Location(latitude: 1, longitude: 2))])
        r["parents"] = .list([.reference(Reference(recordID: RecordID(recordName: "x")))])
        r["files"] = .list([.asset(asset)])
        r["undeclared"] = "kept in the record bytes"
        let saved = try await store.save(r, by: "_alice")
        #expect(saved.recordChangeTag != nil)
        #expect(saved.creationDate != nil && saved.creationDate == saved.modificationDate)
        #expect(saved.creatorUserRecordID == RecordID(recordName: "_alice"))
        let fetched = try await store.record(for: r.recordID)
        #expect(fetched == saved)
        #expect(fetched.fields == r.fields)
        // Typed columns hold the same values: every field is found by a query on it.
        for (format, arg) in [
            ("count == %@", FieldValue.int64(Int64.min)), ("ratio == %@", .double(-0.1)),
            ("blob == %@", .bytes([0, 1, 0xFF, 0x7F])),
            ("tags CONTAINS %@", "ü"), ("counts CONTAINS %@", .int64(Int64.max)), ("parent == %@", .reference(ref)),
            ("title BEGINSWITH %@", "Café 東"), ("self CONTAINS %@", "cafe"), ("self CONTAINS %@", "東京"),
        ] {
            let q = try await store.query("Note", format, [.value(arg)])
            let page = try await store.records(matching: q)
            #expect(page.records.map(\.recordID) == [r.recordID], "\(format)")
        }
        await store.close()
    }

    @Test func savePoliciesAndChangeTags() async throws {
        let store = try await noteStore("policies")
        let id = RecordID(recordName: "n1", zoneID: ZoneID(zoneName: "Z"))
        var r = Record(recordType: "Note", recordID: id, fields: ["title": "one", "count": 1])
        let v1 = try await store.save(r)
        // A new save without the tag: the server's record exists.
        await #expect { try await store.save(r) } throws: { e in
            let e = e as! CirrusError
            return e.code == .serverRecordChanged && e.serverRecord == v1 && e.recordID == id
        }
        // With the server's tag: accepted, a new tag.
        var edit = v1
        edit["title"] = "two"
        let v2 = try await store.save(edit)
        #expect(v2.recordChangeTag != v1.recordChangeTag)
        #expect(v2.creationDate == v1.creationDate && v2.modificationDate! > v1.modificationDate!)
        // A stale tag.
        await #expect { try await store.save(edit) } throws: { e in
            (e as! CirrusError).code == .serverRecordChanged
                && (e as! CirrusError).serverRecord?.recordChangeTag == v2.recordChangeTag
        }
        // changedKeys merges over the server's fields; allKeys replaces them. Both ignore the tag.
        r = Record(recordType: "Note", recordID: id, fields: ["count": 5])
        let merged = try await store.save(r, policy: .changedKeys)
        #expect(merged.fields == ["title": "two", "count": 5])
        let replaced = try await store.save(r, policy: .allKeys)
        #expect(replaced.fields == ["count": 5])
        #expect(try await store.record(for: id) == replaced)
        // A tag for a record the server does not have.
        var ghost = Record(recordType: "Note", recordID: RecordID(recordName: "ghost"))
        ghost.recordChangeTag = "zz"
        await #expect { try await store.save(ghost) } throws: { ($0 as! CirrusError).code == .unknownItem }
        // A name keeps its type.
        await #expect { try await store.save(Record(recordType: "Other", recordID: id), policy: .allKeys) } throws: {
            ($0 as! CirrusError).code == .constraintViolation
        }
        // Deleting.
        try await store.delete(id)
        await #expect { try await store.record(for: id) } throws: { ($0 as! CirrusError).code == .unknownItem }
        await #expect { try await store.delete(id) } throws: { ($0 as! CirrusError).code == .unknownItem }
        await store.close()
    }

    @Test func atomicBatchRollsBackAndNonAtomicReportsEachItem() async throws {
        let store = try await noteStore("batches")
        let zone = ZoneID(zoneName: "Z")
        let existing = try await store.save(
            Record(recordType: "Note", recordID: RecordID(recordName: "e", zoneID: zone)))
        let a = Record(recordType: "Note", recordID: RecordID(recordName: "a", zoneID: zone), fields: ["title": "a"])
        let b = Record(recordType: "Note", recordID: RecordID(recordName: "b", zoneID: zone), fields: ["title": "b"])
        var stale = existing
        stale.recordChangeTag = "stale"
        await #expect {
            try await store.modify(saving: [a, stale, b], deleting: [existing.recordID], atomically: true)
        } throws: { e in
            let e = e as! CirrusError
            return e.code == .batchRequestFailed && e.partialErrors[stale.recordID]?.code == .serverRecordChanged
                && e.partialErrors[a.recordID]?.code == .batchRequestFailed && e.partialErrors.count == 3
        }
        #expect(
            try await store.records(for: [a.recordID, b.recordID, existing.recordID]).keys.sorted() == [
                existing.recordID
            ])
        // A failure inside PostgreSQL (a value the column refuses) rolls back too.
        var bad = b
        bad["title"] = "nul \u{0} inside"
        await #expect { try await store.modify(saving: [a, bad], atomically: true) } throws: { e in
            (e as! CirrusError).partialErrors[bad.recordID]?.code == .invalidArguments
        }
        #expect(try await store.records(for: [a.recordID]).isEmpty)
        // Not atomic: the good items are written, the bad one is reported.
        let result = try await store.modify(saving: [a, stale, b], atomically: false)
        #expect(result.saved.map(\.recordID) == [a.recordID, b.recordID])
        #expect(result.failures.keys.sorted() == [stale.recordID])
        #expect(try await store.records(for: [a.recordID, b.recordID]).count == 2)
        // More than 400 items.
        let many = (0..<401).map { Record(recordType: "Note", recordID: RecordID(recordName: "m\($0)")) }
        await #expect { try await store.modify(saving: many) } throws: {
            ($0 as! CirrusError).code == .limitExceeded
        }
        await store.close()
    }

    @Test func tenantsNeverSeeEachOther() async throws {
        let container = PG.freshContainer("tenants")
        let alice = try await PG.store(container, .private(owner: "_alice"))
        let bob = try await PG.store(container, .private(owner: "_bob"))
        try await alice.apply(schema: Self.noteSchema)
        try await bob.apply(schema: Self.noteSchema)  // the same schema: a no-op
        for i in 0..<5 {
            let id = RecordID(recordName: "n\(i)")
            _ = try await alice.save(
                Record(
                    recordType: "Note", recordID: id,
                    fields: ["title": .string("alice \(i)"), "count": .int64(Int64(i))]))
            _ = try await bob.save(
                Record(
                    recordType: "Note", recordID: id, fields: ["title": .string("bob \(i)"), "count": .int64(Int64(i))])
            )
        }
        try await bob.delete(RecordID(recordName: "n0"))
        #expect(try await alice.record(for: RecordID(recordName: "n0"))["title"] == "alice 0")
        let q = try await alice.query("Note", "count >= 0", sortDescriptors: [.field("count", ascending: true)])
        let a = try await alice.records(matching: q, resultsLimit: 2)
        #expect(a.records.allSatisfy { $0["title"]?.description.contains("alice") ?? false })
        let b = try await bob.records(matching: q)
        #expect(b.records.count == 4 && b.records.allSatisfy { ($0["title"].map { "\($0)" } ?? "").contains("bob") })
        // A cursor of one tenant is refused by the other.
        await #expect { try await bob.records(continuingFrom: a.cursor!) } throws: {
            ($0 as! CirrusError).code == .invalidArguments
        }
        let text = try await alice.records(matching: alice.query("Note", "self CONTAINS 'bob'"))
        #expect(text.records.isEmpty)
        await alice.close()
        await bob.close()
    }

    @Test func badInputIsAnErrorNotACrash() async throws {
        let store = try await noteStore("badinput")
        // A value of another type than the schema's.
        await #expect {
            try await store.save(
                Record(recordType: "Note", recordID: RecordID(recordName: "x"), fields: ["count": "text"]))
        } throws: { ($0 as! CirrusError).code == .invalidArguments }
        // A scalar in a list field.
        await #expect {
            try await store.save(
                Record(recordType: "Note", recordID: RecordID(recordName: "x"), fields: ["tags": "one"]))
        } throws: { ($0 as! CirrusError).code == .invalidArguments }
        // An empty list cannot create a field (its type is unknown).
        await #expect {
            try await store.save(
                Record(recordType: "Note", recordID: RecordID(recordName: "x"), fields: ["fresh": .list([])]))
        } throws: { ($0 as! CirrusError).code == .invalidArguments }
        // Names CloudKit refuses.
        await #expect {
            try await store.save(Record(recordType: "Note", recordID: RecordID(recordName: "x"), fields: ["_bad": 1]))
        } throws: { ($0 as! CirrusError).code == .invalidArguments }
        // Predicates the checker refuses.
        await #expect { try await store.query("Note", "title == 'a' OR title == 'b'") } throws: {
            ($0 as! CirrusError).code == .invalidArguments
        }
        // A schema change that is not add-only.
        var smaller = Self.noteSchema
        smaller.recordTypes["Note"]?.fields["count"] = nil
        await #expect { try await store.apply(schema: smaller) } throws: {
            ($0 as! CirrusError).code == .serverRejectedRequest
        }
        var retyped = Self.noteSchema
        retyped.recordTypes["Note"]?.fields["count"]?.type = .string
        await #expect { try await store.apply(schema: retyped) } throws: {
            ($0 as! CirrusError).code == .serverRejectedRequest
        }
        await store.close()
    }

    @Test func productionRefusesNewTypesFieldsAndUnindexedQueries() async throws {
        let container = PG.freshContainer("production")
        let store = try await PostgresStore.connect(
            url: PG.url!, tenant: PostgresTenant(containerID: container, environment: .production, database: .public))
        var schema = Self.noteSchema
        schema.environment = .production
        await #expect { try await store.apply(schema: Self.noteSchema) } throws: {
            ($0 as! CirrusError).code == .invalidArguments  // a development schema
        }
        try await store.apply(schema: schema)
        await #expect {
            try await store.save(Record(recordType: "Nope", recordID: RecordID(recordName: "x")))
        } throws: {
            ($0 as! CirrusError).code == .serverRejectedRequest
        }
        await #expect {
            try await store.save(Record(recordType: "Note", recordID: RecordID(recordName: "x"), fields: ["new": 1]))
        } throws: { ($0 as! CirrusError).code == .serverRejectedRequest }
        // Other.title is QUERYABLE but not SORTABLE.
        _ = try await store.query("Other", "title == 'a'")
        await #expect { try await store.query("Other", "title < 'a'") } throws: {
            ($0 as! CirrusError).code == .invalidArguments
        }
        #expect(await store.schema == schema)
        await store.close()
    }

    @Test func developmentGrowsTheSchemaAndOptionChangesRederiveRows() async throws {
        let container = PG.freshContainer("evolve")
        let store = try await PG.store(container)
        let schema = Schema(
            environment: .development,
            recordTypes: [RecordTypeSchema(name: "Pin", fields: [FieldSchema(name: "a", type: .string)])])
        try await store.apply(schema: schema)
        // A new type and a new field, just in time, with CloudKit's automatic options.
        _ = try await store.modify(saving: [
            Record(recordType: "Pin", recordID: RecordID(recordName: "p"), fields: ["a": "old words", "b": "later"]),
            Record(recordType: "Tag", recordID: RecordID(recordName: "t"), fields: ["n": 3]),
        ])
        let grown = await store.schema
        #expect(grown.recordTypes["Pin"]?.fields["b"]?.options == [.queryable, .sortable, .searchable])
        #expect(
            grown.recordTypes["Tag"]?.fields["n"]
                == FieldSchema(name: "n", type: .int64, options: [.queryable, .sortable]))
        #expect(try await store.records(matching: store.query("Pin", "b == 'later'")).records.count == 1)
        #expect(try await store.records(matching: store.query("Tag", "n > 2")).records.count == 1)
        // `a` was not SEARCHABLE: its words are not tokens until the schema says so.
        #expect(try await store.records(matching: store.query("Pin", "self CONTAINS 'words'")).records.isEmpty)
        var searchable = grown
        searchable.recordTypes["Pin"]?.fields["a"]?.options = [.searchable]
        try await store.apply(schema: searchable)
        #expect(try await store.records(matching: store.query("Pin", "self CONTAINS 'words'")).records.count == 1)
        // A rolled-back request does not grow the schema.
        await #expect {
            try await store.modify(saving: [
                Record(recordType: "Pin", recordID: RecordID(recordName: "q"), fields: ["c": 1]),
                Record(recordType: "Pin", recordID: RecordID(recordName: "p"), fields: ["a": "no tag"]),
            ])
        } throws: { ($0 as! CirrusError).code == .batchRequestFailed }
        #expect(await store.schema.recordTypes["Pin"]?.fields["c"] == nil)
        // A second store on the same container reads the stored schema.
        let again = try await PG.store(container)
        #expect(await again.schema == searchable)
        await store.close()
        await again.close()
    }

    @Test func explainShowsPostgresPlan() async throws {
        let store = try await noteStore("explain")
        let q = try await store.query(
            "Note", "count > 3 AND distanceToLocation:fromLocation:(place, %@) < 10",
            [.value(.location(Location(latitude: 48.85, longitude: 2.29)))],
            sortDescriptors: [.distance(field: "place", from: Location(latitude: 48.85, longitude: 2.29))])
        let e = try await store.explain(q)
        #expect(e.plan.joined().contains("Limit"))
        #expect(e.sql.contains("ST_DWithin"))
        // The public database names its key in the text (its partial indexes' predicate); a
        // private one binds its own and adds that it is not the public one.
        #expect(e.sql.contains("tenant = '\(store.tenant.key)'"))
        #expect(!e.parameters.contains(store.tenant.key))
        let alice = try await noteStore("explain", .private(owner: "_alice"))
        let p = try await alice.explain(q)
        #expect(p.parameters.first == alice.tenant.key)
        #expect(p.sql.contains("tenant <> '\(alice.tenant.publicKey)'"))
        await store.close()
        await alice.close()
    }
}

/// Errors that need no server.
@Suite struct PostgresConnectionErrorTests {
    @Test func unreachableServerIsAClearError() async throws {
        let tenant = PostgresTenant(containerID: "c", environment: .development, database: .public)
        await #expect {
            try await PostgresStore.connect(
                url: "postgres://cirrus@127.0.0.1:1/cirrus", tenant: tenant, timeout: .seconds(5))
        } throws: { e in
            let e = e as! CirrusError
            return (e.code == .networkUnavailable || e.code == .networkFailure) && e.location == "127.0.0.1:1/cirrus"
        }
    }

    @Test func malformedURLIsRefused() async throws {
        let tenant = PostgresTenant(containerID: "c", environment: .development, database: .public)
        await #expect { try await PostgresStore.connect(url: "mysql://x", tenant: tenant) } throws: {
            ($0 as! CirrusError).code == .invalidArguments
        }
    }
}

/// Plans: the statements use the indexes the schema's options create.
@Suite(.enabled(if: PG.available, PG.disabledReason))
struct PostgresPlanTests {
    @Test func indexedFiltersAndNearestFirstUseTheirIndexes() async throws {
        let store = try await PG.store(PG.freshContainer("plans"))
        try await store.apply(
            schema: Schema(
                environment: .development,
                recordTypes: [
                    RecordTypeSchema(
                        name: "Place",
                        fields: [
                            FieldSchema(name: "kind", type: .string, options: [.queryable, .sortable]),
                            FieldSchema(name: "name", type: .string, options: [.searchable]),
                            FieldSchema(name: "tags", type: .list(.string), options: [.queryable]),
                            FieldSchema(name: "location", type: .location, options: [.queryable]),
                        ])
                ]))
        var rng = SplitMix64(seed: 7)
        for batch in 0..<5 {
            let records = (0..<400).map { i -> Record in
                let n = batch * 400 + i
                return Record(
                    recordType: "Place", recordID: RecordID(recordName: "p\(n)"),
                    fields: [
                        "kind": .string(n == 7 ? "rare" : "common\(n % 3)"), "name": .string("word\(n) common"),
                        "tags": .list([.string("t\(n % 50)")]),
                        "location": .location(
                            Location(
                                latitude: Double(rng.below(1700)) / 10 - 85,
                                longitude: Double(rng.below(3600)) / 10 - 180)),
                    ])
            }
            _ = try await store.modify(saving: records, policy: .allKeys)
        }
        try await store.analyze()
        // resultsLimit 0: the engine's page (100) and a cursor; desiredKeys projects.
        let all = try await store.query("Place", "TRUEPREDICATE", sortDescriptors: [.field("kind", ascending: false)])
        let first = try await store.records(matching: all, desiredKeys: ["kind"])
        #expect(first.records.count == PostgresStore.defaultResultsLimit && first.cursor != nil)
        #expect(first.records.allSatisfy { Array($0.fields.keys) == ["kind"] && $0.recordChangeTag != nil })
        let bare = try await store.records(continuingFrom: first.cursor!, desiredKeys: [], resultsLimit: 5)
        #expect(bare.records.count == 5 && bare.records.allSatisfy { $0.fields.isEmpty && $0.creationDate != nil })
        let here = Location(latitude: 48.85, longitude: 2.29)
        for (format, args, sorts, expected) in [
            ("kind == 'rare'", [PredicateArgument](), [SortDescriptor](), "i_r_Place_kind"),
            ("self CONTAINS 'word12'", [], [], "i_r_Place_tokens"),
            ("tags CONTAINS 't3'", [], [], "i_r_Place_tags"),
            (
                "distanceToLocation:fromLocation:(location, %@) < 100", [.value(.location(here))], [],
                "i_r_Place_location"
            ),
            // Nearest first: a KNN scan of the GiST index bounds the page.
            ("TRUEPREDICATE", [], [.distance(field: "location", from: here)], "Order By: (f_location <->"),
        ] {
            let q = try await store.query("Place", format, args, sortDescriptors: sorts)
            let e = try await store.explain(q, resultsLimit: 10, analyze: true)
            #expect(e.plan.joined(separator: "\n").contains(expected), "\(format)\n\(e.text)")
        }
        await store.close()
    }
}

/// Writers of one tenant in two processes (two stores, two pools): a request holds the tenant's
/// counter row until it commits, so requests of a tenant are serialized, as the façade's writer.
@Suite(.enabled(if: PG.available, PG.disabledReason))
struct PostgresConcurrencyTests {
    @Test func concurrentCreatesOfOneRecordLetExactlyOneWin() async throws {
        let container = PG.freshContainer("race")
        let a = try await PG.store(container)
        let b = try await PG.store(container)
        try await a.apply(
            schema: Schema(
                environment: .development,
                recordTypes: [RecordTypeSchema(name: "Pin", fields: [FieldSchema(name: "n", type: .int64)])]))
        // b read the schema before a applied it.
        await #expect { try await b.query("Pin", "TRUEPREDICATE") } throws: {
            ($0 as! CirrusError).code == .invalidArguments
        }
        try await b.reloadSchema()
        _ = try await b.query("Pin", "TRUEPREDICATE")
        for round in 0..<10 {
            let id = RecordID(recordName: "r\(round)", zoneID: ZoneID(zoneName: "Z"))
            async let x = Result { () async throws(CirrusError) in
                try await a.save(Record(recordType: "Pin", recordID: id, fields: ["n": 1]))
            }
            async let y = Result { () async throws(CirrusError) in
                try await b.save(Record(recordType: "Pin", recordID: id, fields: ["n": 2]))
            }
            let results = await [x, y]
            let wins = results.compactMap { try? $0.get() }
            let losses = results.compactMap { r -> CirrusError? in
                if case .failure(let e) = r { return e }
                return nil
            }
            #expect(wins.count == 1 && losses.map(\.code) == [.serverRecordChanged], "round \(round): \(losses)")
            #expect(losses.first?.serverRecord == wins.first, "round \(round)")
        }
        await a.close()
        await b.close()
    }
}

extension Result where Failure == CirrusError {
    /// The outcome of an async throwing call.
    init(_ body: () async throws(CirrusError) -> Success) async {
        do {
            self = .success(try await body())
        } catch {
            self = .failure(error)
        }
    }
}
