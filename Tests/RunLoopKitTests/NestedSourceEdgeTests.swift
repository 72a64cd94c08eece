internal import CRunLoopKitLibev
import Foundation
import Glibc
import RunLoopKit
import Testing

/// File and descriptor sources whose callouts run nested runs, and sources invalidated
/// (their descriptor closed) inside a nested callout.
@Suite("Real time: nested runs from file and descriptor callouts", .timeLimit(.minutes(10)))
struct NestedSourceEdgeTests {
    @Test("a file source's callout runs a nested run of a private mode holding a descriptor source and another file source")
    func fileCalloutNestsPrivateMode() {
        FileSourceTests.withDirectory { directory in
            let outcome = onFreshThread { () -> [String] in
                let loop = EVRunLoop.current
                let (outerFile, innerFile) = (directory + "/outer", directory + "/inner")
                FileWatchScaleTests.touch(outerFile)
                FileWatchScaleTests.touch(innerFile)
                let modal = EVRunLoop.Mode("modal")
                let log = LoopBox<[String]>([])
                let eventfd = clibev_eventfd_create()
                let inner = try! EVSource(watching: innerFile, for: .modified) { _ in log.value.append("inner file") }
                let descriptor = try! EVSource(fileDescriptor: eventfd, closesDescriptor: true) { source in
                    var value: UInt64 = 0
                    _ = read(eventfd, &value, 8)
                    log.value.append("eventfd")
                    source.invalidate()  // closes the eventfd, inside the nested callout
                }
                loop.add(inner, forMode: modal)
                loop.add(descriptor, forMode: modal)
                let outer = try! EVSource(watching: outerFile, for: .modified) { _ in
                    log.value.append("outer file")
                    guard log.value.count == 1 else { return }
                    var one: UInt64 = 1
                    _ = write(eventfd, &one, 8)
                    FileWatchScaleTests.touch(innerFile)
                    FileWatchScaleTests.touch(outerFile)  // not in the modal mode: after it
                    let deadline = ContinuousClock.now + .seconds(5)
                    while !(log.value.contains("inner file") && log.value.contains("eventfd")), ContinuousClock.now < deadline {
                        loop.run(mode: modal, for: .milliseconds(20))
                    }
                }
                loop.add(outer, forMode: .default)
                FileWatchScaleTests.touch(outerFile)
                FileSourceTests.run(loop) { log.value.filter { $0 == "outer file" }.count >= 2 }
                // A new eventfd on the number the nested callout closed: never a callout for it.
                let reused = clibev_eventfd_create()
                var one: UInt64 = 1
                _ = write(reused, &one, 8)
                loop.run(mode: modal, for: .milliseconds(30))
                loop.run(mode: .default, for: .milliseconds(30))
                close(reused)
                inner.invalidate()
                outer.invalidate()
                return log.value
            }
            #expect(outcome.filter { $0 == "eventfd" }.count == 1, "\(outcome)")
            #expect(outcome.filter { $0 == "inner file" }.count == 1, "\(outcome)")
            #expect(outcome.filter { $0 == "outer file" }.count == 2, "\(outcome)")
            #expect(outcome.first == "outer file", "\(outcome)")
        }
    }

    @Test("a file source invalidated inside a nested callout of its own callout: no callout after")
    func fileSourceInvalidatedInNestedCallout() {
        FileSourceTests.withDirectory { directory in
            let (fires, after) = onFreshThread { () -> (Int, Int) in
                let loop = EVRunLoop.current
                let file = directory + "/file"
                FileWatchScaleTests.touch(file)
                let fires = LoopBox(0)
                let source = LoopBox<EVSource?>(nil)
                source.value = try! EVSource(watching: file, for: .modified) { _ in
                    fires.value += 1
                    guard fires.value == 1 else { return }
                    // A nested run of the same mode in which a timer invalidates this source.
                    loop.add(EVTimer(interval: .milliseconds(1), repeats: false) { _ in source.value?.invalidate() },
                             forMode: .default)
                    FileWatchScaleTests.touch(file)
                    loop.run(mode: .default, for: .milliseconds(50))
                }
                loop.add(source.value!, forMode: .default)
                loop.add(EVTimer(interval: 60, repeats: false) { _ in }, forMode: .default)
                FileWatchScaleTests.touch(file)
                FileSourceTests.run(loop) { fires.value >= 1 }
                let fired = fires.value
                FileWatchScaleTests.touch(file)
                loop.run(mode: .default, for: .milliseconds(50))
                source.value = nil  // its callout holds the box (and the loop): a cycle otherwise
                return (fired, fires.value - fired)
            }
            // The nested run may report the second change before the timer invalidates it.
            #expect((1...2).contains(fires))
            #expect(after == 0)
        }
    }
}
