// RepairReport: what `RecordStore.repair` salvaged, lost, rebuilt and kept aside, as plain values
// (rendered by the CLI and written as `REPORT.txt` beside the damaged files).

/// Something `repair` could not salvage, and where it was.
public struct RepairLoss: Sendable, Hashable, CustomStringConvertible {
    /// What kind of data was lost.
    public enum Kind: String, Sendable, Hashable {
        /// Checkpointed records (rows of a rows segment).
        case records
        /// Committed entries of the log (record versions, deletions, zone and schema changes).
        case logEntries = "log entries"
        /// Which older versions a layer had replaced or deleted: such records may come back.
        case deletions
        /// The checkpoint's zones, schema and change history (its state segment).
        case state
    }

    /// The damaged file.
    public var file: String
    /// Byte offset in the file where the damage starts.
    public var offset: Int
    /// Bytes that could not be read.
    public var length: Int
    /// What is wrong.
    public var reason: String
    /// Records (or log entries) lost, when known.
    public var records: Int?
    /// The lost records that could be identified (`name`, or `zone:name` outside the default zone).
    public var names: [String]
    /// For losses that could not be named one by one: the ids they sort after and before.
    public var after: String?
    /// See `after`.
    public var before: String?
    /// What was lost.
    public var what: Kind

    /// A loss in `file` at `offset`.
    public init(
        file: String, offset: Int = 0, length: Int = 0, reason: String, records: Int? = nil, names: [String] = [],
        after: String? = nil, before: String? = nil, what: Kind
    ) {
        self.file = file
        self.offset = offset
        self.length = length
        self.reason = reason
        self.records = records
        self.names = names
        self.after = after
        self.before = before
        self.what = what
    }

    /// One line: file, offset, reason, how many were lost and which (the first 20 names).
    public var description: String { text(allNames: false) }

    /// One line: file, offset, reason, how many were lost and which (every name, or the first 20).
    public func text(allNames: Bool) -> String {
        var s = "\(file) at byte \(offset)"
        if length > 0 { s += " (\(length) bytes)" }
        s += ": \(reason)"
        if let n = records, n > 0 {
            let noun = what == .logEntries ? (n == 1 ? "log entry" : "log entries") : (n == 1 ? "record" : "records")
            s += "; \(n) \(noun) lost"
        }
        if !names.isEmpty {
            let limit = allNames ? names.count : 20
            s += ": " + names.prefix(limit).joined(separator: ", ")
            if names.count > limit { s += ", … (\(names.count - limit) more: every name is in REPORT.txt and --json)" }
        }
        if after != nil || before != nil {
            s += " (between \(after.map { "'\($0)'" } ?? "the first") and \(before.map { "'\($0)'" } ?? "the last"))"
        }
        return s
    }
}

/// What `RecordStore.repair` did.
public struct RepairReport: Sendable, Hashable {
    /// The store's directory.
    public var directory: String
    /// True when the store was sound and nothing was changed.
    public var wasClean = false
    /// Live records in the repaired store.
    public var records = 0
    /// Records read back out of damaged rows (whole and checked; see `RowSalvage`).
    public var recovered = 0
    /// What could not be salvaged.
    public var losses: [RepairLoss] = []
    /// Derived data found damaged and rebuilt (nothing lost).
    public var rebuilt: [String] = []
    /// True when `CURRENT` was missing or damaged and was rebuilt from the segments.
    public var manifestRebuilt = false
    /// True when change tokens issued before the repair expire (entries of the log or the
    /// checkpoint's change history were lost, so a change feed could no longer be complete).
    public var changeTokensExpired = false
    /// The folder the replaced files were kept in (`DIR/damaged/<stamp>`), nil when none.
    public var keptIn: String?
    /// The files kept there.
    public var kept: [String] = []

    /// Records lost, over every loss that says how many (`losses` says where the count is unknown).
    public var recordsLost: Int { losses.reduce(0) { $0 + (($1.what == .records) ? ($1.records ?? 0) : 0) } }
    /// Whether anything was lost (records, log entries, deletions or the change history).
    public var lostSomething: Bool { !losses.isEmpty }

    /// A repair of `directory` that has not done anything yet.
    public init(directory: String) { self.directory = directory }

    /// The report as lines of text (the CLI's output).
    public var lines: [String] { lines(allNames: false) }

    /// The report as lines of text; `allNames`: every lost record's name (`REPORT.txt`).
    public func lines(allNames: Bool) -> [String] {
        var out = ["store \(directory)"]
        if wasClean {
            out.append("sound: nothing to repair")
            return out
        }
        if manifestRebuilt { out.append("CURRENT was missing or damaged: rebuilt from the segments present") }
        for r in rebuilt { out.append("rebuilt: \(r)") }
        for l in losses { out.append("LOST: " + l.text(allNames: allNames)) }
        if changeTokensExpired {
            out.append("change tokens issued before the repair expire (clients fetch their changes anew)")
        }
        out.append(
            "records: \(records) kept (\(recovered) read back from damaged rows), "
                + (losses.isEmpty
                    ? "nothing lost"
                    : losses.contains { $0.records == nil }
                        ? "\(recordsLost) counted lost and more that cannot be counted (see LOST above)"
                        : "\(recordsLost) lost"))
        if let keptIn { out.append("replaced files kept in \(keptIn): \(kept.joined(separator: ", "))") }
        return out
    }
}
