import Foundation

/// The results as JSON (`--json`): the machine, the repetitions, and every row as measured
/// (each peer's values or why it has none, the pair ratios, the goal and its verdict).
struct JSONReport: Encodable {
    var machine: Machine
    var quick: Bool
    var repetitions: Int
    var rows: [Row]

    func encoded() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
    }
}
