import CGtk

/// A GTK widget: the `GtkWidget *` every constructor returns. GTK's casting macros
/// (`GTK_LABEL()`, `G_OBJECT()`, …) are not imported into Swift; ``as(_:)`` and ``opaque``
/// are their stand-ins (without the macros' debug-build type check).
typealias Widget = UnsafeMutablePointer<GtkWidget>

extension UnsafeMutablePointer where Pointee == GtkWidget {
    /// The widget as a pointer to a subclass whose C struct is public (`GtkWindow`, `GtkBox`).
    func `as`<Subclass>(_: Subclass.Type) -> UnsafeMutablePointer<Subclass> {
        UnsafeMutableRawPointer(self).assumingMemoryBound(to: Subclass.self)
    }

    /// The widget as a pointer to a subclass whose C struct is private (`GtkLabel`,
    /// `GtkScrolledWindow`): Swift sees those as `OpaquePointer`.
    var opaque: OpaquePointer { OpaquePointer(self) }

    /// The widget as a `gpointer`, for `g_signal_connect_data` and `g_object_*`.
    var raw: gpointer { UnsafeMutableRawPointer(self) }
}

/// GObject signals with Swift closures as handlers.
///
/// `g_signal_connect` is a macro, so this calls `g_signal_connect_data`: the handler is a
/// `@convention(c)` function of the signal's C signature whose user data is a retained
/// ``Handler``; GLib releases it through the destroy notify when the object goes away.
/// GTK emits every signal on the main thread, so the C functions enter the main actor with
/// `MainActor.assumeIsolated`, which checks that.
@MainActor
enum Signal {
    /// A handler's closure, kept alive by the signal connection. It gets the signal's
    /// argument between the instance and the user data, if the signal has one, and its
    /// result is what a `gboolean` handler returns.
    final class Handler {
        let action: @MainActor (gpointer?) -> Bool
        init(_ action: @escaping @MainActor (gpointer?) -> Bool) { self.action = action }
    }

    /// Connects `action` to a signal whose handler returns nothing, such as a button's
    /// "clicked": `void handler(GtkButton *, gpointer)`.
    // snippet: gtk-timers-signal
    static func connect(_ instance: gpointer, _ signal: String, _ action: @escaping @MainActor () -> Void) {
        let handler: @convention(c) (gpointer?, gpointer?) -> Void = { _, data in
            guard let data else { return }
            MainActor.assumeIsolated { _ = Unmanaged<Handler>.fromOpaque(data).takeUnretainedValue().action(nil) }
        }
        connect(instance, signal, unsafeBitCast(handler, to: GCallback.self), Handler { _ in action(); return false })
    }
    // end

    /// Connects `action` to a signal whose handler has one argument besides the instance and
    /// returns nothing, such as a list box's "row-activated":
    /// `void handler(GtkListBox *, GtkListBoxRow *, gpointer)`.
    static func connect(_ instance: gpointer, _ signal: String, argument action: @escaping @MainActor (gpointer?) -> Void) {
        let handler: @convention(c) (gpointer?, gpointer?, gpointer?) -> Void = { _, argument, data in
            guard let data else { return }
            MainActor.assumeIsolated { _ = Unmanaged<Handler>.fromOpaque(data).takeUnretainedValue().action(argument) }
        }
        connect(instance, signal, unsafeBitCast(handler, to: GCallback.self), Handler { action($0); return false })
    }

    /// Connects `action` to a signal whose handler returns a `gboolean`, such as a window's
    /// "close-request" (true stops the default handler): `gboolean handler(GtkWindow *, gpointer)`.
    static func connect(_ instance: gpointer, _ signal: String, returning action: @escaping @MainActor () -> Bool) {
        let handler: @convention(c) (gpointer?, gpointer?) -> gboolean = { _, data in
            guard let data else { return 0 }
            return MainActor.assumeIsolated { Unmanaged<Handler>.fromOpaque(data).takeUnretainedValue().action(nil) ? 1 : 0 }
        }
        connect(instance, signal, unsafeBitCast(handler, to: GCallback.self), Handler { _ in action() })
    }

    private static func connect(_ instance: gpointer, _ signal: String, _ callback: GCallback, _ box: Handler) {
        let release: @convention(c) (gpointer?, UnsafeMutablePointer<GClosure>?) -> Void = { data, _ in
            guard let data else { return }
            Unmanaged<Handler>.fromOpaque(data).release()
        }
        g_signal_connect_data(instance, signal, callback, Unmanaged.passRetained(box).toOpaque(), release,
                              GConnectFlags(rawValue: 0))
    }
}

/// GLib's own timeouts, with Swift closures: what a GTK program schedules with
/// `g_timeout_add`, dispatched by GLib's main context (hosted by RunLoopKit here).
@MainActor
enum GLibTimeout {
    /// Runs `action` once, on the main thread, after `seconds` (`g_timeout_add_full`, whose
    /// destroy notify releases the closure).
    static func once(after seconds: Double, _ action: @escaping @MainActor () -> Void) {
        let callback: @convention(c) (gpointer?) -> gboolean = { data in
            if let data {
                MainActor.assumeIsolated { _ = Unmanaged<Signal.Handler>.fromOpaque(data).takeUnretainedValue().action(nil) }
            }
            return 0  // G_SOURCE_REMOVE
        }
        let release: @convention(c) (gpointer?) -> Void = { data in
            guard let data else { return }
            Unmanaged<Signal.Handler>.fromOpaque(data).release()
        }
        let box = Signal.Handler { _ in action(); return false }
        g_timeout_add_full(G_PRIORITY_DEFAULT, guint((seconds * 1000).rounded()), callback,
                           Unmanaged.passRetained(box).toOpaque(), release)
    }
}
