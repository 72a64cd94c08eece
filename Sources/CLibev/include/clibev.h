// CLibev: the C side of RunLoopKit's libev backend.
//
// libev's watcher set-up is a family of macros (ev_io_init, ev_async_init, ...)
// that Swift cannot call. Each clibev_* function below wraps exactly one of them,
// plus the few Linux calls (timerfd, the main thread) whose headers Swift's Glibc module
// does not cover on every distribution.
#ifndef CLIBEV_H
#define CLIBEV_H

#include <ev.h>
#include <pthread.h>
#include <stdint.h>

/// Callback type shared by every watcher: `revents` are libev's EV_* bits.
typedef void (*clibev_callback)(struct ev_loop *loop, void *watcher, int revents);

/// `ev_io_init(w, cb, fd, events)`.
void clibev_io_init(ev_io *w, clibev_callback cb, int fd, int events);
/// `ev_async_init(w, cb)`.
void clibev_async_init(ev_async *w, clibev_callback cb);
/// `ev_signal_init(w, cb, signum)`.
void clibev_signal_init(ev_signal *w, clibev_callback cb, int signum);
/// `ev_set_userdata` / `ev_userdata` are functions already; these name the watcher's `data` field.
void clibev_watcher_set_data(void *w, void *data);
void *clibev_watcher_data(void *w);
/// `ev_is_active(w)`.
int clibev_is_active(void *w);
/// `ev_async_pending(w)`: nonzero when an `ev_async_send` has not been handled yet.
int clibev_async_pending(ev_async *w);

/// The descriptor of `loop`'s kernel backend (its epoll instance): readable whenever a
/// descriptor the loop watches is ready (level-triggered), so another loop can poll it.
/// libev exports no call for it; `ev_embed_start` is its one way to hand it out (it watches
/// the embedded loop's backend descriptor with the embedding watcher's `io`), so this embeds
/// `loop` for a moment in a throwaway `select` loop and reads that descriptor. Returns -1
/// when `loop`'s backend cannot be embedded (none but epoll, kqueue or event ports can).
int clibev_backend_fd(struct ev_loop *loop);

/// `eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)`. Returns the fd, or -1 with errno set.
int clibev_eventfd_create(void);
/// Adds 1 to an eventfd's counter (async-signal-safe). Returns 0, or -1 with errno set.
int clibev_eventfd_signal(int fd);
/// Makes `signum`'s handler, which libev installed, also write `wake_fd` (an eventfd) after
/// libev's own handler ran: libev's handler writes its wake pipe only while `ev_run` waits
/// (`pipe_write_wanted`), so a signal that arrives while another loop polls the backend
/// descriptor would not make it readable. Calling it again updates `wake_fd`. libev's
/// `ev_signal_stop` of the signal's last watcher sets `SIG_DFL`, which removes the
/// forwarding with libev's handler. Returns 0, or -1 with errno set.
int clibev_forward_signal(int signum, int wake_fd);

/// Sizes of libev's watcher structs, so Swift can allocate them.
size_t clibev_io_size(void);
size_t clibev_async_size(void);
size_t clibev_signal_size(void);

/// `timerfd_create(CLOCK_MONOTONIC or CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC)`.
/// Returns the fd, or -1 with errno set.
int clibev_timerfd_create(int realtime);
/// `timerfd_settime` with `TFD_TIMER_ABSTIME` (plus `TFD_TIMER_CANCEL_ON_SET` when
/// `cancel_on_set` is nonzero) to fire once at `deadline_ns` on the fd's clock;
/// `deadline_ns < 0` disarms. Returns 0, or -1 with errno set.
int clibev_timerfd_arm(int fd, int64_t deadline_ns, int cancel_on_set);
/// Reads the expiration count. Returns 1 if it expired, 0 if not yet (EAGAIN),
/// -2 if the realtime clock was set (ECANCELED), -1 with errno set otherwise.
int clibev_timerfd_consume(int fd);

/// Reads an eventfd's counter, resetting it. Returns 1 if it was written, 0 if not (EAGAIN),
/// -1 with errno set otherwise.
int clibev_eventfd_consume(int fd);

/// libdispatch's hooks for a foreign run loop, the pair CoreFoundation's `__CFRunLoopRun` uses
/// on Linux (libdispatch's private `private.h`; `dispatch_runloop_handle_t` is an `int` there).
/// libdispatch.so exports both, but the toolchain ships no header declaring them.
///
/// The main queue's eventfd, created on first call: readable when the main queue has work.
extern int _dispatch_get_main_queue_handle_4CF(void);
/// Runs the work items queued on the main queue when the call starts (later ones poke the
/// eventfd again). Main thread only; returns at once when called inside itself.
extern void _dispatch_main_queue_callback_4CF(void *msg);

/// `pthread_sigmask(SIG_UNBLOCK, {signum})` on the calling thread. Returns 0 or an errno.
int clibev_unblock_signal(int signum);

/// `clock_gettime(CLOCK_MONOTONIC)` in nanoseconds.
int64_t clibev_monotonic_ns(void);
/// `clock_gettime(CLOCK_REALTIME)` in nanoseconds since 1970.
int64_t clibev_realtime_ns(void);
/// The CPU's counter (x86-64 `rdtsc`, arm64 `cntvct_el0`; 0 elsewhere), unordered: it may
/// read up to a few hundred instructions early. Inline, so a read costs no call.
static inline uint64_t clibev_ticks(void) {
#if defined(__x86_64__)
    uint32_t low, high;
    __asm__ __volatile__("rdtsc" : "=a"(low), "=d"(high));
    return ((uint64_t)high << 32) | low;
#elif defined(__aarch64__)
    uint64_t value;
    __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(value));
    return value;
#else
    return 0;
#endif
}
/// 1 when the kernel's monotonic clock is computed from `clibev_ticks` (its clocksource is
/// `tsc` on x86-64, `arch_sys_counter` on arm64), so that one is a linear function of the
/// other between the kernel's slews; 0 otherwise, or when the clocksource cannot be read.
int clibev_ticks_drive_monotonic(void);
/// The calling thread's RunLoopKit identity (`ThreadLoops.id`), cached in a thread-local
/// variable; 0 until `clibev_set_thread_id` is called on the thread. Defined in clibev.c, not
/// inline: a thread-local read inlined into Swift code may be computed once in an async
/// function and reused after it resumes on another thread (LLVM treats the address of a
/// thread-local variable, and `pthread_self()`, declared `const`, as invariant within a
/// function); a call to an out-of-line function without attributes is made every time.
uint64_t clibev_thread_id(void);
/// Sets the calling thread's cached identity (0 forgets it).
void clibev_set_thread_id(uint64_t id);
/// Whether the calling thread is the process's main thread: its kernel thread id is the
/// process id (the thread-group leader's, which no other thread has while the process
/// lives; CF's `pthread_main_np` on Linux asks the same). Never a `pthread_t` comparison:
/// glibc hands a joined thread's `pthread_t` to the next thread it creates.
int clibev_is_main_thread(void);

#endif
