// Choosing the backend without code changes: the environment variables, and a
// server-to-server key signing requests to a real server.

import CirrusKit
import Foundation
import Testing

@testable import CirrusKit

@Suite struct ConfigurationTests {
    @Test func environmentVariablesChooseTheBackend() {
        let embedded = CirrusConfiguration.fromEnvironment([
            "CIRRUS_CONTAINERS": "/srv/c", "CIRRUS_USER": "_alice", "CIRRUS_ENVIRONMENT": "production",
        ])
        guard case .embedded(let dir, _) = embedded.backend else {
            Issue.record("expected embedded")
            return
        }
        #expect(dir == "/srv/c")
        #expect(embedded.user == "_alice")
        #expect(embedded.environment == .production)

        let home = CirrusConfiguration.fromEnvironment(["HOME": "/home/u"])
        if case .embedded(let d, _) = home.backend { #expect(d == "/home/u/.local/share/cirrus/containers") }
        #expect(home.user == nil)
        #expect(home.environment == .development)
        let xdg = CirrusConfiguration.fromEnvironment(["HOME": "/home/u", "XDG_DATA_HOME": "/data"])
        if case .embedded(let d, _) = xdg.backend { #expect(d == "/data/cirrus/containers") }

        let remote = CirrusConfiguration.fromEnvironment([
            "CIRRUS_SERVER": "http://127.0.0.1:9", "CIRRUS_API_TOKEN": "t", "CIRRUS_WEB_AUTH_TOKEN": "w",
            "CIRRUS_CONTAINERS": "/ignored",
        ])
        guard case .remote(let url, let credentials) = remote.backend else {
            Issue.record("expected remote")
            return
        }
        #expect(url.absoluteString == "http://127.0.0.1:9")
        #expect(credentials == .apiToken("t", webAuthToken: "w"))
    }

    @Test func anUnreachableServerIsANetworkError() async {
        let dead = CKContainer(
            identifier: "iCloud.x",
            configuration: CirrusConfiguration(
                backend: .remote(
                    server: URL(string: "http://127.0.0.1:9")!, credentials: .apiToken("t", webAuthToken: nil))))
        let e = await ckError { _ = try await dead.publicCloudDatabase.record(for: CKRecord.ID(recordName: "a")) }
        #expect(e?.code == .networkUnavailable || e?.code == .networkFailure)
    }

    @Test func aContainerThatCannotOpenFailsEachCall() async throws {
        let root = try temporaryDirectory("blocked")
        defer { try? FileManager.default.removeItem(atPath: root) }
        // A file where the container directory should be.
        try Data("x".utf8).write(to: URL(fileURLWithPath: root + "/iCloud.blocked"))
        let c = CKContainer(
            identifier: "iCloud.blocked",
            configuration: CirrusConfiguration(backend: .embedded(containersDirectory: root), user: "_alice"))
        let e = await ckError { _ = try await c.privateCloudDatabase.allRecordZones() }
        #expect(e?.code == .internalError)
        let bad = CKContainer(
            identifier: "../escape",
            configuration: CirrusConfiguration(backend: .embedded(containersDirectory: root), user: "_alice"))
        let refused = await ckError { _ = try await bad.privateCloudDatabase.allRecordZones() }
        #expect(refused?.code == .badContainer)
    }

    @Test func serverToServerKeysSignRequests() async throws {
        try await withWorld(.remote) { w in
            let signed = try #require(w.signed)
            let notice = CKRecord(recordType: "Notice", recordID: CKRecord.ID(recordName: "maintenance"))
            notice["text"] = "Sunday 02:00"
            let saved = try await signed.publicCloudDatabase.save(notice)
            #expect(saved.creatorUserRecordID?.recordName == "_server")
            #expect(
                try await w.nobody.publicCloudDatabase.record(for: notice.recordID)["text"] as? String == "Sunday 02:00"
            )
            // Signed requests reach the public database only.
            let e = await ckError { _ = try await signed.privateCloudDatabase.allRecordZones() }
            #expect(e?.code == .permissionFailure || e?.code == .notAuthenticated)
        }
    }
}
