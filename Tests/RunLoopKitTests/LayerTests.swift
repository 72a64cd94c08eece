import Foundation
import Testing

/// The layer rules the compiler cannot check (ARCHITECTURE.md, "Layers"), read from the source
/// tree. The rest it does: RunLoopKitPlatform and RunLoopKitBackend are targets below
/// RunLoopKit, which name nothing of it, and the backends, the wake grid and the cycle clock
/// are internal to RunLoopKitBackend. Two rules are left to this check: SwiftPM hands a
/// target the C modules of the targets below it, so `import CRunLoopKitLibev` would compile
/// anywhere in RunLoopKit; and the engine (`Core/`) shares its module with the API, so that
/// it never names the platform's signal fan-out (`SignalClaims`, which the API verifies) is
/// a folder's rule.
@Suite("Layers")
struct LayerTests {
    /// `Sources`, found from this file (`Tests/RunLoopKitTests/LayerTests.swift`).
    static let sources = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources")

    /// The Swift files of one folder under `Sources`, with their text.
    static func files(in folder: String) throws -> [(name: String, text: String)] {
        let directory = sources.appendingPathComponent(folder)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".swift") }.sorted()
        return try names.map { ($0, try String(contentsOf: directory.appendingPathComponent($0), encoding: .utf8)) }
    }

    /// `text` without its `//` comments (names in prose are not dependencies).
    static func code(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { line in line.range(of: "//").map { String(line[..<$0.lowerBound]) } ?? String(line) }
            .joined(separator: "\n")
    }

    @Test("the folders are found (so that the other checks cannot pass on an empty tree)")
    func foldersFound() throws {
        #expect(try Self.files(in: "RunLoopKit/Core").count >= 20)
        #expect(try Self.files(in: "RunLoopKitBackend").contains { $0.name == "LibevBackend.swift" })
    }

    @Test("no file of RunLoopKit imports CRunLoopKitLibev or calls the C shim")
    func cShimStaysBelow() throws {
        for folder in ["Public", "Async", "Core"] {
            for (name, text) in try Self.files(in: "RunLoopKit/\(folder)") {
                let code = Self.code(text)
                #expect(!code.contains("import CRunLoopKitLibev"), "\(folder)/\(name) imports CRunLoopKitLibev")
                #expect(!code.contains("clibev_"), "\(folder)/\(name) calls the C shim")
            }
        }
    }

    @Test("Core names no signal fan-out (SignalClaims is the backend's and the API's)")
    func coreLeavesSignalsAlone() throws {
        for (name, text) in try Self.files(in: "RunLoopKit/Core") {
            #expect(Self.code(text).range(of: "\\bSignalClaims\\b", options: .regularExpression) == nil,
                    "Core/\(name) names SignalClaims")
        }
    }
}
