// Where a CKContainer's records live, chosen without code changes: from the environment
// variables (CIRRUS_SERVER set → a Web Services server; otherwise an embedded container under
// CIRRUS_CONTAINERS), or from a CirrusConfiguration value given to CKContainer(identifier:
// configuration:) in tests and servers. docs/cirruskit.md lists the variables.

import Cirrus
import RecordModel

/// How CirrusKit reaches a container: embedded (a directory opened in this process) or remote
/// (a CloudKit Web Services server: `cirrus serve`, or CloudKit's own).
///
/// ```swift
/// let config = CirrusConfiguration(backend: .embedded(containersDirectory: "/tmp/containers"), user: "_alice")
/// let container = CKContainer(identifier: "iCloud.com.example.notes", configuration: config)
/// ```
public struct CirrusConfiguration: Sendable {
    /// The CloudKit environment.
    public enum Environment: String, Sendable, Hashable {
        /// Development: the schema grows with saves.
        case development
        /// Production: the schema is fixed.
        case production
    }

    /// How the server is told who is calling.
    public enum Credentials: Sendable, Hashable {
        /// An API token (`ckAPIToken`), and a web auth token (`ckWebAuthToken`) to act as a user.
        case apiToken(String, webAuthToken: String?)
        /// A server-to-server key: its id and the P-256 private key in PEM. Such requests reach
        /// the public database only.
        case serverToServer(keyID: String, privateKeyPEM: String)
    }

    /// Where the records live.
    public enum Backend: Sendable {
        /// Container directories under `containersDirectory` (`<containersDirectory>/<identifier>`),
        /// opened in this process with `options`.
        case embedded(containersDirectory: String, options: ContainerOptions = ContainerOptions())
        /// A Web Services server at `server` (its base URL, e.g. `http://127.0.0.1:8080`).
        case remote(server: URL, credentials: Credentials)
    }

    /// Where the records live.
    public var backend: Backend
    /// The user (an embedded container's user record name, e.g. `_alice`); nil: no iCloud
    /// account — `accountStatus()` is `.noAccount` and private databases refuse every call.
    /// Ignored by a remote backend, whose credentials say who calls.
    public var user: String?
    /// The environment.
    public var environment: Environment

    /// A configuration.
    public init(backend: Backend, user: String? = nil, environment: Environment = .development) {
        self.backend = backend
        self.user = user
        self.environment = environment
    }

    /// The configuration the environment variables describe (docs/cirruskit.md):
    /// `CIRRUS_SERVER` with `CIRRUS_API_TOKEN` and `CIRRUS_WEB_AUTH_TOKEN`, or `CIRRUS_KEY_ID`
    /// and `CIRRUS_PRIVATE_KEY_FILE`; else `CIRRUS_CONTAINERS` (default
    /// `$XDG_DATA_HOME/cirrus/containers` or `~/.local/share/cirrus/containers`) and `CIRRUS_USER`;
    /// `CIRRUS_ENVIRONMENT` is `development` (default) or `production`.
    public static func fromEnvironment(
        _ env: [String: String] = ProcessInfo.processInfo.environment
    )
        -> CirrusConfiguration
    {
        let environment = Environment(rawValue: env["CIRRUS_ENVIRONMENT"]?.lowercased() ?? "") ?? .development
        let user = env["CIRRUS_USER"].flatMap { $0.isEmpty ? nil : $0 }
        if let server = env["CIRRUS_SERVER"], !server.isEmpty, let url = URL(string: server) {
            let credentials: Credentials
            if let keyID = env["CIRRUS_KEY_ID"], let file = env["CIRRUS_PRIVATE_KEY_FILE"] {
                credentials = .serverToServer(
                    keyID: keyID, privateKeyPEM: (try? String(contentsOfFile: file, encoding: .utf8)) ?? "")
            } else {
                credentials = .apiToken(env["CIRRUS_API_TOKEN"] ?? "", webAuthToken: env["CIRRUS_WEB_AUTH_TOKEN"])
            }
            return CirrusConfiguration(
                backend: .remote(server: url, credentials: credentials), user: user, environment: environment)
        }
        return CirrusConfiguration(
            backend: .embedded(containersDirectory: defaultContainersDirectory(env)), user: user,
            environment: environment)
    }

    /// `$CIRRUS_CONTAINERS`, else `$XDG_DATA_HOME/cirrus/containers`, else
    /// `~/.local/share/cirrus/containers`.
    static func defaultContainersDirectory(_ env: [String: String]) -> String {
        if let d = env["CIRRUS_CONTAINERS"], !d.isEmpty { return d }
        if let x = env["XDG_DATA_HOME"], !x.isEmpty { return x + "/cirrus/containers" }
        let home = env["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return home + "/.local/share/cirrus/containers"
    }

    /// The backend of the container `identifier`, or one whose every call fails with why it
    /// could not be had.
    func makeBackend(identifier: String) -> any ContainerBackend {
        let env: RecordModel.Environment = environment == .production ? .production : .development
        switch backend {
        case .embedded(let root, let options):
            guard Self.isSafeIdentifier(identifier) else {
                return FailingBackend(error: CKError(.badContainer, "\"\(identifier)\" is not a container identifier"))
            }
            do throws(CKError) {
                let c = try EmbeddedContainers.container(
                    directory: root + "/" + identifier, environment: env, options: options)
                return EmbeddedContainer(container: c, user: user)
            } catch {
                return FailingBackend(error: error)
            }
        case .remote(let server, let credentials):
            do throws(CKError) {
                let client = try WebServicesClient(
                    server: server, container: identifier, environment: environment.rawValue, credentials: credentials)
                return RemoteContainer(client: client)
            } catch {
                return FailingBackend(error: error)
            }
        }
    }

    /// A container identifier usable as a directory name: no `/`, not `.` or `..`, not empty.
    static func isSafeIdentifier(_ id: String) -> Bool {
        !id.isEmpty && id != "." && id != ".." && !id.contains("/") && !id.contains("\0")
    }
}
