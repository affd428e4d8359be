// RecordImport: loading records into a store with CirrusIO's `RecordTransfer` reader (JSON
// Lines, gzip, property lists), and exporting a snapshot's records as the same JSON Lines. The
// CLI (`cirrus import/export`) is a thin layer over this.

import CirrusIO
import Foundation
import RecordModel

extension RecordTransfer {
    /// Imports a file (JSON Lines, gzip JSON Lines, or a property list). Plain JSON Lines are
    /// streamed in 32 MiB pieces, so a file of any size needs bounded memory; gzip and plist
    /// files are read whole.
    public static func importFile(
        _ path: String, into store: RecordStore, options: ImportOptions = .init()
    ) throws -> ImportSummary {
        return try readRecords(file: path, options: options, sink: storeSink(store))
    }

    /// Imports bytes in any supported format; `name` labels rejections.
    public static func importBytes(
        _ input: [UInt8], name: String, into store: RecordStore, options: ImportOptions = .init()
    ) throws -> ImportSummary {
        try readRecords(input, name: name, options: options, sink: storeSink(store))
    }

    /// A sink that commits each batch of records to `store` (already validated).
    package static func storeSink(
        _ store: RecordStore
    ) -> ([(line: Int, record: Record)]) throws -> [(line: Int, reason: String)] {
        { batch in
            try store.commit(batch.map { .save($0.record) }, validate: false)
            return []
        }
    }

    /// Writes the live records (optionally of one type) as Web Services JSON Lines, in commit
    /// order, through `write` (one call per line, newline included). Returns the count. A record
    /// that does not decode throws (naming its file and offset) rather than be left out.
    @discardableResult
    public static func exportJSONLines(
        _ snapshot: StoreSnapshot, type: String? = nil, write: (String) throws -> Void
    ) throws -> Int {
        // Order by sequence using ids only, then decode one record at a time: exporting a
        // million records never holds a million decoded records.
        let order = snapshot.orderedIDs(ofType: type)
        var n = 0
        var line = ""
        for id in order {
            guard let r = try snapshot.record(id) else { continue }
            line.removeAll(keepingCapacity: true)
            r.record.webServicesJSON.write(to: &line)
            line += "\n"
            try write(line)
            n += 1
        }
        return n
    }
}
