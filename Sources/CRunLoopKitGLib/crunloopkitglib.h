// GLib's main loop for RunLoopKitGLib: <glib.h> (GMainContext, GSource, timeouts, idles)
// and <glib-unix.h> (g_unix_fd_add). The flags come from pkg-config's glib-2.0.
#include <glib.h>
#include <glib-unix.h>
