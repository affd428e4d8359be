// PostgresStoreError: the name the PostgreSQL backend's errors had before both engines shared
// one error type. The backend throws `CirrusError` — CloudKit's error numbers, the message, the
// record, the server's record, the per-item errors, and `location` (the server's address and,
// for a statement PostgreSQL refused, its first line).

import CirrusFacade

/// The PostgreSQL backend's errors are `CirrusError`s, as the embedded engine's are.
///
/// ```swift
/// do {
///     try await store.modify(saving: [record])
/// } catch where error.code == .serverRecordChanged {
///     let theirs = error.serverRecord   // merge and save again with theirs.recordChangeTag
/// }
/// ```
@available(*, deprecated, renamed: "CirrusError")
public typealias PostgresStoreError = CirrusError
