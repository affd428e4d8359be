import CirrusIO
import Synchronization
import Testing

@testable import RecordLog

/// `IndexSegment`: a segment opened at first use is opened once, by whichever reader comes first,
/// and only when asked for; one that does not open is nil with its error kept for the reader that
/// reports it; one given open (or none) is there from the start with no error.
@Suite struct IndexSegmentTests {
    /// A one-section data segment at `path`.
    func segment(_ fs: InMemoryFileSystem, _ path: String) throws -> DataSegment {
        var w = try DataSegmentWriter(fileSystem: fs, path: path)
        try w.addSection("ordered:n", Array("entries".utf8))
        try w.finish()
        return try DataSegment.open(path, fileSystem: fs)
    }

    @Test func aSegmentOpenedAtFirstUseIsOpenedOnceWhenFirstAskedFor() async throws {
        let fs = InMemoryFileSystem()
        let path = "/s/dat-1.seg"
        _ = try segment(fs, path)
        let opens = Mutex(0)
        let slot = IndexSegment(openingAtFirstUse: {
            opens.withLock { $0 += 1 }
            return Result { () throws(LogError) in try DataSegment.open(path, fileSystem: fs) }
        })
        #expect(!slot.isOpen)
        #expect(opens.withLock { $0 } == 0)
        let names = await withTaskGroup(of: [String].self) { group in
            for _ in 0..<8 { group.addTask { slot.segment?.sections.map(\.name) ?? [] } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(names == Array(repeating: ["ordered:n"], count: 8))
        #expect(opens.withLock { $0 } == 1)
        #expect(slot.isOpen && slot.openError == nil)
    }

    @Test func aSegmentThatDoesNotOpenIsNilWithItsError() throws {
        let fs = InMemoryFileSystem()
        let path = "/s/dat-2.seg"
        _ = try segment(fs, path)
        let size = try fs.size(path)
        fs.damageTruncate(path, to: size - 7)
        let slot = IndexSegment(openingAtFirstUse: {
            Result { () throws(LogError) in try DataSegment.open(path, fileSystem: fs) }
        })
        #expect(slot.segment == nil)
        guard case .badSegment(let p, let offset, let reason)? = slot.openError else {
            Issue.record("no badSegment error: \(String(describing: slot.openError))")
            return
        }
        #expect(p == path && offset == size - 7 - 8 && reason.contains("footer"))
        let w = OpenWarning(try #require(slot.openError), consequence: "rebuilt")
        #expect(w.path == path && w.offset == offset && w.consequence == "rebuilt")
    }

    @Test func aSegmentGivenOpenOrNoneIsThereFromTheStart() throws {
        let fs = InMemoryFileSystem()
        let given = IndexSegment(try segment(fs, "/s/dat-3.seg"))
        #expect(given.isOpen && given.segment?.sections.map(\.name) == ["ordered:n"] && given.openError == nil)
        let none = IndexSegment(nil)
        #expect(none.isOpen && none.segment == nil && none.openError == nil)
    }
}
