import CLibevBench
import Foundation
import RunLoopKit

/// Workload 7: memory per timer — the growth of resident memory, and of bytes in use by
/// malloc, when 100k one-shot timers (an hour away, empty callouts, no other reference
/// kept) are added to a loop.
///
/// Each measurement runs in a child process (this binary with `--memory-child`), so
/// memory freed by earlier workloads cannot hide the growth.
enum MemoryPerTimer {
    static let name = "memory"

    static func measure(_ plan: Plan) -> [Row] {
        var resident: [Peer: [Double]] = [:]
        var heap: [Peer: [Double]] = [:]
        let count = plan.memoryTimers
        for _ in 0..<plan.repetitions {
            for peer in plan.peers {
                let (rss, inUse) = measureInChild(peer, count: count)
                resident[peer, default: []].append(Double(rss) / Double(count))
                heap[peer, default: []].append(Double(inUse) / Double(count))
            }
        }
        return [
            Row.make(name, "resident growth per timer, N = \(count.grouped)", unit: "bytes", values: resident),
            Row.make(name, "malloc bytes in use per timer, N = \(count.grouped)", unit: "bytes", values: heap),
        ]
    }

    /// Runs this binary as `--memory-child <peer> --memory-timers <count>` and reads the two
    /// totals it prints.
    private static func measureInChild(_ peer: Peer, count: Int) -> (Int64, Int64) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: selfExecutable())
        process.arguments = ["--memory-child", peer.key, "--memory-timers", String(count)]
        let pipe = Pipe()
        process.standardOutput = pipe
        do {
            try process.run()
        } catch {
            fatalError("loop-bench: cannot start the memory child: \(error)")
        }
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let numbers = output.split(separator: " ").compactMap { Int64($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        precondition(process.terminationStatus == 0 && numbers.count == 2,
                     "loop-bench: the memory child for \(peer.rawValue) printed \(output.debugDescription)")
        return (numbers[0], numbers[1])
    }

    private static func selfExecutable() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        precondition(length > 0, "loop-bench: readlink(/proc/self/exe) failed")
        return String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// In the child, on the main thread: adds `count` timers to `peer`'s loop and prints
    /// the growth of resident bytes and of malloc bytes in use.
    static func child(_ peer: Peer, count: Int) {
        // Warm up: create the loop and its default mode before the baseline.
        switch peer {
        case .runLoopKit:
            EVRunLoop.current.add(EVTimer(interval: 7200, repeats: false) { _ in }, forMode: .default)
        case .foundation:
            RunLoop.current.add(Timer(fire: Date(timeIntervalSinceNow: 7200), interval: 0, repeats: false) { _ in }, forMode: .default)
        case .libev:
            break
        }
        let rss0 = lb_resident_bytes()
        let heap0 = lb_heap_in_use_bytes()
        var libevSet: UnsafeMutableRawPointer?
        switch peer {
        case .runLoopKit:
            let loop = EVRunLoop.current
            for index in 0..<count {
                loop.add(EVTimer(interval: 3600 + Double(index) * 1e-6, repeats: false) { _ in },
                         forMode: .default)
            }
        case .foundation:
            let runLoop = RunLoop.current
            for index in 0..<count {
                runLoop.add(Timer(fire: Date(timeIntervalSinceNow: 3600 + Double(index) * 1e-6), interval: 0, repeats: false) { _ in },
                            forMode: .default)
            }
        case .libev:
            libevSet = lb_timer_set_create(Int32(count))
            precondition(libevSet != nil, "lb_timer_set_create failed")
        }
        let rss1 = lb_resident_bytes()
        let heap1 = lb_heap_in_use_bytes()
        print(rss1 - rss0, heap1 - heap0)
        if let libevSet { lb_timer_set_destroy(libevSet) }
    }
}
