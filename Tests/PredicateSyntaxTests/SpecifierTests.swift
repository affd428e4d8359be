// Placeholder.Specifier(rawValue:) against NSPredicate's rules written out plainly: `%`, a
// length modifier the conversion takes, one conversion letter — over every string of that shape
// from a set of letters that includes non-conversions, non-modifiers and non-ASCII.

import Testing

@testable import PredicateSyntax

@Suite struct SpecifierTests {
    /// The rules, as the documentation states them.
    func accepted(_ text: String) -> Placeholder.Specifier.Kind? {
        let chars = Array(text)
        guard chars.count >= 2, chars.first == "%" else { return nil }
        let modifier = String(chars.dropFirst().dropLast())
        let kind: Placeholder.Specifier.Kind
        switch chars.last! {
        case "@": kind = .object
        case "K": kind = .key
        case "d", "i", "o", "u", "x", "X": kind = .integer
        case "f", "F", "e", "E", "g", "G", "a", "A": kind = .floatingPoint
        case "c", "C": kind = .character
        case "s", "S": kind = .string
        case "p": kind = .pointer
        default: return nil
        }
        let modifiers: [String] =
            switch kind {
            case .integer: ["", "hh", "h", "l", "ll", "q", "z", "t", "j"]
            case .floatingPoint: ["", "l", "L"]
            default: [""]
            }
        return modifiers.contains(modifier) ? kind : nil
    }

    @Test func everyShortStringIsJudgedAsTheRulesSay() {
        let letters: [String] = [
            "@", "K", "d", "i", "o", "u", "x", "X", "f", "F", "e", "E", "g", "G", "a", "A", "c", "C", "s", "S", "p",
            "h", "l", "L", "q", "z", "t", "j", "%", "y", "1", "é", " ",
        ]
        var checked = 0
        var taken = 0
        for a in [""] + letters {
            for b in [""] + letters {
                for c in letters {
                    let text = "%" + a + b + c
                    let spec = Placeholder.Specifier(rawValue: text)
                    #expect(spec?.kind == accepted(text), "\(text)")
                    #expect(spec.map(\.rawValue) == (accepted(text) == nil ? nil : text))
                    checked += 1
                    if spec != nil { taken += 1 }
                }
            }
        }
        #expect(checked == 34 * 34 * 33 && taken > 40)
        for text in ["", "%", "@", "d", "%%%d", "%hhhd", "%lldd", "x%d", "%d "] {
            #expect(Placeholder.Specifier(rawValue: text) == nil, "\(text)")
        }
    }
}
