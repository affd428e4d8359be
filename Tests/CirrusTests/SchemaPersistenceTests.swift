import CirrusTestSupport
import RecordModel
import Testing

@testable import CirrusEmbedded
@testable import CirrusFacade

@Suite struct SchemaPersistenceTests {
    /// Regression: just-in-time schema changes were applied but not logged, so a reopened
    /// development container forgot every type its saves had created.
    @Test func justInTimeSchemaSurvivesReopening() async throws {
        let env = TestEnv()
        var container = try env.open(.development)
        _ = try await container.privateDatabase(for: "_u1").modifyRecords(
            saving: [rec("a", "Place", ["population": .int64(1), "name": "x"])], deleting: [])
        let before = container.privateDatabase(for: "_u1").schema
        try container.close()
        container = try env.open(.development)
        #expect(container.privateDatabase(for: "_u1").schema.recordTypes["Place"] == before.recordTypes["Place"])
        #expect(container.privateDatabase(for: "_u1").querySnapshot(recordType: "Place")!.indexes.ordered.count >= 2)
    }
}
