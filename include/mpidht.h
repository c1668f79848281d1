/*
 * mpidht — a distributed hash table that lives inside an MPI application.
 *
 * Every process of a communicator contributes part of its memory to one
 * table; any process reads or writes any key with MPI-3 one-sided
 * communication (MPI_Get, MPI_Put, MPI_Accumulate, MPI_Fetch_and_op).
 * There is no server and no progress thread.
 *
 * Conventions for every call in this header
 *   - Every call returns an mpidht_status_t. MPIDHT_OK (0) means success;
 *     MPIDHT_NOT_FOUND is a normal outcome of read and remove, not an error;
 *     every other value is an error whose message mpidht_strerror() gives.
 *   - An error never aborts the process and never leaves the table in a
 *     state other than the one documented for the call. The exception is
 *     MPIDHT_ERR_MPI: an MPI call failed midway, locks or entries may be
 *     left behind, and the table should be freed.
 *   - Calls marked COLLECTIVE must be entered by every process of the
 *     table's communicator, each with a valid handle (the table's, or for
 *     mpidht_create the same parameters); they return the same status on
 *     every process, except that a process whose own argument is bad
 *     reports that error while the others report MPIDHT_ERR_PEER.
 *     All other calls are local to the calling process (one-sided) and may
 *     be made concurrently by any subset of processes.
 *   - A collective call that some process never enters waits for ever, as
 *     MPI's collectives do. The debug mode turns that into an error: with
 *     the environment variable MPIDHT_DEBUG_COLLECTIVES set to a number of
 *     seconds when mpidht_create is called (the same on every process:
 *     create refuses a setting that differs, on or off, with
 *     MPIDHT_ERR_DEBUG_SETTING on every process that entered it; a value
 *     that is no number of seconds is, like a bad argument, refused with
 *     MPIDHT_ERR_DEBUG_SETTING where it is set and MPIDHT_ERR_PEER on the
 *     others), every
 *     collective call on the table, create included, first checks
 *     that every process entered the same call. Where they have not within
 *     that time, the call does nothing and returns
 *     MPIDHT_ERR_COLLECTIVE_CHECK on each process that entered it, and the
 *     error detail (mpidht_error_detail, or params.error_detail for create)
 *     names the call and the processes that had not entered it or had
 *     entered another call; the table stays usable. (For create, which
 *     processes are missing can be told only once the communicator is
 *     duplicated, and after such a failure comm's collective calls are out
 *     of step: end the program.) The check costs each process two small
 *     messages to every other per collective call, and a third where it
 *     fails.
 *   - A table handle must not be used by two threads at the same time.
 *
 *   - Structs the library fills (mpidht_stats_t, mpidht_info_t,
 *     mpidht_restore_report_t) and mpidht_params_t begin with struct_size,
 *     which the caller sets (MPIDHT_STATS_INIT, ..., mpidht_params_init).
 *     The library reads and writes only the first struct_size bytes, so a
 *     caller compiled against an older header keeps working when fields
 *     are appended.
 *
 * Bucket layout (bytes; K = key_size, V = value_size), padded to a multiple
 * of 8 so that the 8-byte words stay aligned:
 *
 *   coarse     | recency 8 | meta 1 | key K | value V |                  9 + K + V
 *   fine       | lock 8 | gen 8 | recency 8 | meta 1 | key K | value V | 25 + K + V
 *   lock-free  | lock 8 | gen 8 | recency 8 | sum 8 | meta 1 | key K | value V |
 *                                                                       33 + K + V
 *
 * meta: bit 0 = occupied. sum: XXH3-64 of meta, key and value. gen: the
 * bucket's generation, odd while a write, update or remove changes the
 * bucket and even again (2 added in all) before it lets go of the
 * bucket's lock, and 2 added to the key's first candidate by a write that
 * stored its key elsewhere (where every process reaches the buckets
 * directly, mpidht_info_t.direct: a write after a miss of its key then
 * compares no keys while the generation of the key's first candidate
 * stands, and a write about to evict checks that its other candidates
 * were all taken at one instant; the word is left alone otherwise); only ever changed and read by processor atomics. recency: the
 * time (ms since rank 0's clock at mpidht_create, on the system's
 * real-time clock: one clock for the processes of a node, and across
 * nodes as close as their clocks are kept; a step of the system's clock
 * moves the stamps made after it) the entry was last written or, now and
 * then, read; only ever changed by MPI_Accumulate with MPI_MAX and read by
 * MPI_Fetch_and_op with MPI_NO_OP. lock: readers in its low bits (fine
 * protocol only), MPIDHT_FINE_EXCLUSIVE added while a writer holds or
 * waits for the bucket; only ever changed by MPI_Fetch_and_op with
 * MPI_SUM and read with MPI_NO_OP, a family of atomics MPI's default
 * accumulate_ops (same_op_no_op) promises to be atomic. A write never
 * puts into the lock or recency word.
 */
#ifndef MPIDHT_H
#define MPIDHT_H

/* C++ callers get MPI's C interface only: Open MPI's and MPICH's mpi.h
 * would otherwise declare their C++ bindings, which need a library of
 * their own to link (MPI::MPI_CXX). */
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version, and the one place it is written: CMake
 * (project VERSION, the package files) and the Python package (setup.py,
 * mpidht.__version__) read these three lines. */
#define MPIDHT_VERSION_MAJOR 0
#define MPIDHT_VERSION_MINOR 2
#define MPIDHT_VERSION_PATCH 0

/* ------------------------------------------------------------------ */
/* Status codes                                                        */
/* ------------------------------------------------------------------ */

/* One list yields the enum and the messages (src/status.c). The numbers are
 * fixed: a status keeps its number in every later version, and new statuses
 * are appended. */
#define MPIDHT_STATUS_LIST(X)                                                  \
    X(MPIDHT_OK, 0, "success")                                                 \
    X(MPIDHT_NOT_FOUND, 1, "key not found")                                    \
    X(MPIDHT_ERR_NULL_ARGUMENT, 2, "a required pointer argument is NULL")      \
    X(MPIDHT_ERR_INVALID_HANDLE, 3, "the table handle is NULL or the "         \
      "table has been freed")                                                  \
    X(MPIDHT_ERR_MPI_NOT_INITIALIZED, 4, "MPI is not initialized, or "         \
      "already finalized")                                                     \
    X(MPIDHT_ERR_INVALID_COMM, 5, "the communicator is MPI_COMM_NULL or "      \
      "an intercommunicator")                                                  \
    X(MPIDHT_ERR_PARAMS_VERSION, 6, "the parameter struct was not set up "     \
      "with mpidht_params_init()")                                             \
    X(MPIDHT_ERR_KEY_SIZE, 7, "key_size must be between 1 and 65536 "          \
      "(MPIDHT_MAX_KEY_SIZE)")                                                 \
    X(MPIDHT_ERR_VALUE_SIZE, 8, "value_size must be between 1 and "            \
      "16777216 (MPIDHT_MAX_VALUE_SIZE)")                                      \
    X(MPIDHT_ERR_UNKNOWN_PROTOCOL, 9, "unknown consistency protocol")          \
    X(MPIDHT_ERR_UNKNOWN_WINDOW, 10, "unknown window kind")                    \
    X(MPIDHT_ERR_CANDIDATES, 11, "candidates must be between 1 and 16 "        \
      "(MPIDHT_MAX_CANDIDATES), or 0 for the default")                         \
    X(MPIDHT_ERR_BUDGET_TOO_SMALL, 12, "the memory budget is non-zero but "    \
      "smaller than one bucket")                                               \
    X(MPIDHT_ERR_BUDGET_TOO_LARGE, 13, "the memory budget exceeds 2^32 "       \
      "buckets per process or, summed over the node, its available memory")   \
    X(MPIDHT_ERR_NO_STORAGE, 14, "no process of the communicator "             \
      "contributes memory to the table")                                       \
    X(MPIDHT_ERR_MISMATCHED_PARAMS, 15, "a parameter that must be equal "      \
      "on every process differs between processes")                            \
    X(MPIDHT_ERR_WINDOW_UNSUPPORTED, 16, "the requested window kind "          \
      "cannot be used here (a shared window needs all processes on one "       \
      "node; the MPI library may have no component for MPI_Win_create, or "    \
      "for any window between nodes)")                                         \
    X(MPIDHT_ERR_NO_MEMORY, 17, "out of memory, or the MPI library could "     \
      "not allocate the window")                                               \
    X(MPIDHT_ERR_MPI, 18, "an MPI call failed")                                \
    X(MPIDHT_ERR_PEER, 19, "the call failed on another process of the "        \
      "communicator")                                                          \
    X(MPIDHT_ERR_BATCH_SIZE, 20, "the batch is too large: its count times "    \
      "the key or value size overflows size_t")                                \
    X(MPIDHT_ERR_ITERATION, 21, "max_entries is 0, or the cursor lies "        \
      "beyond this process's buckets")                                         \
    X(MPIDHT_ERR_PATH_MISMATCH, 22, "the file path differs between "           \
      "processes")                                                             \
    X(MPIDHT_ERR_FILE_IO, 23, "the file could not be opened, read, "           \
      "written, synced or renamed")                                            \
    X(MPIDHT_ERR_FILE_FORMAT, 24, "the file is not an mpidht dump, or its "    \
      "format version is one this library cannot read")                        \
    X(MPIDHT_ERR_FILE_MISMATCH, 25, "the dump's key size or value size "       \
      "differs from the table's")                                              \
    X(MPIDHT_ERR_FILE_CORRUPT, 26, "the dump is truncated, has extra "         \
      "bytes or fails a checksum")                                             \
    X(MPIDHT_ERR_CONCURRENT_USE, 27, "the table changed during a "             \
      "collective call: another thread used it")                               \
    X(MPIDHT_ERR_TIMEOUT, 28, "a lock, or a write of the same key by "         \
      "another process, was not released within the table's timeout")          \
    X(MPIDHT_ERR_STRUCT_SIZE, 29, "struct_size is smaller than any layout "    \
      "of the struct this library knows: set it with the struct's "            \
      "MPIDHT_..._INIT")                                                       \
    X(MPIDHT_ERR_UNKNOWN_EVICTION, 30, "unknown eviction policy")              \
    X(MPIDHT_ERR_TIMEOUT_SETTING, 31, "timeout must be a finite number of "    \
      "seconds, 0 or more (0 = wait forever)")                                 \
    X(MPIDHT_ERR_UPDATE_ACTION, 32, "the update function returned neither "    \
      "MPIDHT_KEEP, MPIDHT_STORE nor MPIDHT_DELETE")                           \
    X(MPIDHT_ERR_KEY_COLUMN, 33, "a key column's rounding is unknown, its "    \
      "digits out of range (significant: 1 to 15; decimal: -20 to 20 "         \
      "places) or its floor negative or not a number")                         \
    X(MPIDHT_ERR_KEY_VALUE, 34, "a value to encode is NaN or infinite, or "    \
      "too large for its column's decimal places")                             \
    X(MPIDHT_ERR_COLLECTIVE_CHECK, 35, "not every process entered the same "   \
      "collective call within the time MPIDHT_DEBUG_COLLECTIVES allows; the "  \
      "error detail names the call and the processes")                          \
    X(MPIDHT_ERR_DEBUG_SETTING, 36, "MPIDHT_DEBUG_COLLECTIVES must be a "      \
      "number of seconds, 0 or more (unset, empty or 0: off), the same on "    \
      "every process")                                                         \
    X(MPIDHT_ERR_ACCESS_SETTING, 37, "MPIDHT_SHARED_ACCESS must be direct or " \
      "mpi (unset or empty: direct)")                                          \
    X(MPIDHT_ERR_MPI_LIBRARY, 38, "the program runs with another MPI "         \
      "library than the one mpidht was compiled with (Open MPI and MPICH do "  \
      "not mix in one program)")

typedef enum mpidht_status {
#define MPIDHT_STATUS_ENUM_(name, number, message) name = number,
    MPIDHT_STATUS_LIST(MPIDHT_STATUS_ENUM_)
#undef MPIDHT_STATUS_ENUM_
} mpidht_status_t;

/* Returns a static, human-readable message for any status value; never
 * NULL (an out-of-range value yields "unknown status"). */
const char *mpidht_strerror(mpidht_status_t status);

/* ------------------------------------------------------------------ */
/* Creation parameters                                                 */
/* ------------------------------------------------------------------ */

/* Buckets hold keys and values inline and a probe fetches whole buckets,
 * so the table is meant for small items. */
#define MPIDHT_MAX_KEY_SIZE ((size_t)1 << 16)   /* 64 KiB */
#define MPIDHT_MAX_VALUE_SIZE ((size_t)1 << 24) /* 16 MiB */
#define MPIDHT_MAX_CANDIDATES 16
#define MPIDHT_DEFAULT_CANDIDATES 6 /* POET's index count for 3-byte indices */
#define MPIDHT_MAX_BUCKETS_PER_PROCESS ((uint64_t)1 << 32)
#define MPIDHT_FINE_EXCLUSIVE ((int64_t)0x10000000)
#define MPIDHT_DEFAULT_TIMEOUT 60.0 /* seconds */

typedef enum mpidht_protocol {
    /* A lock of the target's whole window per operation (MPI_Win_lock, or
     * on a direct table a lock word of the window): shared for reads,
     * exclusive for writes, updates and removes. Simple; serialises
     * writers per process; waits for the lock without a timeout. */
    MPIDHT_PROTOCOL_COARSE = 1,
    /* A lock word per bucket inside one MPI_Win_lock_all epoch. Readers
     * register on the buckets they read; writers lock the key's first
     * candidate (its key lock) and the bucket they store into, and wait for
     * registered readers to leave; new readers wait while a writer waits. */
    MPIDHT_PROTOCOL_FINE = 2,
    /* Writers as under the fine protocol; readers take no lock and never
     * write (but for the eviction hint): a 64-bit checksum per bucket
     * tells them a copy of their key torn by a writer, which they read
     * again. */
    MPIDHT_PROTOCOL_LOCKFREE = 3
} mpidht_protocol_t;

/*
 * Direct access. On a shared window of MPI's unified memory model (all
 * processes on one node) the library reaches every process's buckets with
 * loads, stores and the processor's 8-byte atomics, through the addresses
 * MPI_Win_shared_query gives, instead of one-sided calls. Each call's
 * accesses begin after an acquire fence and each round of them ends with
 * MPI_Win_sync (reads, which only load and change lock and recency
 * words atomically, with a release fence): the
 * memory barriers MPI asks for between them and whatever synchronisation
 * (a barrier, a message) the caller does before and after the call, so
 * what one process wrote before such a synchronisation is what another
 * reads after it. Every
 * process of the table accesses the same way (decided at create), so
 * MPI's atomics and the processor's never meet on one word; the
 * protocols, their guarantees and their checks are the same on both
 * paths, and the coarse protocol's window lock becomes a word after each
 * process's buckets. This spares the copy inside MPI_Get, and the wait
 * for the target process that some MPI libraries' one-sided calls need
 * (MPICH 4.0: milliseconds when ranks outnumber cores). Setting the
 * environment variable MPIDHT_SHARED_ACCESS=mpi (on any process, before
 * create) keeps the table on one-sided calls; "direct", empty or unset:
 * direct; any other value fails create with MPIDHT_ERR_ACCESS_SETTING.
 * mpidht_get_info tells which (info.direct).
 */
typedef enum mpidht_window_kind {
    /* MPI_Win_allocate_shared when all processes share one node (then
     * reached directly, see above), otherwise MPI_Win_allocate. See
     * docs/design.md, "Windows", for why. */
    MPIDHT_WINDOW_AUTO = 0,
    MPIDHT_WINDOW_SHARED = 1,   /* MPI_Win_allocate_shared; one node only */
    /* MPI_Win_allocate. Under Open MPI refused (MPIDHT_ERR_WINDOW_UNSUPPORTED)
     * on a communicator holding more than one but not all of the job's
     * processes on a node, unless `--mca osc` leaves rdma out: Open MPI
     * 4.1's osc rdma may give it another communicator's memory there
     * (open-mpi/ompi#7393; docs/design.md, "Windows"). */
    MPIDHT_WINDOW_ALLOCATE = 2,
    /* MPI_Alloc_mem + MPI_Win_create. Refused under Open MPI as an allocate
     * window is, unless `--mca osc` leaves rdma out (pt2pt: the fine and
     * lock-free protocols' calls timed out under osc ucx on one node):
     * two such tables on the halves of a split crashed or hung there. */
    MPIDHT_WINDOW_CREATE = 3
} mpidht_window_kind_t;

typedef enum mpidht_eviction {
    /* When every candidate of a key holds another key, overwrite the one
     * whose entry was written or read longest ago (reads refresh an
     * entry's time now and then, about one read in eight), in
     * milliseconds, whichever process of a node wrote it: every process
     * stamps entries by one clock (the recency word, above), however far
     * apart they returned from create (tests/c/test_recency_across.c, 2
     * and 4 processes of one node); across nodes the stamps are as far
     * apart as the nodes' clocks. */
    MPIDHT_EVICT_RECENCY = 0,
    /* Always overwrite the last candidate, as the paper's table did. */
    MPIDHT_EVICT_LAST = 1
} mpidht_eviction_t;

/* A hash function maps key_size bytes at key to 64 bits. It must give the
 * same result for the same bytes on every process. Any function is
 * correct, even a constant one (the table then degenerates to
 * `candidates` buckets on one process); quality only affects speed. */
typedef uint64_t (*mpidht_hash_fn)(const void *key, size_t key_size,
                                   void *user_data);

typedef struct mpidht_params {
    size_t struct_size;          /* set by mpidht_params_init; do not touch */
    size_t key_size;             /* bytes per key, required */
    size_t value_size;           /* bytes per value, required */
    size_t memory_per_process;   /* bytes this process hosts; 0 = none */
    mpidht_protocol_t protocol;  /* default MPIDHT_PROTOCOL_LOCKFREE */
    mpidht_window_kind_t window; /* default MPIDHT_WINDOW_AUTO */
    unsigned candidates;         /* buckets probed per key; 0 = default */
    mpidht_hash_fn hash;         /* NULL = XXH3-64 from libxxhash */
    void *hash_user_data;        /* passed to hash unchanged */
    /* Appended in 0.2; a caller compiled against 0.1 (whose struct ends
     * above) gets the defaults, as one compiled against 0.2.0 does for the
     * fields after timeout. */
    mpidht_eviction_t eviction;  /* default MPIDHT_EVICT_RECENCY */
    /* Seconds a call waits for a lock, or for another process's write of
     * the same key, before it gives up with MPIDHT_ERR_TIMEOUT (fine and
     * lock-free protocols); may differ between processes. Default
     * MPIDHT_DEFAULT_TIMEOUT; 0 waits for ever. */
    double timeout;
    /* Appended after 0.2.0: where mpidht_create writes, when it
     * fails, what failed in words (this process's bad argument and its
     * value; with MPIDHT_ERR_PEER, the lowest rank that failed and its
     * status; the parameter that differs between processes; the
     * processes that did not enter it in the debug mode; ...), and ""
     * when it succeeds; cut to error_detail_size bytes, its terminating
     * zero included. NULL = nowhere. Need not be equal on the
     * processes. */
    char *error_detail;
    size_t error_detail_size;
    /* New fields are appended here. */
} mpidht_params_t;

/* Fills *params with the defaults above and zero sizes. Returns
 * MPIDHT_ERR_NULL_ARGUMENT if params is NULL. */
mpidht_status_t mpidht_params_init(mpidht_params_t *params);

/* The bytes one bucket takes for these parameters, padding included, so
 * that a caller can size memory_per_process as a bucket count. Returns
 * MPIDHT_ERR_NULL_ARGUMENT, or the error mpidht_create would report for
 * the struct's version, sizes, protocol, window, candidates, eviction or
 * timeout. */
mpidht_status_t mpidht_bucket_size(const mpidht_params_t *params,
                                   size_t *bucket_size);

/* ------------------------------------------------------------------ */
/* Table lifetime                                                      */
/* ------------------------------------------------------------------ */

typedef struct mpidht mpidht_t;

/* COLLECTIVE over comm. Creates a table; *table receives the handle on
 * success and NULL on failure.
 * Requires: MPI initialised; comm an intracommunicator; params from
 *   mpidht_params_init with key_size, value_size, protocol, window,
 *   candidates, hash and eviction equal on every process.
 *   memory_per_process may differ between processes and may be 0 on some
 *   of them (those processes use the table without hosting any of it), but
 *   not on all; summed over the processes of a node, it must not exceed
 *   the memory the node has available (Linux: MemAvailable, at most the
 *   physical memory; create touches all of it), else
 *   MPIDHT_ERR_BUDGET_TOO_LARGE.
 * Guarantees: every hosted bucket is empty. Where the system gives
 *   transparent huge pages on advice only (Linux, its "madvise" setting),
 *   the whole huge pages inside the hosted memory, and no other memory,
 *   are advised for them (madvise MADV_HUGEPAGE) before the table first
 *   touches them, which spares random reads a page walk each; mpidht_free
 *   gives the advice back (MADV_NOHUGEPAGE) before MPI takes the memory
 *   back. A key's home process is chosen
 *   with probability proportional to the buckets each process hosts, so
 *   every process fills at the same rate whatever the budgets; its
 *   candidates are distinct buckets of that process (all of them where it
 *   hosts fewer than `candidates`). The communicator is duplicated,
 *   so the caller may free comm afterwards; if any process fails, every
 *   process returns an error (MPIDHT_ERR_PEER where the fault was
 *   elsewhere) and nothing is left allocated. Where several processes
 *   share a node, the node's part of a shared or allocate window is
 *   compared with the free room of the shared-memory file system (/dev/shm,
 *   or Open MPI's osc_sm_backing_directory set in the environment), where
 *   both MPI libraries take a shared window's memory and MPICH an allocate
 *   window's (Open MPI's allocate window on one node needs it too; across
 *   nodes that was not checked): a part larger than that room is refused
 *   (MPIDHT_ERR_NO_MEMORY, the error detail giving both) before MPI is
 *   asked, since the MPI libraries neither fail such a window on every
 *   process nor give memory that can be touched (a hang, or SIGBUS).
 *   Likewise a window that would take a process past its address-space
 *   limit (RLIMIT_AS, `ulimit -v`) is refused the same way before MPI is
 *   asked: each process of a node maps the node's whole part of a shared
 *   or allocate window, its own part otherwise (where that mapping
 *   failed, Open MPI 4.1 left the job waiting in MPI_Win_allocate_shared).
 *   The table sets one
 *   attribute of its own key on MPI_COMM_SELF (mpidht_free removes it),
 *   by which MPI_Finalize tells it that MPI is gone: a call after that
 *   returns MPIDHT_ERR_MPI_NOT_INITIALIZED without calling MPI.
 *   Before any MPI call that takes a handle, create compares the family
 *   of the MPI library the program runs with (MPI_Get_library_version:
 *   "Open MPI" in it, or "MPICH", "MVAPICH" or "Intel(R) MPI") with that
 *   of the mpi.h the library was compiled with (Open MPI's or MPICH's),
 *   and where both are known and differ returns
 *   MPIDHT_ERR_MPI_LIBRARY on every process, naming both in the error
 *   detail: their handles differ, and the first call that took one
 *   crashed (a program built with Open MPI's compiler wrapper against an
 *   mpidht built with MPICH's). */
mpidht_status_t mpidht_create(MPI_Comm comm, const mpidht_params_t *params,
                              mpidht_t **table);

/* COLLECTIVE. Frees the table and sets *table to NULL, so that a later
 * call with the same variable returns MPIDHT_ERR_INVALID_HANDLE. Where the
 * debug mode's check fails, the table is not freed. After MPI_Finalize
 * (a caller's mistake: it took the table's window and communicator) it
 * frees what is left, this process's own memory, sets *table to NULL and
 * returns MPIDHT_ERR_MPI_NOT_INITIALIZED, calling nothing of MPI. */
mpidht_status_t mpidht_free(mpidht_t **table);

/* ------------------------------------------------------------------ */
/* Operations (one-sided, local to the caller)                        */
/* ------------------------------------------------------------------ */

/*
 * What every protocol guarantees, for reads, writes, updates and removes,
 * single or batched (each row of a batch is one operation):
 *   - Linearizable per key, and therefore as a whole: each operation takes
 *     effect at one instant between its call and its return. A read
 *     returns the value of the last write or update of its key that took
 *     effect before it, or MPIDHT_NOT_FOUND if there is none, or if the key
 *     was removed or evicted since. In particular reads never go back in
 *     time: once a read has returned a value, a read that starts later
 *     (on any process) returns that value or a newer one, or a miss.
 *   - Never a torn value or the value of another key. Under the lock-free
 *     protocol this rests on a 64-bit checksum (XXH3) that a bucket read
 *     while being rewritten passes with probability 2^-64.
 *   - A key is stored in at most one bucket; write, update and remove
 *     outcomes are exact (tests/c/test_entry_count.c counts them).
 *   - A completed write stays until the key is written, updated, removed
 *     or evicted by another operation: no read ever invalidates it.
 *   - Any key may be evicted by the write of another key whose candidates
 *     are all taken (mpidht_eviction_t says which entry goes): taken at
 *     one instant of that write, on a table every process reaches
 *     directly (mpidht_info_t.direct; tests/c/test_evict_when_full.c
 *     moves another key between two candidates while a write's probe
 *     looks). On a table that is not direct (across nodes, an allocate
 *     or create window, or MPIDHT_SHARED_ACCESS=mpi), through MPI's
 *     one-sided calls, the write gets its candidates in one round, each
 *     at its own instant: another key's remove from one candidate and
 *     its write into another in the gap between two of those gets can
 *     still make a write evict while a candidate is free.
 * How long a call may wait: coarse calls wait for the target's window
 * lock for as long as another process holds it (no timeout; inside
 * MPI_Win_lock, or on a direct table backing off as below, each wait
 * counted in lock_retries). Under the fine and lock-free protocols a call
 * that meets a lock, or another process's write of the same key, backs
 * off and tries again (yielding, then sleeping with jitter, each sleep
 * at most 1.5 ms) until the table's timeout from its first wait has
 * passed, and then returns MPIDHT_ERR_TIMEOUT, holding nothing: the call
 * ends within the timeout plus one sleep and the steps that let go of
 * what it holds, unless the system deschedules the process (measured
 * with 4 processes on 2 cores: 7 of 420 000 calls under a 5 ms timeout
 * took 95-122 ms). Lock-free reads wait only while a writer is rewriting
 * the bucket they read.
 */

/* Copies the value stored for key (key_size bytes) into value (value_size
 * bytes). Returns MPIDHT_OK on a hit, MPIDHT_NOT_FOUND on a miss (value is
 * then left untouched), MPIDHT_ERR_TIMEOUT, or another error. */
mpidht_status_t mpidht_read(mpidht_t *table, const void *key, void *value);

typedef enum mpidht_write_outcome {
    MPIDHT_WRITE_INSERTED = 0, /* stored in an empty bucket */
    MPIDHT_WRITE_UPDATED = 1,  /* the key was present; value replaced */
    MPIDHT_WRITE_EVICTED = 2   /* all candidates held other keys; one of
                                  them was overwritten (mpidht_eviction_t) */
} mpidht_write_outcome_t;

/* Stores value for key: in place if the key is present, otherwise in its
 * first empty candidate, otherwise over the entry the eviction policy
 * picks. outcome may be NULL. Returns MPIDHT_OK, MPIDHT_ERR_TIMEOUT (the
 * key unchanged), or another error. */
mpidht_status_t mpidht_write(mpidht_t *table, const void *key,
                             const void *value,
                             mpidht_write_outcome_t *outcome);

/* Removes key. Returns MPIDHT_OK if it was present, MPIDHT_NOT_FOUND if
 * not, MPIDHT_ERR_TIMEOUT (the key unchanged), or another error. */
mpidht_status_t mpidht_remove(mpidht_t *table, const void *key);

/* What an update function asks for. */
typedef enum mpidht_update_action {
    MPIDHT_KEEP = 0,  /* leave the key as it was (present or absent) */
    MPIDHT_STORE = 1, /* store the value the function left in *value */
    MPIDHT_DELETE = 2 /* remove the key (nothing happens if absent) */
} mpidht_update_action_t;

/* Called by mpidht_update with the key's current value: value points at
 * value_size bytes, aligned as malloc aligns, holding it if present is
 * non-zero, and zeroes if not; the function may change them and returns
 * what to do. index is the row of the key in a batch (0 for
 * mpidht_update). It runs while the key is locked against every other
 * write, update and remove of it, so it must be quick and must not call
 * the library. */
typedef mpidht_update_action_t (*mpidht_update_fn)(size_t index, const void *key,
                                                   void *value, int present,
                                                   void *user_data);

typedef enum mpidht_update_outcome {
    MPIDHT_UPDATE_KEPT = 0,     /* MPIDHT_KEEP, or MPIDHT_DELETE of an absent key */
    MPIDHT_UPDATE_INSERTED = 1, /* stored; the key was absent */
    MPIDHT_UPDATE_UPDATED = 2,  /* stored; the key was present */
    MPIDHT_UPDATE_EVICTED = 3,  /* stored over another key's entry */
    MPIDHT_UPDATE_REMOVED = 4   /* MPIDHT_DELETE of a present key */
} mpidht_update_outcome_t;

/* Atomic read-modify-write of key (PDHT's update, POET's accumulate):
 * calls fn once with the key's current value, or with "absent", and
 * applies its action, atomically with respect to every other write,
 * update and remove of the key under every protocol (a counter that every
 * process increments ends exact). outcome may be NULL.
 * Returns: MPIDHT_OK; MPIDHT_ERR_NULL_ARGUMENT (key or fn NULL);
 *   MPIDHT_ERR_UPDATE_ACTION if fn returned another value (the key is left
 *   as it was); MPIDHT_ERR_TIMEOUT (fn was not called); or another error.
 * Statistics: an update counts in atomic_updates, and as the write or
 * remove it performed. */
mpidht_status_t mpidht_update(mpidht_t *table, const void *key, mpidht_update_fn fn,
                              void *user_data, mpidht_update_outcome_t *outcome);

/* ------------------------------------------------------------------ */
/* Batched operations (one-sided, local to the caller)                */
/* ------------------------------------------------------------------ */

/*
 * A batched call runs its rows through the same engine as single calls
 * (a single call is a batch of one): every step issues the one-sided
 * operations of all its rows, completes them with one MPI_Win_flush per
 * target process, then moves each row on. Rows of a write or update
 * batch (an update may remove its key) whose candidate buckets overlap
 * run one after the other, in the order given, so the table ends as if
 * the rows had been called one at a time in that order (repeated keys
 * included: the last write wins; an update sees the rows before it).
 * The rows of a read batch are independent reads, in no order among
 * themselves. Working memory is bounded: batches go in chunks of at most
 * 1024 rows (64 where the table is reached directly on one node) and
 * about 256 KiB of bucket copies (so that they stay in cache).
 * Returns, for all of them: MPIDHT_OK (whatever each row found);
 * MPIDHT_ERR_BATCH_SIZE if n times the key or value size overflows;
 * otherwise an error (MPIDHT_ERR_TIMEOUT if any row timed out), after
 * which the results are unspecified and any subset of the rows may have
 * taken effect. n = 0 returns MPIDHT_OK, and then the buffers may be NULL
 * (an update's fn may not: MPIDHT_ERR_NULL_ARGUMENT).
 */

/* Reads n keys (key_size bytes each, back to back). found[i] is set to 1
 * and value row i filled on a hit; found[i] to 0, value row i untouched,
 * on a miss. The buffers must not overlap. */
mpidht_status_t mpidht_read_batch(mpidht_t *table, size_t n, const void *keys,
                                  void *values, unsigned char *found);

/* Writes n keys: key row i gets value row i. outcomes, if not NULL,
 * receives n outcomes as mpidht_write reports them. */
mpidht_status_t mpidht_write_batch(mpidht_t *table, size_t n, const void *keys,
                                   const void *values,
                                   mpidht_write_outcome_t *outcomes);

/* Updates n keys with fn (called with index i for row i). outcomes, if not
 * NULL, receives n outcomes. If fn returns an invalid action for a row,
 * that row is left as it was and the call returns MPIDHT_ERR_UPDATE_ACTION
 * after finishing the others. */
mpidht_status_t mpidht_update_batch(mpidht_t *table, size_t n, const void *keys,
                                    mpidht_update_fn fn, void *user_data,
                                    mpidht_update_outcome_t *outcomes);

/* ------------------------------------------------------------------ */
/* Progress (local to the caller)                                      */
/* ------------------------------------------------------------------ */

/* Lets MPI serve the one-sided calls that other processes make on the
 * caller's buckets. Where such a call completes only when its target
 * enters MPI (between hosts: Open MPI's osc pt2pt, and MPICH unless its
 * asynchronous progress is on), a process that computes for long
 * without calling MPI holds up every read and write of its buckets until
 * its next MPI call. Calling mpidht_progress every few tens of
 * microseconds of such a computation shortens most such waits to about
 * that interval plus a round trip; it does not bound every one
 * (docs/hosts.md has the measurements). On one node (a shared window)
 * nothing waits for it, and it costs one MPI_Iprobe.
 * Requires: table created; called from a thread that may call MPI (as
 *   every call of the library). It may be called at any time, also while
 *   other processes use the table.
 * Guarantees: it takes no lock, changes nothing in the table and
 *   receives no message (an MPI_Iprobe on the table's own communicator).
 * Returns: MPIDHT_OK; MPIDHT_ERR_INVALID_HANDLE if table is NULL;
 *   MPIDHT_ERR_MPI_NOT_INITIALIZED after MPI_Finalize; MPIDHT_ERR_MPI if
 *   MPI fails. */
mpidht_status_t mpidht_progress(mpidht_t *table);

/* ------------------------------------------------------------------ */
/* Local iteration (local to the caller)                               */
/* ------------------------------------------------------------------ */

/* Copies entries hosted by the calling process, in bucket order. Start
 * with *cursor = 0 and call again with the same cursor until *count is 0:
 *
 *   uint64_t cursor = 0;
 *   size_t count;
 *   do {
 *       st = mpidht_local_next(table, &cursor, max, keys, values, &count);
 *       ... use rows 0..count of keys and values ...
 *   } while (st == MPIDHT_OK && count > 0);
 *
 * Requires: keys room for max_entries keys and values for max_entries
 *   values, back to back; max_entries >= 1; *cursor 0 or a value a
 *   previous call left there.
 * Guarantees: *count entries (at most max_entries) are copied and *cursor
 *   moves past their buckets; *count is 0 only when the iteration is
 *   complete. Every entry returned is whole: read under the protocol's
 *   rule (coarse: a shared lock on the caller's window; fine: a read
 *   registration per bucket; lock-free: its checksum, with one re-read;
 *   a bucket a writer is still rewriting then is skipped). No
 *   communication with other processes. An entry that no process writes,
 *   updates, evicts or removes during the iteration is returned exactly
 *   once; one that other processes write meanwhile, even in place (a
 *   lock-free bucket met mid-rewrite twice is skipped), evict or remove
 *   may or may not appear (PDHT's local iteration has the same
 *   contract).
 * Returns: MPIDHT_OK; MPIDHT_ERR_ITERATION if max_entries is 0 or *cursor
 *   lies beyond this process's buckets; MPIDHT_ERR_TIMEOUT (fine: another
 *   process's writer held a bucket past the table's timeout); otherwise
 *   an error. After an error *count is 0 and *cursor is as the call found
 *   it, so repeating the call skips nothing. The statistics are not
 *   changed (a timeout here is not counted either). */
mpidht_status_t mpidht_local_next(mpidht_t *table, uint64_t *cursor,
                                  size_t max_entries, void *keys, void *values,
                                  size_t *count);

/* ------------------------------------------------------------------ */
/* Dump and restore (collective)                                       */
/* ------------------------------------------------------------------ */

/* File format (version 1). Every integer is little-endian.
 *
 *   header, 64 bytes:
 *     0  magic "MPIDHTDB"         8  format version (u32, 1)
 *     12 byte order of the machine that wrote the keys and values
 *        (u32: 1 little, 2 big; keys and values are copied as bytes)
 *     16 key size (u64)           24 value size (u64)
 *     32 entry count (u64)        40 block count (u64)
 *     48 XXH3-64 of the block table          56 XXH3-64 of bytes 0..55
 *   block table: per block, its entry count (u64) and the XXH3-64 of its
 *     records (u64)
 *   records: entry count x (key, value), block after block.
 *
 * A block holds at most max(1, MPIDHT_DUMP_BLOCK_BYTES / (key + value))
 * records, which bounds the memory a reader needs. */
#define MPIDHT_DUMP_FORMAT_VERSION 1
#define MPIDHT_DUMP_BLOCK_BYTES ((size_t)1 << 20)

/* COLLECTIVE. Writes every entry of the table to the file path (the same
 * on every process) through MPI-IO.
 * Requires: no operation on the table in flight anywhere (a collective
 *   call guarantees that when each process uses the table from one
 *   thread); the directory of path writable. With Open MPI, a path of
 *   at most 236 bytes on up to 10 processes (one less for each further
 *   digit of the highest rank): its MPI-IO copies the name of a file it
 *   opens ("<path>.partial" here), with ".locktest." and the rank after
 *   it, into 256 bytes and aborts the process where they do not fit; and
 *   a file name (the path's last part) of at most 207 bytes: its shared
 *   file pointer components make files named after "<path>.partial", up
 *   to 31 bytes longer, and where those names are over 255 bytes its
 *   processes wait for each other for ever. With any MPI, a file name
 *   of at most 247 bytes ("<path>.partial" within a file name's 255). A
 *   longer path or file name is refused (MPIDHT_ERR_FILE_IO) before MPI
 *   sees it. With MPICH, a path holding a ':' is refused too: its MPI-IO
 *   takes what comes before it for the name of a file system.
 * Guarantees: the file is written as "<path>.partial", synced, and only
 *   then renamed to path, so a crash or kill at any moment leaves either
 *   the previous file at path or the complete new one. On an error the
 *   partial file is deleted and any previous file is left as it was.
 *   A dump replaces only a regular file: where path or "<path>.partial"
 *   is anything else (a FIFO, a device, a directory, a symbolic link) it
 *   returns MPIDHT_ERR_FILE_IO and leaves it as it is; a regular file at
 *   "<path>.partial" is taken for what an interrupted dump left, and
 *   deleted.
 *   Rank 0 holds a lock on "<path>.lock" (an open file description
 *   lock, fcntl; the file is made for it and removed afterwards; one
 *   that a killed dump left is taken over, while a file of that name
 *   that is not a dump's lock file is left alone and the dump refused
 *   with MPIDHT_ERR_FILE_IO) from
 *   before any process opens the partial file until it is renamed: a
 *   dump to the same path by another table meanwhile finds it locked and
 *   returns MPIDHT_ERR_FILE_IO, leaving the partial file alone, so a dump
 *   that returns MPIDHT_OK left its whole table at path (tested with two
 *   tables dumping at once). Where the lock file cannot be made or the
 *   file system has no locks, two dumps to one path at once would share
 *   the partial file: avoid them there. A path with a ROMIO file-system
 *   prefix ("ufs:", MPICH) is not supported: the rename takes the name
 *   as given (MPIDHT_ERR_FILE_IO); what is at the names without the
 *   prefix, which MPICH's MPI-IO writes and deletes, is checked as
 *   above too (tested with a FIFO and a link at the partial file's
 *   name). Where a write fails (a full file system; tested with a file
 *   size limit), the error detail of the process whose write failed
 *   names the file, the byte and the reason. The
 *   table and its statistics are not changed. Each entry is read as
 *   mpidht_local_next reads it.
 * Returns: the same status on every process: MPIDHT_OK;
 *   MPIDHT_ERR_PATH_MISMATCH; MPIDHT_ERR_FILE_IO (also a path too long
 *   for Open MPI's MPI-IO, above); or another error (a
 *   process whose own argument is bad reports it, the others
 *   MPIDHT_ERR_PEER). */
mpidht_status_t mpidht_dump(mpidht_t *table, const char *path);

typedef struct mpidht_restore_report {
    size_t struct_size; /* set with MPIDHT_RESTORE_REPORT_INIT */
    uint64_t entries;   /* records in the file */
    uint64_t inserted;  /* records added (the entries they displaced placed again) */
    uint64_t updated;   /* replaced the value of a key already present */
    uint64_t evicted;   /* entries lost for want of room (see mpidht_restore) */
} mpidht_restore_report_t;

/* Every field given, in order: the same initializer in C and C++ (before
 * C++20 C++ has no designated initializers), and no warning of missing
 * ones. The same for the other _INIT macros. */
#define MPIDHT_RESTORE_REPORT_INIT {sizeof(mpidht_restore_report_t), 0, 0, 0, 0}

/* COLLECTIVE. Loads a file written by mpidht_dump into the table. Every
 * record is placed through the normal addressing, so the file may come
 * from a table of another process count, size or protocol; its key and
 * value sizes must match. Records are routed to the process that hosts
 * their key, which writes them into its own buckets, so no two processes
 * race for a bucket under any protocol.
 * Requires: as mpidht_dump (with Open MPI a path of at most 244 bytes
 *   on up to 10 processes and a file name of at most 215: no ".partial"
 *   here); path the same on every process.
 * Guarantees: the whole file (header, block table and every block's
 *   checksum) is verified before anything is written: a file that is
 *   missing, of another format or version, of other sizes, truncated,
 *   extended or corrupted leaves the table as it was. A record whose key
 *   is present replaces its value; entries not in the file stay (restore
 *   merges). Each block is verified again when it is loaded; only if the
 *   file changes between the two readings, or an MPI call fails midway,
 *   does the table keep part of the file (the call then returns
 *   MPIDHT_ERR_FILE_CORRUPT or MPIDHT_ERR_MPI). The statistics are not
 *   changed. *report, if not NULL, receives the totals over all processes
 *   (its struct_size is checked before anything else: MPIDHT_ERR_STRUCT_SIZE).
 *   A record whose candidate buckets all hold other keys is placed (on a
 *   table of one node at once, else after the records of its round that
 *   find room) by a search, breadth first
 *   through the process's buckets, for the shortest path of moves (an
 *   entry into another of its own candidates) that ends in a free bucket
 *   and frees one of the record's candidates; the moves are made from the
 *   free end, so no entry is ever absent, and none leaves the table (a
 *   newer value is never overwritten by an older one). A search may reach
 *   every bucket of the part; it passes by those a failed search of the
 *   same restore reached. Its work space takes two bits per bucket of the
 *   part and 20 bytes per bucket a search reaches, grown as needed (where
 *   memory runs out a search goes no further). So, memory permitting,
 *   nothing is lost where the process's part can hold its entries in some
 *   arrangement: a table with an entry in every bucket, restored into one
 *   like it (process count, memory, candidates and hash), comes back whole
 *   with 2, 3 or 6 candidates per key (tested at 1, 2 and 4 processes,
 *   also from a file of one record per block; measured up to 1 973 790
 *   buckets per process), and so does a file merged into a table holding
 *   older values of its keys (tested).
 *   report->evicted counts the records that found no room: the table is
 *   too small for the file (with what it held before). Records with the
 *   same key load as if written in order (the last value stays; the
 *   others count as updates, or all of them as evicted where the key
 *   finds no room), also into a table they fill to 80 % (tested), on
 *   every path (direct or through MPI).
 *   inserted + updated + evicted = entries.
 * Returns: the same status on every process: MPIDHT_OK;
 *   MPIDHT_ERR_PATH_MISMATCH; MPIDHT_ERR_FILE_IO (cannot open or read, or
 *   not a regular file: a directory, a FIFO, also named with a ROMIO
 *   prefix such as "ufs:" that MPICH's MPI-IO strips, or a path too long
 *   for Open MPI's MPI-IO);
 *   MPIDHT_ERR_FILE_FORMAT; MPIDHT_ERR_FILE_MISMATCH;
 *   MPIDHT_ERR_FILE_CORRUPT; or another error as for mpidht_dump. */
mpidht_status_t mpidht_restore(mpidht_t *table, const char *path,
                               mpidht_restore_report_t *report);

/* What the last collective call on this table failed on, on this
 * process, in words: for dump and restore the file's path and the reason
 * the system or MPI gave (e.g. "cannot open 'run/dht.mpidht':
 * MPI_ERR_NO_SUCH_FILE: no such file or directory"), or, where the failure
 * happened on another process only, the path and the library's message
 * for the status; in the debug mode, the call and the processes that had
 * not entered it. Requires: nothing (NULL gives ""). Returns: a string the
 * table owns, valid until its next collective call or its free; "" when
 * the last collective call succeeded or none failed; never NULL. */
const char *mpidht_error_detail(const mpidht_t *table);


/* COLLECTIVE. Empties the table: every process empties the buckets it
 * hosts (POET clears its table when it is full). The statistics are kept.
 * Requires: no operation on the table in flight anywhere, as for
 *   mpidht_dump.
 * Returns: the same status on every process: MPIDHT_OK, or an error (an
 *   MPI failure leaves the table partly cleared). */
mpidht_status_t mpidht_clear(mpidht_t *table);

/* ------------------------------------------------------------------ */
/* Statistics and introspection                                        */
/* ------------------------------------------------------------------ */

/* One list yields the struct fields and their names. */
#define MPIDHT_STATS_LIST(X)                                                   \
    X(reads, "reads that completed: hits plus misses")                         \
    X(hits, "reads that found the key")                                        \
    X(misses, "reads that did not find the key")                               \
    X(writes, "values stored, by writes and updates")                          \
    X(updates, "writes that replaced the value of a present key")              \
    X(evictions, "writes that overwrote another key")                          \
    X(removes, "keys removed, by removes and updates")                         \
    X(checksum_retries, "lock-free re-reads after a checksum mismatch")        \
    X(lock_retries, "lock attempts that found the lock taken, and reads "     \
                    "that met a bucket being rewritten")                       \
    X(timeouts, "reads, writes, updates and removes (calls and batch rows) "  \
                "that gave up with MPIDHT_ERR_TIMEOUT (counted nowhere else)") \
    X(atomic_updates, "updates that ran their function under the key's lock "  \
                      "(single calls and batch rows; one that returned an "   \
                      "invalid action, the key kept, included)")              \
    X(probes_reused, "writes after a miss of their key that compared no "     \
                     "candidate's key, knowing it absent (read-for-insert)")

typedef struct mpidht_stats {
    size_t struct_size; /* set with MPIDHT_STATS_INIT */
#define MPIDHT_STATS_FIELD_(name, description) uint64_t name;
    MPIDHT_STATS_LIST(MPIDHT_STATS_FIELD_)
#undef MPIDHT_STATS_FIELD_
} mpidht_stats_t;

#define MPIDHT_STATS_ZERO_(name, description) , 0
#define MPIDHT_STATS_INIT {sizeof(mpidht_stats_t) MPIDHT_STATS_LIST(MPIDHT_STATS_ZERO_)}

#define MPIDHT_STATS_FIELD_COUNT_(name, description) +1
enum { MPIDHT_STATS_COUNT = 0 MPIDHT_STATS_LIST(MPIDHT_STATS_FIELD_COUNT_) };
#undef MPIDHT_STATS_FIELD_COUNT_

/* Name and description of counter i (0 <= i < MPIDHT_STATS_COUNT) in
 * declaration order; NULL for any other i. */
const char *mpidht_stats_name(int i);
const char *mpidht_stats_description(int i);
/* Value of counter i of *stats; 0 if stats is NULL, i out of range, or
 * counter i lies beyond stats->struct_size. */
uint64_t mpidht_stats_value(const mpidht_stats_t *stats, int i);

/* Every call below that fills a struct writes only its first struct_size
 * bytes, and returns MPIDHT_ERR_STRUCT_SIZE (writing nothing) if
 * struct_size does not reach past the struct_size field itself. */

/* The calling process's counters, for the operations it issued. Local. */
mpidht_status_t mpidht_stats_local(const mpidht_t *table,
                                   mpidht_stats_t *stats);

/* COLLECTIVE. The counters summed over the communicator. Every process
 * gets the same status (a process whose own argument is bad reports it,
 * the others MPIDHT_ERR_PEER). */
mpidht_status_t mpidht_stats_global(const mpidht_t *table,
                                    mpidht_stats_t *stats);

/* Sets the calling process's counters to zero. Local. */
mpidht_status_t mpidht_stats_reset(mpidht_t *table);

typedef struct mpidht_info {
    size_t struct_size;        /* set with MPIDHT_INFO_INIT */
    size_t key_size;
    size_t value_size;
    size_t bucket_size;        /* bytes per bucket, padding included */
    uint64_t local_buckets;    /* buckets this process hosts */
    uint64_t total_buckets;    /* buckets over the communicator */
    int hosting_processes;     /* processes with local_buckets > 0 */
    int comm_size;
    unsigned candidates;
    mpidht_protocol_t protocol;
    mpidht_window_kind_t window; /* the kind actually used (never AUTO) */
    mpidht_eviction_t eviction;
    double timeout;              /* seconds; 0 = none */
    /* Appended after 0.2.0: 1 if the table reaches every process's buckets
     * with loads, stores and processor atomics (a shared window, unless
     * MPIDHT_SHARED_ACCESS=mpi), 0 if through MPI's one-sided calls. */
    int direct;
} mpidht_info_t;

#define MPIDHT_INFO_INIT                                                       \
    {sizeof(mpidht_info_t), 0, 0, 0, 0, 0, 0, 0, 0, (mpidht_protocol_t)0,     \
     (mpidht_window_kind_t)0, (mpidht_eviction_t)0, 0.0, 0}

/* Describes the table. Local. */
mpidht_status_t mpidht_get_info(const mpidht_t *table, mpidht_info_t *info);

/* Static names ("coarse", "fine", "lockfree"; "shared", "allocate",
 * "create"; "recency", "last"); "unknown" for any other value. */
const char *mpidht_protocol_name(mpidht_protocol_t protocol);
const char *mpidht_window_name(mpidht_window_kind_t window);
const char *mpidht_eviction_name(mpidht_eviction_t eviction);

/* ------------------------------------------------------------------ */
/* Approximate keys                                                    */
/* ------------------------------------------------------------------ */

/*
 * A surrogate looks results up by its inputs rounded, so that nearby
 * inputs share one entry. mpidht_key_encode turns rows of numbers into
 * such keys, the same bytes on every process for the same inputs (that
 * runs the same build: the rounding uses the C library's log10, pow and
 * printf, in any locale; the decimal exponent is checked against
 * pow(10, e), so a log10 one off next to a power of ten cannot change a
 * class). Pure and local: no
 * table, no MPI, no global state (tested with threads), callable before
 * MPI_Init.
 *
 * Each column of a row becomes one element of MPIDHT_KEY_ELEMENT_SIZE
 * bytes: two int64 (native byte order), a whole number and an exponent.
 * Per column, in this order:
 *   1. floor: a value with |x| < floor counts as 0 (floor 0: none);
 *   2. log: x is replaced by log10(x); every x <= 0 is one class of its
 *      own, element (0, INT64_MIN), which no rounding yields;
 *   3. rounding:
 *      - MPIDHT_KEY_SIGNIFICANT: `digits` significant digits of x's exact
 *        value, rounded to the nearest, half to even (as the C library's
 *        printf("%.*e") rounds it): element (m, e) with x ~ m * 10^e,
 *        10^(digits-1) <= |m| < 10^digits; 0 is (0, 0). Classes are
 *        relative: one unit in the last kept digit of x itself. x / 10^e
 *        in doubles decides, except within a few units in its last place
 *        of a half and below DBL_MIN (subnormal x), where printf does:
 *        always at 15 digits (about 0.2 us a value here, against 0.017
 *        at 3 to 10 digits).
 *      - MPIDHT_KEY_DECIMAL (POET's): truncated towards zero to `digits`
 *        decimal places (negative: to tens, hundreds, ...): element
 *        (bits of the double trunc(x * 10^digits), digits). Classes are
 *        absolute: 10^-digits wide whatever the magnitude.
 *      - MPIDHT_KEY_EXACT: the value itself (its double's bits, -0.0 as
 *        0.0; NaN refused), element (bits, 0); digits, log and floor are
 *        ignored.
 * In every mode -0.0 and 0.0 give the same element.
 *
 * Traps the encoding removes: numbers that are equal as doubles give equal
 * elements (-0.0 included); numbers of different types must be converted
 * to double by the caller first (an int64 42 and a double 42.0 are
 * different bytes, and only the double goes in here).
 */
typedef enum mpidht_key_rounding {
    MPIDHT_KEY_SIGNIFICANT = 0,
    MPIDHT_KEY_DECIMAL = 1,
    MPIDHT_KEY_EXACT = 2
} mpidht_key_rounding_t;

typedef struct mpidht_key_column {
    mpidht_key_rounding_t rounding;
    int digits;   /* SIGNIFICANT: 1..15; DECIMAL: -20..20 places; EXACT: unused */
    int log;      /* nonzero: round log10(x) (SIGNIFICANT, DECIMAL) */
    double floor; /* |x| < floor counts as 0; 0: none (>= 0, finite) */
} mpidht_key_column_t;

#define MPIDHT_KEY_ELEMENT_SIZE 16

/* Encodes rows x columns doubles (row-major: row r's column c at
 * values[r * columns + c]) into rows keys of columns *
 * MPIDHT_KEY_ELEMENT_SIZE bytes each, back to back in `keys` (row r at
 * byte r * columns * MPIDHT_KEY_ELEMENT_SIZE; any alignment).
 * Requires: spec[0..columns) valid (MPIDHT_ERR_KEY_COLUMN otherwise,
 * keys untouched), values and keys not NULL when rows > 0 and columns >
 * 0 (MPIDHT_ERR_NULL_ARGUMENT; with no columns there is nothing to read
 * or write), rows * columns * 16 bytes fit size_t
 * (MPIDHT_ERR_BATCH_SIZE). Returns MPIDHT_OK, or MPIDHT_ERR_KEY_VALUE
 * for a value that is NaN or infinite (before the floor and log; an
 * EXACT infinity is accepted) or whose decimal truncation overflows; the
 * rows before that value's are then complete, the rest of keys is
 * unspecified. Local, thread-safe. */
mpidht_status_t mpidht_key_encode(size_t columns, const mpidht_key_column_t *spec,
                                  size_t rows, const double *values, void *keys);

#ifdef __cplusplus
}
#endif

#endif /* MPIDHT_H */
