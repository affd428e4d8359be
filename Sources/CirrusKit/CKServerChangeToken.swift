// CKServerChangeToken: an opaque change token, archivable with NSKeyedArchiver as CloudKit's.
// It holds the bytes the backend gave: the embedded engine's zone or database token, or the
// `syncToken` string of a Web Services server.

/// Where a change fetch left off. Keep it (archived with `NSKeyedArchiver`) and pass it to the
/// next fetch.
///
/// ```swift
/// let data = try NSKeyedArchiver.archivedData(withRootObject: token, requiringSecureCoding: true)
/// let back = try NSKeyedUnarchiver.unarchivedObject(ofClass: CKServerChangeToken.self, from: data)
/// ```
public final class CKServerChangeToken: NSObject, NSSecureCoding, NSCopying, Sendable {
    /// The token's bytes.
    let data: Data

    init(data: Data) {
        self.data = data
        super.init()
    }

    /// Equal when the bytes are.
    public override func isEqual(_ object: Any?) -> Bool { (object as? CKServerChangeToken)?.data == data }
    /// Hashes the bytes.
    public override var hash: Int { data.hashValue }
    /// `<CKServerChangeToken: N bytes>`.
    public override var description: String { "<CKServerChangeToken: \(data.count) bytes>" }
    /// The token itself: it is immutable.
    public func copy(with zone: NSZone? = nil) -> Any { self }
    /// Tokens archive securely.
    public static var supportsSecureCoding: Bool { true }
    /// Archives the bytes.
    public func encode(with coder: NSCoder) { coder.encode(data as NSData, forKey: "token") }
    /// Reads what `encode(with:)` wrote.
    public init?(coder: NSCoder) {
        guard let d = coder.cirrusObject(of: NSData.self, forKey: "token") else { return nil }
        data = d as Data
        super.init()
    }
}

extension NSCoder {
    /// The object of `type` under `key`, nil when there is none. swift-corelibs-foundation's
    /// keyed unarchiver stops the process (its default failure policy) when a secure decode asks
    /// for a missing key, so every optional member is looked for first.
    func cirrusObject<T: NSObject & NSCoding>(of type: T.Type, forKey key: String) -> T? {
        guard containsValue(forKey: key) else { return nil }
        return decodeObject(of: type, forKey: key)
    }
}
