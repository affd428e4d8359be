// LogError: everything that can go wrong in the record store, with where it happened, rendered
// to text in one place (`description`).

import CirrusIO
import RecordModel

/// An error of the record store.
public enum LogError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A file operation failed.
    case io(FileSystemError)
    /// A segment is damaged in a way that is not a torn tail: open fails unless repairing.
    case corruption(segment: UInt64, offset: Int, reason: String)
    /// The manifest (`CURRENT`) is unreadable or names a missing segment.
    case badManifest(path: String, reason: String)
    /// Segment files exist but no `CURRENT` names them.
    case notAStore(directory: String, reason: String)
    /// A record breaks a CloudKit rule; nothing of the batch was written.
    case invalidRecord(RecordValidationError)
    /// An earlier write or fsync failed; the store accepts no more writes until reopened
    /// (after a failed fsync the OS may have dropped the data, so nothing can be trusted).
    case failed(reason: String)
    /// Another writable store (in this or another process) has the directory.
    case locked(directory: String, reason: String)
    /// The store was opened read-only.
    case readOnly
    /// The store is closed.
    case closed
    /// An asset file is missing or does not match its hash.
    case asset(hash: String, reason: String)
    /// A data segment (docs/storage-format.md) is damaged or missing: the file and the byte
    /// offset where the damage was found.
    case badSegment(path: String, offset: Int, reason: String)
    /// An entry of a batch cannot be encoded (a schema JSON rejects); nothing was written.
    case unencodable(reason: String)

    /// One sentence for the user; corruption names the segment file and suggests repair.
    public var description: String {
        switch self {
        case .io(let e): "I/O error: \(e)"
        case .corruption(let s, let o, let r):
            "corrupt log: segment \(Manifest.segmentFileName(s)) at byte \(o): \(r) (`cirrus repair` salvages every "
                + "entry that checks out)"
        case .badManifest(let p, let r): "bad manifest \(p): \(r) (`cirrus repair` rebuilds it from the segments)"
        case .notAStore(let d, let r): "\(d) is not a Cirrus store: \(r)"
        case .invalidRecord(let e): "invalid record: \(e)"
        case .failed(let r): "the store failed earlier and must be reopened: \(r)"
        case .locked(let d, let r): "\(d) is in use by another writer: \(r)"
        case .readOnly: "the store is open read-only"
        case .closed: "the store is closed"
        case .asset(let h, let r): "asset \(h): \(r)"
        case .badSegment(let p, let o, let r):
            "damaged data segment \(p) at byte \(o): \(r) (`cirrus repair` salvages every record that checks out)"
        case .unencodable(let r): "the batch cannot be encoded, nothing was written: \(r)"
        }
    }

    static func wrap(_ e: any Error) -> LogError {
        if let i = e as? IntactFailure { return wrap(i.error) }
        if let l = e as? LogError { return l }
        if let f = e as? FileSystemError { return .io(f) }
        if let v = e as? RecordValidationError { return .invalidRecord(v) }
        return .failed(reason: "\(e)")
    }
}

/// A write that failed but left the store as it was — everything it wrote taken back, nothing
/// acknowledged touched — so the store goes on accepting writes (a full disk, once space is back).
/// Any other failure of a write poisons the store until it is reopened (`LogError.failed`).
struct IntactFailure: Error {
    let error: any Error
    init(_ error: any Error) { self.error = error }
}
