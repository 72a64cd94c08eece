#define _GNU_SOURCE
#include "clibev.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

void clibev_io_init(ev_io *w, clibev_callback cb, int fd, int events) {
    ev_io_init(w, (void (*)(struct ev_loop *, ev_io *, int))cb, fd, events);
}

void clibev_async_init(ev_async *w, clibev_callback cb) {
    ev_async_init(w, (void (*)(struct ev_loop *, ev_async *, int))cb);
}

void clibev_signal_init(ev_signal *w, clibev_callback cb, int signum) {
    ev_signal_init(w, (void (*)(struct ev_loop *, ev_signal *, int))cb, signum);
}

void clibev_watcher_set_data(void *w, void *data) { ((ev_watcher *)w)->data = data; }
void *clibev_watcher_data(void *w) { return ((ev_watcher *)w)->data; }
int clibev_is_active(void *w) { return ev_is_active((ev_watcher *)w); }
int clibev_async_pending(ev_async *w) { return ev_async_pending(w); }

int clibev_eventfd_create(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

int clibev_eventfd_signal(int fd) {
    uint64_t one = 1;
    return write(fd, &one, sizeof one) == sizeof one ? 0 : -1;
}

// Per signal: libev's handler, and the eventfd to write after it (-1 for none). Written by
// clibev_forward_signal before the forwarding handler is installed, read by that handler.
static void (*libev_handlers[_NSIG])(int);
static volatile sig_atomic_t forward_fds[_NSIG];

static void forwarding_handler(int signum) {
    int saved = errno;
    if (signum > 0 && signum < _NSIG) {
        if (libev_handlers[signum]) libev_handlers[signum](signum);
        int fd = forward_fds[signum];
        if (fd >= 0) (void)clibev_eventfd_signal(fd);
    }
    errno = saved;
}

int clibev_forward_signal(int signum, int wake_fd) {
    if (signum <= 0 || signum >= _NSIG) { errno = EINVAL; return -1; }
    struct sigaction current;
    if (sigaction(signum, NULL, &current) != 0) return -1;
    forward_fds[signum] = wake_fd;
    if (current.sa_handler == forwarding_handler) return 0;
    // Not libev's handler: nothing to forward to.
    if ((current.sa_flags & SA_SIGINFO) || current.sa_handler == SIG_DFL || current.sa_handler == SIG_IGN) {
        errno = EINVAL;
        return -1;
    }
    libev_handlers[signum] = current.sa_handler;
    current.sa_handler = forwarding_handler;
    return sigaction(signum, &current, NULL);
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

size_t clibev_io_size(void) { return sizeof(ev_io); }
size_t clibev_async_size(void) { return sizeof(ev_async); }
size_t clibev_signal_size(void) { return sizeof(ev_signal); }

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

int clibev_ticks_drive_monotonic(void) {
#if defined(__x86_64__)
    const char *expected = "tsc";
#elif defined(__aarch64__)
    const char *expected = "arch_sys_counter";
#else
    return 0;
#endif
    FILE *file = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (!file) return 0;
    char name[64] = {0};
    int read = fscanf(file, "%63s", name);
    fclose(file);
    return read == 1 && strcmp(name, expected) == 0;
}

int clibev_is_main_thread(void) { return (pid_t)syscall(SYS_gettid) == getpid(); }
