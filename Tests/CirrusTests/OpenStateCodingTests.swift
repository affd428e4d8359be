// What a fresh process reads at open besides the rows, in the forms that avoid Codable: the
// façade's checkpoint state (binary, JSON still read) and the cursor secrets file (JSON read by
// the record model's reader) — against the Codable forms they replace.

import CirrusFacade
import CirrusIO
import Foundation
import RecordModel
import Testing

@testable import CirrusEmbedded

struct OpenStateCodingTests {
    static func randomState(_ rng: inout SplitMix64) -> CheckpointUserState {
        func id() -> RecordID {
            RecordID(
                recordName: "r\(rng.below(50))é",
                zoneID: ZoneID(zoneName: ["_defaultZone", "Z", "名"][rng.below(3)], ownerName: "o\(rng.below(3))"))
        }
        var backrefs: [String: [RecordID: Set<RecordID>]] = [:]
        for _ in 0..<rng.below(4) {
            var targets: [RecordID: Set<RecordID>] = [:]
            for _ in 0..<rng.below(6) { targets[id()] = Set((0..<rng.below(5)).map { _ in id() }) }
            backrefs["owner\(rng.below(9))"] = targets
        }
        var assets: [String: Int] = [:]
        for _ in 0..<rng.below(6) { assets[String(rng.next(), radix: 16)] = rng.below(1000) }
        return CheckpointUserState(backrefs: backrefs, assetRefs: assets)
    }

    @Test func userStateRoundTripsInBothForms() throws {
        var rng = SplitMix64(seed: 61)
        for i in 0..<300 {
            let state = Self.randomState(&rng)
            let bytes = state.encoded()
            #expect(bytes.first == CheckpointUserState.binaryTag)
            #expect(try CheckpointUserState.decode(bytes) == state, "state \(i)")
            // What checkpoints written before hold: the JSON of version 1.
            let json = Array(try JSONEncoder().encode(state))
            #expect(try CheckpointUserState.decode(json) == state, "JSON state \(i)")
            // Canonical: the same state encodes to the same bytes.
            #expect(CheckpointUserState(backrefs: state.backrefs, assetRefs: state.assetRefs).encoded() == bytes)
        }
    }

    @Test func damagedUserStateIsAnErrorNeverATrap() throws {
        var rng = SplitMix64(seed: 62)
        for _ in 0..<100 {
            let bytes = Self.randomState(&rng).encoded()
            for n in 1..<bytes.count {
                #expect(throws: (any Error).self) { try CheckpointUserState.decode(Array(bytes[..<n])) }
            }
            #expect(throws: (any Error).self) { try CheckpointUserState.decode(bytes + [0]) }
            for _ in 0..<20 {
                var b = bytes
                b[rng.below(b.count)] ^= UInt8(1 + rng.below(255))
                _ = try? CheckpointUserState.decode(b)
            }
        }
        var future = CheckpointUserState(backrefs: [:], assetRefs: [:])
        future.version = 9
        #expect(throws: CirrusError.self) { try CheckpointUserState.decode(Array(try JSONEncoder().encode(future))) }
    }

    @Test func secretsReadAsCodableReadThem() throws {
        var rng = SplitMix64(seed: 63)
        for _ in 0..<100 {
            var secrets: [String: [UInt8]] = [:]
            for i in 0..<rng.below(5) { secrets["__defaultOwner__\(i)é"] = (0..<32).map { _ in UInt8(rng.below(256)) } }
            let file = Array(try JSONEncoder().encode(secrets))
            #expect(try ContainerCore.decodeSecrets(file) == secrets)
        }
        for bad in [
            "[]", "{\"a\":[1,2]}", "{\"a\":" + "[" + Array(repeating: "256", count: 32).joined(separator: ",") + "]}",
            "{\"a\":" + "[" + Array(repeating: "-1", count: 32).joined(separator: ",") + "]}",
            "{\"a\":" + "[" + Array(repeating: "1.5", count: 32).joined(separator: ",") + "]}", "{\"a\":[", "",
        ] {
            #expect(throws: (any Error).self, "\(bad)") { try ContainerCore.decodeSecrets(Array(bad.utf8)) }
        }
    }
}
