import CRunLoopKitGLib
import Dispatch
import RunLoopKit
import RunLoopKitGLib
import Testing

// The examples of Sources/RunLoopKitGLib: its DocC catalogue and its doc comments.
@Suite struct GLibDocSnippets {
    /// Compiled, not run: they run the main thread's loop, or GLib's, for good.
    @MainActor static func mainThreadExamples() {
        do {
            // snippet: glib-host
            let loop = EVRunLoop.main
            loop.host()  // GLib's default context, in the loop's common modes
            g_timeout_add(500, { _ in
                print("a GLib timeout, under EVRunLoop.main.run()")
                return G_SOURCE_REMOVE
            }, nil)
            loop.run()
            // end
        }
        do {
            // snippet: glib-host-modes
            let glib = EVRunLoop.main.host(nil, in: [.default])
            // A run of the tracking mode runs none of GLib's sources…
            EVRunLoop.main.run(mode: "tracking", for: .seconds(1))
            // …and GLib stays attached to its context, for whoever iterates it next.
            glib.unhost()
            // end
        }
        do {
            // snippet: glib-attach
            let mainLoop = g_main_loop_new(nil, 0)
            let attachment = EVRunLoop.main.attach()  // to GLib's default context
            DispatchQueue.main.async { print("the main queue, under g_main_loop_run") }
            let tick = EVTimer(interval: 1, repeats: true, tolerance: 0.1) { _ in print("a RunLoopKit timer") }
            EVRunLoop.main.add(tick, forMode: .common)
            g_main_loop_run(mainLoop)
            attachment.detach()
            // end
        }
    }
}
