// RecordStore+Assets: asset files beside the log, content-addressed by SHA-256:
// DIR/assets/<first 2 hex digits>/<64 hex digits>. Written tmp → fsync → rename → fsync(dir)
// before the record that references them is committed, so a committed Asset always has its
// file. Asset bytes never count towards the 1 MB record limit. The store does not count
// references: the container does (ContainerCore.assetRefs) and deletes the files no live record
// refers to — after the deleting commit is durable, and at open for assets never saved in a
// record. `willWrite` lets it pin an asset before its file is checked or written, so a removal
// running beside `storeAsset` cannot take the file away from the record about to use it.

import CirrusIO
import RecordModel

extension RecordStore {
    /// The path of an asset file.
    public func assetPath(_ contentHash: String) -> String {
        joinPath(joinPath(joinPath(directory, "assets"), String(contentHash.prefix(2))), contentHash)
    }

    /// Stores `bytes` as an asset file (once per content) and returns the `Asset` to put in a field.
    /// `willWrite` is called with the content hash before the file is looked for or written.
    public func storeAsset(_ bytes: [UInt8], willWrite: (String) -> Void = { _ in }) throws(LogError) -> Asset {
        if options.readOnly { throw .readOnly }
        let hash = ContentHash.sha256Hex(bytes)
        willWrite(hash)
        let asset = Asset(contentHash: hash, size: Int64(bytes.count))
        let path = assetPath(hash)
        // Already stored (content-addressed); a size that cannot be read means: write it again.
        if fileSystem.exists(path), (try? fileSystem.size(path)) == bytes.count { return asset }
        do {
            let assets = joinPath(directory, "assets")
            let sub = parentDirectory(of: path)
            let newSub = !fileSystem.exists(sub)
            try fileSystem.createDirectory(sub)
            if newSub {
                try fileSystem.syncDirectory(assets)
                try fileSystem.syncDirectory(directory)
            }
            try fileSystem.writeAtomically(path, bytes)
        } catch {
            throw LogError.wrap(error)
        }
        return asset
    }

    /// The content of an asset file, checked against its hash and size.
    public func assetData(_ asset: Asset) throws(LogError) -> [UInt8] {
        let bytes: [UInt8]
        do {
            bytes = try fileSystem.read(assetPath(asset.contentHash))
        } catch {
            throw .asset(hash: asset.contentHash, reason: "\(error)")
        }
        guard bytes.count == asset.size, ContentHash.sha256Hex(bytes) == asset.contentHash else {
            throw .asset(hash: asset.contentHash, reason: "content does not match its hash or size")
        }
        return bytes
    }
}
