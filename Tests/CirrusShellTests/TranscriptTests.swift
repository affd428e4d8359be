// Transcript tests (Pebble-style data-driven files): each file in Transcripts/ holds cases of
//
//     command line(s)
//     ----
//     expected output
//     <blank line>
//
// (`{dir}` in a command is the Transcripts directory, for the data files `import` reads) run in
// order through one ReplSession on a fresh small demo database (built exactly as the full
// demo, with fewer generated places), and compared exactly. `CIRRUS_REWRITE=1 swift test` rewrites
// the files with the actual output — review the diff before committing it. Times (`time: 1.23 ms`)
// are the only thing that varies between runs; they are written as `time: … ms`.

import Cirrus
import CirrusShell
import Foundation
import Testing

/// Places in the transcripts' demo (the full demo has 100,000; the famous places are the same).
let transcriptPlaces = 2000

struct TranscriptCase {
    var commands: [String]
    var expected: String
}

func parseTranscript(_ text: String) -> [TranscriptCase] {
    var cases: [TranscriptCase] = []
    var lines = text.components(separatedBy: "\n")[...]
    while let first = lines.first {
        if first.isEmpty { lines.removeFirst(); continue }
        var commands: [String] = []
        while let l = lines.first, l != "----" {
            commands.append(l)
            lines.removeFirst()
        }
        lines = lines.dropFirst()
        var out: [String] = []
        while let l = lines.first, !l.isEmpty {
            out.append(l)
            lines.removeFirst()
        }
        cases.append(
            TranscriptCase(commands: commands, expected: out.isEmpty ? "" : out.joined(separator: "\n") + "\n"))
    }
    return cases
}

/// `time: 12.34 ms` → `time: … ms` (the only nondeterministic output).
func normalizeTimes(_ text: String) -> String {
    text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
        line.hasPrefix("time: ") && line.hasSuffix(" ms") ? "time: … ms" : String(line)
    }.joined(separator: "\n")
}

let transcriptDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
    "Transcripts"
).path

/// A fresh small demo container in a temporary directory.
func makeDemo() async throws -> (Container, String) {
    let dir = NSTemporaryDirectory() + "cirrus-transcript-\(UUID().uuidString)"
    try await DemoDatabase.build(at: dir, placeCount: transcriptPlaces)
    // A stopped clock and seeded randomness, so saved records' dates and change tags repeat.
    let options = ContainerOptions(clock: FixedClock(wall: DemoDatabase.buildTime), random: SeededRandomSource(seed: 7))
    return (try Container.open(at: dir, options: options), dir)
}

@Suite("REPL transcripts", .serialized)
struct TranscriptTests {
    static let files = ((try? FileManager.default.contentsOfDirectory(atPath: transcriptDirectory)) ?? []).filter {
        $0.hasSuffix(".txt")
    }.sorted()

    @Test("transcript", arguments: files)
    func transcript(_ file: String) async throws {
        let path = transcriptDirectory + "/" + file
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let (container, dir) = try await makeDemo()
        defer {
            try? container.close()
            try? FileManager.default.removeItem(atPath: dir)
        }
        var session = ReplSession(container: container, identity: .user(DemoDatabase.builder), width: 100)
        var rewritten = ""
        for c in parseTranscript(text) {
            var actual = ""
            for command in c.commands {
                // `{dir}` stands for the Transcripts directory (data files for `import`).
                actual += await session.execute(command.replacingOccurrences(of: "{dir}", with: transcriptDirectory))
                    .text
            }
            actual = actual.replacingOccurrences(of: transcriptDirectory, with: "{dir}")
            actual = normalizeTimes(actual)
            // A blank line would end the case early: show it as a lone "." in the file.
            actual = actual.split(separator: "\n", omittingEmptySubsequences: false).map {
                $0.isEmpty ? "." : String($0)
            }.joined(separator: "\n")
            if actual.hasSuffix("\n.") {
                actual.removeLast(); actual.removeLast()
            } else if actual == "." {
                actual = ""
            }
            if !actual.isEmpty && !actual.hasSuffix("\n") { actual += "\n" }
            rewritten += c.commands.joined(separator: "\n") + "\n----\n" + actual + "\n"
            #expect(actual == c.expected, "\(file): \(c.commands.joined(separator: " / "))")
        }
        if ProcessInfo.processInfo.environment["CIRRUS_REWRITE"] != nil {
            try rewritten.write(toFile: path, atomically: true, encoding: .utf8)
        }
    }

    @Test("every transcript file is found")
    func filesExist() {
        #expect(Self.files.count >= 6, "transcripts in \(transcriptDirectory): \(Self.files)")
    }
}
