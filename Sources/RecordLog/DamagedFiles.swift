// DamagedFiles: where a store puts files it no longer uses because they are damaged, instead of
// deleting them — `DIR/damaged/<stamp>/`, one folder per occasion (a repair, a checkpoint that
// replaced a damaged index segment), each with a `REPORT.txt` saying what every file was, what was
// wrong with it and what replaced it (docs/storage-format.md, "Damage and repair").
//
// Nothing here deletes a file. Files are kept by a second name (`link`) when the name in the store
// must stay until a later switch (repair: the old manifest still names them until the new one is
// written), or moved (`rename`) when nothing names them any more.

import CirrusIO
import RecordModel

/// One folder under `DIR/damaged/` holding the damaged files of one occasion and their report.
struct DamagedArea {
    /// The folder under a store's directory that holds every occasion's folder.     never change
    static let directoryName = "damaged"
    /// The report in each occasion's folder.                                         never change
    static let reportName = "REPORT.txt"

    let fs: any FileSystem
    /// The store's directory.
    let storeDirectory: String
    /// `storeDirectory/damaged/<stamp>`.
    let path: String
    private(set) var report: [String] = []

    /// Creates the next free `damaged/<stamp>` folder (`<stamp>` is the UTC time, `-2`, `-3`, …
    /// appended when taken).
    init(storeDirectory: String, fs: any FileSystem, clock: any LogClock, title: String) throws {
        self.fs = fs
        self.storeDirectory = storeDirectory
        let parent = joinPath(storeDirectory, Self.directoryName)
        let stamp = Self.stamp(clock.wallMilliseconds())
        var candidate = joinPath(parent, stamp)
        var n = 1
        while fs.exists(candidate) {
            n += 1
            candidate = joinPath(parent, "\(stamp)-\(n)")
        }
        try fs.createDirectory(candidate)
        path = candidate
        report = [title, ""]
    }

    /// `yyyyMMdd-HHmmss` in UTC for milliseconds since 1970.
    static func stamp(_ ms: Int64) -> String {
        let secs = ms / 1000
        let days = secs >= 0 ? secs / 86_400 : (secs - 86_399) / 86_400
        let rem = secs - days * 86_400
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(y)\(two(m))\(two(d))-\(two(rem / 3600))\(two(rem % 3600 / 60))\(two(rem % 60))"
    }

    /// Keeps `name` (a file in the store's directory) here: by a second name when `move` is
    /// false (the store's name stays until the caller removes it), else moved. `why` goes into
    /// the report.
    mutating func keep(_ name: String, move: Bool, why: String) throws {
        let from = joinPath(storeDirectory, name)
        let to = joinPath(path, name)
        if move { try fs.rename(from, to: to) } else { try fs.link(from, to: to) }
        report.append("\(name): \(why)")
    }

    /// Adds lines to the report (written by `finish`).
    mutating func note(_ lines: [String]) { report += lines }

    /// Writes the report and makes the folder's entries, and the store directory's, durable.
    func finish() throws {
        try fs.writeAtomically(joinPath(path, Self.reportName), Array((report.joined(separator: "\n") + "\n").utf8))
        try fs.syncDirectory(path)
        try fs.syncDirectory(joinPath(storeDirectory, Self.directoryName))
        try fs.syncDirectory(storeDirectory)
    }
}

extension RecordStore {
    /// Keeps damaged files of `directory` (a store's, or a container's for its own files) under
    /// `directory/damaged/<stamp>/` by a second name, with a `REPORT.txt` of `title`, each file's
    /// reason and `lines`; the caller then replaces or removes the original names. Returns the
    /// folder. Nothing is deleted.
    public static func keepDamagedFiles(
        _ files: [(name: String, why: String)], in directory: String, fileSystem: any FileSystem,
        clock: any LogClock = SystemClock(), title: String, lines: [String] = []
    ) throws(LogError) -> String {
        do {
            var area = try DamagedArea(storeDirectory: directory, fs: fileSystem, clock: clock, title: title)
            for f in files { try area.keep(f.name, move: false, why: f.why) }
            area.note(lines)
            try area.finish()
            return area.path
        } catch {
            throw LogError.wrap(error)
        }
    }
}
