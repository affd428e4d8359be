// Kill test of `cirrus serve` (issue 49, "Damage never locks data away"): the real server on a
// container on disk, four clients writing over HTTP (creates, updates and replaces with the change
// tag they were given, deletes; 1–20 operations a request), SIGKILLed at a random moment. After
// each restart every acknowledged record is there with exactly the acknowledged fields and change
// tag, every acknowledged deletion is gone, and each request cut off by the kill left its records
// either as they were or as it asked. After the last round the server is killed once more while
// idle and the container is opened directly: the same records, and its invariants hold.
//
// The clients (ServeKillTests+Writer.swift) speak raw HTTP/1.1 (ServeKillTests+HTTP.swift) on
// their own threads, so a blocked socket never holds up the task that kills the server.
// CIRRUS_SERVE_KILL_ROUNDS sets the rounds (default 3); CIRRUS_SEED replays a run.
// scripts/serve-kill.py is the same check from outside, for longer runs.

import Cirrus
import CirrusTestSupport
import Foundation
import RecordModel
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct ServeKillTests {
    static let container = "iCloud.local.cirrus"

    @Test func aKilledServerLosesNoAcknowledgedRecord() async throws {
        guard let cirrus = ResetKillTests.cirrusPath() else {
            Issue.record("cirrus not found next to \(CommandLine.arguments[0]); run `swift build` first")
            return
        }
        let seed = TestSeed.next()
        print("ServeKillTests seed \(seed)")  // first, so that a hang still names its seed
        var g = SeededRandom(seed: seed)
        let rounds = ProcessInfo.processInfo.environment["CIRRUS_SERVE_KILL_ROUNDS"].flatMap { Int($0) } ?? 3
        let root = NSTemporaryDirectory() + "cirrus-servekill-\(getpid())"
        try? FileManager.default.removeItem(atPath: root)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let db = root + "/db"
        try FileManager.default.createDirectory(atPath: db, withIntermediateDirectories: true)
        let apiToken = try Self.createToken(cirrus, db: db)
        var writers: [ServeKillWriter] = []
        for i in 0..<4 {
            let token = try Self.createToken(cirrus, db: db, "--user", "_writer\(i)")
            writers.append(ServeKillWriter(index: i, webAuthToken: token, seed: seed &+ UInt64(i + 1)))
        }
        let start = {
            try ServeProcess.start(
                cirrus: cirrus, directory: db, container: Self.container, logPath: root + "/serve.log")
        }
        var server = try start()
        defer { server.killNow() }  // whatever fails, no server outlives the test

        for round in 0..<rounds {
            let killAfter = g.below(1_300)
            let port = server.port
            let paths = writers.map {
                server.path(
                    "records/modify", container: Self.container,
                    query: "ckAPIToken=\(apiToken)&ckWebAuthToken=\($0.webAuthToken)")
            }
            let before = writers.reduce(0) { $0 + $1.acknowledged }
            let current = writers
            let progress = WriterProgress()
            // The deadline: a writer that never sees the kill still stops, and the test ends.
            async let written = Self.writeConcurrently(
                current, port: port, paths: paths, until: .now + .seconds(30), progress: progress)
            // The kill falls at a random moment once every writer has had an answer. Nothing here
            // throws (try?): the writers stop only when the server dies.
            let loaded = ContinuousClock.now + .seconds(30)
            while progress.count < current.count && ContinuousClock.now < loaded {
                try? await Task.sleep(for: .milliseconds(5))
            }
            try? await Task.sleep(for: .milliseconds(killAfter))
            server.killNow()
            writers = await written
            let inFlight = writers.reduce(0) { $0 + $1.inFlight.count }
            let done = writers.reduce(0) { $0 + $1.inFlightDone }
            let restartStarted = ContinuousClock.now
            server = try start()
            let restart = ContinuousClock.now - restartStarted
            let lookupPath = server.path("records/lookup", container: Self.container, query: "ckAPIToken=\(apiToken)")
            let names = writers.flatMap(\.names)
            let lookupPort = server.port
            let found = try await Self.onThread { Self.lookOver(names, port: lookupPort, path: lookupPath) }.get()
            var problems: [String] = []
            for i in writers.indices { problems += writers[i].check(found) }
            let acknowledged = writers.reduce(0) { $0 + $1.acknowledged }
            let foundDone = writers.reduce(0) { $0 + $1.inFlightDone } - done
            print(
                "ServeKillTests seed \(seed) round \(round): killed \(killAfter) ms into the load, "
                    + "\(acknowledged - before) operations acknowledged (\(acknowledged) in all), "
                    + "\(inFlight) in flight (\(foundDone) found done), restarted in \(restart), "
                    + "\(names.count) records checked, \(problems.count) lost")
            #expect(problems.isEmpty, "seed \(seed) round \(round): \(problems.prefix(10))")
            let unexpected = writers.flatMap(\.unexpected)
            #expect(
                unexpected.isEmpty,
                "seed \(seed) round \(round): answers a live server never gives: \(unexpected.prefix(10))")
            for i in writers.indices { writers[i].unexpected = [] }
            if !problems.isEmpty { return }  // later rounds would only repeat the damage
        }

        // Killed once more while idle, then read without any server in the way.
        server.killNow()
        let c = try Container.open(at: db)
        let found = try await Self.lookInto(c, writers.flatMap(\.names))
        var problems: [String] = []
        for i in writers.indices { problems += writers[i].check(found) }
        #expect(problems.isEmpty, "seed \(seed) opened directly: \(problems.prefix(10))")
        try c.checkInvariants()
        try c.close()
        #expect(writers.allSatisfy { $0.acknowledged > 0 }, "seed \(seed): a writer had nothing acknowledged")
    }

    /// Each writer on its own thread until the server is killed; the writers, with what they learnt.
    static func writeConcurrently(
        _ writers: [ServeKillWriter], port: Int, paths: [String], until deadline: ContinuousClock.Instant,
        progress: WriterProgress
    ) async -> [ServeKillWriter] {
        await withTaskGroup(of: ServeKillWriter.self) { group in
            for (writer, path) in zip(writers, paths) {
                group.addTask {
                    await onThread {
                        var w = writer
                        w.write(port: port, modifyPath: path, until: deadline, progress: progress)
                        return w
                    }
                }
            }
            var out: [ServeKillWriter] = []
            for await w in group { out.append(w) }
            return out.sorted { $0.index < $1.index }
        }
    }

    /// `body` on a thread of its own: blocking sockets must not take the few threads of Swift's
    /// cooperative pool (two on a two-core machine) from the task that kills the server.
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }

    /// What records/lookup answers for each name (200 a request, CloudKit's limit).
    static func lookOver(_ names: [String], port: Int, path: String) -> Result<[String: FoundState], ServeFailure> {
        var found: [String: FoundState] = [:]
        for start in stride(from: 0, to: names.count, by: 200) {
            let chunk = Array(names[start..<min(start + 200, names.count)])
            let body = JSONValue.object([
                ("records", .array(chunk.map { .object([("recordName", .string($0))]) }))
            ]).jsonText
            let answer: LoopbackAnswer
            switch LoopbackHTTP.post(port: port, path: path, body: Array(body.utf8)) {
            case .failure(let f): return .failure(ServeFailure("records/lookup: \(f)"))
            case .success(let a): answer = a
            }
            guard answer.status == 200, let json = try? JSONValue.parse(String(decoding: answer.body, as: UTF8.self)),
                case .array(let items)? = json["records"], items.count == chunk.count
            else {
                return .failure(
                    ServeFailure(
                        "records/lookup: HTTP \(answer.status) \(String(decoding: answer.body, as: UTF8.self))"))
            }
            for (name, item) in zip(chunk, items) {
                if let code = item["serverErrorCode"]?.stringValue {
                    guard code == "NOT_FOUND" else { return .failure(ServeFailure("lookup \(name): \(item.jsonText)")) }
                    found[name] = .absent
                } else if let r = try? Record(webServicesJSON: item), r.recordID.recordName == name {
                    found[name] = .present(r)
                } else {
                    return .failure(ServeFailure("lookup \(name) answered \(item.jsonText)"))
                }
            }
        }
        return .success(found)
    }

    /// The same, read from the container itself.
    static func lookInto(_ c: Container, _ names: [String]) async throws -> [String: FoundState] {
        var found: [String: FoundState] = [:]
        for start in stride(from: 0, to: names.count, by: 200) {
            let ids = names[start..<min(start + 200, names.count)].map { RecordID(recordName: $0) }
            for (id, result) in try await c.publicDatabase.records(for: ids) {
                switch result {
                case .success(let r): found[id.recordName] = .present(r)
                case .failure(let e) where e.code == .unknownItem: found[id.recordName] = .absent
                case .failure(let e): throw e
                }
            }
        }
        return found
    }

    /// `cirrus token create --db DIR ARGS…`: the token it prints.
    static func createToken(_ cirrus: String, db: String, _ arguments: String...) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: cirrus)
        p.arguments = ["token", "create", "--db", db] + arguments
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard p.terminationStatus == 0, !token.isEmpty else {
            throw ServeFailure("cirrus token create \(arguments) exited with \(p.terminationStatus)")
        }
        return token
    }
}
