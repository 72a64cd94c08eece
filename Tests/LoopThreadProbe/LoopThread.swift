// The hand-made loop thread of issue 26's program (its second file).
import Foundation
import RunLoopKit
final class LoopBox: @unchecked Sendable { var loop: EVRunLoop?; let done = DispatchSemaphore(value: 0); var keep: EVSource? }
nonisolated(unsafe) var loopBoxes: [ObjectIdentifier: LoopBox] = [:]
let loopBoxesLock = NSLock()
extension EVRunLoop {
    static func startThread(name: String) -> EVRunLoop {
        let box = LoopBox(); let ready = DispatchSemaphore(value: 0)
        let t = Thread {
            let l = EVRunLoop.current; box.loop = l
            let keep = EVSource { _ in }; box.keep = keep; l.add(keep, forMode: .default)
            ready.signal()
            l.run()
            box.done.signal()
        }
        t.name = name; t.start(); ready.wait()
        loopBoxesLock.withLock { loopBoxes[ObjectIdentifier(box.loop!)] = box }
        return box.loop!
    }
    func shutdown() async {
        let box = loopBoxesLock.withLock { loopBoxes.removeValue(forKey: ObjectIdentifier(self))! }
        // ADAPT: stopped from inside the loop (a stop() sent before run() starts is dropped).
        perform { box.keep?.invalidate(); self.stop() }; box.done.wait()
    }
}
