// WebServicesClient: CloudKit Web Services requests over HTTP with async-http-client —
// `POST {server}/database/1/{container}/{environment}/{database}/{operation}` with a JSON body,
// authenticated with an API token (+ web auth token) in the query string or signed with a
// server-to-server key (`X-Apple-CloudKit-Request-*` headers: ECDSA P-256 over
// `date:base64(sha256(body)):subpath`, as docs/web-services.md describes and CirrusServer's
// RequestSigning checks). Error objects become CKErrors here (RemoteErrors).

import AsyncHTTPClient
import Crypto
import NIOCore
import NIOHTTP1
import RecordModel

/// One container on one server.
struct WebServicesClient: @unchecked Sendable {
    // @unchecked: every member is a `let`; P256.Signing.PrivateKey is an immutable value that
    // swift-crypto does not mark Sendable on Linux.
    let server: String
    let container: String
    let environment: String
    let credentials: CirrusConfiguration.Credentials
    let key: P256.Signing.PrivateKey?

    /// The process's HTTP client (as async-http-client's own `HTTPClient.shared`, never shut
    /// down), but failing at once when a connection cannot be made — as CloudKit answers
    /// networkUnavailable when offline — instead of retrying until the request's deadline.
    static let http: HTTPClient = {
        var configuration = HTTPClient.Configuration(timeout: .init(connect: .seconds(10), read: .seconds(60)))
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// The largest response read (a page of 200 records of up to 1 MB each is under this).
    static let maximumResponseBytes = 256 << 20
    static let timeout: TimeAmount = .seconds(60)

    init(
        server: URL, container: String, environment: String, credentials: CirrusConfiguration.Credentials
    )
        throws(CKError)
    {
        var s = server.absoluteString
        while s.hasSuffix("/") { s.removeLast() }
        self.server = s
        self.container = container
        self.environment = environment
        self.credentials = credentials
        if case .serverToServer(_, let pem) = credentials {
            do {
                key = try P256.Signing.PrivateKey(pemRepresentation: pem)
            } catch {
                throw CKError(
                    .notAuthenticated, "CIRRUS_PRIVATE_KEY_FILE does not hold a P-256 private key in PEM: \(error)")
            }
        } else {
            key = nil
        }
    }

    /// `/database/1/{container}/{environment}/{database}`.
    func basePath(_ database: String) -> String {
        "/database/1/\(Self.escape(container))/\(environment)/\(database)"
    }

    /// Whether the credentials name a user (a web auth token).
    var hasUser: Bool {
        if case .apiToken(_, let web?) = credentials { return !web.isEmpty }
        return false
    }

    /// POSTs `body` to `operation` of `database`; the answer's JSON, or the request's error.
    func post(_ database: String, _ operation: String, _ body: JSONValue) async throws(CKError) -> JSONValue {
        let path = basePath(database) + "/" + operation
        let (status, headers, bytes) = try await send(path: path, method: .POST, body: Array(body.jsonText.utf8))
        return try Self.answer(status, headers, bytes)
    }

    /// POSTs raw bytes to a full URL the server gave (an asset upload URL).
    func postBytes(url: String, _ bytes: [UInt8]) async throws(CKError) -> JSONValue {
        let path = url.hasPrefix(server) ? String(url.dropFirst(server.count)) : url
        let (status, headers, body) = try await send(path: path, method: .POST, body: bytes)
        return try Self.answer(status, headers, body)
    }

    /// GETs `path` (under the server) and returns the bytes; nil on any failure.
    func get(path: String) async -> [UInt8]? {
        guard let (status, _, bytes) = try? await send(path: path, method: .GET, body: []), status == 200 else {
            return nil
        }
        return bytes
    }

    /// One request: the URL with its credentials, the signature headers when signing.
    private func send(
        path: String, method: HTTPMethod, body: [UInt8]
    ) async throws(CKError) -> (
        Int, HTTPHeaders, [UInt8]
    ) {
        let (pathOnly, query) = Self.split(path)
        var params = query
        var request = HTTPClientRequest(url: "")
        switch credentials {
        case .apiToken(let token, let web):
            params.append("ckAPIToken=\(Self.escape(token))")
            if let web, !web.isEmpty { params.append("ckWebAuthToken=\(Self.escape(web))") }
        case .serverToServer(let keyID, _):
            guard let key else { throw CKError(.notAuthenticated, "no server-to-server key") }
            let date = Self.iso8601(Date())
            let digest = Data(SHA256.hash(data: Data(body))).base64EncodedString()
            let message = Data("\(date):\(digest):\(pathOnly)".utf8)
            do {
                let signature = try key.signature(for: message).derRepresentation.base64EncodedString()
                request.headers.add(name: "X-Apple-CloudKit-Request-KeyID", value: keyID)
                request.headers.add(name: "X-Apple-CloudKit-Request-ISO8601Date", value: date)
                request.headers.add(name: "X-Apple-CloudKit-Request-SignatureV1", value: signature)
            } catch {
                throw CKError(.internalError, "signing the request failed: \(error)")
            }
        }
        request.url = server + pathOnly + (params.isEmpty ? "" : "?" + params.joined(separator: "&"))
        request.method = method
        if method == .POST {
            request.headers.add(name: "Content-Type", value: "application/json; charset=utf-8")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        do {
            let response = try await Self.http.execute(request, timeout: Self.timeout)
            let buffer = try await response.body.collect(upTo: Self.maximumResponseBytes)
            return (Int(response.status.code), response.headers, Array(buffer: buffer))
        } catch let e as HTTPClientError where e == .connectTimeout || e == .deadlineExceeded {
            throw CKError(.networkFailure, "\(server): \(e)")
        } catch {
            throw CKError(.networkUnavailable, "cannot reach \(server): \(error)")
        }
    }

    /// The JSON of a 2xx answer; otherwise its error object as a CKError.
    static func answer(_ status: Int, _ headers: HTTPHeaders, _ bytes: [UInt8]) throws(CKError) -> JSONValue {
        let text = String(decoding: bytes, as: UTF8.self)
        let json = try? JSONValue.parse(text)
        if (200..<300).contains(status), let json { return json }
        let retry = headers.first(name: "Retry-After").flatMap(Double.init)
        guard let json, json["serverErrorCode"] != nil else {
            throw CKError(
                status == 503 ? .serviceUnavailable : .serverRejectedRequest,
                "HTTP \(status): \(text.prefix(300))", retry.map { [CKErrorRetryAfterKey: $0] } ?? [:])
        }
        throw RemoteErrors.error(json, retryAfter: retry)
    }

    /// The path and its query parameters.
    static func split(_ path: String) -> (String, [String]) {
        guard let q = path.firstIndex(of: "?") else { return (path, []) }
        let params = path[path.index(after: q)...].split(separator: "&").map(String.init)
        return (String(path[..<q]), params)
    }

    /// Percent-encodes a query or path component.
    static func escape(_ s: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return s.addingPercentEncoding(withAllowedCharacters: allowed) ?? s
    }

    /// `2026-11-24T10:15:00Z`.
    static func iso8601(_ date: Date) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        return f.string(from: date)
    }
}

/// Web Services error objects as CKErrors.
enum RemoteErrors {
    /// The CKError of an error object (`{"serverErrorCode", "reason", "serverRecord"?, …}`).
    static func error(_ json: JSONValue, retryAfter: Double? = nil) -> CKError {
        let code = json["serverErrorCode"]?.stringValue ?? "INTERNAL_ERROR"
        let reason = json["reason"]?.stringValue ?? code
        var info: [String: Any] = [NSLocalizedDescriptionKey: reason]
        if let seconds = retryAfter ?? json["retryAfter"]?.doubleValue { info[CKErrorRetryAfterKey] = seconds }
        if let s = json["serverRecord"], let r = try? Record(webServicesJSON: s) {
            info[CKRecordChangedErrorServerRecordKey] = CKRecord(r, asset: { CKAsset(stored: $0, file: nil) })
        }
        return CKError(ckCode(code, reason: reason), userInfo: info)
    }

    /// CloudKit's code for a `serverErrorCode`; BAD_REQUEST reasons that Cirrus's server
    /// prefixes for codes Web Services lacks (change token expired, limit exceeded, not
    /// supported by this database) keep their own code.
    static func ckCode(_ code: String, reason: String) -> CKError.Code {
        switch code {
        case "ACCESS_DENIED": return .permissionFailure
        case "ATOMIC_ERROR": return .batchRequestFailed
        case "AUTHENTICATION_FAILED", "AUTHENTICATION_REQUIRED": return .notAuthenticated
        case "CONFLICT", "EXISTS": return .serverRecordChanged
        case "INTERNAL_ERROR": return .internalError
        case "NOT_FOUND": return .unknownItem
        case "QUOTA_EXCEEDED": return .quotaExceeded
        case "THROTTLED": return .requestRateLimited
        case "TRY_AGAIN_LATER": return .serviceUnavailable
        case "VALIDATING_REFERENCE_ERROR": return .referenceViolation
        case "ZONE_NOT_FOUND": return .zoneNotFound
        case "BAD_REQUEST":
            if reason.contains("change token expired") { return .changeTokenExpired }
            if reason.hasPrefix("limit exceeded") { return .limitExceeded }
            if reason.hasPrefix("not supported by this database") { return .badDatabase }
            return .invalidArguments
        default: return .serverRejectedRequest
        }
    }
}
