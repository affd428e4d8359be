// CKAsset: a file saved beside a record. On save its bytes are read and stored (the embedded
// container's content-addressed files, or a Web Services upload); on fetch the bytes are written
// to a file under the system's temporary directory and `fileURL` points there.

import RecordModel

/// A file stored with a record.
///
/// ```swift
/// photo["image"] = CKAsset(fileURL: URL(fileURLWithPath: "/tmp/cat.jpg"))
/// ```
public final class CKAsset: NSObject, Sendable {
    /// The file: the one given, or for a fetched record a local copy of the stored bytes.
    public let fileURL: URL?
    /// The stored asset, once saved or fetched.
    let stored: Asset?

    /// An asset of the file at `fileURL` (read when the record is saved).
    public init(fileURL: URL) {
        self.fileURL = fileURL
        stored = nil
        super.init()
    }

    /// An asset already stored, with its local copy when there is one.
    init(stored: Asset, file: URL?) {
        self.stored = stored
        fileURL = file
        super.init()
    }

    /// Equal when both name the same stored content, or the same file.
    public override func isEqual(_ object: Any?) -> Bool {
        guard let o = object as? CKAsset else { return false }
        if let a = stored, let b = o.stored { return a == b }
        return fileURL == o.fileURL
    }

    /// Hashes the file URL.
    public override var hash: Int { fileURL?.hashValue ?? 0 }

    /// `<CKAsset: fileURL=…>`.
    public override var description: String { "<CKAsset: fileURL=\(fileURL?.path ?? "nil")>" }

    /// Writes `bytes` of `asset` to a file under the temporary directory (named by content, so a
    /// second fetch reuses it) and returns its URL.
    static func localFile(for asset: Asset, bytes: [UInt8]) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cirruskit-assets", isDirectory: true)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let safe = asset.contentHash.filter { $0.isLetter || $0.isNumber }
        let url = dir.appendingPathComponent(safe.isEmpty ? UUID().uuidString : safe)
        try Data(bytes).write(to: url, options: .atomic)
        return url
    }
}
