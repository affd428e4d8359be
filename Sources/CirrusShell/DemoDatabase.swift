// DemoDatabase: where the demo container lives and how it is (re)built.
//
// The demo is a container directory in the per-user cache, `$XDG_CACHE_HOME/cirrus/demo-<version>`
// (or `~/.cache/cirrus/demo-<version>`), holding a `demo-version` stamp. It is rebuilt when missing
// or when the stamp differs. A build writes into a temporary sibling directory and renames it into
// place only when complete, so a killed generation never leaves half a demo behind.
//
// A build is deterministic: fixed clock, seeded randomness (so change tags and the cursor secret
// are the same on every machine), the schema imported from `DemoData.schemaText` plus the mirrored
// schema of the Core Data model it ships (`Blog.xcdatamodeld`, written into the demo directory),
// then every record bulk-inserted with durability `.none` and one sync at the end.

import Cirrus
import CirrusIO
import CoreDataMirror
import Foundation
import RecordLog
import RecordModel

/// The demo database on disk.
///
/// ```swift
/// let demo = try await DemoDatabase.ensure(cacheDirectory: DemoDatabase.defaultCacheDirectory())
/// let container = try Container.open(at: demo.path)
/// ```
public enum DemoDatabase {
    /// Bump when the demo's content or schema changes: caches with another stamp are rebuilt.
    public static let version = 2
    /// Generated places in the full demo (famous places come on top).
    public static let defaultPlaceCount = 100_000
    /// The wall clock of the build (2026-01-01T00:00:00Z): creation dates are this instant.
    public static let buildTime = Timestamp(millisecondsSince1970: 1_767_225_600_000)
    /// The user the demo's own records are stored by (assets need a signed-in user).
    public static let builder = "_demo"

    /// What `ensure` did.
    public struct Outcome: Sendable {
        /// The demo container directory, ready to open.
        public var path: String
        /// Whether it had to be (re)built now.
        public var built: Bool
        /// Records written by the build; 0 when the cached demo was used.
        public var records: Int
        /// How long the build took; 0 when the cached demo was used.
        public var seconds: Double
    }

    /// `$XDG_CACHE_HOME/cirrus`, else `$HOME/.cache/cirrus`, else a directory under /tmp.
    public static func defaultCacheDirectory(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String {
        if let x = environment["XDG_CACHE_HOME"], x.hasPrefix("/") { return x + "/cirrus" }
        if let h = environment["HOME"], !h.isEmpty { return h + "/.cache/cirrus" }
        return NSTemporaryDirectory() + "cirrus-cache"
    }

    /// The stamp a complete demo of `placeCount` places carries.
    public static func stamp(placeCount: Int) -> String { "cirrus-demo \(version) places \(placeCount)\n" }

    /// The demo's directory inside `cacheDirectory`.
    public static func path(cacheDirectory: String, placeCount: Int = defaultPlaceCount) -> String {
        cacheDirectory + "/demo-\(version)" + (placeCount == defaultPlaceCount ? "" : "-\(placeCount)")
    }

    /// Returns the demo's directory, building it first when it is missing or stale (its
    /// `demo-version` stamp is not `stamp(placeCount:)`). `progress` gets a line before and
    /// after a build. Throws the file system's or the build's error; a failed build leaves any
    /// previous demo in place.
    public static func ensure(
        cacheDirectory: String, placeCount: Int = defaultPlaceCount, progress: (@Sendable (String) -> Void)? = nil
    ) async throws -> Outcome {
        let fm = FileManager.default
        let dir = path(cacheDirectory: cacheDirectory, placeCount: placeCount)
        let stampPath = dir + "/demo-version"
        if let s = fm.contents(atPath: stampPath), String(decoding: s, as: UTF8.self) == stamp(placeCount: placeCount) {
            return Outcome(path: dir, built: false, records: 0, seconds: 0)
        }
        try fm.createDirectory(atPath: cacheDirectory, withIntermediateDirectories: true)
        let tmp = dir + ".building-\(ProcessInfo.processInfo.processIdentifier)"
        try? fm.removeItem(atPath: tmp)  // a leftover of a killed build, usually absent
        progress?("building the demo database (\(placeCount) places) in \(dir) …")
        let start = DispatchTime.now().uptimeNanoseconds
        let n = try await build(at: tmp, placeCount: placeCount)
        try Data(stamp(placeCount: placeCount).utf8).write(to: URL(fileURLWithPath: tmp + "/demo-version"))
        // Swap: move any old demo aside, move the new one in, then delete the old one.
        let old = dir + ".old-\(ProcessInfo.processInfo.processIdentifier)"
        if fm.fileExists(atPath: dir) { try fm.moveItem(atPath: dir, toPath: old) }
        try fm.moveItem(atPath: tmp, toPath: dir)
        try? fm.removeItem(atPath: old)  // the new demo is in place; a stale copy aside is harmless
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        progress?(String(format: "built %d records in %.1f s", n, seconds))
        return Outcome(path: dir, built: true, records: n, seconds: seconds)
    }

    /// Writes a fresh demo container into `directory` (which must not hold one); returns the
    /// number of records.
    @discardableResult
    public static func build(
        at directory: String, placeCount: Int, fileSystem: any FileSystem = POSIXFileSystem()
    ) async throws -> Int {
        let options = ContainerOptions(
            fileSystem: fileSystem, clock: FixedClock(wall: buildTime), random: SeededRandomSource(seed: 0xDE40),
            durability: .none)
        let c = try Container.open(at: directory, environment: .development, options: options)
        try c.importSchema(DemoData.schemaText)
        // The Core Data–mirrored blog (DemoData+CoreData.swift): its model ships in the demo directory.
        let modelPath = joinPath(directory, DemoData.blogModelPath)
        try fileSystem.createDirectory(parentDirectory(of: modelPath))
        try fileSystem.writeAtomically(modelPath, Array(DemoData.blogModelXML.utf8))
        let model = try CoreDataModel.parse(Data(DemoData.blogModelXML.utf8), path: modelPath)
        if let problem = CloudKitMirror.problems(in: model).first {
            throw CirrusError(.internalError, "the demo's Core Data model breaks a mirroring rule: \(problem)")
        }
        try c.importSchema(CoreDataCommands.merged(c.schema, CloudKitMirror.schema(for: model)).schemaLanguage)
        let db = c.publicDatabase(as: .user(builder))
        var demo = DemoData(placeCount: placeCount)
        var assets: [String: Asset] = [:]
        for row in DemoData.artworkRows { assets[row.id] = try await db.storeAsset(DemoData.imageBytes(row.id)) }
        var total = 0
        func put(_ records: [Record]) throws {
            let failures = try c.importRecords(records, into: .public)
            if let (i, e) = failures.first {
                throw CirrusError(.internalError, "demo record \(records[i].recordID.recordName) rejected: \(e)")
            }
            total += records.count
        }
        try put(demo.artists())
        try put(demo.artworks { assets[$0] })
        try put(demo.notes())
        try put(demo.famousPlaces())
        var batch: [Record] = []
        batch.reserveCapacity(5000)
        for i in 1...max(1, placeCount) where placeCount > 0 {
            batch.append(demo.place(i))
            if batch.count == 5000 {
                try put(batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
        if !batch.isEmpty { try put(batch) }
        // A private note of the builder, in a custom zone, so zones and `database private` have something to show.
        let mine = c.privateDatabase(for: builder)
        try await mine.save(zone: ZoneID(zoneName: "Travel"))
        _ = try c.importRecords(
            [
                Record(
                    recordType: "Note", recordID: RecordID(recordName: "packing", zoneID: ZoneID(zoneName: "Travel")),
                    fields: [
                        "title": "Packing list", "content": "passport, adapter, warm socks for Longyearbyen",
                        "location": .location(Location(latitude: 78.2232, longitude: 15.6267)),
                    ])
            ], into: .private(owner: builder))
        total += 1
        try await mine.save(zone: DemoData.coreDataZone)
        let blog = try await DemoData.blogRecords { bytes in try await mine.storeAsset(bytes) }
        if let (i, e) = try c.importRecords(blog, into: .private(owner: builder)).first {
            throw CirrusError(.internalError, "demo record \(blog[i].recordID.recordName) rejected: \(e)")
        }
        total += blog.count
        try c.sync()
        try c.close()
        return total
    }
}

/// A wall clock stopped at one instant (the monotonic clock still runs), so a build's creation
/// and modification dates are the same on every run.
///
/// ```swift
/// let options = ContainerOptions(clock: FixedClock(wall: DemoDatabase.buildTime))
/// ```
public struct FixedClock: LogClock {
    /// The instant every wall-clock reading returns.
    public var wall: Timestamp
    /// A clock stopped at `wall`.
    public init(wall: Timestamp) { self.wall = wall }
    /// `wall`, in milliseconds since 1970.
    public func wallMilliseconds() -> Int64 { wall.millisecondsSince1970 }
    /// The system's monotonic clock (durations stay real).
    public func monotonicNanoseconds() -> UInt64 { SystemClock().monotonicNanoseconds() }
}
