// Tenants sharded by hash over two workers (PostgreSQL's declarative partitioning over
// postgres_fdw foreign tables, standing in for Citus; ShardTestSupport.swift makes the layout):
// tenants land on both workers; each tenant's queries through the coordinator return exactly
// what the embedded engine's oracle returns; the plan of a single-tenant query scans one foreign
// table on the tenant's worker; a worker stopped mid-test fails only its own tenants' requests,
// with an error naming it, and loses no acknowledged write; a hung worker fails its tenants'
// requests within the foreign server's connect_timeout. Serialized: two tests stop a worker.
// On failure the message has the seed: CIRRUS_SEED=<seed> make test-postgres-shards replays it.

import CirrusFacade
import CirrusPostgres
import CirrusTestSupport
import QueryChecker
import QueryExecution
import RecordModel
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite(.enabled(if: Shards.available, Shards.disabledReason), .serialized)
struct PostgresShardTests {
    static let owners = (0..<8).map { "user\($0)" }

    @Test func tenantsSpreadAndAnswerAsTheOracle() async throws {
        let seed = TestSeed.next()
        var data = PlaceGenerator(rng: SeededRandom(seed: seed))
        let container = PG.freshContainer("shards")
        let typeSchema = data.schema()
        try await Shards.create(container, Schema(environment: .development, recordTypes: [typeSchema]))
        var placement: [Int: [String]] = [:]
        for owner in try await Shards.owners(container, perWorker: 4) {
            let store = try await Shards.store(container, owner)
            let generated = (0..<60).map { PG.conforming(data.record($0), to: typeSchema) }
            var start = 0
            while start < generated.count {
                let end = min(generated.count, start + 1 + data.rng.below(25))
                _ = try await store.modify(saving: Array(generated[start..<end]), policy: .allKeys, atomically: false)
                start = end
            }
            let worker = try #require(try await Shards.worker(of: store.tenant), "\(owner) has rows on no worker")
            placement[worker, default: []].append(owner)
            let stored = Array(try await store.records(for: generated.map(\.recordID)).values)
            #expect(stored.count == generated.count, "seed \(seed)")
            for _ in 0..<12 {
                let q = try PG.randomPlaceQuery(&data)
                let zone: ZoneID? = data.rng.chance(0.3) ? data.zones[data.rng.below(2)] : nil
                let expected = FullScan.results(q, records: stored, schema: typeSchema, zone: zone).map(\.recordName)
                var got: [String] = []
                var page = try await store.records(matching: q, inZone: zone, resultsLimit: 7)
                for _ in 0..<100 {
                    got += page.records.map(\.recordID.recordName)
                    guard let next = page.cursor else { break }
                    page = try await store.records(continuingFrom: next, resultsLimit: 7)
                }
                #expect(got == expected, "seed \(seed), \(owner) on worker \(worker): \(q)")
                // Every foreign scan of the plan is on the tenant's worker.
                let plan = try await store.explain(q, inZone: zone, verbose: true).plan.joined(separator: "\n")
                let other = Shards.servers[1 - worker]
                #expect(
                    !plan.contains("_\(other)"), "\(owner) is on worker \(worker), the plan reads \(other):\n\(plan)")
            }
            await store.close()
        }
        #expect(
            placement[0]?.isEmpty == false && placement[1]?.isEmpty == false, "tenants on both workers: \(placement)")
    }

    @Test func aSingleTenantQueryScansOneForeignTableOnItsWorker() async throws {
        let container = PG.freshContainer("shardplan")
        try await Shards.create(container, Self.placeSchema)
        for owner in Self.owners.prefix(4) {
            let store = try await Shards.store(container, owner)
            _ = try await store.save(Self.place("p1", "cafe"))
            let worker = try #require(try await Shards.worker(of: store.tenant))
            let q = try await store.query(
                "Place", "kind == %@", ["cafe"], sortDescriptors: [.field("name", ascending: true)])
            let plan = try await store.explain(q, verbose: true).plan
            let scans = plan.filter { $0.contains("Foreign Scan on ") }
            let server = Shards.servers[worker]
            #expect(scans.count == 1, "one foreign scan for \(owner):\n\(plan.joined(separator: "\n"))")
            #expect(
                scans.allSatisfy { $0.contains("_\(server)") },
                "the scan is on \(server), \(owner)'s worker:\n\(plan.joined(separator: "\n"))")
            // The tenant condition goes to the worker with the rest of the filter.
            let remote = plan.filter { $0.contains("Remote SQL:") }
            #expect(
                remote.count == 1 && remote[0].contains("tenant = ") && remote[0].contains("f_kind"),
                "\(plan.joined(separator: "\n"))")
            #expect(try await store.records(matching: q).records.map(\.recordID.recordName) == ["p1"])
            await store.close()
        }
    }

    // Every wait is bounded: pg_ctlcluster by Shards.shell's timeout, each store call by the
    // store's 5 s deadline, the re-fetch after the restart by a 30 s deadline.
    @Test func aStoppedWorkerFailsOnlyItsTenantsAndLosesNoAcknowledgedWrite() async throws {
        let container = PG.freshContainer("shardstop")
        try await Shards.create(container, Self.placeSchema)
        var stores: [Int: [PostgresStore]] = [:]
        var acknowledged: [String: [Record]] = [:]
        for owner in try await Shards.owners(container, perWorker: 4) {
            let store = try await Shards.store(container, owner, timeout: .seconds(5))
            var saved: [Record] = []
            for i in 0..<5 { saved.append(try await store.save(Self.place("r\(i)", "k\(i % 2)"))) }
            acknowledged[owner] = saved
            stores[try #require(try await Shards.worker(of: store.tenant)), default: []].append(store)
        }
        let down = try #require(stores[1]?.first != nil ? 1 : nil, "no tenant on worker 1")
        let up = 1 - down
        try #require(stores[up]?.isEmpty == false, "no tenant on worker \(up)")
        let downURL = Shards.workers[down]
        let clock = ContinuousClock()
        // Every store's sessions on the coordinator have used the worker, so postgres_fdw holds a
        // connection to it in each: the stop ends those, and the requests below find them closed.
        try await Shards.control(downURL, "stop")
        var restarted = false
        do {
            for store in stores[down] ?? [] {
                let owner = Self.owner(store)
                for what in ["save", "fetch", "query"] {
                    let started = clock.now
                    let f = await Self.failure {
                        switch what {
                        case "save": _ = try await store.save(Self.place("lost", "k0"))
                        case "fetch": _ = try await store.records(for: acknowledged[owner]!.map(\.recordID))
                        default:
                            _ = try await store.records(matching: try await store.query("Place", "TRUEPREDICATE", []))
                        }
                    }
                    let took = clock.now - started
                    guard let error = f else {
                        Issue.record("a \(what) of \(owner) succeeded with its worker stopped")
                        continue
                    }
                    #expect(error.code == .networkUnavailable, "\(what) of \(owner): \(error)")
                    #expect(error.message.contains("worker \(Shards.servers[down])"), "names the worker: \(error)")
                    #expect(error.description.contains("cannot be reached"), "\(error)")
                    #expect(took < .seconds(3), "\(what) of \(owner) failed after \(took), not at once: \(error)")
                }
            }
            // The other worker's tenants keep reading and writing.
            for store in stores[up] ?? [] {
                let owner = Self.owner(store)
                let r = try await store.save(Self.place("while-down", "k0"))
                acknowledged[owner]!.append(r)
                let q = try await store.query("Place", "kind == %@", ["k0"])
                let names = try await store.records(matching: q).records.map(\.recordID.recordName).sorted()
                #expect(names == ["r0", "r2", "r4", "while-down"], "\(owner)")
            }
            try await Shards.control(downURL, "start")
            restarted = true
        } catch {
            if !restarted { try? await Shards.control(downURL, "start") }
            for store in (stores[0] ?? []) + (stores[1] ?? []) { await store.close() }
            throw error
        }
        // Every acknowledged write is there, and nothing that failed; then each tenant writes again.
        // `start` returns once the worker accepts connections, so the first fetch should succeed;
        // retrying (until a deadline) only tolerates a slow start, and is counted.
        var retried: [String] = []
        for store in (stores[0] ?? []) + (stores[1] ?? []) {
            let owner = Self.owner(store)
            let ids = acknowledged[owner]!.map(\.recordID) + [RecordID(recordName: "lost")]
            let deadline = clock.now + .seconds(30)
            var fetched: [RecordID: Record]? = nil
            while fetched == nil {
                do {
                    fetched = try await store.records(for: ids)
                } catch {
                    retried.append("\(owner): \(error)")
                    if clock.now >= deadline { throw error }
                    try await Task.sleep(for: .milliseconds(250))
                }
            }
            let got = fetched ?? [:]
            #expect(got.count == acknowledged[owner]!.count, "\(owner): \(got.keys.map(\.recordName).sorted())")
            for r in acknowledged[owner]! { #expect(got[r.recordID] == r, "\(owner) \(r.recordID.recordName)") }
            let after = try await store.save(Self.place("after", "k1"))
            #expect(try await store.record(for: after.recordID) == after, "\(owner)")
            await store.close()
        }
        #expect(retried.isEmpty, "fetches failed after the worker was restarted: \(retried)")
    }

    // A worker that does not answer at all (its postmaster stopped with SIGSTOP: connections are
    // accepted by the kernel and never get a reply, as with a hung or unreachable host) fails its
    // tenants' requests after the foreign server's connect_timeout (3 s, scripts/postgres-shards.sh),
    // well before the store's own 10 s deadline, with the worker named; the other worker's tenants
    // are served meanwhile, and once the worker runs again its tenants are too. New stores: a
    // session that already holds a connection to a worker's backend would still be served by it.
    @Test func aWorkerThatDoesNotAnswerFailsItsTenantsWithinTheConnectTimeout() async throws {
        let container = PG.freshContainer("shardhung")
        try await Shards.create(container, Self.placeSchema)
        var written: [Int: (owner: String, record: Record)] = [:]
        for owner in try await Shards.owners(container, perWorker: 1) {
            let store = try await Shards.store(container, owner)
            let r = try await store.save(Self.place("r", "k"))
            let worker = try #require(try await Shards.worker(of: store.tenant))
            if written[worker] == nil { written[worker] = (owner, r) }
            await store.close()
        }
        let hung = try #require(written[1], "no tenant on worker 1")
        let live = try #require(written[0], "no tenant on worker 0")
        let hungStore = try await Shards.store(container, hung.owner, timeout: .seconds(10))
        let liveStore = try await Shards.store(container, live.owner, timeout: .seconds(10))
        let pid = try await Shards.postmaster(of: Shards.workers[1])
        let clock = ContinuousClock()
        try #require(kill(pid, SIGSTOP) == 0, "SIGSTOP \(pid)")
        var failures: [(String, CirrusError?, Duration)] = []
        for what in ["fetch", "save"] {
            let started = clock.now
            let f = await Self.failure {
                if what == "fetch" {
                    _ = try await hungStore.records(for: [hung.record.recordID])
                } else {
                    _ = try await hungStore.save(Self.place("lost", "k"))
                }
            }
            failures.append((what, f, clock.now - started))
        }
        let liveRead = await Self.failure {
            let got = try await liveStore.records(for: [live.record.recordID])
            #expect(got[live.record.recordID] == live.record, "\(live.owner) on the answering worker")
        }
        kill(pid, SIGCONT)
        #expect(liveRead == nil, "the other worker's tenant: \(String(describing: liveRead))")
        for (what, f, took) in failures {
            guard let error = f else {
                Issue.record("a \(what) of \(hung.owner) succeeded with its worker hung")
                continue
            }
            #expect(error.code == .networkUnavailable, "\(what): \(error)")
            #expect(error.message.contains("worker shard1"), "names the worker: \(error)")
            #expect(error.message.contains("timeout expired"), "libpq's connect timeout: \(error)")
            #expect(took >= .seconds(2) && took < .seconds(8), "\(what) failed after \(took): \(error)")
        }
        // Running again, the worker serves its tenant, and nothing of the failed save was written.
        let after = try await hungStore.records(for: [hung.record.recordID, RecordID(recordName: "lost")])
        #expect(after == [hung.record.recordID: hung.record], "\(hung.owner) after SIGCONT")
        await hungStore.close()
        await liveStore.close()
    }

    // A worker that is slow to answer a statement (here: the tenant's counter row locked on the
    // worker by another session, so the save's first statement waits there) does not hold the
    // request past the store's deadline, and the write does not land later: the coordinator
    // session's statement_timeout (80 % of the store's 5 s deadline) cancels the statement — on
    // the worker too — and the transaction is rolled back. Without it the store would report a
    // timeout at 5 s and the save would commit once the lock is released.
    @Test func aStatementWaitingOnAWorkerIsCancelledBeforeTheDeadline() async throws {
        let container = PG.freshContainer("shardslow")
        try await Shards.create(container, Self.placeSchema)
        var chosen: (store: PostgresStore, record: Record, worker: Int)? = nil
        for owner in Self.owners where chosen == nil {
            let store = try await Shards.store(container, owner, timeout: .seconds(5))
            let r = try await store.save(Self.place("r", "k"))
            chosen = (store, r, try #require(try await Shards.worker(of: store.tenant)))
        }
        let (store, record, worker) = try #require(chosen)
        let clock = ContinuousClock()
        let (error, took): (CirrusError?, Duration) = try await Shards.withConnection(Shards.workers[worker]) {
            c in
            try await Shards.exec(c, "BEGIN")
            let table = "\(Shards.quote(store.tenant.namespace)).cirrus_tenants"
            try await Shards.exec(
                c, "SELECT sequence FROM \(table) WHERE tenant = \(Shards.literal(store.tenant.key)) FOR UPDATE")
            let started = clock.now
            let f = await Self.failure { _ = try await store.save(Self.place("lost", "k")) }
            let took = clock.now - started
            try await Shards.exec(c, "ROLLBACK")
            return (f, took)
        }
        let e = try #require(error, "the save succeeded while its counter row was locked on the worker")
        #expect(e.code == .networkFailure, "\(e)")
        #expect(e.message.contains("statement_timeout"), "cancelled by the server, not the store's deadline: \(e)")
        #expect(took >= .seconds(3) && took < .seconds(5), "failed after \(took): \(e)")
        // The worker answers again: the cancelled save never lands, and the tenant writes on.
        try await Task.sleep(for: .milliseconds(500))
        let got = try await store.records(for: [record.recordID, RecordID(recordName: "lost")])
        #expect(got == [record.recordID: record], "\(got.keys.map(\.recordName).sorted())")
        let after = try await store.save(Self.place("after", "k"))
        #expect(try await store.record(for: after.recordID) == after)
        await store.close()
    }

    static let placeSchema = Schema(
        environment: .development,
        recordTypes: [
            RecordTypeSchema(
                name: "Place",
                fields: [
                    FieldSchema(name: "name", type: .string, options: [.queryable, .sortable]),
                    FieldSchema(name: "kind", type: .string, options: [.queryable]),
                ])
        ])

    static func place(_ name: String, _ kind: String) -> Record {
        var r = Record(recordType: "Place", recordID: RecordID(recordName: name))
        r["name"] = .string(name)
        r["kind"] = .string(kind)
        return r
    }

    /// The error `body` throws, if any (a non-CirrusError is recorded as an issue).
    static func failure(_ body: () async throws -> Void) async -> CirrusError? {
        do {
            try await body()
            return nil
        } catch {
            guard let e = error as? CirrusError else {
                Issue.record("not a CirrusError: \(error)")
                return CirrusError(.internalError, "\(error)")
            }
            return e
        }
    }

    static func owner(_ store: PostgresStore) -> String {
        if case .private(let o) = store.tenant.database { return String(o.dropFirst()) }
        return "public"
    }
}
