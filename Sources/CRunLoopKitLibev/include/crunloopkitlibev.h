// CRunLoopKitLibev: the C side of RunLoopKit's libev backend.
//
// libev's watcher set-up is a family of macros (ev_io_init and its kin)
// that Swift cannot call. Each clibev_* function below wraps exactly one of them,
// plus the few Linux calls (timerfd, pidfd and waitid, the main thread) whose headers Swift's Glibc module
// does not cover on every distribution.
#ifndef CRUNLOOPKITLIBEV_H
#define CRUNLOOPKITLIBEV_H

// The one place a build on another system stops: RunLoopKit waits through libev with timerfd,
// eventfd, signalfd, pidfd and inotify, and its Swift imports Glibc. SwiftPM compiles this C
// target before the Swift ones that import it, so this is the only message.
#if !defined(__linux__)
#error "RunLoopKit runs on Linux only (libev with timerfd, eventfd, signalfd, pidfd, inotify; Glibc). On Apple platforms, CFRunLoop (Foundation's RunLoop) is what it follows."
#else

#include <ev.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

/// Callback type shared by every watcher: `revents` are libev's EV_* bits.
typedef void (*clibev_callback)(struct ev_loop *loop, void *watcher, int revents);

/// `ev_io_init(w, cb, fd, events)`.
void clibev_io_init(ev_io *w, clibev_callback cb, int fd, int events);
/// `ev_set_userdata` / `ev_userdata` are functions already; these name the watcher's `data` field.
void clibev_watcher_set_data(void *w, void *data);
void *clibev_watcher_data(void *w);
/// `ev_is_active(w)`.
int clibev_is_active(void *w);

/// The descriptor of `loop`'s kernel backend (its epoll instance): readable whenever a
/// descriptor the loop watches is ready (level-triggered), so another loop can poll it.
/// libev exports no call for it; `ev_embed_start` is its one way to hand it out (it watches
/// the embedded loop's backend descriptor with the embedding watcher's `io`), so this embeds
/// `loop` for a moment in a throwaway `select` loop and reads that descriptor. Returns -1
/// when `loop`'s backend cannot be embedded (none but epoll, kqueue or event ports can).
int clibev_backend_fd(struct ev_loop *loop);

/// `dup3(fd, target, O_CLOEXEC)`: `target` names `fd`'s open file description (after
/// `fork()`, the loop's new epoll instance under the number handed out before). Returns
/// `target`, or -1 with errno set.
int clibev_dup_onto(int fd, int target);

/// `eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)`. Returns the fd, or -1 with errno set.
int clibev_eventfd_create(void);
/// Adds 1 to an eventfd's counter (async-signal-safe). Returns 0, or -1 with errno set.
int clibev_eventfd_increment(int fd);

/// Sizes of libev's watcher structs, so Swift can allocate them.
size_t clibev_io_size(void);

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

/// `pthread_setname_np(pthread_self(), name)` (at most 15 bytes). Returns 0 or an errno.
int clibev_set_thread_name(const char *name);

/// `pthread_sigmask(SIG_UNBLOCK, {signum})` on the calling thread. Returns 0 or an errno.
int clibev_unblock_signal(int signum);

/// POSIX signals for every loop that watches them (libev's `ev_signal` binds a signal to one
/// loop; sd-event and GLib deliver to every watcher). One process-wide handler per signal
/// marks the signal pending in each registered receiver that wants it and writes that
/// receiver's wake eventfd (`write` is async-signal-safe).
///
/// A receiver: one loop's registration. At most `CLIBEV_SIGNAL_RECEIVERS` exist at once.
typedef struct clibev_signal_receiver clibev_signal_receiver;
#define CLIBEV_SIGNAL_RECEIVERS 256
/// Registers a loop, woken by writes of its eventfd `wake_fd`; NULL when every slot is taken.
clibev_signal_receiver *clibev_signal_receiver_new(int wake_fd);
/// Unregisters and frees: returns once no signal handler can still be using the receiver.
void clibev_signal_receiver_free(clibev_signal_receiver *receiver);
/// Whether arrivals of `signum` (1...64) are marked for this receiver.
void clibev_signal_receiver_want(clibev_signal_receiver *receiver, int signum, int wanted);
/// The signals that arrived since the last call (bit `signum - 1`), cleared.
uint64_t clibev_signal_receiver_take(clibev_signal_receiver *receiver);
/// Makes the receiver answer to this process, waking `wake_fd`: a forked child's receivers
/// (copies of the parent's, their arrivals cleared at the fork) are marked but never woken
/// until their loop adopts the child with an eventfd of its own (the parent's is shared
/// with the child); the adopting loop then reads what was marked.
void clibev_signal_receiver_adopt(clibev_signal_receiver *receiver, int wake_fd);
/// `sigaction(signum)` to the fan-out handler (all signals blocked while it runs,
/// `SA_RESTART`); `*displaced`, unless NULL, receives the disposition it replaced. For `SIGCHLD`, that
/// disposition, when a function (GLib's child watch where it has no pidfd, libuv's,
/// libdispatch's, the program's), is called after the fan-out: every waiter of the process's
/// children shares that signal. Called again to take the signal back from a handler installed
/// over the fan-out, it chains that one instead. Returns 0, or -1 with errno set. Under
/// `clibev_signals_lock`.
int clibev_signal_catch(int signum, struct sigaction *displaced);
/// Chains no handler to `signum` any more (`SIGCHLD` only), when the last watch released the
/// signal: a restored handler that chains in its turn calls the fan-out, which must not call
/// that handler again. Under `clibev_signals_lock`.
void clibev_signal_unchain(int signum);
/// Hands an arrival of `signum` to every receiver that wants it, as the fan-out handler does
/// (without calling a chained handler).
void clibev_signal_hand_out(int signum);
/// What a disposition is: 0 the fan-out handler, 1 `SIG_DFL`, 2 `SIG_IGN`, 3 another handler.
int clibev_signal_kind(const struct sigaction *action);
/// Whether a disposition's handler is libdispatch's (`dladdr`: a function of a library named
/// libdispatch), as a `DispatchSource` signal source installs: libdispatch reads the signal
/// from a signalfd too, which takes an arrival before any handler runs about as often as not.
int clibev_signal_handler_is_libdispatch(const struct sigaction *action);
/// What `signum`'s disposition is now (`clibev_signal_kind`: 0 the fan-out handler, 1
/// `SIG_DFL`, 2 `SIG_IGN`, 3 another handler, installed over the fan-out: `signal()`,
/// `sigaction()`, a libdispatch signal source); -1 with errno set when `sigaction` fails.
int clibev_signal_disposition(int signum);

/// The lock of the signal registry, for the callers that change dispositions: `fork()`
/// leaves it unlocked in the child (a `pthread_atfork` handler holds it across the fork).
void clibev_signals_lock(void);
void clibev_signals_unlock(void);

/// Has `hook` called by the `pthread_atfork` prepare handler, on the forking thread, before
/// every later `fork()` (replacing the hook set before; NULL for none).
void clibev_before_each_fork(void (*hook)(void));

/// How many times this process is a forked child (a `pthread_atfork` child handler counts):
/// a loop that sees another value than when it made its kernel objects is in a child.
/// Inline, so a read costs no call (read before every wait); the count, declared in the
/// body, is defined in crunloopkitlibev.c and not imported into Swift.
static inline unsigned clibev_fork_generation(void) {
    extern unsigned clibev_forks;
    return __atomic_load_n(&clibev_forks, __ATOMIC_ACQUIRE);
}

/// Child processes (a child source's pidfd and reaping; glibc before 2.36 has no
/// `pidfd_open` wrapper, and Swift cannot call the variadic `syscall`).
///
/// `pidfd_open(pid, 0)`: a descriptor (close-on-exec) that becomes readable when the
/// process exits. Returns it, or -1 with errno set (ENOSYS before Linux 5.3).
int clibev_pidfd_open(pid_t pid);
/// `waitid(WEXITED | WNOHANG)` on one child: the pidfd `pidfd` (`P_PIDFD`, Linux 5.4) when it
/// is not negative, otherwise the pid `pid` (`P_PID`); with `peek` nonzero, `WNOWAIT` too
/// (the child stays waitable). Returns 1 when the child has exited (`*code`: `CLD_EXITED`,
/// `CLD_KILLED` or `CLD_DUMPED`; `*status`: its exit status or the signal), 0 when it has
/// not yet, -1 with errno set (ECHILD: not a child of this process, or reaped already;
/// EINVAL from `P_PIDFD` before Linux 5.4).
int clibev_child_wait(pid_t pid, int pidfd, int peek, int *code, int *status);

/// Descriptor identity and the epoll calls Swift's Glibc module lacks.
///
/// `epoll_create1(EPOLL_CLOEXEC)`: a new epoll instance, or -1 with errno set.
int clibev_epoll_create(void);
/// `epoll_ctl(EPOLL_CTL_ADD)` of `fd` to `epoll` for `events` (`EPOLLIN` is 1, `EPOLLOUT` 4;
/// 0 for none: only the implicit `EPOLLERR`/`EPOLLHUP`). Returns 0, or -1 with errno set
/// (EEXIST: this open file is registered under this number already; EPERM: the file
/// cannot be polled, such as a regular file).
int clibev_epoll_add(int epoll, int fd, uint32_t events);
/// `signalfd(-1, {signum}, SFD_NONBLOCK | SFD_CLOEXEC)`: a descriptor readable while
/// `signum` is pending for the reading thread or the process, or -1 with errno set.
int clibev_signalfd(int signum);

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
/// Copies into `buffer` (NUL-terminated, at most `size` - 1 bytes) the first line of the
/// file at `path` that starts with `prefix` ("" for its first line), without its newline;
/// returns the line's length (possibly more than was copied), or -1 when the file cannot
/// be read or holds no such line. For the clock's small kernel files (`/proc/cpuinfo`,
/// the clocksource).
long clibev_read_line(const char *path, const char *prefix, char *buffer, size_t size);
/// The calling thread's RunLoopKit identity (`ThreadLoops.id`), cached in a thread-local
/// variable; 0 until `clibev_set_thread_id` is called on the thread. Defined in crunloopkitlibev.c, not
/// inline: a thread-local read inlined into Swift code may be computed once in an async
/// function and reused after it resumes on another thread (LLVM treats the address of a
/// thread-local variable, and `pthread_self()`, declared `const`, as invariant within a
/// function); a call to an out-of-line function without attributes is made every time.
uint64_t clibev_thread_id(void);
/// Sets the calling thread's cached identity (0 forgets it).
void clibev_set_thread_id(uint64_t id);
/// Tags the calling thread (`JoinableThread`'s number for it; 0 for none), so that a forked
/// child can tell whether that thread is the one it has.
void clibev_set_thread_tag(uint64_t tag);
/// The tag of the thread that made this process by `fork()` (the `pthread_atfork` child
/// handler reads it on that thread, the child's one thread then); 0 in a process that is no
/// forked child, or when that thread had none.
uint64_t clibev_forking_thread_tag(void);
/// Whether the calling thread is the process's main thread: its kernel thread id is the
/// process id (the thread-group leader's, which no other thread has while the process
/// lives; CF's `pthread_main_np` on Linux asks the same). Never a `pthread_t` comparison:
/// glibc hands a joined thread's `pthread_t` to the next thread it creates.
int clibev_is_main_thread(void);

/// The slow paths of RunLoopKitPlatform's `Mutex` (a word of 0 free, 1 held, 2 held and
/// waited for; Swift cannot call the variadic `syscall`).
///
/// `FUTEX_WAIT_PRIVATE`: sleeps while `*word` is `expected` until a wake (or a signal, or
/// at once when it is not); the caller looks at the word again.
void clibev_futex_wait(uint32_t *word, uint32_t expected);
/// `FUTEX_WAKE_PRIVATE` of one thread sleeping on `word`.
void clibev_futex_wake(uint32_t *word);

#endif  // defined(__linux__)

#endif  // CRUNLOOPKITLIBEV_H
