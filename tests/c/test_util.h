/*
 * Assertions for the MPI test programs. A failed check prints where and
 * why, then aborts the whole job with a non-zero code, so mpirun and CTest
 * see the failure. Header-only: every test is one small program.
 */
#ifndef MPIDHT_TEST_UTIL_H
#define MPIDHT_TEST_UTIL_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "mpidht.h"

/* What the test is doing now, printed with any failure; cut to the
 * buffer's size (a label, not a result). */
static char test_context_[160];
__attribute__((format(printf, 1, 2))) static inline void test_set_context(const char *format,
                                                                          ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(test_context_, sizeof test_context_, format, args);
    va_end(args);
}
#define TEST_CONTEXT(...) test_set_context(__VA_ARGS__)

static inline void test_fail(const char *file, int line, const char *what)
{
    int rank = -1, initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    bool running = initialized && !finalized;
    if (running)
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "%s:%d: rank %d: check failed: %s%s%s\n", file, line, rank, what,
            test_context_[0] ? " -- while " : "", test_context_);
    fflush(stderr);
    if (running)
        MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond))                                                           \
            test_fail(__FILE__, __LINE__, #cond);                              \
    } while (0)

/* Checks that a call returns the expected status and names both if not. */
#define CHECK_STATUS(call, expected)                                           \
    do {                                                                       \
        mpidht_status_t got_ = (call);                                         \
        if (got_ != (expected)) {                                              \
            char msg_[512];                                                    \
            snprintf(msg_, sizeof msg_, "%s returned %d (%s), expected %s",    \
                     #call, (int)got_, mpidht_strerror(got_), #expected);      \
            test_fail(__FILE__, __LINE__, msg_);                               \
        }                                                                      \
    } while (0)

#define CHECK_OK(call) CHECK_STATUS(call, MPIDHT_OK)

static const mpidht_protocol_t test_protocols[] = {
    MPIDHT_PROTOCOL_COARSE, MPIDHT_PROTOCOL_FINE, MPIDHT_PROTOCOL_LOCKFREE};
#define TEST_PROTOCOL_COUNT 3

/* The protocol named by a program argument ("coarse", "fine", "lockfree");
 * any other name fails the test. */
static inline mpidht_protocol_t test_protocol_arg(const char *name)
{
    for (int p = 0; p < TEST_PROTOCOL_COUNT; ++p)
        if (strcmp(name, mpidht_protocol_name(test_protocols[p])) == 0)
            return test_protocols[p];
    test_fail(__FILE__, __LINE__, "unknown protocol named");
    return MPIDHT_PROTOCOL_COARSE;
}

/* Whether the MPI library is Open MPI before 5 (which has no component
 * for MPI_Win_create on a single process). */
static inline bool test_open_mpi_before_5(void)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len, major = 0;
    MPI_Get_library_version(version, &len);
    const char *at = strstr(version, "Open MPI v");
    return at && sscanf(at, "Open MPI v%d", &major) == 1 && major < 5;
}

/* Parameters for a table of fixed-size keys and values. */
static inline mpidht_params_t test_params(mpidht_protocol_t protocol,
                                          size_t key_size, size_t value_size,
                                          size_t memory)
{
    mpidht_params_t p;
    mpidht_params_init(&p);
    p.protocol = protocol;
    p.key_size = key_size;
    p.value_size = value_size;
    p.memory_per_process = memory;
    return p;
}

/* Deterministic key and value bytes for an integer id. */
static inline void test_fill(void *buf, size_t size, uint64_t id, uint64_t salt)
{
    uint64_t x = id * 0x9e3779b97f4a7c15u + salt + 1;
    unsigned char *b = buf;
    for (size_t i = 0; i < size; ++i) {
        x ^= x >> 29;
        x *= 0xbf58476d1ce4e5b9u;
        x ^= x >> 32;
        b[i] = (unsigned char)x;
    }
    /* The id's low bytes lead, so distinct ids below 256^size give
     * distinct keys even for keys shorter than 8 bytes. */
    for (size_t i = 0; i < size && i < sizeof id; ++i)
        b[i] = (unsigned char)(id >> (8 * i));
}

/* A hash function (mpidht_params_t.hash) that is the key's first 8
 * bytes: a test that chooses those bytes chooses where the key goes
 * (src/address.h). */
static inline uint64_t test_hash_first_bytes(const void *key, size_t key_size, void *user_data)
{
    (void)key_size;
    (void)user_data;
    uint64_t h;
    memcpy(&h, key, sizeof h);
    return h;
}

/* A hash function that gives every key the same value: every key has the
 * same candidates, on one process (all of them where it hosts fewer). */
static inline uint64_t test_hash_constant(const void *key, size_t key_size, void *user_data)
{
    (void)key;
    (void)key_size;
    (void)user_data;
    return UINT64_C(0x5eed);
}

/* count times the environment variable MPIDHT_TEST_SCALE (default 1, as
 * in the Python suite; the MPICH run uses less, see run-tests.sh), but at
 * least minimum. */
static inline uint64_t test_scaled(uint64_t count, uint64_t minimum)
{
    const char *text = getenv("MPIDHT_TEST_SCALE");
    double scale = text ? atof(text) : 1.0;
    double scaled = scale > 0 ? (double)count * scale : (double)count;
    return scaled > (double)minimum ? (uint64_t)scaled : minimum;
}

static inline int test_rank(void)
{
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

static inline int test_size(void)
{
    int s;
    MPI_Comm_size(MPI_COMM_WORLD, &s);
    return s;
}

/* COLLECTIVE over MPI_COMM_WORLD: mpidht_create of a lock-free table of
 * the given window kind, its error detail into detail (of detail_size
 * bytes); *table is NULL unless it returns MPIDHT_OK. */
static inline mpidht_status_t test_create_window(size_t key_size, size_t value_size,
                                                 size_t memory, mpidht_window_kind_t window,
                                                 char *detail, size_t detail_size,
                                                 mpidht_t **table)
{
    mpidht_params_t p = test_params(MPIDHT_PROTOCOL_LOCKFREE, key_size, value_size, memory);
    p.window = window;
    p.error_detail = detail;
    p.error_detail_size = detail_size;
    *table = NULL;
    return mpidht_create(MPI_COMM_WORLD, &p, table);
}

/* COLLECTIVE over MPI_COMM_WORLD: every process writes its share of
 * the ids below count (keys and values from test_fill, key_size and
 * value_size bytes of at most 256), then reads every seventh id back and
 * checks its value. */
static inline void test_write_read_back(mpidht_t *table, size_t key_size, size_t value_size,
                                        uint64_t count)
{
    unsigned char key[256], value[256], back[256];
    CHECK(key_size <= sizeof key && value_size <= sizeof value);
    for (uint64_t id = (uint64_t)test_rank(); id < count; id += (uint64_t)test_size()) {
        test_fill(key, key_size, id, 1);
        test_fill(value, value_size, id, 2);
        CHECK_OK(mpidht_write(table, key, value, NULL));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (uint64_t id = 0; id < count; id += 7) {
        test_fill(key, key_size, id, 1);
        test_fill(value, value_size, id, 2);
        CHECK_OK(mpidht_read(table, key, back));
        CHECK(memcmp(back, value, value_size) == 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

#endif /* MPIDHT_TEST_UTIL_H */
