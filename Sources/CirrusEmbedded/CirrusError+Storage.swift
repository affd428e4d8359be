// CirrusError+Storage: the errors of the embedded engine's writes, in CloudKit's terms — a full
// disk or an I/O error that the store took back is serviceUnavailable with a retry delay (the
// next write may succeed, without a restart); a store that must be reopened is internalError.

import CirrusFacade
import RecordLog

extension CirrusError {
    /// A write of the record store that failed (`what`: "the commit", "the import", …). When the
    /// store took the write back and goes on — a full disk, an I/O error — serviceUnavailable,
    /// saying so and whether to retry; when it can no longer write until reopened, internalError.
    static func storage(_ error: any Error, _ what: String) -> CirrusError {
        if let c = error as? CirrusError { return c }
        guard let e = error as? LogError, case .io(let f) = e else {
            return CirrusError(.internalError, "\(what) failed: \(error)")
        }
        var error: CirrusError
        switch f.code {
        case 28, 122:  // ENOSPC, EDQUOT
            error = CirrusError(
                .serviceUnavailable,
                "\(what) failed: the disk is full (\(f)); nothing of it was written. Free space and retry: writes "
                    + "resume without a restart")
            error.retryAfterSeconds = 30
        default:
            error = CirrusError(
                .serviceUnavailable, "\(what) failed: an I/O error (\(f)); nothing of it was written. Retry later")
            error.retryAfterSeconds = 5
        }
        return error
    }

}

extension CirrusError {
    /// A stored record whose bytes do not decode (`e` names the file and offset): the call that
    /// met it fails rather than leave the record out.
    static func unreadable(_ e: any Error) -> CirrusError {
        CirrusError(
            .internalError,
            "a stored record could not be read (\(e)); `cirrus verify` names every damaged record and "
                + "`cirrus repair` salvages the rest")
    }
}
