// EmbeddedDatabase+Access: the access rules (AccessRules, Access.swift in CirrusFacade) applied to
// the embedded engine's reads.

import CirrusFacade
import RecordModel

extension EmbeddedDatabase {
    /// Throws unless this handle's identity may use the database at all (``AccessRules``).
    func checkDatabaseAccess() throws(CirrusError) {
        try AccessRules.checkDatabaseAccess(scope: scope, identity: identity)
    }

    /// Throws unless this identity may read records of `recordType` here (``AccessRules``).
    public func checkCanRead(recordType: String) throws(CirrusError) {
        try AccessRules.checkCanRead(recordType: recordType, scope: scope, identity: identity, schema: schema)
    }

    /// Whether this identity may read `record` (a record of this database, API form).
    public func canRead(_ record: Record) -> Bool {
        Access.canRead(record, owner: owner, identity: identity, schema: schema)
    }

    /// Throws unless this identity may create (`current` nil) or overwrite/delete `current`.
    func checkWrite(type: String, current: Record?, id: RecordID, schema: Schema) throws(CirrusError) {
        try AccessRules.checkWrite(
            type: type, current: current, id: id, scope: scope, identity: identity, schema: schema)
    }
}
