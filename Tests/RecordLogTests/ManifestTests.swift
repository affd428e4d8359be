// The manifest (`CURRENT`) parsed as bytes: every manifest the writer makes reads back as itself,
// the older layouts still read, and every kind of damage is refused with its reason — never a
// crash, never a different manifest.

import CirrusIO
import RecordModel
import Testing

@testable import RecordLog

@Suite struct ManifestTests {
    /// `body` with its `crc` line, as the writer ends a manifest.
    func sealed(_ body: String) -> [UInt8] {
        Array((body + "crc " + String(CRC32C.checksum(Array(body.utf8)), radix: 16) + "\n").utf8)
    }

    func reason(_ bytes: [UInt8]) -> String? {
        if case .failure(let e) = Manifest.decode(bytes) { return e.description }
        return nil
    }

    func random(_ g: inout SplitMix64, layers: Int = Manifest.maximumLayers) -> Manifest {
        let segments = (0..<Int.random(in: 1...4, using: &g)).map { _ in UInt64.random(in: 0...UInt64.max, using: &g) }
            .sorted()
        guard Bool.random(using: &g) else { return Manifest(segments: segments) }
        let names = ["__defaultOwner__", "_a1b2", "Place", "Café ☕", "x y", "-", ":", "CD_Note"]
        var tables: [TableKey: [TableFiles]] = [:]
        for _ in 0..<Int.random(in: 0...5, using: &g) {
            let key = TableKey(owner: names.randomElement(using: &g)!, recordType: names.randomElement(using: &g)!)
            tables[key] = (0..<Int.random(in: 1...layers, using: &g)).map { _ in
                TableFiles(
                    rows: UInt64.random(in: 0...UInt64.max, using: &g),
                    indexes: Bool.random(using: &g) ? nil : UInt64.random(in: 0...1000, using: &g))
            }
        }
        return Manifest(
            segments: segments,
            checkpoint: ManifestCheckpoint(
                sequence: UInt64.random(in: 0...UInt64.max, using: &g), horizon: UInt64.random(in: 0...9, using: &g),
                state: UInt64.random(in: 0...9, using: &g), tables: tables))
    }

    @Test func everyWrittenManifestReadsBackAsItself() throws {
        var g = SplitMix64(seed: 0x6d61_6e69)
        for _ in 0..<300 {
            let m = random(&g)
            #expect(try Manifest.decode(m.encoded).get() == m)
        }
    }

    @Test func olderLayoutsStillRead() throws {
        let v1 = try Manifest.decode(sealed("cirrus-log 1\nsegments 2 3\n")).get()
        #expect(v1 == Manifest(segments: [2, 3]))
        let v2 = try Manifest.decode(
            sealed("cirrus-log 2\nsegments 7\ncheckpoint 120 horizon 4\nstate 3\ntable 9 - 5f5f 506c616365\n")
        ).get()
        #expect(v2.segments == [7] && v2.checkpoint?.sequence == 120 && v2.checkpoint?.horizon == 4)
        #expect(
            v2.checkpoint?.tables == [TableKey(owner: "__", recordType: "Place"): [TableFiles(rows: 9, indexes: nil)]])
        let v3 = try Manifest.decode(
            sealed("cirrus-log 3\nsegments 7\ncheckpoint 1 horizon 0\nstate 3\ntable 5f 50 4:5 9:-\n")
        ).get()
        #expect(
            v3.checkpoint?.tables == [
                TableKey(owner: "_", recordType: "P"): [
                    TableFiles(rows: 4, indexes: 5), TableFiles(rows: 9, indexes: nil),
                ]
            ])
    }

    @Test func damageIsRefusedWithItsReason() {
        let head = "cirrus-log 3\nsegments 7\ncheckpoint 1 horizon 0\nstate 3\n"
        let cases: [(String, [UInt8])] = [
            ("not UTF-8", sealed("cirrus-log 1\nsegments 2\n") + [0xFF]),
            ("no crc line", Array("cirrus-log 1\nsegments 2\n".utf8)),
            ("checksum mismatch", Array("cirrus-log 1\nsegments 2\ncrc 0\n".utf8)),
            ("checksum mismatch", Array("cirrus-log 1\nsegments 2\ncrc 1ffffffff\n".utf8)),
            ("unknown manifest version", sealed("cirrus-log 4\nsegments 2\n")),
            ("unknown manifest version", sealed("cirrus-log 1\nsegments 2\nextra\n")),
            ("bad segment number x", sealed("cirrus-log 1\nsegments 2 x\n")),
            ("bad segment number 18446744073709551616", sealed("cirrus-log 1\nsegments 18446744073709551616\n")),
            ("bad segment number +2", sealed("cirrus-log 1\nsegments +2\n")),
            ("empty or out of order", sealed("cirrus-log 1\nsegments 3 2\n")),
            ("empty or out of order", sealed("cirrus-log 1\nsegments\n")),
            ("bad checkpoint lines", sealed("cirrus-log 3\nsegments 7\ncheckpoint 1 horizon\nstate 3\n")),
            ("bad checkpoint lines", sealed("cirrus-log 3\nsegments 7\ncheckpoint 1 horizon 0\nstate\n")),
            ("bad table line 'table 5 50 1:2'", sealed(head + "table 5 50 1:2\n")),
            ("bad table line 'table zz 50 1:2'", sealed(head + "table zz 50 1:2\n")),
            ("bad table line 'table ff 50 1:2'", sealed(head + "table ff 50 1:2\n")),
            ("bad table line 'table 5f 50 1'", sealed(head + "table 5f 50 1\n")),
            ("bad table line 'table 5f 50 1:x'", sealed(head + "table 5f 50 1:x\n")),
            ("bad table line 'table 5f 50'", sealed(head + "table 5f 50\n")),
            ("bad table line 'tables 5f 50 1:2'", sealed(head + "tables 5f 50 1:2\n")),
            (
                "bad table line", sealed(head + "table 5f 50" + String(repeating: " 1:2", count: 65) + "\n")
            ),
            ("table _/P listed twice", sealed(head + "table 5f 50 1:2\ntable 5f 50 3:4\n")),
        ]
        for (expected, bytes) in cases {
            let r = reason(bytes)
            #expect(r?.contains(expected) == true, "\(expected): \(r ?? "accepted")")
        }
    }

    /// Every byte of a manifest flipped, and every prefix, with its crc recomputed so the body's
    /// parse is what decides: refused, or read as a manifest that reads back as itself.
    @Test func mangledManifestsAreRefusedOrConsistent() throws {
        var g = SplitMix64(seed: 0x4355_5252)
        for _ in 0..<12 {
            let bytes = random(&g, layers: 3).encoded
            let body = Array(bytes.split(separator: 0x0A).dropLast().joined(separator: [0x0A])) + [0x0A]
            var variants: [[UInt8]] = (0..<body.count).map { Array(body[..<$0]) }
            for i in body.indices {
                var b = body
                b[i] ^= UInt8.random(in: 1...255, using: &g)
                variants.append(b)
            }
            for v in variants {
                let text = String(decoding: v, as: UTF8.self)
                let sealedV = Array(v) == Array(text.utf8) ? sealed(text) : v + Array("crc 0\n".utf8)
                if case .success(let m) = Manifest.decode(sealedV) {
                    #expect(try Manifest.decode(m.encoded).get() == m)
                }
            }
        }
    }
}
