// "Nothing typed can crash it or corrupt the database": every prefix of every transcript command,
// plus seeded random mutations of them (cut, duplicated, bytes swapped for quotes, brackets,
// keywords and non-ASCII), go through one session. Each line must give text (an error is fine),
// and afterwards the container must close and reopen with the demo's records intact.

import Cirrus
import CirrusShell
import CirrusTestSupport
import Foundation
import RecordModel
import Testing

@Suite("REPL robustness")
struct ReplRobustnessTests {
    static let alphabet: [String] = [
        "'", "\"", "(", ")", "{", "}", "[", "]", ",", " ", "$", "%@", "%K", "@", "-", "==", "<", "\\", "\n", "\t",
        " where ", " sort ", " limit ", " keys ", "é", "故宫", "😀", "9999999999999999999999", "-0", "nan", "$here",
    ]

    @Test func mangledLinesNeverCrashOrDamageTheStore() async throws {
        let seed = TestSeed.next()
        print("ReplRobustnessTests seed \(seed)")
        var rng = SeededRandom(seed: seed)
        let files = TranscriptTests.files
        var commands: [String] = []
        for f in files {
            let text = (try? String(contentsOfFile: transcriptDirectory + "/" + f, encoding: .utf8)) ?? ""
            for c in parseTranscript(text) {
                commands += c.commands.filter { !$0.hasPrefix("quit") && !$0.hasPrefix("import") }
            }
        }
        #expect(commands.count > 100)
        var lines: [String] = []
        for c in commands {
            let chars = Array(c)
            for n in stride(from: 0, through: chars.count, by: max(1, chars.count / 8)) {
                lines.append(String(chars.prefix(n)))
            }
            for _ in 0..<3 {
                var m = chars
                for _ in 0..<(1 + rng.below(3)) {
                    let i = m.isEmpty ? 0 : rng.below(m.count + 1)
                    switch rng.below(3) {
                    case 0: m.insert(contentsOf: Self.alphabet[rng.below(Self.alphabet.count)], at: i)
                    case 1: if i < m.count { m.remove(at: i) }
                    default: if !m.isEmpty { m.insert(contentsOf: m[rng.below(m.count)...].prefix(6), at: i) }
                    }
                }
                lines.append(String(m))
            }
        }
        let (container, dir) = try await makeDemo()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let before = container.database(.public, as: .anonymous).querySnapshot(recordType: "Place")!.rowCount
        var session = ReplSession(container: container, identity: .user(DemoDatabase.builder), width: 80)
        for line in lines {
            let out = await session.execute(line)
            #expect(
                out.quit || !out.text.isEmpty || line.trimmingCharacters(in: .whitespaces).isEmpty
                    || line.hasPrefix("#") || line.hasPrefix("--"),
                "no output for \(line.debugDescription) (seed \(seed))")
        }
        try container.close()
        let reopened = try Container.open(at: dir)
        let after = reopened.database(.public, as: .anonymous).querySnapshot(recordType: "Place")!.rowCount
        // Saves and deletes of scratch records may have run; the demo's own places are all there.
        #expect(after >= before - 5, "places before \(before), after \(after) (seed \(seed))")
        let louvre = try await reopened.database(.public, as: .anonymous).record(for: RecordID(recordName: "louvre"))
        #expect(louvre.fields["name"] == "Louvre")
        try reopened.close()
    }
}
