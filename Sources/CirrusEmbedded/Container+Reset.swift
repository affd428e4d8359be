// Container+Reset: reset of the development environment, as the CloudKit Console's "Reset
// Development Environment" — the development schema, every record, zone, subscription, asset,
// cursor secret and change history go; production is never touched.
//
// Everything of an environment lives under DIR/development (docs/database.md), so the reset is
// one rename: under the environment's LOCK (no store may be open on it, here or in another
// process), DIR/development is renamed to DIR/development.reset and DIR is synced — the one
// atomic, durable step. A fresh, empty store is then made at DIR/development and the old tree is
// removed. A kill before the rename is durable leaves the environment as it was; after it, reset
// (the next open or reset removes a leftover DIR/development.reset). DIR/production and the
// container's other files (tokens, keys) are neither read nor written.

import CirrusFacade
import CirrusIO
import RecordLog
import RecordModel

extension Container {
    /// The name, beside `development/`, of a development tree being removed by a reset.
    static let resetTrashName = "development.reset"

    /// Resets the development environment of the container in `directory`: deletes its schema
    /// (a fresh one holds only `Users`) and every record, zone, subscription, asset, cursor
    /// secret and change of every database, atomically and durably; production is left byte for
    /// byte as it was. No development container may be open on `directory` (here or in another
    /// process): close it first, or the reset is refused (internalError) and nothing changes.
    /// A directory without a development environment is reset already (nothing is written).
    ///
    /// ```swift
    /// try container.close()                                  // the development container
    /// try Container.resetDevelopment(at: "/data/notes")
    /// let fresh = try Container.open(at: "/data/notes")      // empty, schema with Users only
    /// ```
    public static func resetDevelopment(
        at directory: String, options: ContainerOptions = ContainerOptions()
    ) throws(CirrusError) {
        let fs = options.fileSystem
        if options.readOnly { throw CirrusError(.internalError, "the container is open read-only: nothing was reset") }
        if fs.exists(joinPath(directory, Manifest.fileName)) {
            throw CirrusError(
                .internalError,
                "\(directory) is a bare record store, not a container (see docs/database.md): nothing was reset")
        }
        let dev = joinPath(directory, Environment.development.rawValue)
        let trash = joinPath(directory, resetTrashName)
        func failed(_ what: String, _ error: any Error) -> CirrusError {
            CirrusError(.internalError, "reset of \(directory) (development): \(what): \(error)")
        }
        do {
            try fs.removeTree(trash)  // a reset interrupted after its rename: finish removing it
        } catch {
            throw failed("cannot remove the leftover \(trash)", error)
        }
        guard fs.exists(dev) else { return }
        let lock: any FileLock
        do {
            lock = try fs.lockFile(joinPath(dev, "LOCK"))
        } catch {
            throw CirrusError(
                .internalError,
                "the development environment of \(directory) is open (\(error)): close every development container "
                    + "and `cirrus serve` on it first; nothing was reset")
        }
        do {
            try fs.rename(dev, to: trash)
            try fs.syncDirectory(directory)  // the reset is durable from here on
        } catch {
            lock.unlock()
            // The rename may or may not have happened: say which, so no one guesses.
            let done = !fs.exists(dev) && fs.exists(trash)
            throw failed(done ? "the rename happened but is not known to be durable" : "nothing was reset", error)
        }
        lock.unlock()
        do {
            // A fresh store now, so that the environment exists (and `cirrus serve` finds it).
            let store = try RecordStore.open(
                directory: dev, fileSystem: fs,
                options: RecordStoreOptions(durability: options.durability, clock: options.clock))
            try store.close()
            try fs.removeTree(trash)
        } catch {
            throw failed("reset, but cleaning up failed (the next open finishes it)", error)
        }
    }

    /// Removes what a reset interrupted after its rename left (`DIR/development.reset`).
    static func sweepResetTrash(directory: String, options: ContainerOptions) {
        guard !options.readOnly else { return }
        try? options.fileSystem.removeTree(joinPath(directory, resetTrashName))
    }
}
