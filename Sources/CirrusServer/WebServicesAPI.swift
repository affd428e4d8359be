// WebServicesAPI: CloudKit Web Services over one container directory, independent of the HTTP
// library — a request (method, path, query, headers, body bytes) in, a status and a JSON body out.
// HTTPServer.swift puts it behind Hummingbird; tests call it directly too.
//
//   POST /database/1/{container}/{development|production}/{public|private}/{operation}
//
// Order of checks for every request: path shape (version 1, this container, a known environment
// and database) → size of the body → authentication (a server-to-server signature, or an API
// token and optionally a web auth token; Credentials.swift, RequestSigning.swift) → the
// database the identity may reach (a private database is always the caller's own) → the
// operation, which parses its body (errors name the path inside it: `query.filterBy[1].comparator`)
// and calls the Database façade. Queries from JSON become a format string and arguments
// (`QueryFilter.predicateFormat`) and go through the same checker, planner and executor as any
// other query. Operations: WebServicesAPI+Records.swift, WebServicesAPI+Zones.swift, …;
// schema promotion (which also needs a management token): WebServicesAPI+Deployment.swift.
//
// Nothing a client sends may crash the server: every failure is a CloudKit error object.

import Cirrus
import CirrusIO
import Foundation
import RecordModel

/// One HTTP request, as the API sees it.
public struct WebRequest: Sendable {
    /// The HTTP method (`GET`, `POST`).
    public var method: String
    /// The URL path, e.g. `/database/1/iCloud.com.example/development/public/records/query`.
    public var path: String
    /// Query-string parameters (`ckAPIToken`, `ckWebAuthToken`).
    public var query: [String: String]
    /// Header fields by lowercased name.
    public var headers: [String: String]
    /// The body's bytes (empty: none).
    public var body: [UInt8]

    /// A request; header names are lowercased.
    public init(
        method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:],
        body: [UInt8] = []
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { _, b in b })
        self.body = body
    }
}

/// One HTTP response: a status and a JSON body, or raw bytes (an asset's content).
public struct WebResponse: Sendable {
    /// The HTTP status.
    public var status: Int
    /// The JSON answer (ignored when `bytes` is set).
    public var body: JSONValue {
        get { records?.json ?? stored }
        set {
            stored = newValue
            records = nil
            encoded = nil
        }
    }
    /// Raw content instead of JSON, with its content type.
    public var bytes: (content: [UInt8], contentType: String)?
    private var stored: JSONValue
    /// A records/query answer, kept as records so that `jsonBytes` writes it without a JSONValue.
    private var records: RecordsPage?
    /// The encoded answer, once `encodeOnce()` made it (the request log counts its bytes, then
    /// the HTTP layer sends the same bytes).
    private var encoded: [UInt8]?

    /// A JSON response.
    public init(status: Int = 200, body: JSONValue) {
        self.status = status
        self.stored = body
    }

    /// A response of raw bytes.
    public init(status: Int = 200, bytes: [UInt8], contentType: String) {
        self.status = status
        self.stored = .null
        self.bytes = (bytes, contentType)
    }

    /// A records/query answer.
    init(records: RecordsPage) {
        self.status = 200
        self.stored = .null
        self.records = records
    }

    /// The JSON answer as UTF-8 bytes (what goes over the wire).
    var jsonBytes: [UInt8] { encoded ?? records?.bytes ?? stored.jsonBytes }

    /// Encodes the answer now and keeps the bytes; returns their count.
    mutating func encodeOnce() -> Int {
        if let (content, _) = bytes { return content.count }
        if encoded == nil { encoded = records?.bytes ?? stored.jsonBytes }
        return encoded?.count ?? 0
    }

    /// The page of a records/query answer, when it is one.
    var recordsPage: RecordsPage? { records }

    init(_ e: WebServicesError) { self.init(status: e.code.status, body: e.json) }
}

/// Limits of the server; the defaults are CloudKit's.
public struct ServerLimits: Sendable {
    /// Bytes of one request body.
    public var maximumBodyBytes = 4 << 20
    /// Operations (records, zones, …) in one request.
    public var maximumOperations = 200
    /// Records in one response (`resultsLimit` above it is refused).
    public var maximumResults = 200
    /// Bytes of one uploaded asset.
    public var maximumAssetBytes = 16 << 20
    /// Entries the request log keeps (the newest; older ones are dropped).
    public var requestLogCapacity = 10_000
    /// User lookups (users/discover, users/lookup/…) one caller may make a minute, counted per
    /// address or name looked up; also the most one request may ask for.
    public var userLookupsPerMinute = 300

    /// CloudKit's limits.
    public init() {}
}

/// CloudKit Web Services over the environments of one container directory.
public final class WebServicesAPI: Sendable {
    /// The container identifier URLs must name (e.g. `iCloud.com.example.notes`).
    public let containerIdentifier: String
    /// The container directory (its environments and credentials file).
    public let directory: String
    /// The limits requests are held to.
    public let limits: ServerLimits
    let containers: EnvironmentContainers
    /// The options both environments are opened with (a reset reopens development with them).
    let options: ContainerOptions
    let credentials: CredentialStore
    let replays = ReplayGuard()
    let notifications = NotificationHub()
    let lookupLimiter: LookupLimiter
    let metrics = ServerMetrics()
    let requestLog: RequestLog
    let now: @Sendable () -> Date
    /// How development is reset when it is not a container directory's (nil: refused).
    let developmentReset: DevelopmentReset?

    /// Opens both environments of the container directory `directory` (DIR/development,
    /// DIR/production, created when missing) and its credentials file (first: a bad one stops
    /// the server before any container is opened).
    public convenience init(
        directory: String, containerIdentifier: String, limits: ServerLimits = ServerLimits(),
        options: ContainerOptions = ContainerOptions(), now: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        let credentials = try CredentialStore(directory: directory, fileSystem: options.fileSystem)
        let development = try Container.open(at: directory, environment: .development, options: options)
        let production: Container
        do {
            production = try Container.open(at: directory, environment: .production, options: options)
        } catch {
            try? development.close()  // the open error is the one to report
            throw error
        }
        self.init(
            directory: directory, containerIdentifier: containerIdentifier, credentials: credentials,
            containers: EnvironmentContainers(development: development, production: production), limits: limits,
            options: options, now: now)
    }

    /// Serves containers opened elsewhere — on another engine, such as PostgreSQL
    /// (`Container.open(postgres:…)`) — with the credentials file of `directory`. Promoting the
    /// schema works on any engine; resetting development needs `developmentReset` (else it is
    /// refused).
    ///
    /// ```swift
    /// let dev = try await Container.open(postgres: url, containerID: id, environment: .development)
    /// let prod = try await Container.open(postgres: url, containerID: id, environment: .production)
    /// let api = try WebServicesAPI(credentialsIn: dir, containerIdentifier: id, development: dev, production: prod)
    /// ```
    public convenience init(
        credentialsIn directory: String, containerIdentifier: String, development: Container, production: Container,
        developmentReset: DevelopmentReset? = nil, limits: ServerLimits = ServerLimits(),
        options: ContainerOptions = ContainerOptions(), now: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        self.init(
            directory: directory, containerIdentifier: containerIdentifier,
            credentials: try CredentialStore(directory: directory, fileSystem: options.fileSystem),
            containers: EnvironmentContainers(development: development, production: production), limits: limits,
            options: options, now: now, developmentReset: developmentReset)
    }

    private init(
        directory: String, containerIdentifier: String, credentials: CredentialStore,
        containers: EnvironmentContainers, limits: ServerLimits, options: ContainerOptions,
        now: @escaping @Sendable () -> Date, developmentReset: DevelopmentReset? = nil
    ) {
        self.developmentReset = developmentReset
        self.directory = directory
        self.containerIdentifier = containerIdentifier
        self.limits = limits
        self.now = now
        self.options = options
        self.credentials = credentials
        self.containers = containers
        lookupLimiter = LookupLimiter(perMinute: limits.userLookupsPerMinute)
        requestLog = RequestLog(capacity: limits.requestLogCapacity)
    }

    /// Closes both environments (checkpointing as `Container.close` does).
    public func close() throws {
        notifications.close()
        var first: (any Error)?
        for c in containers.all {
            do { try c.close() } catch { first = first ?? error }
        }
        if let first { throw first }
    }

    /// The container of an environment.
    public func container(_ environment: Environment) -> Container { containers[environment] }

    /// Answers one request, and counts it: the request log, telemetry and metrics
    /// (WebServicesAPI+Observability.swift).
    public func handle(_ request: WebRequest) async -> WebResponse {
        let started = ContinuousClock.now
        metrics.inFlight.increment()
        defer { metrics.inFlight.decrement() }
        var response = await answer(request)
        let elapsed = started.duration(to: .now)
        observe(request, &response, elapsed: elapsed)
        return response
    }

    /// The answer to one request.
    func answer(_ request: WebRequest) async -> WebResponse {
        do throws(WebServicesError) {
            let route = try Route(path: request.path, container: containerIdentifier)
            guard request.body.count <= max(limits.maximumBodyBytes, limits.maximumAssetBytes) else {
                throw WebServicesError(
                    .quotaExceeded,
                    "the request body has \(request.body.count) bytes; the limit is \(limits.maximumAssetBytes)")
            }
            let identity = try authenticate(request, route: route)
            let db = try database(route, identity: identity)
            switch route.operation {
            case Self.assetPutOperation: return WebResponse(body: try await storeAsset(request.body, db: db))
            case Self.assetDownloadOperation: return try await downloadAsset(request.query, db: db)
            case Self.notificationsOperation: return WebResponse(body: try notificationBacklog(request, db: db))
            default: break
            }
            guard request.body.count <= limits.maximumBodyBytes else {
                throw WebServicesError(
                    .quotaExceeded,
                    "the request body has \(request.body.count) bytes; the limit is \(limits.maximumBodyBytes)")
            }
            let body = try JSONBody(request.body, method: request.method)
            var base: String { Self.origin(request.headers["host"]) + route.base }  // for URLs in answers
            if route.operation == "assets/upload" { return WebResponse(body: try assetUploadURLs(body, base: base)) }
            if route.operation == Self.promoteOperation {
                return WebResponse(body: try await promoteSchema(request, body, route: route))
            }
            if route.operation == Self.resetOperation {
                return WebResponse(body: try await resetDevelopment(request, body, route: route))
            }
            if route.operation == Self.logsOperation {
                return WebResponse(body: try logs(request, body))
            }
            if route.operation == Self.telemetryOperation {
                return WebResponse(body: try telemetry(request))
            }
            if route.operation == "records/query" {
                let page = try await queryPage(body, db: db)
                guard page.hasAssets else { return WebResponse(records: page) }
                return WebResponse(body: Self.addingDownloadURLs(page.json, base: base))
            }
            let answer = try await perform(route.operation, body, db: db, route: route)
            // Rebuilding the answer costs a copy of it: only when it has an asset to link.
            return WebResponse(body: Self.hasAssets(answer) ? Self.addingDownloadURLs(answer, base: base) : answer)
        } catch {
            return WebResponse(error)
        }
    }

    func perform(
        _ operation: String, _ body: JSONBody, db: Database, route: Route
    ) async throws(WebServicesError)
        -> JSONValue
    {
        switch operation {
        case "records/query": return try await query(body, db: db)
        case "records/modify": return try await modify(body, db: db)
        case "records/lookup": return try await lookup(body, db: db)
        case "records/changes": return try await recordChanges(body, db: db)
        case "zones/list": return try await listZones(db: db)
        case "zones/lookup": return try await lookupZones(body, db: db)
        case "zones/modify": return try await modifyZones(body, db: db)
        case "changes/database": return try await databaseChanges(body, db: db)
        case "changes/zone": return try await zoneChanges(body, db: db)
        case "subscriptions/list": return try await listSubscriptions(db: db)
        case "subscriptions/lookup": return try await lookupSubscriptions(body, db: db)
        case "subscriptions/modify": return try await modifySubscriptions(body, db: db)
        case "assets/upload": return try assetUploadURLs(body, base: route.base)
        case "users/caller": return try await caller(db: db)
        case "users/discover", "users/lookup/email", "users/lookup/id":
            return try await discoverUsers(operation, body, db: db)
        case "cirrus/schema": return schemaJSON(db: db)
        case "cirrus/check": return try checkPredicate(body, db: db)
        case "cirrus/explain": return try await explainQuery(body, db: db)
        default:
            throw WebServicesError(
                .notFound, "unknown operation \"\(operation)\" (\(Self.operations.joined(separator: ", ")))")
        }
    }

    /// `http://HOST` for a well-formed Host header (URLs in answers are then absolute, as
    /// CloudKit's), else "" (URLs are paths).
    static func origin(_ host: String?) -> String {
        // Byte by byte, not through CharacterSet, whose lookups are costly on a per-request path.
        guard let host, !host.isEmpty, host.utf8.count <= 255,
            host.utf8.allSatisfy({ b in
                (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
                    || b == UInt8(ascii: ".") || b == UInt8(ascii: "-") || b == UInt8(ascii: ":")
                    || b == UInt8(ascii: "[") || b == UInt8(ascii: "]")
            })
        else { return "" }
        return "http://\(host)"
    }

    /// The operations this server answers.
    public static let operations = [
        "records/query", "records/modify", "records/lookup", "records/changes", "zones/list", "zones/lookup",
        "zones/modify", "changes/database", "changes/zone", "subscriptions/list", "subscriptions/lookup",
        "subscriptions/modify", "assets/upload", "users/caller", "users/discover", "users/lookup/email",
        "users/lookup/id", "cirrus/schema", "cirrus/check", "cirrus/explain",
        "cirrus/schema/promote", "cirrus/reset", "cirrus/logs", "cirrus/telemetry",
    ]

    // MARK: authentication

    /// Who the request acts as: a signed server-to-server request acts as its key's user; otherwise
    /// an API token is required and a web auth token, when present, names the user.
    func authenticate(_ r: WebRequest, route: Route) throws(WebServicesError) -> Identity {
        if let keyID = r.headers[RequestSigning.keyIDHeader.lowercased()] {
            guard let date = r.headers[RequestSigning.dateHeader.lowercased()],
                let signature = r.headers[RequestSigning.signatureHeader.lowercased()]
            else {
                throw WebServicesError(
                    .authenticationFailed,
                    "a signed request needs \(RequestSigning.dateHeader) and \(RequestSigning.signatureHeader)")
            }
            let user = try RequestSigning.verify(
                keyID: keyID, date: date, signature: signature, body: r.body, subpath: route.subpath, now: now(),
                credentials: credentials, replays: replays
            ).get()
            guard route.database == "public" else {
                throw WebServicesError(.accessDenied, "server-to-server keys reach the public database only")
            }
            return .user(user)
        }
        guard let token = r.query["ckAPIToken"] else {
            throw WebServicesError(
                .authenticationFailed,
                "missing ckAPIToken (create one with `cirrus token create`) or a request signature")
        }
        guard credentials.isAPIToken(token) else { throw WebServicesError(.authenticationFailed, "unknown ckAPIToken") }
        guard let web = r.query["ckWebAuthToken"] ?? r.headers["x-apple-cloudkit-request-webauthtoken"] else {
            return .anonymous
        }
        guard let user = credentials.user(forWebAuthToken: web) else {
            throw WebServicesError(.authenticationFailed, "unknown or revoked ckWebAuthToken")
        }
        return .user(user)
    }

    /// The database of the route for the identity: the public database, or the caller's own
    /// private database (never another user's).
    func database(_ route: Route, identity: Identity) throws(WebServicesError) -> Database {
        let c = container(route.environment)
        switch route.database {
        case "public": return c.publicDatabase(as: identity)
        default:
            guard let user = identity.userRecordName else {
                throw WebServicesError(
                    .authenticationRequired, "the private database needs a signed-in user: pass ckWebAuthToken")
            }
            return c.privateDatabase(for: user)
        }
    }
}

/// The parts of a Web Services path.
struct Route {
    var environment: Environment
    var database: String
    var operation: String
    /// The path from `/database/` on, which a server-to-server signature covers.
    var subpath: String
    /// The container the path names.
    var container: String
    /// `/database/1/{container}/{environment}/{database}`: where operation paths start.
    var base: String { "/database/1/\(container)/\(environment.rawValue)/\(database)" }

    init(path: String, container: String) throws(WebServicesError) {
        // Five parts and the rest (the operation), as substrings: this runs for every request.
        // Split as UTF-8 bytes: splitting a String walks grapheme clusters, which cost more than
        // the rest of the route. "/" is ASCII, so the pieces are whole scalars.
        let parts = path.utf8.split(separator: UInt8(ascii: "/"), maxSplits: 5, omittingEmptySubsequences: true)
            .map { Substring($0) }
        var rest = parts.count == 6 ? parts[5] : ""
        if rest.hasPrefix("/") || rest.hasSuffix("/") || rest.contains("//") {
            rest = Substring(rest.split(separator: "/").joined(separator: "/"))
        }
        guard parts.count == 6, !rest.isEmpty, parts[0] == "database" else {
            throw WebServicesError(
                .notFound,
                "paths are /database/1/{container}/{environment}/{public|private}/{operation}; got \(path)")
        }
        guard parts[1] == "1" else { throw WebServicesError(.notFound, "unknown API version \"\(parts[1])\"; use 1") }
        guard parts[2] == container else {
            throw WebServicesError(.notFound, "this server holds container \"\(container)\", not \"\(parts[2])\"")
        }
        guard let env = Environment(rawValue: String(parts[3])) else {
            throw WebServicesError(.notFound, "unknown environment \"\(parts[3])\" (development or production)")
        }
        guard parts[4] == "public" || parts[4] == "private" else {
            throw WebServicesError(
                .notFound,
                parts[4] == "shared"
                    ? "the shared database is not supported" : "unknown database \"\(parts[4])\" (public or private)")
        }
        environment = env
        database = String(parts[4])
        operation = String(rest)
        subpath = path
        self.container = container
    }
}
