#define _GNU_SOURCE
#include "crunloopkitlibev.h"
#ifdef __linux__  // elsewhere the header stops the build with its one message

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void clibev_io_init(ev_io *w, clibev_callback cb, int fd, int events) {
    ev_io_init(w, (void (*)(struct ev_loop *, ev_io *, int))cb, fd, events);
}

void clibev_watcher_set_data(void *w, void *data) { ((ev_watcher *)w)->data = data; }
void *clibev_watcher_data(void *w) { return ((ev_watcher *)w)->data; }
int clibev_is_active(void *w) { return ev_is_active((ev_watcher *)w); }

int clibev_set_thread_name(const char *name) { return pthread_setname_np(pthread_self(), name); }

int clibev_eventfd_create(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

int clibev_eventfd_increment(int fd) {
    uint64_t one = 1;
    return write(fd, &one, sizeof one) == sizeof one ? 0 : -1;
}

int clibev_backend_fd(struct ev_loop *loop) {
    if (!(ev_backend(loop) & ev_embeddable_backends())) return -1;
    struct ev_loop *outer = ev_loop_new(EVBACKEND_SELECT | EVFLAG_NOSIGMASK);
    if (!outer) return -1;
    ev_embed embed;
    ev_embed_init(&embed, 0, loop);
    ev_embed_start(outer, &embed);
    int fd = embed.io.fd;
    ev_embed_stop(outer, &embed);
    ev_loop_destroy(outer);
    return fd;
}

int clibev_dup_onto(int fd, int target) { return dup3(fd, target, O_CLOEXEC); }

size_t clibev_io_size(void) { return sizeof(ev_io); }

int clibev_timerfd_create(int realtime) {
    return timerfd_create(realtime ? CLOCK_REALTIME : CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
}

int clibev_timerfd_arm(int fd, int64_t deadline_ns, int cancel_on_set) {
    struct itimerspec spec = {0};
    if (deadline_ns >= 0) {
        // An all-zero it_value disarms, so a deadline at exactly 0 ns becomes 1 ns.
        int64_t ns = deadline_ns > 0 ? deadline_ns : 1;
        spec.it_value.tv_sec = ns / 1000000000;
        spec.it_value.tv_nsec = ns % 1000000000;
    }
    int flags = TFD_TIMER_ABSTIME | (cancel_on_set ? TFD_TIMER_CANCEL_ON_SET : 0);
    return timerfd_settime(fd, flags, &spec, NULL);
}

int clibev_timerfd_consume(int fd) {
    uint64_t expirations;
    ssize_t n = read(fd, &expirations, sizeof expirations);
    if (n == (ssize_t)sizeof expirations) return 1;
    if (errno == EAGAIN) return 0;
    if (errno == ECANCELED) return -2;
    return -1;
}

int clibev_eventfd_consume(int fd) {
    uint64_t count;
    ssize_t n;
    do {
        n = read(fd, &count, sizeof count);
    } while (n == -1 && errno == EINTR);
    if (n == (ssize_t)sizeof count) return 1;
    return errno == EAGAIN ? 0 : -1;
}

int clibev_unblock_signal(int signum) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, signum);
    return pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

struct clibev_signal_receiver {
    _Atomic uint64_t wanted;
    _Atomic uint64_t pending;
    _Atomic pid_t pid;
    _Atomic int wake_fd;
    int slot;
};

// The registered receivers, and per slot how many signal handlers are reading it. A handler
// counts itself in before it loads the slot; a receiver is freed after its slot is cleared
// and no handler is counted in (both sequentially consistent: a handler either sees the
// cleared slot or is seen counted in).
static _Atomic(clibev_signal_receiver *) receivers[CLIBEV_SIGNAL_RECEIVERS];
static _Atomic int readers[CLIBEV_SIGNAL_RECEIVERS];
static pthread_mutex_t receivers_lock = PTHREAD_MUTEX_INITIALIZER;
// One past the highest slot ever taken: how far a handler looks.
static _Atomic int slots_used = 0;

// The handler SIGCHLD had before the fan-out took it (or took it back: SignalClaims), when
// that is a function (not SIG_DFL or SIG_IGN): the fan-out calls it after its own work.
// SIGCHLD is shared by every part of a program that waits for its children (GLib's child
// watch where it has no pidfd, libuv, libdispatch, a program's own handler), each checking
// its own; other signals are replaced, as GLib, libuv and sd-event replace them.
//
// Two copies, so that a handler never reads one being written: the holder of the signal
// lock writes the copy not published, once no handler is counted in on it, then publishes
// it. A handler counts itself in on the copy it loaded, then loads again: if that copy is
// still the published one, no writer touches it until the handler counts itself out (all
// sequentially consistent, as for the receivers' slots).
static struct sigaction chained[2];
static _Atomic int chained_readers[2];
// The published copy, or -1: none.
static _Atomic int chained_current = -1;

static void hand_out(int signum) {
    pid_t self = getpid();
    uint64_t bit = (uint64_t)1 << (signum - 1);
    int used = atomic_load(&slots_used);
    for (int slot = 0; slot < used; slot++) {
        atomic_fetch_add(&readers[slot], 1);
        clibev_signal_receiver *receiver = atomic_load(&receivers[slot]);
        if (receiver && (atomic_load(&receiver->wanted) & bit)) {
            atomic_fetch_or(&receiver->pending, bit);
            // A receiver made in another process (a forked child's copy) is marked only: its
            // eventfd is that process's; the loop reads the mark when it adopts the child.
            if (atomic_load(&receiver->pid) == self) {
                uint64_t one = 1;
                (void)!write(atomic_load(&receiver->wake_fd), &one, sizeof one);
            }
        }
        atomic_fetch_sub(&readers[slot], 1);
    }
}

// Set while this thread's fan-out calls the chained handler. A handler that chains in its
// turn (calls the one it displaced, as the JVM's libjsig and Go's runtime do) calls the
// fan-out back when it was installed over it: that call returns at once (the arrival is
// handed out already), or the two would call each other until the stack ran out. Initial
// exec: a handler must not make the C library allocate the thread's block.
static __thread int chaining __attribute__((tls_model("initial-exec")));

static void call_chained(int signum, siginfo_t *info, void *context) {
    struct sigaction handler;
    for (;;) {
        int copy = atomic_load(&chained_current);
        if (copy < 0) return;
        atomic_fetch_add(&chained_readers[copy], 1);
        int current = atomic_load(&chained_current) == copy;
        if (current) handler = chained[copy];
        atomic_fetch_sub(&chained_readers[copy], 1);
        if (current) break;
    }
    chaining = 1;
    if (handler.sa_flags & SA_SIGINFO) handler.sa_sigaction(signum, info, context);
    else handler.sa_handler(signum);
    chaining = 0;
}

static void fan_out(int signum, siginfo_t *info, void *context) {
    if (chaining) return;
    int saved = errno;
    hand_out(signum);
    if (signum == SIGCHLD) call_chained(signum, info, context);
    errno = saved;
}

static int kind_of(const struct sigaction *action) {
    if (action->sa_flags & SA_SIGINFO) return action->sa_sigaction == fan_out ? 0 : 3;
    if (action->sa_handler == SIG_DFL) return 1;
    if (action->sa_handler == SIG_IGN) return 2;
    return 3;
}

// Makes `handler` SIGCHLD's chained handler (none unless it is a function); under the lock.
static void chain(const struct sigaction *handler) {
    if (kind_of(handler) != 3) {
        atomic_store(&chained_current, -1);
        return;
    }
    int copy = atomic_load(&chained_current) == 0 ? 1 : 0;
    while (atomic_load(&chained_readers[copy]) != 0) sched_yield();
    chained[copy] = *handler;
    atomic_store(&chained_current, copy);
}

clibev_signal_receiver *clibev_signal_receiver_new(int wake_fd) {
    clibev_signal_receiver *receiver = calloc(1, sizeof *receiver);
    if (!receiver) return NULL;
    receiver->pid = getpid();
    receiver->wake_fd = wake_fd;
    receiver->slot = -1;
    pthread_mutex_lock(&receivers_lock);
    for (int slot = 0; slot < CLIBEV_SIGNAL_RECEIVERS; slot++) {
        if (atomic_load(&receivers[slot]) == NULL) {
            receiver->slot = slot;
            atomic_store(&receivers[slot], receiver);
            if (slot >= atomic_load(&slots_used)) atomic_store(&slots_used, slot + 1);
            break;
        }
    }
    pthread_mutex_unlock(&receivers_lock);
    if (receiver->slot < 0) {
        free(receiver);
        return NULL;
    }
    return receiver;
}

void clibev_signal_receiver_free(clibev_signal_receiver *receiver) {
    pthread_mutex_lock(&receivers_lock);
    atomic_store(&receivers[receiver->slot], NULL);
    pthread_mutex_unlock(&receivers_lock);
    while (atomic_load(&readers[receiver->slot]) != 0) sched_yield();
    free(receiver);
}

void clibev_signal_receiver_want(clibev_signal_receiver *receiver, int signum, int wanted) {
    uint64_t bit = (uint64_t)1 << (signum - 1);
    if (wanted) atomic_fetch_or(&receiver->wanted, bit);
    else atomic_fetch_and(&receiver->wanted, ~bit);
}

void clibev_signal_receiver_adopt(clibev_signal_receiver *receiver, int wake_fd) {
    atomic_store(&receiver->wake_fd, wake_fd);
    atomic_store(&receiver->pid, getpid());
}

uint64_t clibev_signal_receiver_take(clibev_signal_receiver *receiver) {
    return atomic_exchange(&receiver->pending, 0) & atomic_load(&receiver->wanted);
}

int clibev_signal_catch(int signum, struct sigaction *displaced) {
    struct sigaction before, ignored;
    if (!displaced) displaced = &ignored;
    if (sigaction(signum, NULL, &before) != 0) return -1;
    // Chained before the fan-out goes in, so that no arrival misses the handler; and again
    // if another thread installed one in between, which the fan-out displaced.
    if (signum == SIGCHLD) chain(&before);
    struct sigaction action = {0};
    action.sa_sigaction = fan_out;
    sigfillset(&action.sa_mask);
    action.sa_flags = SA_RESTART | SA_SIGINFO;
    if (sigaction(signum, &action, displaced) != 0) return -1;
    if (signum == SIGCHLD && (displaced->sa_flags != before.sa_flags
                              || (void *)displaced->sa_handler != (void *)before.sa_handler)) {
        chain(displaced);
    }
    return 0;
}

void clibev_signal_unchain(int signum) {
    if (signum != SIGCHLD) return;
    struct sigaction none = {0};
    none.sa_handler = SIG_DFL;
    chain(&none);
}

void clibev_signal_hand_out(int signum) { hand_out(signum); }

int clibev_signal_handler_is_libdispatch(const struct sigaction *action) {
    void *address = action->sa_flags & SA_SIGINFO ? (void *)action->sa_sigaction : (void *)action->sa_handler;
    Dl_info info;
    if (!dladdr(address, &info) || !info.dli_fname) return 0;
    const char *name = strrchr(info.dli_fname, '/');
    return strncmp(name ? name + 1 : info.dli_fname, "libdispatch", 11) == 0;
}

int clibev_signal_kind(const struct sigaction *action) { return kind_of(action); }

int clibev_signal_disposition(int signum) {
    struct sigaction now;
    if (sigaction(signum, NULL, &now) != 0) return -1;
    return kind_of(&now);
}

void clibev_signals_lock(void) { pthread_mutex_lock(&receivers_lock); }

void clibev_signals_unlock(void) { pthread_mutex_unlock(&receivers_lock); }

// Read by the header's clibev_fork_generation (an acquiring load); added to only here.
unsigned clibev_forks = 0;

// The calling thread's tag (clibev_set_thread_tag), and the forking thread's, set by the
// child handler while that thread is the child's only one.
static _Thread_local uint64_t thread_tag = 0;
static uint64_t forking_thread_tag = 0;

void clibev_set_thread_tag(uint64_t tag) { thread_tag = tag; }

uint64_t clibev_forking_thread_tag(void) { return forking_thread_tag; }

// fork() and the signal registry: the lock is held across the fork, so the child's copy is
// never locked by a thread the child does not have; handlers that were reading a slot in
// another thread are not in the child (the forking thread is in none: the handler blocks
// every signal), so the child's counts start at 0; the parent's arrivals are the parent's.
// Set by clibev_before_each_fork; called first by the prepare handler, before the lock.
static _Atomic(void (*)(void)) before_fork = NULL;

void clibev_before_each_fork(void (*hook)(void)) { atomic_store(&before_fork, hook); }

static void lock_for_fork(void) {
    void (*hook)(void) = atomic_load(&before_fork);
    if (hook) hook();
    pthread_mutex_lock(&receivers_lock);
}

static void unlock_in_parent(void) { pthread_mutex_unlock(&receivers_lock); }

static void adopt_in_child(void) {
    for (int slot = 0; slot < CLIBEV_SIGNAL_RECEIVERS; slot++) {
        atomic_store(&readers[slot], 0);
        clibev_signal_receiver *receiver = atomic_load(&receivers[slot]);
        if (receiver) atomic_store(&receiver->pending, 0);
    }
    for (int copy = 0; copy < 2; copy++) atomic_store(&chained_readers[copy], 0);
    chaining = 0;
    forking_thread_tag = thread_tag;
    pthread_mutex_unlock(&receivers_lock);
    __atomic_fetch_add(&clibev_forks, 1, __ATOMIC_SEQ_CST);
}

__attribute__((constructor)) static void watch_forks(void) { pthread_atfork(lock_for_fork, unlock_in_parent, adopt_in_child); }

int clibev_pidfd_open(pid_t pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

int clibev_child_wait(pid_t pid, int pidfd, int peek, int *code, int *status) {
    siginfo_t info;
    memset(&info, 0, sizeof info);
    int options = WEXITED | WNOHANG | (peek ? WNOWAIT : 0);
    // P_PIDFD is 3 (<linux/wait.h>); glibc's <sys/wait.h> names it only from 2.36 on.
    idtype_t type = pidfd >= 0 ? (idtype_t)3 : P_PID;
    id_t id = pidfd >= 0 ? (id_t)pidfd : (id_t)pid;
    int result;
    do {
        result = waitid(type, id, &info, options);
    } while (result == -1 && errno == EINTR);
    if (result == -1) return -1;
    if (info.si_pid == 0) return 0;  // WNOHANG: not exited yet
    *code = info.si_code;
    *status = info.si_status;
    return 1;
}

int clibev_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int clibev_epoll_add(int epoll, int fd, uint32_t events) {
    struct epoll_event event;
    memset(&event, 0, sizeof event);
    event.events = events;
    event.data.fd = fd;
    return epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
}

int clibev_signalfd(int signum) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, signum);
    return signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
}

int64_t clibev_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t clibev_realtime_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static _Thread_local uint64_t thread_id = 0;

uint64_t clibev_thread_id(void) { return thread_id; }

void clibev_set_thread_id(uint64_t id) { thread_id = id; }

long clibev_read_line(const char *path, const char *prefix, char *buffer, size_t size) {
    FILE *file = fopen(path, "r");
    if (!file) return -1;
    char *line = NULL;
    size_t capacity = 0;
    ssize_t length;
    long found = -1;
    size_t prefixLength = strlen(prefix);
    while ((length = getline(&line, &capacity, file)) >= 0) {
        if (strncmp(line, prefix, prefixLength) != 0) continue;
        if (length > 0 && line[length - 1] == '\n') line[--length] = 0;
        found = (long)length;
        if (size > 0) {
            size_t copied = (size_t)length < size - 1 ? (size_t)length : size - 1;
            memcpy(buffer, line, copied);
            buffer[copied] = 0;
        }
        break;
    }
    free(line);
    fclose(file);
    return found;
}

int clibev_is_main_thread(void) { return (pid_t)syscall(SYS_gettid) == getpid(); }

void clibev_futex_wait(uint32_t *word, uint32_t expected) {
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

void clibev_futex_wake(uint32_t *word) { syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0); }

#endif  // __linux__
