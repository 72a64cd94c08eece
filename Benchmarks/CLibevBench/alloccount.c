// Allocations counted per operation, as SwiftNIO's CI counts them: this executable defines
// malloc, calloc, realloc, memalign, aligned_alloc and posix_memalign, so every library of
// the process (the Swift runtime, Foundation, Dispatch, libev) allocates through them. Each
// forwards to glibc's own entry point (__libc_malloc, ...), so free and malloc_usable_size
// stay glibc's. While counting is on (lb_alloc_counting_start), each call adds one to a
// process-wide counter; while it is off, a call costs one load and a branch more.
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "clibevbench.h"

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);

static atomic_int counting;
static atomic_int_fast64_t allocations;

static inline void note(void) {
    if (__builtin_expect(atomic_load_explicit(&counting, memory_order_relaxed), 0)) {
        atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    }
}

// Each entry point counts, then forwards (a realloc that frees, size 0, or resizes in place
// counts too: it is a call into the allocator that the code made).
#define COUNTED(name, libc, params, args) \
    void *name params {                   \
        note();                           \
        return libc args;                 \
    }

COUNTED(malloc, __libc_malloc, (size_t size), (size))
COUNTED(calloc, __libc_calloc, (size_t count, size_t size), (count, size))
COUNTED(realloc, __libc_realloc, (void *pointer, size_t size), (pointer, size))
COUNTED(memalign, __libc_memalign, (size_t alignment, size_t size), (alignment, size))
COUNTED(aligned_alloc, __libc_memalign, (size_t alignment, size_t size), (alignment, size))

int posix_memalign(void **result, size_t alignment, size_t size) {
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
    note();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *result = pointer;
    return 0;
}

void lb_alloc_counting_start(void) {
    atomic_store_explicit(&allocations, 0, memory_order_relaxed);
    atomic_store_explicit(&counting, 1, memory_order_seq_cst);
}

int64_t lb_alloc_counting_stop(void) {
    atomic_store_explicit(&counting, 0, memory_order_seq_cst);
    return atomic_load_explicit(&allocations, memory_order_relaxed);
}
