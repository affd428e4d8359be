// CirrusKit: CloudKit's own Swift API on Linux. `import CirrusKit` stands where `import CloudKit`
// (and `import CoreLocation`) stood; Foundation comes with it, as it comes with CloudKit.

@_exported import Foundation
