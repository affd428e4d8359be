// Custom security roles: a permission matrix — every caller × every permission × every path
// (lookup, batch lookup, query with forced paging, subscription, notification, export; create;
// update, delete) — against a model of the grants, in the public database, and the private
// database that roles never open. Also: persistence across reopening, promotion carrying roles
// (assignments stay per environment), the schema language's CREATE ROLE, and bad input that
// changes nothing.

import CirrusTestSupport
import RecordModel
import Testing

@testable import CirrusEmbedded
@testable import CirrusFacade

private let owner = "_owner"
private let outsider = "_outsider"
private let member = "_member"
private let reader = "_reader"
private let both = "_both"

/// The permissions of type `T<mask>` given to role `R`: bit 0 create, bit 1 read, bit 2 write.
private func permissions(_ mask: Int) -> Set<Permission> {
    var p = Set<Permission>()
    if mask & 1 != 0 { p.insert(.create) }
    if mask & 2 != 0 { p.insert(.read) }
    if mask & 4 != 0 { p.insert(.write) }
    return p
}

/// The model: role `R` holds `permissions(mask)` on `T<mask>`, role `S` holds READ on every
/// `T<mask>`; no built-in role holds anything. Users: `_member` R, `_reader` S, `_both` R and S.
private func modelAllows(_ identity: Identity, _ p: Permission, mask: Int) -> Bool {
    guard let u = identity.userRecordName else { return false }
    let r = (u == member || u == both) && permissions(mask).contains(p)
    let s = (u == reader || u == both) && p == .read
    return r || s
}

private let callers: [Identity] = [
    .anonymous, .user(outsider), .user(owner), .user(member), .user(reader), .user(both),
]
private let seeded = 3

/// A development container with `T0`…`T7`, each holding `seeded` records of `_owner`, the roles
/// of the model, and its assignments.
private func matrixContainer(_ env: TestEnv) async throws -> Container {
    let c = try env.open()
    let ownerDB = c.publicDatabase(as: .user(owner))
    for m in 0..<8 {
        for i in 0..<seeded { try await ownerDB.save(rec("t\(m)-\(i)", "T\(m)", ["n": .int64(Int64(i))])) }
    }
    try c.createRole("R")
    try c.createRole("S")
    for m in 0..<8 {
        try c.revoke([.create, .read, .write], on: "T\(m)", from: Grant.world)
        try c.revoke([.create, .read, .write], on: "T\(m)", from: Grant.authenticated)
        try c.revoke([.create, .read, .write], on: "T\(m)", from: Grant.creator)
        if m != 0 { try c.grant(permissions(m), on: "T\(m)", to: "R") }
        try c.grant([.read], on: "T\(m)", to: "S")
    }
    try c.assign(user: member, to: "R")
    try c.assign(user: reader, to: "S")
    try c.assign(user: both, to: "R")
    try c.assign(user: both, to: "S")
    return c
}

/// The outcome of one path: nil when allowed, otherwise the error code (or a sentinel).
private func denial(_ identity: Identity) -> CirrusError.Code {
    identity.userRecordName == nil ? .notAuthenticated : .permissionFailure
}

/// Whether every item of a modify request succeeded (a request refused as a whole: false).
private func succeeded(_ r: ModifyResult?) -> Bool { r.map { $0.partialFailure == nil } ?? false }

@Suite struct SecurityRoleTests {
    @Test func permissionMatrixInThePublicDatabase() async throws {
        let c = try await matrixContainer(TestEnv())
        var checked = 0
        for m in 0..<8 {
            let type = "T\(m)"
            for (k, who) in callers.enumerated() {
                let db = c.publicDatabase(as: who)
                let canRead = modelAllows(who, .read, mask: m)
                let canCreate = modelAllows(who, .create, mask: m)
                let canWrite = modelAllows(who, .write, mask: m)
                let ctx = "\(who) on \(type)"

                // READ — lookup, batch lookup, query (paged one by one), subscription, export.
                let lookup = await code { try await db.record(for: rid("\(type)-0".lowercased())) }
                #expect(lookup == (canRead ? nil : denial(who)), "lookup: \(ctx)")
                let batch = try await db.records(for: [rid("t\(m)-1"), rid("t\(m)-2")])
                #expect(batch.allSatisfy { (try? $0.1.get()) != nil } == canRead, "batch lookup: \(ctx)")
                let query = RecordQuery(
                    recordType: type, predicate: "n < 5", sortDescriptors: [.field("n", ascending: true)])
                if canRead {
                    var names: [String] = []
                    var page = try await db.records(matching: query, resultsLimit: 1)
                    names += page.matchResults.map(\.0.recordName)
                    while let cursor = page.queryCursor {
                        page = try await db.records(continuingMatchFrom: cursor, resultsLimit: 1)
                        names += page.matchResults.map(\.0.recordName)
                    }
                    #expect(names == (0..<seeded).map { "t\(m)-\($0)" }, "query: \(ctx)")
                } else {
                    #expect(await code { try await db.records(matching: query) } == denial(who), "query: \(ctx)")
                }
                let sub = await code {
                    try await db.save(Subscription(id: "s-\(type)-\(k)", recordType: type, predicate: "TRUEPREDICATE"))
                }
                #expect(sub == (canRead ? nil : denial(who)), "subscription: \(ctx)")
                var exported = 0
                try c.exportRecords(from: .public, type: type, readableBy: who) { line in
                    if line.contains("\"t\(m)-") { exported += 1 }
                }
                #expect(exported == (canRead ? seeded : 0), "export: \(ctx)")

                // CREATE — a new record, alone and in a batch.
                let created = await code { try await db.save(rec("new-\(m)-\(k)", type, ["n": 9])) }
                let expectCreate: CirrusError.Code? =
                    who.userRecordName == nil ? .notAuthenticated : (canCreate ? nil : .permissionFailure)
                #expect(created == expectCreate, "create: \(ctx)")
                let viaModify = try? await db.modifyRecords(saving: [rec("mod-\(m)-\(k)", type)], deleting: [])
                #expect(succeeded(viaModify) == canCreate, "modify create: \(ctx)")

                // WRITE — an update and a delete of `_owner`'s record (forced, so no tag is needed).
                var edit = rec("t\(m)-0", type, ["n": 0])
                edit["n"] = 0
                let updated = try? await db.modifyRecords(saving: [edit], deleting: [], savePolicy: .changedKeys)
                #expect(succeeded(updated) == canWrite, "update: \(ctx)")
                let deleted = try? await db.modifyRecords(saving: [], deleting: [rid("t\(m)-2")])
                #expect(succeeded(deleted) == canWrite, "delete: \(ctx)")
                if canWrite {
                    // Put the deleted record back as the administrator would, for the next caller.
                    _ = try c.importRecords([rec("t\(m)-2", type, ["n": 2])], into: .public)
                }
                checked += 1
            }
        }
        #expect(checked == 8 * callers.count)
    }

    @Test func rowsACallerMayNotReadNeverAppearOrCountInCursors() async throws {
        let c = try TestEnv().open()
        let ownerDB = c.publicDatabase(as: .user(owner))
        let outsiderDB = c.publicDatabase(as: .user(outsider))
        try await ownerDB.save(rec("seed", "Mixed", ["n": 0]))
        try c.createRole("R")
        try c.revoke([.read], on: "Mixed", from: Grant.world)
        try c.grant([.read], on: "Mixed", to: Grant.creator)
        try c.grant([.read], on: "Mixed", to: "R")
        try c.assign(user: member, to: "R")
        for i in 1...5 { try await ownerDB.save(rec("o\(i)", "Mixed", ["n": .int64(Int64(i))])) }
        for i in 1...2 { try await outsiderDB.save(rec("x\(i)", "Mixed", ["n": .int64(Int64(10 + i))])) }
        func pages(_ db: Database, _ limit: Int) async throws -> [[String]] {
            let q = RecordQuery(recordType: "Mixed", sortDescriptors: [.field("n", ascending: true)])
            var page = try await db.records(matching: q, resultsLimit: limit)
            var out = [page.matchResults.map(\.0.recordName)]
            while let cur = page.queryCursor {
                page = try await db.records(continuingMatchFrom: cur, resultsLimit: limit)
                out.append(page.matchResults.map(\.0.recordName))
            }
            return out
        }
        // The outsider sees its own two records only; pages of 2 are full, never padded by others.
        #expect(try await pages(outsiderDB, 1).flatMap { $0 } == ["x1", "x2"])
        #expect(try await pages(outsiderDB, 2).first == ["x1", "x2"])
        // The role holder sees every record; the anonymous caller none.
        #expect(try await pages(c.publicDatabase(as: .user(member)), 3).flatMap { $0 }.count == 8)
        #expect(
            await code { try await c.publicDatabase.records(matching: RecordQuery(recordType: "Mixed")) }
                == .notAuthenticated)
        // Notifications follow the same rule.
        let sub = c.publicDatabase(as: .user(outsider))
        _ = try await sub.save(Subscription(id: "m", recordType: "Mixed", predicate: "TRUEPREDICATE"))
        let stream = sub.notifications()
        try await ownerDB.save(rec("o6", "Mixed", ["n": 6]))  // not delivered: the outsider may not read it
        try c.assign(user: outsider, to: "R")
        try await ownerDB.save(rec("o7", "Mixed", ["n": 7]))  // delivered: now the outsider holds R
        let got = await drain(stream, count: 1)
        #expect(got.map(\.recordID.recordName) == ["o7"])
    }

    @Test func rolesNeverOpenAPrivateDatabase() async throws {
        let c = try await matrixContainer(TestEnv())
        let mine = c.privateDatabase(for: owner)
        let z = try await mine.save(zone: ZoneID(zoneName: "Z"))
        // T0 grants nothing to anyone, yet the owner uses its own private database freely.
        try await mine.save(rec("p", "T0", zone: z, ["n": 1]))
        #expect(try await mine.record(for: rid("p", zone: z))["n"] == 1)
        #expect(try await mine.records(matching: RecordQuery(recordType: "T0"), inZoneWith: z).matchResults.count == 1)
        for who in [member, both, reader] {
            let theirs = c.database(.private(owner: owner), as: .user(who))
            #expect(await code { try await theirs.record(for: rid("p", zone: z)) } == .permissionFailure)
            #expect(
                await code { try await theirs.records(matching: RecordQuery(recordType: "T7")) } == .permissionFailure)
            #expect(await code { try await theirs.save(rec("q", "T7", zone: z)) } == .permissionFailure)
            #expect(await code { try await theirs.changes(in: z, since: nil) } == .permissionFailure)
            #expect(try c.exportRecords(from: .private(owner: owner), readableBy: .user(who)) { _ in } == 0)
        }
        #expect(try c.exportRecords(from: .private(owner: owner), readableBy: .user(owner)) { _ in } == 1)
    }

    @Test func rolesGrantsAndAssignmentsSurviveReopening() async throws {
        let env = TestEnv()
        do {
            let c = try await matrixContainer(env)
            try c.close()
        }
        let c = try env.open()
        #expect(c.securityRoles().map(\.name) == ["R", "S"])
        #expect(c.securityRoles()[0].members == [both, member])
        #expect(c.securityRoles()[0].grants["T7"] == [.create, .read, .write])
        #expect(c.securityRoles()[1].grants.count == 8)
        #expect(try await c.publicDatabase(as: .user(member)).record(for: rid("t2-0"))["n"] == 0)
        #expect(
            await code { try await c.publicDatabase(as: .user(member)).record(for: rid("t1-0")) } == .permissionFailure)
    }

    @Test func promotionCarriesRolesButNotAssignments() async throws {
        let env = TestEnv()
        let dev = try await matrixContainer(env)
        try dev.promoteSchema()
        do {
            let prod = try env.open(.production)
            #expect(prod.securityRoles().map(\.name) == ["R", "S"])
            #expect(prod.securityRoles().allSatisfy { $0.members.isEmpty })
            #expect(prod.securityRoles()[0].grants["T3"] == [.create, .read])
            // Production assigns its own users; the roles themselves are changed only in development.
            try prod.assign(user: "_prodUser", to: "R")
            #expect(await code { try prod.createRole("Other") } == .invalidArguments)
            #expect(await code { try prod.grant([.read], on: "T0", to: "R") } == .invalidArguments)
            try prod.close()
        }
        // A second promotion keeps production's assignments and drops those of a deleted role.
        try dev.createRole("New")
        try dev.deleteRole("S")
        try dev.promoteSchema()
        let prod = try env.open(.production)
        #expect(prod.securityRoles().map(\.name) == ["New", "R"])
        #expect(prod.securityRoles()[1].members == ["_prodUser"])
        #expect(prod.schema.recordTypes["T1"]?.grants.contains { $0.role == "S" } == false)
        #expect(dev.securityRoles()[1].members == [both, member])
    }

    @Test func schemaLanguageDeclaresRoles() throws {
        let c = try TestEnv().open()
        try c.importSchema(
            """
            DEFINE SCHEMA
                CREATE ROLE Moderator;
                RECORD TYPE Post (n INT64, GRANT READ, WRITE TO "Moderator", GRANT READ TO "_world");
            """)
        try c.assign(user: member, to: "Moderator")
        let text = c.exportSchema()
        #expect(text.contains("    CREATE ROLE Moderator;\n"))
        #expect(text.contains("GRANT READ, WRITE TO \"Moderator\""))
        // Re-importing the exported text changes nothing and keeps the assignment.
        try c.importSchema(text)
        #expect(
            c.securityRoles() == [
                SecurityRole(name: "Moderator", grants: ["Post": [.read, .write]], members: [member])
            ])
        // A grant to an undeclared role is an error with its position; so is a duplicate role.
        let before = c.schema
        let undeclared = "DEFINE SCHEMA\nRECORD TYPE Post (n INT64,\n  GRANT READ TO \"Ghost\");"
        do {
            try c.importSchema(undeclared)
            Issue.record("a grant to an undeclared role was accepted")
        } catch {
            #expect(error.code == .invalidArguments)
            #expect(error.message.contains("line 3, column 17: role \"Ghost\" is not defined"))
        }
        #expect(throws: SchemaLanguageError.self) {
            try Schema(schemaLanguage: "DEFINE SCHEMA CREATE ROLE A; CREATE ROLE A;", environment: .development)
        }
        #expect(throws: SchemaLanguageError.self) {
            try Schema(schemaLanguage: "DEFINE SCHEMA CREATE ROLE \"1x\";", environment: .development)
        }
        #expect(c.schema == before)
    }

    @Test func badInputIsRefusedAndChangesNothing() async throws {
        let c = try TestEnv().open()
        try await c.publicDatabase(as: .user(owner)).save(rec("a", "Post"))
        try c.createRole("R")
        let before = c.schema
        func refused(_ body: () throws(CirrusError) -> Void, _ says: String) {
            do {
                try body()
                Issue.record("accepted: \(says)")
            } catch {
                #expect(error.code == .invalidArguments)
                #expect(error.message.contains(says), "\(error.message)")
            }
        }
        refused({ () throws(CirrusError) in try c.createRole("R") }, "role \"R\" already exists")
        refused({ () throws(CirrusError) in try c.createRole("_world") }, "role name \"_world\"")
        refused({ () throws(CirrusError) in try c.createRole("") }, "role name \"\"")
        refused({ () throws(CirrusError) in try c.deleteRole("Ghost") }, "role \"Ghost\" does not exist")
        refused(
            { () throws(CirrusError) in try c.grant([.read], on: "Post", to: "Ghost") }, "role \"Ghost\" does not exist"
        )
        refused(
            { () throws(CirrusError) in try c.grant([.read], on: "Nope", to: "R") }, "record type Nope does not exist")
        refused({ () throws(CirrusError) in try c.grant([], on: "Post", to: "R") }, "no permission given")
        refused({ () throws(CirrusError) in try c.grant([.read], on: "Users", to: "R") }, "type Users")
        refused({ () throws(CirrusError) in try c.revoke([.read], on: "Post", from: "Ghost") }, "does not exist")
        refused({ () throws(CirrusError) in try c.assign(user: member, to: "Ghost") }, "role \"Ghost\" does not exist")
        refused({ () throws(CirrusError) in try c.assign(user: member, to: "_icloud") }, "role \"_icloud\"")
        refused({ () throws(CirrusError) in try c.assign(user: "has space", to: "R") }, "not a user record name")
        refused({ () throws(CirrusError) in try c.unassign(user: member, from: "R") }, "does not hold role")
        #expect(c.schema == before)
    }
    @Test func aGrantChangeKeepsTheTypesRowsButAFieldChangeRebuildsThem() async throws {
        let c = try TestEnv().open()
        let db = c.publicDatabase(as: .user(owner))
        for n in ["a", "b", "c"] { try await db.save(rec(n, "Post", ["n": 1])) }
        try await db.deleteRecord(withID: rid("a"))
        try await db.save(rec("d", "Post", ["n": 1]))
        // Rows are numbered from a counter until a rebuild compacts them: b is row 1, d row 3.
        let before = db.querySnapshot(recordType: "Post")!
        #expect(before.row(for: rid("b")) == 1 && before.row(for: rid("d")) == 3)
        try c.createRole("R")
        try c.grant([.read], on: "Post", to: "R")
        let afterGrant = db.querySnapshot(recordType: "Post")!
        #expect(afterGrant.row(for: rid("b")) == 1 && afterGrant.row(for: rid("d")) == 3)
        // The snapshot's schema carries the new grant, and the indexes still answer.
        #expect(afterGrant.schema?.grants.contains(Grant([.read], to: "R")) == true)
        #expect(
            try await db.records(matching: RecordQuery(recordType: "Post", predicate: "n == 1")).matchResults.count == 3
        )
        try c.revoke([.read], on: "Post", from: "R")
        #expect(db.querySnapshot(recordType: "Post")!.row(for: rid("d")) == 3)
        // A new field changes the indexes: the table is rebuilt and its rows compacted.
        try await db.save(rec("e", "Post", ["n": 1, "title": "x"]))
        let afterField = db.querySnapshot(recordType: "Post")!
        #expect(afterField.row(for: rid("b")) == 0)
        #expect(
            Set(afterField.allRows().compactMap { afterField.record($0)?.recordID.recordName }) == ["b", "c", "d", "e"])
        try c.checkInvariants()
    }
}
