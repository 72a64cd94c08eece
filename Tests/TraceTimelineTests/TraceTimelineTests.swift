import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import RunLoopKit
import Testing
import RunLoopKitTraceTimeline

/// The elements of an SVG document, as an XML parser reads it (which also checks that it is
/// well formed).
final class SVGElements: NSObject, XMLParserDelegate {
    struct Element {
        let name: String
        let attributes: [String: String]
        var text = ""
    }

    private(set) var elements: [Element] = []
    private var open: [Int] = []

    /// Parses `svg`; nil when it is not well-formed XML.
    static func parse(_ svg: String) -> [Element]? {
        let reader = SVGElements()
        let parser = XMLParser(data: Data(svg.utf8))
        parser.delegate = reader
        return parser.parse() ? reader.elements : nil
    }

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?,
                qualifiedName: String?, attributes: [String: String] = [:]) {
        open.append(elements.count)
        elements.append(Element(name: name, attributes: attributes))
    }

    /// Text goes to every element it is inside (the DOM's `textContent`).
    func parser(_ parser: XMLParser, foundCharacters string: String) {
        for index in open { elements[index].text += string }
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        open.removeLast()
    }
}

extension [SVGElements.Element] {
    func of(class name: String) -> [SVGElements.Element] { filter { $0.attributes["class"] == name } }
    var texts: [String] { filter { $0.name == "text" }.map(\.text) }
    func number(_ element: SVGElements.Element, _ attribute: String) -> Double { Double(element.attributes[attribute] ?? "") ?? .nan }
}

@Suite("TraceTimeline")
struct TraceTimelineTests {
    /// A block at 0, a 2 ms timer at 10 ms and a timer at 30 ms, in a 50 ms run: three
    /// callouts, three sleeps (the last until the run's deadline).
    func knownRun() -> EVRunLoop.Trace {
        let clock = EVVirtualClock()
        let loop = EVRunLoop(clock: clock)
        let trace = EVRunLoop.Trace()
        loop.trace = trace
        loop.add(EVTimer(interval: .milliseconds(10), repeats: false, label: "t") { _ in
            clock.advance(by: .milliseconds(2))
        }, forMode: .default)
        loop.add(EVTimer(interval: .milliseconds(30), repeats: false, label: "u") { _ in }, forMode: .default)
        loop.add(EVTimer(interval: .seconds(3600), repeats: false, label: "later") { _ in }, forMode: .default)
        loop.perform(label: "b") {}
        _ = loop.run(mode: .default, for: .milliseconds(50))
        return trace
    }

    @Test("a known run: one bar per callout, one gap per sleep with its deadline and reason, one mark per wake")
    func knownRunCounts() throws {
        let svg = TraceTimeline(title: "three callouts", trace: knownRun()).svg()
        let elements = try #require(SVGElements.parse(svg), "not well-formed XML")
        #expect(elements.first?.name == "svg")
        let bars = elements.of(class: "callout")
        #expect(bars.count == 3)
        #expect(bars.map { $0.text.components(separatedBy: " at ").first ?? "" } == ["block(b)", "timer(t)", "timer(u)"])
        #expect(elements.of(class: "sleep").count == 3)
        #expect(elements.of(class: "wake").count == 3)
        // entry; three passes of beforeTimers, beforeSources, beforeWaiting, afterWaiting; exit; return.
        #expect(elements.of(class: "activity").count == 1 + 3 * 4 + 1 + 1)
        let texts = elements.texts
        for label in ["block(b)", "timer(t)", "timer(u)", "entry", "beforeWaiting", "return(timedOut)", "three callouts",
                      "deadline 10.000", "deadline 30.000", "deadline 50.000", "woke: deadline", "slept 10.000 ms",
                      "slept 18.000 ms", "mode kCFRunLoopDefaultMode", "time (ms)", "0.000", "12.000"] {
            #expect(texts.contains(label), "\(label) missing")
        }
        // The 2 ms timer is drawn to scale: wider than the callouts that took no time.
        let widths = bars.map { elements.number($0, "width") }
        #expect(widths[1] > 2 * widths[0] && widths[0] == widths[2])
    }

    @Test("a nested run gets lanes of its own, its mode named, and its caller's bar spans it")
    func nestedRun() throws {
        let loop = EVRunLoop(clock: EVVirtualClock())
        let trace = EVRunLoop.Trace()
        loop.trace = trace
        let tracking = EVRunLoop.Mode("tracking")
        loop.add(EVTimer(interval: .milliseconds(5), repeats: false, label: "inner") { _ in }, forMode: tracking)
        loop.perform(label: "outer") { loop.run(mode: tracking, for: .seconds(1)) }
        _ = loop.run(mode: .default, for: .zero)

        let elements = try #require(SVGElements.parse(TraceTimeline(title: "nested", trace: trace).svg()))
        let bars = elements.of(class: "callout")
        try #require(bars.count == 2)
        let (outer, inner) = (bars[0], bars[1])
        #expect(outer.text.hasPrefix("block(outer)") && inner.text.hasPrefix("timer(inner)"))
        #expect(elements.number(inner, "y") > elements.number(outer, "y"))
        #expect(elements.number(outer, "x") < elements.number(inner, "x"))
        #expect(elements.number(outer, "x") + elements.number(outer, "width") > elements.number(inner, "x") + elements.number(inner, "width"))
        #expect(elements.of(class: "run").count == 2)
        #expect(elements.texts.contains("mode tracking") && elements.texts.contains("nested run 2"))
    }

    @Test("a long trace wraps into rows and stays well formed, every callout drawn")
    func longTraceWraps() throws {
        let clock = EVVirtualClock()
        let loop = EVRunLoop(clock: clock)
        let trace = EVRunLoop.Trace()
        loop.trace = trace
        let timer = EVTimer(interval: .milliseconds(10), repeats: true, label: "tick <&>") { _ in clock.advance(by: .microseconds(100)) }
        loop.add(timer, forMode: .default)
        _ = loop.run(mode: .default, for: .milliseconds(395))
        timer.invalidate()

        let svg = TraceTimeline(title: "39 ticks", trace: trace).svg()
        let elements = try #require(SVGElements.parse(svg))
        let bars = elements.of(class: "callout")
        #expect(Set(bars.map(\.text)).count == 39)
        #expect(elements.texts.filter { $0 == "timer(tick <&>)" }.count == 39)
        let rows = Set(elements.of(class: "activity").map { elements.number($0, "y1") })
        #expect(rows.count > 3)
        let width = try #require(Double(elements[0].attributes["width"] ?? ""))
        #expect(width <= 1400)
    }

    @Test("a bar cut by a row's end is labelled on every row it is on")
    func cutBarLabelled() throws {
        let loop = EVRunLoop(clock: EVVirtualClock())
        let trace = EVRunLoop.Trace()
        loop.trace = trace
        let tracking = EVRunLoop.Mode("tracking")
        loop.add(EVTimer(interval: .milliseconds(10), repeats: true, label: "scroll") { _ in }, forMode: tracking)
        loop.perform(label: "drag") { loop.run(mode: tracking, for: .milliseconds(195)) }
        _ = loop.run(mode: .default, for: .zero)

        let elements = try #require(SVGElements.parse(TraceTimeline(title: "drag", trace: trace).svg()))
        let pieces = elements.of(class: "callout").filter { $0.text.hasPrefix("block(drag)") }
        #expect(pieces.count > 1)
        #expect(elements.texts.filter { $0 == "block(drag)" }.count == 1)
        #expect(elements.texts.filter { $0 == "… block(drag)" }.count == pieces.count - 1)
    }

    @Test("an empty trace is still a picture")
    func emptyTrace() throws {
        let elements = try #require(SVGElements.parse(TraceTimeline(title: "nothing", entries: []).svg()))
        #expect(elements.texts.contains("no steps recorded"))
    }

    @Test("the documented use writes the picture to a file")
    func writesAFile() throws {
        // snippet: trace-timeline-doc
        let loop = EVRunLoop(clock: EVVirtualClock())
        let trace = EVRunLoop.Trace()
        loop.trace = trace
        loop.add(EVTimer(interval: 0.05, repeats: false, label: "once") { _ in }, forMode: .default)
        loop.run(mode: .default, for: .seconds(1))
        let timeline = TraceTimeline(title: "One timer", trace: trace)
        try timeline.write(toFile: NSTemporaryDirectory() + "timeline.svg")
        // end
        let path = NSTemporaryDirectory() + "timeline.svg"
        #expect(try String(contentsOfFile: path, encoding: .utf8) == timeline.svg())
        let elements = try #require(SVGElements.parse(timeline.svg()))
        #expect(elements.of(class: "callout").count == 1 && elements.of(class: "sleep").count == 1)
    }
}
