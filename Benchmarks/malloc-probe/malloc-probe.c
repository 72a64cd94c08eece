// What one malloc costs when the blocks before it were freed and then consolidated, as in
// loop-bench's schedule workload (PROFILING.md, "Create + add and invalidate: what is left").
// N blocks of SIZE bytes are allocated and freed (7 go to the tcache, the rest to a fastbin);
// with "consolidate", the 80 KB room holding them is freed and allocated again, and a free of
// 64 KB or more, like any request of 1 KB or more, merges every fastbin block into one free
// chunk; then the counted function allocates N blocks of SIZE again. malloc keeps what is
// freed, as in the schedule workload's children (lb_keep_freed_memory). Not part of the build:
//
//   cc -O2 -o /tmp/malloc-probe Benchmarks/malloc-probe/malloc-probe.c
//   valgrind --tool=callgrind --collect-atstart=no --toggle-collect=measured_alloc /tmp/malloc-probe 88 consolidate
//
// (the instructions counted ÷ 10,000: per malloc).
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 10000

__attribute__((noinline)) void measured_alloc(void **blocks, size_t size) {
    for (int i = 0; i < N; i++) blocks[i] = malloc(size);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s SIZE [consolidate]\n", argv[0]);
        return 2;
    }
    size_t size = (size_t)atoi(argv[1]);
    int consolidate = argc > 2 && strcmp(argv[2], "consolidate") == 0;
    mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
    mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024);
    void **room = malloc(N * sizeof(void *));
    for (int i = 0; i < N; i++) room[i] = malloc(size);
    for (int i = 0; i < N; i++) free(room[i]);
    if (consolidate) {
        free(room);
        room = malloc(N * sizeof(void *));
    }
    measured_alloc(room, size);
    printf("%p\n", room[N - 1]);
    return 0;
}
