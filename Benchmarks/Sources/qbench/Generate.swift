// Generate: `qbench generate --size N --out FILE` — the generated places (Places.swift) as Web
// Services JSON Lines, streamed: memory stays at the generator's vocabulary and one write buffer
// whatever N, so 10M places (about 4 GB of JSON) are written in a few hundred MB. The file is what
// `cirrus import` and `qbench --data` read; the same size and seed give the same bytes and the
// same records as the in-memory runs (`PlaceSet` takes the generator's first N places).

import ArgumentParser
import Foundation
import RecordModel

struct Generate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write generated places as Web Services JSON Lines, streamed in bounded memory.",
        discussion: """
            Each line is one Place record ({"recordName", "recordType", "fields"}), the records \
            `qbench --size N --seed S` loads (a place without tags has no `tags` field). Load them with `cirrus import --db DIR FILE` or compare \
            with `qbench --data FILE --queries Q`.

            Example:
              qbench generate --size 10M --out /data/places-10M.jsonl
            """)

    @Option(help: "Records: 10k, 100k, 1M, 10M or a number.")
    var size: String = "100k"
    @Option(help: "Data seed (the same as qbench's --seed).")
    var seed: UInt64 = 42
    @Option(help: "The file to write (replaced); - for standard output.")
    var out: String

    func validate() throws { _ = try parseSize(size) }

    func run() throws {
        let n = try parseSize(size)
        let toStdout = out == "-"
        guard let file = toStdout ? fdopen(STDOUT_FILENO, "wb") : fopen(out, "wb") else {
            throw ValidationError("--out \(out): cannot create (\(String(cString: strerror(errno))))")
        }
        var generator = PlaceGenerator(seed: seed)
        var buffer = ""
        buffer.reserveCapacity(1 << 20)
        var written = 0
        let started = Date()
        func flush() throws {
            let ok = buffer.withUTF8 { fwrite($0.baseAddress, 1, $0.count, file) == $0.count }
            guard ok else { throw ValidationError("--out \(out): write failed (\(String(cString: strerror(errno))))") }
            written += buffer.utf8.count
            buffer.removeAll(keepingCapacity: true)
        }
        for i in 0..<n {
            var record = generator.next().place.record
            // No tags: no field. A save cannot give an empty list a type (CloudKit's rule, which
            // `cirrus import` applies to a field it has not seen yet).
            if record.fields["tags"] == .list([]) { record.fields["tags"] = nil }
            record.webServicesJSON.write(to: &buffer)
            buffer += "\n"
            if buffer.utf8.count >= 1 << 20 { try flush() }
            if !toStdout && (i + 1) % 1_000_000 == 0 {
                FileHandle.standardError.write(Data("\(i + 1) places…\n".utf8))
            }
        }
        try flush()
        if toStdout {
            fflush(file)
        } else {
            guard fclose(file) == 0 else { throw ValidationError("--out \(out): close failed") }
            print(
                String(
                    format: "wrote %ld places, %ld bytes, to %@ in %.1f s", n, written, out,
                    Date().timeIntervalSince(started)))
        }
    }
}

/// A record count as the commands take it: a number, or with a k or M suffix (10k, 1M).
func parseSize(_ raw: String) throws -> Int {
    let s = raw.lowercased().trimmingCharacters(in: .whitespaces)
    let (digits, mul) =
        s.hasSuffix("m")
        ? (s.dropLast(), 1_000_000) : s.hasSuffix("k") ? (s.dropLast(), 1_000) : (Substring(s), 1)
    guard let v = Int(digits), v > 0 else {
        throw ValidationError("--size: \(raw) is not a size such as 10k, 100k, 1M")
    }
    return v * mul
}
