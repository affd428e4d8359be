// Swift 6 language mode, `import Foundation` beside `import CirrusKit`: the predicate and sort
// initializers corelibs marks unavailable resolve to CirrusKit's, and a query runs embedded.

import CirrusKit
import Foundation

let predicate = NSPredicate(format: "title == %@ AND priority > %d AND due < %@", "Groceries", 2, Date() as NSDate)
let sort = NSSortDescriptor(key: "title", ascending: false)
let both = NSCompoundPredicate(andPredicateWithSubpredicates: [predicate, NSPredicate(value: true)])
let query = CKQuery(recordType: "Note", predicate: both)
query.sortDescriptors = [
    sort, CKLocationSortDescriptor(key: "location", relativeLocation: CLLocation(latitude: 1, longitude: 2)),
]
print("sort key:", sort.key ?? "nil", "ascending:", sort.ascending)

let container = CKContainer.default()
do {
    let (matches, _) = try await container.publicCloudDatabase.records(matching: query)
    print("query ran: \(matches.count) matches")
} catch let error as CKError {
    // An empty container has no Note type yet: the checker says so (or the run reaches no server).
    print("query answered \(error.code): \(error.localizedDescription)")
}
