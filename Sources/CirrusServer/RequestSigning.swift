// RequestSigning: CloudKit's server-to-server authentication.
//
// A request carries three headers:
//   X-Apple-CloudKit-Request-KeyID:       the key's id (`cirrus key add` registers it)
//   X-Apple-CloudKit-Request-ISO8601Date: when it was signed, e.g. 2026-11-24T10:15:00Z
//   X-Apple-CloudKit-Request-SignatureV1: base64 of the ECDSA P-256 SHA-256 signature (DER) of
//                                         "<date>:<base64(sha256(body))>:<subpath>"
// where subpath is the URL path from `/database/` on, without the query string. A request is
// refused (AUTHENTICATION_FAILED) when the key is unknown, the date is more than 10 minutes away
// from the server's clock, the signature does not verify (wrong key, body or path altered), or
// the same signature was already accepted (a replay) within those 10 minutes.

import Crypto
import Foundation

/// Remembers accepted signatures for the replay window.
final class ReplayGuard: @unchecked Sendable {
    private let lock = NSLock()
    // Guarded by lock: signature → when it expires (seconds since 1970).
    private var seen: [String: Double] = [:]

    /// Records `signature`; false when it was already recorded and has not expired.
    func accept(_ signature: String, now: Double, window: Double) -> Bool {
        lock.withLock {
            if seen.count > 4096 { seen = seen.filter { $0.value > now } }
            if let until = seen[signature], until > now { return false }
            seen[signature] = now + window
            return true
        }
    }
}

/// Signing and checking server-to-server requests.
public enum RequestSigning {
    /// How far a request's date may be from the server's clock, and how long a signature is
    /// remembered against replays: 10 minutes, as CloudKit.
    public static let window: Double = 600

    /// The header naming the key.
    public static let keyIDHeader = "X-Apple-CloudKit-Request-KeyID"
    /// The header carrying the signing date (ISO 8601).
    public static let dateHeader = "X-Apple-CloudKit-Request-ISO8601Date"
    /// The header carrying the base64 DER signature.
    public static let signatureHeader = "X-Apple-CloudKit-Request-SignatureV1"

    /// The signed message.
    public static func message(date: String, body: [UInt8], subpath: String) -> Data {
        let digest = Data(SHA256.hash(data: Data(body))).base64EncodedString()
        return Data("\(date):\(digest):\(subpath)".utf8)
    }

    /// The three headers for a request signed with `key` (clients and tests).
    public static func headers(
        keyID: String, key: P256.Signing.PrivateKey, date: Date, body: [UInt8], subpath: String
    ) throws -> [(String, String)] {
        let d = iso8601(date)
        let signature = try key.signature(for: message(date: d, body: body, subpath: subpath))
        return [
            (keyIDHeader, keyID), (dateHeader, d), (signatureHeader, signature.derRepresentation.base64EncodedString()),
        ]
    }

    /// `2026-11-24T10:15:00Z`
    public static func iso8601(_ date: Date) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        return f.string(from: date)
    }

    static func parseDate(_ s: String) -> Date? {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        if let d = f.date(from: s) { return d }
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.date(from: s)
    }

    /// Checks a signed request; returns the key's user or the reason it is refused.
    static func verify(
        keyID: String, date: String, signature: String, body: [UInt8], subpath: String, now: Date,
        credentials: CredentialStore, replays: ReplayGuard
    ) -> Result<String, WebServicesError> {
        guard let (key, user) = credentials.serverKey(keyID) else {
            return .failure(WebServicesError(.authenticationFailed, "unknown key id \"\(keyID)\""))
        }
        guard let signed = parseDate(date) else {
            return .failure(
                WebServicesError(.authenticationFailed, "\(dateHeader) is not an ISO 8601 date: \"\(date)\""))
        }
        guard abs(signed.timeIntervalSince(now)) <= window else {
            return .failure(
                WebServicesError(
                    .authenticationFailed,
                    "the request was signed at \(date), more than 10 minutes from the server's clock"))
        }
        guard let der = Data(base64Encoded: signature),
            let sig = try? P256.Signing.ECDSASignature(derRepresentation: der)
        else {
            return .failure(
                WebServicesError(.authenticationFailed, "\(signatureHeader) is not a base64 DER ECDSA signature"))
        }
        guard key.isValidSignature(sig, for: message(date: date, body: body, subpath: subpath)) else {
            return .failure(
                WebServicesError(
                    .authenticationFailed, "the signature does not verify for key \"\(keyID)\", this body and this path"
                ))
        }
        guard replays.accept(signature, now: now.timeIntervalSince1970, window: window) else {
            return .failure(WebServicesError(.authenticationFailed, "this signature was already used (a replay)"))
        }
        return .success(user)
    }
}
