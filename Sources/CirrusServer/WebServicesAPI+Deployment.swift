// Schema promotion over HTTP: what `cirrus schema --promote` does, for the dashboard's Deployment
// pane (and any client holding a management token).
//
//   POST /database/1/{container}/development/{public|private}/cirrus/schema/promote
//   header X-Cirrus-Management-Token: …   body {"confirm": "{container}", "dryRun"?: false}
//     → {"container", "changed", "applied", "recordTypes": […],
//        "changes": [{"change": "record type Place (3 fields)", "refused": false}, …]}
//
// Promotion changes what every production client may do, so it asks for more than any other
// request: the API token (as every request), a management token (`cirrus token create
// --management`) in a header — never in the URL, where logs keep it — and `confirm` naming the
// container, so that a request meant for another server or container does nothing. It is made
// from the development environment only. `dryRun` answers the same without writing (the
// dashboard shows it before asking for confirmation). The server holds the production container
// open, so the development schema goes to it through `Container.applySchema` (add-only: a type
// or field production has and development lacks or retypes refuses the whole promotion; on
// PostgreSQL, DDL in one transaction) rather than through `Container.promoteSchema`, which
// opens the production store itself.

import Cirrus
import RecordModel

extension WebServicesAPI {
    /// The operation's name under a database's path.
    static let promoteOperation = "cirrus/schema/promote"
    /// The header carrying a management token.
    static let managementTokenHeader = "X-Cirrus-Management-Token"

    /// Throws unless the request carries a valid management token in its header; `what` names
    /// the operation in the refusal ("promoting the schema").
    func requireManagementToken(_ request: WebRequest, for what: String) throws(WebServicesError) {
        guard let token = request.headers[Self.managementTokenHeader.lowercased()], !token.isEmpty else {
            throw WebServicesError(
                .accessDenied,
                "\(what) needs a management token in the \(Self.managementTokenHeader) header "
                    + "(create one with `cirrus token create --management`)")
        }
        guard credentials.isManagementToken(token) else {
            throw WebServicesError(.authenticationFailed, "unknown or revoked management token")
        }
    }

    func promoteSchema(
        _ request: WebRequest, _ body: JSONBody, route: Route
    ) async throws(WebServicesError) -> JSONValue {
        try requireManagementToken(request, for: "promoting the schema")
        guard route.environment == .development else {
            throw WebServicesError(
                .badRequest, "the schema is promoted from development to production: call this under /development/")
        }
        let confirm = try body["confirm"].string()
        guard confirm == containerIdentifier else {
            throw body["confirm"].fail("must name this container, \"\(containerIdentifier)\", to confirm the promotion")
        }
        let dryRun = try body["dryRun"].bool(default: false)
        let development = container(.development)
        let production = container(.production)
        let changes = Self.schemaChanges(from: production.schema, to: development.schema)
        var changed = !changes.isEmpty
        if !dryRun {
            let before = production.schema
            do {
                let after = try await production.applySchema(development.exportSchema())
                changed = before != after
            } catch {
                throw WebServicesError(.badRequest, "production refuses the development schema: \(error.message)")
            }
        } else if changes.isEmpty {
            // Grants and other details the list does not name still count as a change.
            var promoted = development.schema
            promoted.environment = .production
            changed = promoted != production.schema
        }
        return .object([
            ("container", .string(containerIdentifier)), ("changed", .bool(changed)), ("applied", .bool(!dryRun)),
            (
                "changes",
                .array(changes.map { .object([("change", .string($0.text)), ("refused", .bool($0.refused))]) })
            ),
            ("recordTypes", .array(development.schema.sortedRecordTypes.map { .string($0.name) })),
        ])
    }

    /// What promoting `new` over `old` adds or changes, one line each, in name order; `refused`
    /// marks what the add-only rule forbids (one of them refuses the whole promotion).
    static func schemaChanges(from old: Schema, to new: Schema) -> [(text: String, refused: Bool)] {
        func options(_ o: IndexOptions) -> String { o.names.isEmpty ? "no indexes" : o.names.joined(separator: " ") }
        var out: [(text: String, refused: Bool)] = []
        for t in new.sortedRecordTypes {
            guard let o = old.recordTypes[t.name] else {
                out.append(("record type \(t.name) (\(t.fields.count) fields)", false))
                continue
            }
            for f in t.sortedFields {
                guard let of = o.fields[f.name] else {
                    out.append(("field \(t.name).\(f.name) \(f.type) \(options(f.options))", false))
                    continue
                }
                if of.type != f.type {
                    out.append(("field \(t.name).\(f.name) retyped \(of.type) → \(f.type)", true))
                } else if of.options != f.options {
                    out.append(
                        ("indexes of \(t.name).\(f.name): \(options(of.options)) → \(options(f.options))", false))
                }
            }
        }
        for t in old.sortedRecordTypes {
            guard let n = new.recordTypes[t.name] else {
                out.append(("record type \(t.name) only in production", true))
                continue
            }
            for f in t.sortedFields where n.fields[f.name] == nil {
                out.append(("field \(t.name).\(f.name) only in production", true))
            }
        }
        return out
    }
}
