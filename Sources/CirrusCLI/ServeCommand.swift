// `cirrus serve`: CloudKit Web Services over HTTP (CirrusServer); `cirrus token` and `cirrus key`:
// the credentials it accepts. docs/web-services.md.

import ArgumentParser
import Cirrus
import CirrusPostgres
import CirrusServer
import Foundation

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve a container over CloudKit Web Services (HTTP).",
        discussion: """
            Answers POST /database/1/CONTAINER/ENVIRONMENT/{public|private}/OPERATION with CloudKit \
            Web Services' JSON: records/query, records/modify, records/lookup, records/changes, \
            zones/list, zones/lookup, zones/modify, changes/database, changes/zone, \
            subscriptions/list, subscriptions/lookup, subscriptions/modify, assets/upload, \
            users/caller; GET …/notifications streams subscriptions' notifications (Server-Sent \
            Events), and / is a dashboard. docs/web-services.md. With --postgres URL the records live \
            on PostgreSQL + PostGIS (docs/scale-out.md): many `cirrus serve` processes can share one \
            server; DIR then holds only the credentials. Every request needs an API token \
            (?ckAPIToken=…, from `cirrus token create`) or a server-to-server signature (`cirrus key \
            add`); ?ckWebAuthToken=… (from `cirrus token create --user U`) acts as a user and reaches \
            that user's private database. Listens on loopback unless --host says otherwise. Stop \
            with Ctrl-C (SIGINT) or SIGTERM; the container is closed cleanly.

            Examples:
              cirrus token create --db DIR
              cirrus serve --db DIR --port 8080
              cirrus serve --db DIR --postgres postgres://cirrus@127.0.0.1:5432/cirrus
              curl -s -X POST "http://127.0.0.1:8080/database/1/iCloud.local.cirrus/development/public/records/query?ckAPIToken=TOKEN" \\
                   -d '{"query": {"recordType": "Place", "filterBy": [{"fieldName": "kind", "comparator": "EQUALS", "fieldValue": {"value": "cafe"}}]}}'
            """)

    @Option(help: ArgumentHelp("The container directory.", valueName: "DIR"))
    var db: String

    @Option(help: ArgumentHelp("The container identifier URLs name.", valueName: "ID"))
    var container = "iCloud.local.cirrus"

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port (0: any free port, printed at start).")
    var port = 8080

    @Option(
        help: ArgumentHelp(
            "Keep the records on PostgreSQL + PostGIS (postgres://user[:password]@host[:port]/database).",
            valueName: "URL"))
    var postgres: String?

    func run() async throws {
        let api: WebServicesAPI
        do {
            if let postgres {
                let development = try await Container.open(
                    postgres: postgres, containerID: container, environment: .development)
                let production = try await Container.open(
                    postgres: postgres, containerID: container, environment: .production)
                let reset = DevelopmentReset(
                    reset: { [container] in
                        try await Container.resetDevelopment(postgres: postgres, containerID: container)
                    },
                    reopen: { [container] in
                        try await Container.open(postgres: postgres, containerID: container, environment: .development)
                    })
                api = try WebServicesAPI(
                    credentialsIn: db, containerIdentifier: container, development: development, production: production,
                    developmentReset: reset)
            } else {
                api = try WebServicesAPI(directory: db, containerIdentifier: container)
            }
        } catch {
            printError("cirrus serve: \(error)")
            throw ExitCode(1)
        }
        let app = HTTPServer.application(api, host: host, port: port) { [host, container] port in
            printError("cirrus serve: http://\(host):\(port)/database/1/\(container)/  (Ctrl-C stops)")
        }
        var failure: (any Error)?
        do { try await app.runService() } catch { failure = error }
        do { try api.close() } catch {
            printError("cirrus serve: closing the container failed: \(error)")
            throw ExitCode(1)
        }
        if let failure {
            printError("cirrus serve: \(failure)")
            throw ExitCode(1)
        }
    }
}

struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token", abstract: "API tokens and web auth tokens for `cirrus serve`.",
        subcommands: [TokenCreate.self, TokenRevoke.self, CredentialList.self])
}

struct TokenCreate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Create an API token (ckAPIToken), or with --user a web auth token (ckWebAuthToken).",
        discussion: """
            The token is printed once; the container keeps only its SHA-256 digest. --management makes a \
            management token instead, which (sent in the X-Cirrus-Management-Token header) allows promoting \
            the schema to production.
            """)

    @Option(help: ArgumentHelp("The container directory.", valueName: "DIR"))
    var db: String

    @Option(help: ArgumentHelp("Make a web auth token acting as this user record name.", valueName: "USER"))
    var user: String?

    @Option(help: "A note kept beside an API token's digest.")
    var label = ""

    @Flag(help: "Make a management token (schema promotion) instead.")
    var management = false

    func run() throws {
        do {
            print(try CredentialCommands.createToken(directory: db, user: user, label: label, management: management))
        } catch {
            printError("cirrus token create: \(error)")
            throw ExitCode(1)
        }
    }
}

struct TokenRevoke: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "revoke", abstract: "Revoke a token.")

    @Option(help: ArgumentHelp("The container directory.", valueName: "DIR"))
    var db: String

    @Argument(help: "The token.")
    var token: String

    func run() throws {
        do {
            try CredentialCommands.revokeToken(directory: db, token: token)
        } catch {
            printError("cirrus token revoke: \(error)")
            throw ExitCode(1)
        }
    }
}

struct CredentialList: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List tokens (by digest) and server-to-server keys.")

    @Option(help: ArgumentHelp("The container directory.", valueName: "DIR"))
    var db: String

    func run() throws {
        do {
            print(try CredentialCommands.list(directory: db), terminator: "")
        } catch {
            printError("cirrus token list: \(error)")
            throw ExitCode(1)
        }
    }
}

struct KeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key", abstract: "Server-to-server keys for `cirrus serve`.",
        subcommands: [KeyAdd.self, KeyRemove.self, CredentialList.self])
}

struct KeyAdd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Register a P-256 public key; requests it signs act as --user in the public database.",
        discussion: """
            Make a key pair with: openssl ecparam -name prime256v1 -genkey -noout -out key.pem; \
            openssl ec -in key.pem -pubout -out public.pem. Prints the key id to send in \
            X-Apple-CloudKit-Request-KeyID.
            """)

    @Option(help: ArgumentHelp("The container directory.", valueName: "DIR"))
    var db: String

    @Option(help: ArgumentHelp("The public key file (PEM).", valueName: "FILE"))
    var publicKey: String

    @Option(help: ArgumentHelp("The user record name signed requests act as.", valueName: "USER"))
    var user = "_server"

    @Option(help: ArgumentHelp("The key id (default: SHA-256 of the key).", valueName: "ID"))
    var id: String?

    func run() throws {
        do {
            let pem = try String(contentsOfFile: publicKey, encoding: .utf8)
            print(try CredentialCommands.addKey(directory: db, pem: pem, user: user, keyID: id))
        } catch {
            printError("cirrus key add: \(error)")
            throw ExitCode(1)
        }
    }
}

struct KeyRemove: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove a key by id.")

    @Option(help: ArgumentHelp("The container directory.", valueName: "DIR"))
    var db: String

    @Argument(help: "The key id.")
    var id: String

    func run() throws {
        do {
            try CredentialCommands.removeKey(directory: db, keyID: id)
        } catch {
            printError("cirrus key remove: \(error)")
            throw ExitCode(1)
        }
    }
}
