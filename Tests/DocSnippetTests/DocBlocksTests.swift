import Foundation
import Testing

/// Every ```swift block of README.md, of the DocC articles and of the doc comments in
/// Sources/RunLoopKit* must appear, line for line (leading indentation aside), between a
/// `// snippet: NAME` and an `// end` marker of a Swift file this package compiles, so that a
/// change of the API that breaks a documented example breaks the build. A block's `import`
/// lines are file-level: each must appear in the snippet's file; the rest must equal the
/// region. Blocks that are not Swift code use another fence language (`text`, `sh`).
@Suite struct DocBlocksTests {
    /// The package root, from this file's path (Tests/DocSnippetTests/DocBlocksTests.swift).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// Where the documented code lives, and where its compiled copies live.
    static let documentation = ["README.md", "Sources", "Examples"]
    static let snippetFolders = ["Tests/DocSnippetTests", "Tests/SVGPlotTests", "Tests/TraceTimelineTests", "Tests/RunLoopKitGLibTests", "Tests/RunLoopKitServiceLifecycleTests", "Examples"]

    @Test func everySwiftBlockIsACompiledSnippet() throws {
        let snippets = try Self.files(under: Self.snippetFolders, ending: ".swift").flatMap { file in
            try DocBlocks.snippets(in: String(contentsOf: file, encoding: .utf8), file: file.lastPathComponent)
        }
        var documented: [DocBlocks.Block] = []
        for file in try Self.files(under: Self.documentation, ending: ".md") {
            documented += try DocBlocks.markdownBlocks(in: String(contentsOf: file, encoding: .utf8), file: relative(file))
        }
        for file in try Self.files(under: ["Sources/RunLoopKit", "Sources/RunLoopKitExperimental", "Sources/RunLoopKitGLib", "Sources/RunLoopKitSVGPlot", "Sources/RunLoopKitTraceTimeline", "Sources/RunLoopKitServiceLifecycle", "Sources/RunLoopKitSystem"], ending: ".swift") {
            documented += try DocBlocks.docCommentBlocks(in: String(contentsOf: file, encoding: .utf8), file: relative(file))
        }
        #expect(documented.count >= 15, "found only \(documented.count) documented blocks: is the root right?")
        for block in documented {
            if block.language.isEmpty {
                Issue.record("\(block.place): a code block without a language; use ```swift, or ```text for output")
                continue
            }
            guard block.language == "swift" else { continue }
            let matched = snippets.contains { $0.body == block.body && block.imports.allSatisfy($0.fileImports.contains) }
            #expect(matched, "\(block.place): this swift block is not a compiled snippet (`// snippet:` … `// end`) in Tests/DocSnippetTests or Examples; \(Self.nearest(block, in: snippets))")
        }
    }

    /// "[`File.swift`](File.swift), lines 61–97" in a README must name the lines of one snippet
    /// region of that file, so that the line numbers cannot drift.
    @Test func lineReferencesNameASnippet() throws {
        let reference = /\[`[^`]+`\]\(([^)]+\.swift)\), lines (\d+)–(\d+)/
        var checked = 0
        for readme in try Self.files(under: ["README.md", "Examples"], ending: ".md") {
            let text = try String(contentsOf: readme, encoding: .utf8)
            for match in text.matches(of: reference) {
                let file = readme.deletingLastPathComponent().appendingPathComponent(String(match.1))
                let lines = try String(contentsOf: file, encoding: .utf8)
                    .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                let (first, last) = (Int(match.2)!, Int(match.3)!)
                let place = "\(relative(readme)): \(match.0)"
                guard first >= 2, last >= first, last < lines.count else {
                    Issue.record("\(place): no such lines")
                    continue
                }
                #expect(lines[first - 2].trimmingLeadingSpaces().hasPrefix("// snippet: ")
                            && lines[last].trimmingLeadingSpaces() == "// end",
                        "\(place): lines \(first)–\(last) are not one snippet region (the markers moved?)")
                checked += 1
            }
        }
        #expect(checked >= 6)
    }

    /// The README's manifest excerpt (fenced `text`: a manifest cannot be compiled here) names
    /// the product and the package as this package's manifest does.
    @Test func readmeManifestNamesThisPackage() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let blocks = try DocBlocks.markdownBlocks(in: readme, file: "README.md")
        let excerpt = try #require(blocks.first { $0.body.contains { $0.contains(".product(") } })
        let product = /\.product\(name: "([^"]+)", package: "([^"]+)"\)/
        let match = try #require(excerpt.body.joined(separator: "\n").firstMatch(of: product))
        #expect(manifest.contains(".library(name: \"\(match.1)\""))
        #expect(manifest.contains("let package = Package(\n    name: \"\(match.2)\""))
        #expect(excerpt.body.contains { $0.contains(".package(path: \"../\(match.2)\")") })
    }

    /// The README cites BENCHMARKS.md's rows instead of copying their figures, which went stale
    /// as the benchmark was rerun (issue 36: seven of them differed): no value with one of the
    /// benchmark's units in it.
    @Test func readmeCopiesNoBenchmarkFigure() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let figure = /[0-9][0-9,.]*\s*(µs|ns|wakes\/s|wakeups\/s|wakes a second|% CPU|bytes)(?![A-Za-z])/
        let copied = readme.matches(of: figure).map { String($0.output.0) }
        #expect(copied.isEmpty, "README.md copies benchmark figures \(copied); cite the BENCHMARKS.md row instead")
    }

    @Test func theExtractorSeesBlocksAndSnippets() throws {
        let markdown = "text\n```swift\nimport A\n  let x = 1\n    f(x)\n```\n```text\nout\n```\n"
        let blocks = try DocBlocks.markdownBlocks(in: markdown, file: "m.md")
        #expect(blocks.map(\.language) == ["swift", "text"])
        #expect(blocks[0].imports == ["import A"])
        #expect(blocks[0].body == ["let x = 1", "  f(x)"])
        let source = "import A\nfunc g() {\n    // snippet: one\n    let x = 1\n      f(x)\n    // end\n}\n"
        let snippets = try DocBlocks.snippets(in: source, file: "s.swift")
        #expect(snippets.map(\.name) == ["one"])
        #expect(snippets[0].body == blocks[0].body)
        #expect(snippets[0].fileImports == ["import A"])
        let comment = "    /// Doc.\n    ///\n    /// ```swift\n    /// let y = 2\n    /// ```\n    func h() {}\n"
        #expect(try DocBlocks.docCommentBlocks(in: comment, file: "c.swift").map(\.body) == [["let y = 2"]])
    }

    /// Where the block departs from the snippet that shares most of its first lines.
    static func nearest(_ block: DocBlocks.Block, in snippets: [DocBlocks.Snippet]) -> String {
        func common(_ snippet: DocBlocks.Snippet) -> Int {
            zip(snippet.body, block.body).prefix { $0 == $1 }.count
        }
        guard let best = snippets.max(by: { common($0) < common($1) }), common(best) > 0 else {
            return "no snippet starts with its first line: \(block.body.first ?? "")"
        }
        let line = common(best)
        if line == block.body.count, line == best.body.count {
            return "snippet \(best.name) matches, but its file lacks \(block.imports)"
        }
        let documented = line < block.body.count ? block.body[line] : "(end of block)"
        let compiled = line < best.body.count ? best.body[line] : "(end of snippet)"
        return "snippet \(best.name) differs at its line \(line + 1): the docs say `\(documented)`, the snippet `\(compiled)`"
    }

    private func relative(_ file: URL) -> String {
        String(file.path.dropFirst(Self.root.path.count + 1))
    }

    /// Files ending in `suffix` at or under each path (relative to the root), skipping `.build`.
    static func files(under paths: [String], ending suffix: String) throws -> [URL] {
        var found: [URL] = []
        for path in paths {
            let url = root.appendingPathComponent(path)
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else {
                throw DocBlocks.Failure(description: "\(path) does not exist")
            }
            if !isFolder.boolValue {
                if url.path.hasSuffix(suffix) { found.append(url) }
                continue
            }
            let names = try FileManager.default.subpathsOfDirectory(atPath: url.path)
            found += names.filter { $0.hasSuffix(suffix) && !$0.contains(".build") }.sorted()
                .map { url.appendingPathComponent($0) }
        }
        return Array(Set(found)).sorted { $0.path < $1.path }
    }
}
