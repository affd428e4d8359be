// Reset of the development environment: everything of development goes (schema, records,
// zones, subscriptions, roles, change history), production stays byte for byte; a power cut at
// every step of the reset leaves development either reset or exactly as it was; bad input and
// an open development container are refused and change nothing.

import CirrusIO
import CirrusTestSupport
import Foundation
import RecordLog
import RecordModel
import Testing

@testable import CirrusEmbedded
@testable import CirrusFacade

private func durableOptions(_ env: TestEnv) -> ContainerOptions {
    ContainerOptions(
        fileSystem: env.fs, clock: env.clock, random: SeededRandomSource(seed: 7), durability: .everyCommit)
}

/// Every file under `dir` with its bytes.
private func tree(_ fs: InMemoryFileSystem, _ dir: String) throws -> [String: [UInt8]] {
    var out: [String: [UInt8]] = [:]
    for name in try fs.list(dir) {
        let p = dir + "/" + name
        if let bytes = fs.contents(p) { out[p] = bytes } else { out.merge(try tree(fs, p)) { a, _ in a } }
    }
    return out
}

/// A development container with public and private records, a zone, a subscription, a role and
/// a type with fields, promoted to a production that has a record of its own; both closed.
private func populated(_ env: TestEnv) async throws {
    let dev = try Container.open(at: env.dir, options: durableOptions(env))
    try await dev.publicDatabase(as: .user("_alice")).save(rec("p1", "Place", ["name": "Louvre"]))
    let mine = dev.privateDatabase(for: "_alice")
    let z = try await mine.save(zone: ZoneID(zoneName: "Trips"))
    try await mine.save(rec("t1", "Trip", zone: z, ["days": 4]))
    _ = try await mine.save(Subscription(id: "trips", zoneID: z))
    try dev.createRole("Editor")
    try dev.assign(user: "_alice", to: "Editor")
    try dev.promoteSchema()
    try dev.close()
    let prod = try Container.open(at: env.dir, environment: .production, options: durableOptions(env))
    try await prod.publicDatabase(as: .user("_bob")).save(rec("p9", "Place", ["name": "Orsay"]))
    try prod.close()
}

/// What development holds, in a few words: "reset" for a fresh environment, "as it was" for the
/// populated one; anything else is described.
private func state(_ c: Container) async throws -> String {
    let places = c.publicDatabase.querySnapshot(recordType: "Place")!.rowCount
    let trips = c.privateDatabase(for: "_alice").querySnapshot(recordType: "Trip")!.rowCount
    let zones = try await c.privateDatabase(for: "_alice").allZones().map(\.zoneName)
    let subs = try await c.privateDatabase(for: "_alice").allSubscriptions().map(\.id)
    let types = c.schema.recordTypes.keys.sorted()
    let roles = c.securityRoles().map(\.name)
    if places == 0, trips == 0, zones == ["_defaultZone"], subs.isEmpty, types == ["Users"], roles.isEmpty {
        return "reset"
    }
    if places == 1, trips == 1, zones.sorted() == ["Trips", "_defaultZone"], subs == ["trips"],
        types == ["Place", "Trip", "Users"], roles == ["Editor"], c.securityRoles()[0].members == ["_alice"]
    {
        return "as it was"
    }
    return "places \(places) trips \(trips) zones \(zones) subscriptions \(subs) types \(types) roles \(roles)"
}

@Suite struct ResetTests {
    @Test func resetDeletesDevelopmentAndLeavesProductionByteForByte() async throws {
        let env = TestEnv()
        try await populated(env)
        let production = try tree(env.fs, "/c/production")
        #expect(production.count > 2)
        let before = try Container.open(at: env.dir, options: durableOptions(env))
        let zone = ZoneID(zoneName: "Trips", ownerName: "_alice")
        let token = try await before.privateDatabase(for: "_alice").changes(in: zone, since: nil).token
        #expect(try await state(before) == "as it was")
        try before.close()

        try Container.resetDevelopment(at: env.dir, options: durableOptions(env))
        #expect(try tree(env.fs, "/c/production") == production)
        #expect(!env.fs.exists("/c/development.reset"))
        let after = try Container.open(at: env.dir, options: durableOptions(env))
        #expect(try await state(after) == "reset")
        // The old zone and its change history are gone.
        #expect(
            await code { try await after.privateDatabase(for: "_alice").changes(in: zone, since: token) }
                == .zoneNotFound)
        // The reset environment works as a new one: the schema grows again.
        try await after.publicDatabase(as: .user("_bob")).save(rec("x", "Other", ["n": 1]))
        #expect(after.schema.recordTypes.keys.sorted() == ["Other", "Users"])
        try after.close()
        let prod = try Container.open(at: env.dir, environment: .production, options: durableOptions(env))
        #expect(prod.publicDatabase.querySnapshot(recordType: "Place")!.rowCount == 1)
        #expect(prod.securityRoles().map(\.name) == ["Editor"])
        try prod.close()
        #expect(try tree(env.fs, "/c/production") == production)
    }

    @Test func anOpenDevelopmentContainerRefusesTheReset() async throws {
        let env = TestEnv()
        try await populated(env)
        let open = try Container.open(at: env.dir, options: durableOptions(env))
        do {
            try Container.resetDevelopment(at: env.dir, options: durableOptions(env))
            Issue.record("the reset went ahead under an open container")
        } catch {
            #expect(error.code == .internalError)
            #expect(
                error.message.contains("is open") && error.message.contains("nothing was reset"), "\(error.message)")
        }
        #expect(try await state(open) == "as it was")
        try open.close()
        let reopened = try Container.open(at: env.dir, options: durableOptions(env))
        #expect(try await state(reopened) == "as it was")
        try reopened.close()
    }

    @Test func aPowerCutAtEveryStepLeavesDevelopmentResetOrAsItWas() async throws {
        var outcomes: [String: Int] = [:]
        var step = 0
        while step < 200 {
            let env = TestEnv()
            try await populated(env)
            let production = try tree(env.fs, "/c/production")
            env.fs.powerOff(afterOperations: step)
            let finished = (try? Container.resetDevelopment(at: env.dir, options: durableOptions(env))) != nil
            env.fs.crash()
            #expect(try tree(env.fs, "/c/production") == production, "step \(step)")
            let c = try Container.open(at: env.dir, options: durableOptions(env))
            let s = try await state(c)
            #expect(s == "reset" || s == "as it was", "step \(step): \(s)")
            if finished { #expect(s == "reset", "step \(step): the reset returned but did not last") }
            #expect(!env.fs.exists("/c/development.reset"), "step \(step): the opening left the old tree")
            try c.close()
            outcomes[s, default: 0] += 1
            if finished { break }
            step += 1
        }
        // Both outcomes happened: cuts before the rename was durable, and after.
        #expect(outcomes["as it was", default: 0] > 0 && outcomes["reset", default: 0] > 0, "\(outcomes)")
        #expect(step < 200)
    }

    @Test func badDirectoriesAreRefusedOrLeftAlone() async throws {
        let env = TestEnv()
        // A bare record store is not a container.
        let store = try RecordStore.open(directory: "/bare", fileSystem: env.fs)
        try store.close()
        let bareBefore = try tree(env.fs, "/bare")
        do {
            try Container.resetDevelopment(at: "/bare", options: durableOptions(env))
            Issue.record("a bare store was reset")
        } catch {
            #expect(error.message.contains("bare record store"))
        }
        #expect(try tree(env.fs, "/bare") == bareBefore)
        // A container with production only: nothing to reset, production untouched.
        let prod = try Container.open(at: "/p", environment: .production, options: durableOptions(env))
        try prod.close()
        let prodBefore = try tree(env.fs, "/p")
        try Container.resetDevelopment(at: "/p", options: durableOptions(env))
        #expect(try tree(env.fs, "/p") == prodBefore)
        // Read-only options never reset.
        try await populated(env)
        #expect(throws: CirrusError.self) {
            try Container.resetDevelopment(at: env.dir, options: ContainerOptions(fileSystem: env.fs, readOnly: true))
        }
        let c = try Container.open(at: env.dir, options: durableOptions(env))
        #expect(try await state(c) == "as it was")
        try c.close()
    }
}
