import Foundation
import Testing

/// CONTRIBUTING.md's rules that a grep can check, checked on the source tree: no
/// `@unchecked Sendable` in `Examples/` or `Benchmarks/`, and no measured figures (an
/// instruction count, a time in ns or µs) in the library's code comments.
@Suite("House rules")
struct HouseRulesTests {
    /// The repository's root, found from this file (`Tests/RunLoopKitTests/HouseRulesTests.swift`).
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Every file under `folder` whose name ends with one of `suffixes`, with its text, build
    /// folders left out.
    static func files(under folder: String, endingWith suffixes: [String]) -> [(path: String, text: String)] {
        let base = root.appendingPathComponent(folder)
        guard let walker = FileManager.default.enumerator(atPath: base.path) else { return [] }
        var found: [(path: String, text: String)] = []
        while let path = walker.nextObject() as? String {
            if path.split(separator: "/").contains(where: { $0.hasPrefix(".build") }) { continue }
            guard suffixes.contains(where: { path.hasSuffix($0) }),
                  let text = try? String(contentsOf: base.appendingPathComponent(path), encoding: .utf8)
            else { continue }
            found.append(("\(folder)/\(path)", text))
        }
        return found.sorted { $0.path < $1.path }
    }

    /// The lines of `files` that match `pattern`, as `path:line: text`.
    static func lines(of files: [(path: String, text: String)], matching pattern: String) -> [String] {
        files.flatMap { file in
            file.text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().compactMap { index, line in
                line.range(of: pattern, options: .regularExpression) == nil
                    ? nil : "\(file.path):\(index + 1): \(line.trimmingCharacters(in: .whitespaces))"
            }
        }
    }

    @Test("Examples/ and Benchmarks/ declare no @unchecked Sendable")
    func noUncheckedSendableOutsideTheLibrary() {
        let files = Self.files(under: "Examples", endingWith: [".swift"])
            + Self.files(under: "Benchmarks", endingWith: [".swift"])
        #expect(files.count >= 20)  // the tree was found
        #expect(Self.lines(of: files, matching: "@unchecked +Sendable") == [])
    }

    @Test("the library's code comments carry no instruction counts or measured times")
    func noFiguresInComments() {
        let files = Self.files(under: "Sources", endingWith: [".swift", ".c", ".h"])
        #expect(files.count >= 50)  // the tree was found
        let figure = "//.*([0-9][0-9,.]* *instructions|(tens|hundreds) of (nano|micro)seconds|within (tens of )?microseconds)"
        #expect(Self.lines(of: files, matching: figure) == [])
    }
}
