// The demo's famous places, read from their text table (DemoData+Places.swift): every line makes
// a place, with the fields the README tour and the transcripts name.

import CirrusShell
import RecordModel
import Testing

@Suite("Demo data")
struct DemoDataTests {
    @Test func everyFamousPlaceIsReadWhole() {
        let places = DemoData(placeCount: 0).famousPlaces()
        #expect(places.count == 20)
        #expect(Set(places.map(\.recordID.recordName)).count == places.count)
        for p in places {
            let name = p.recordID.recordName
            guard case .location(let at)? = p["location"] else {
                Issue.record("\(name): no location")
                continue
            }
            #expect(abs(at.latitude) <= 90 && abs(at.longitude) <= 180, "\(name)")
            if case .int64(let n)? = p["population"] {
                #expect(n > 0, "\(name)")
            } else {
                Issue.record("\(name): no population")
            }
            if case .list(let tags)? = p["tags"] {
                #expect(!tags.isEmpty, "\(name)")
            } else {
                Issue.record("\(name): no tags")
            }
            if case .string(let text)? = p["description"] {
                #expect(!text.isEmpty && !text.contains("|") && !text.contains("\\"), "\(name): \(text)")
            } else {
                Issue.record("\(name): no description")
            }
        }
        let eiffel = places.first { $0.recordID.recordName == "eiffel-tower" }
        #expect(eiffel?["name"] == .string("Eiffel Tower"))
        #expect(eiffel?["location"] == .location(Location(latitude: 48.8584, longitude: 2.2945)))
        #expect(eiffel?["population"] == .int64(7_000_000))
        #expect(eiffel?["tags"] == .list([.string("landmark"), .string("view"), .string("iron")]))
        #expect(
            eiffel?["description"]
                == .string("wrought iron lattice tower on the Champ de Mars with a view over the river"))
        let pole = places.first { $0.recordID.recordName == "south-pole-marker" }
        #expect(pole?["location"] == .location(Location(latitude: -89.9999, longitude: 0)))
        #expect(pole?["name"] == .string("Ceremonial South Pole"))
    }
}
