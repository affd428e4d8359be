// UserCommands: the logic of `cirrus users add|list|set-discoverable|lookup` on a container
// directory's user identities (`DIR/users.json`, shared by both environments). `lookup` answers
// as discovery does: only users who opted in are found; anyone else is "not found", exactly as
// an unknown address is. Exit codes: 0 ok, 1 refused / not found / unreadable, 2 usage.

import Cirrus
import CirrusIO
import RecordLog
import RecordModel

/// `cirrus users` as a library.
///
/// ```swift
/// _ = UserCommands.run(db: "notes", action: .add(UserAccount(userRecordName: "_alice", emailAddress: "alice@example.com")))
/// _ = UserCommands.run(db: "notes", action: .setDiscoverable(user: "_alice", "granted"))
/// print(UserCommands.run(db: "notes", action: .lookup([.emailAddress("alice@example.com")])).stdout)
/// ```
public enum UserCommands {
    /// What to do.
    public enum Action: Sendable, Hashable {
        /// Add or replace a user account.
        case add(UserAccount)
        /// List every account (discoverable or not), as the administrator sees them.
        case list
        /// Set a user's discoverability: `granted` (or `yes`, `true`), `denied` (`no`, `false`),
        /// `initialState`.
        case setDiscoverable(user: String, String)
        /// Look users up as discovery does (only users who opted in are found).
        case lookup([UserLookupInfo])
    }

    /// Runs one action on the container `db`; `json` prints JSON (list, lookup).
    public static func run(
        db: String, action: Action, json: Bool = false, fileSystem: any FileSystem = POSIXFileSystem()
    ) -> CommandOutput {
        switch action {
        case .list, .lookup:
            if !fileSystem.exists(db) {
                return CommandOutput(stderr: "cirrus users: \(db): no such container directory\n", exitCode: 1)
            }
        case .add, .setDiscoverable: break
        }
        // The user directory is a file of its own: no environment is opened (works beside `cirrus serve`).
        let options = ContainerOptions(fileSystem: fileSystem)
        do {
            switch action {
            case .add(let account):
                let kept = try Container.saveUserAccount(account, at: db, options: options)
                return CommandOutput(stdout: "saved user \(kept.userRecordName) (\(kept.discoverability.rawValue))\n")
            case .list:
                let all = try Container.userAccounts(at: db, options: options)
                return CommandOutput(stdout: json ? listJSON(all) : listText(all))
            case .setDiscoverable(let user, let text):
                guard let status = parseStatus(text) else {
                    return CommandOutput(
                        stderr: "cirrus users: \"\(text)\": expected granted, denied or initialState (yes/no)\n",
                        exitCode: 2)
                }
                try Container.setDiscoverability(status, ofUser: user, at: db, options: options)
                return CommandOutput(
                    stdout: "\(user) is \(status == .granted ? "" : "not ")discoverable (\(status.rawValue))\n")
            case .lookup(let lookups):
                // The same privacy rule as any caller's discovery.
                let found = try Container.discoverUserIdentities(lookups, at: db, options: options)
                return lookupOutput(lookups, found, json: json)
            }
        } catch {
            return CommandOutput(stderr: "cirrus users: \(error)\n", exitCode: 1)
        }
    }

    /// What `lookup` prints: each lookup and the user it found (or "not found"), or the found
    /// identities as JSON; exit 1 when nobody was found.
    static func lookupOutput(_ lookups: [UserLookupInfo], _ found: [UserIdentity], json: Bool) -> CommandOutput {
        var out = CommandOutput()
        for l in lookups {
            if let u = found.first(where: { $0.lookupInfo == l }) {
                let name = [u.name.givenName, u.name.familyName].compactMap { $0 }.joined(separator: " ")
                out.stdout += json ? "" : "\(describe(l)): \(u.userRecordName)\(name.isEmpty ? "" : " (\(name))")\n"
            } else if !json {
                out.stdout += "\(describe(l)): not found\n"
            }
        }
        if json { out.stdout = identitiesJSON(found) }
        if found.isEmpty { out.exitCode = 1 }
        return out
    }

    static func parseStatus(_ text: String) -> DiscoverabilityStatus? {
        switch text.lowercased() {
        case "granted", "yes", "true": .granted
        case "denied", "no", "false": .denied
        case "initialstate": .initialState
        default: nil
        }
    }

    static func describe(_ l: UserLookupInfo) -> String {
        switch l {
        case .emailAddress(let e): "email \(e)"
        case .phoneNumber(let p): "phone \(p)"
        case .userRecordName(let n): "user \(n)"
        }
    }

    static func listText(_ all: [UserAccount]) -> String {
        if all.isEmpty { return "no users\n" }
        let rows = all.map { a in
            [
                a.userRecordName, a.emailAddress ?? "-", a.phoneNumber ?? "-",
                [a.name.givenName, a.name.familyName].compactMap { $0 }.joined(separator: " "),
                a.discoverability.rawValue,
            ]
        }
        return TextTable(header: ["user", "email", "phone", "name", "discoverable"], rows: rows).render(width: 160)
    }

    static func listJSON(_ all: [UserAccount]) -> String {
        var s = ""
        JSONValue.array(
            all.map { a in
                var m: [(String, JSONValue)] = [("userRecordName", .string(a.userRecordName))]
                if let e = a.emailAddress { m.append(("emailAddress", .string(e))) }
                if let p = a.phoneNumber { m.append(("phoneNumber", .string(p))) }
                if let g = a.name.givenName { m.append(("givenName", .string(g))) }
                if let f = a.name.familyName { m.append(("familyName", .string(f))) }
                m.append(("discoverability", .string(a.discoverability.rawValue)))
                return .object(m)
            }
        ).write(to: &s)
        return s + "\n"
    }

    static func identitiesJSON(_ found: [UserIdentity]) -> String {
        var s = ""
        JSONValue.array(
            found.map { u in
                var m: [(String, JSONValue)] = [("userRecordName", .string(u.userRecordName))]
                if let g = u.name.givenName { m.append(("givenName", .string(g))) }
                if let f = u.name.familyName { m.append(("familyName", .string(f))) }
                return .object(m)
            }
        ).write(to: &s)
        return s + "\n"
    }
}
