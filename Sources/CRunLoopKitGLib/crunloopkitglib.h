// GLib's main loop for RunLoopKitGLib: <glib.h> (GMainContext, GSource, timeouts, idles)
// and <glib-unix.h> (g_unix_fd_add). The flags come from pkg-config's glib-2.0.
#include <glib.h>
#include <glib-unix.h>
// Linux's descriptors that Glibc's module leaves out: the hosting's epoll set of GLib's
// descriptors, and the eventfds and timerfds of the GLib tests.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
