/*
 * mpidht — a distributed hash table that lives inside an MPI application.
 *
 * Every process of a communicator contributes part of its memory to one
 * table; any process reads or writes any key with MPI-3 one-sided
 * communication (MPI_Get, MPI_Put, MPI_Compare_and_swap, MPI_Fetch_and_op).
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
 *   - A table handle must not be used by two threads at the same time.
 *
 * Bucket layout (bytes; K = key_size, V = value_size). Every bucket is
 * padded to a multiple of 8 bytes so that 8-byte lock words stay aligned
 * and a bucket never straddles a cache line more than it must:
 *
 *   coarse     | meta 1 | key K | value V | pad |            1 + K + V
 *   fine       | lock 8 | meta 1 | key K | value V | pad |   9 + K + V
 *   lock-free  | csum 4 | meta 1 | key K | value V | pad |   5 + K + V
 *
 * meta: bit 0 = occupied, bit 1 = invalid (lock-free: a reader saw the
 * checksum fail twice). csum is XXH32 over key and value. The lock word is
 * 0 when free, counts readers in its low bits, and is at least
 * MPIDHT_FINE_EXCLUSIVE while a writer owns the bucket. A write never
 * touches the lock word: data puts start at the meta byte.
 */
#ifndef MPIDHT_H
#define MPIDHT_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MPIDHT_VERSION_MAJOR 0
#define MPIDHT_VERSION_MINOR 1
#define MPIDHT_VERSION_PATCH 0

/* ------------------------------------------------------------------ */
/* Status codes                                                        */
/* ------------------------------------------------------------------ */

/* One list yields the enum and the messages (src/status.c). */
#define MPIDHT_STATUS_LIST(X)                                                  \
    X(MPIDHT_OK, "success")                                                    \
    X(MPIDHT_NOT_FOUND, "key not found")                                       \
    X(MPIDHT_ERR_NULL_ARGUMENT, "a required pointer argument is NULL")         \
    X(MPIDHT_ERR_INVALID_HANDLE,                                               \
      "the table handle is NULL or the table has been freed")                  \
    X(MPIDHT_ERR_MPI_NOT_INITIALIZED,                                          \
      "MPI is not initialized, or already finalized")                          \
    X(MPIDHT_ERR_INVALID_COMM, "the communicator is MPI_COMM_NULL or an "      \
                               "intercommunicator")                            \
    X(MPIDHT_ERR_PARAMS_VERSION,                                               \
      "the parameter struct was not set up with mpidht_params_init()")         \
    X(MPIDHT_ERR_KEY_SIZE, "key_size must be between 1 and MPIDHT_MAX_KEY_SIZE") \
    X(MPIDHT_ERR_VALUE_SIZE,                                                   \
      "value_size must be between 1 and MPIDHT_MAX_VALUE_SIZE")                \
    X(MPIDHT_ERR_UNKNOWN_PROTOCOL, "unknown consistency protocol")             \
    X(MPIDHT_ERR_UNKNOWN_WINDOW, "unknown window kind")                        \
    X(MPIDHT_ERR_CANDIDATES,                                                   \
      "candidates must be between 1 and MPIDHT_MAX_CANDIDATES (0 = default)")  \
    X(MPIDHT_ERR_BUDGET_TOO_SMALL,                                             \
      "the memory budget is non-zero but smaller than one bucket")             \
    X(MPIDHT_ERR_BUDGET_TOO_LARGE,                                             \
      "the memory budget exceeds 2^32 buckets per process or the physical "    \
      "memory of the node")                                                    \
    X(MPIDHT_ERR_NO_STORAGE,                                                   \
      "no process of the communicator contributes memory to the table")        \
    X(MPIDHT_ERR_MISMATCHED_PARAMS,                                            \
      "key size, value size, protocol, window kind, candidates or hash "       \
      "function differ between processes")                                     \
    X(MPIDHT_ERR_WINDOW_UNSUPPORTED,                                           \
      "the requested window kind cannot be used here (a shared window needs "  \
      "all processes on one node; the MPI library may have no component for "  \
      "MPI_Win_create)")                                                       \
    X(MPIDHT_ERR_NO_MEMORY,                                                    \
      "out of memory, or the MPI library could not allocate the window")       \
    X(MPIDHT_ERR_MPI, "an MPI call failed")                                    \
    X(MPIDHT_ERR_PEER, "the call failed on another process of the "            \
                       "communicator")                                         \
    X(MPIDHT_ERR_BATCH_SIZE,                                                   \
      "the batch is too large: its count times the key or value size "        \
      "overflows size_t")                                                      \
    X(MPIDHT_ERR_ITERATION,                                                    \
      "max_entries is 0, or the cursor lies beyond this process's buckets")    \
    X(MPIDHT_ERR_PATH_MISMATCH, "the file path differs between processes")     \
    X(MPIDHT_ERR_FILE_IO,                                                      \
      "the file could not be opened, read, written, synced or renamed")        \
    X(MPIDHT_ERR_FILE_FORMAT, "the file is not an mpidht dump, or its format " \
                              "version is one this library cannot read")       \
    X(MPIDHT_ERR_FILE_MISMATCH,                                                \
      "the dump's key size or value size differs from the table's")           \
    X(MPIDHT_ERR_FILE_CORRUPT,                                                 \
      "the dump is truncated, has extra bytes or fails a checksum")           \
    X(MPIDHT_ERR_CONCURRENT_USE,                                               \
      "the table changed during a collective call: another thread used it")

typedef enum mpidht_status {
#define MPIDHT_STATUS_ENUM_(name, message) name,
    MPIDHT_STATUS_LIST(MPIDHT_STATUS_ENUM_)
#undef MPIDHT_STATUS_ENUM_
    MPIDHT_STATUS_COUNT_
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

typedef enum mpidht_protocol {
    /* MPI_Win_lock on the target's whole window per operation: shared for
     * reads, exclusive for writes and removes. Simple, serialises writers. */
    MPIDHT_PROTOCOL_COARSE = 1,
    /* An 8-byte lock word per bucket inside one MPI_Win_lock_all epoch;
     * writers take it with MPI_Compare_and_swap, readers register with
     * MPI_Fetch_and_op. */
    MPIDHT_PROTOCOL_FINE = 2,
    /* No locks; a 32-bit checksum per bucket. A reader that sees a mismatch
     * re-reads once, then marks that bucket invalid and reports a miss. */
    MPIDHT_PROTOCOL_LOCKFREE = 3
} mpidht_protocol_t;

typedef enum mpidht_window_kind {
    /* MPI_Win_allocate_shared when all processes share one node (fastest:
     * Open MPI uses osc sm), otherwise MPI_Win_allocate. See README,
     * "Windows", for why, and for Open MPI 4.x's CAS crash. */
    MPIDHT_WINDOW_AUTO = 0,
    MPIDHT_WINDOW_SHARED = 1,   /* MPI_Win_allocate_shared; one node only */
    MPIDHT_WINDOW_ALLOCATE = 2, /* MPI_Win_allocate */
    MPIDHT_WINDOW_CREATE = 3    /* MPI_Alloc_mem + MPI_Win_create */
} mpidht_window_kind_t;

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
    /* New fields are appended here. struct_size records the layout the
     * caller was compiled with, so that a later library can tell an older
     * caller's shorter struct apart; this version accepts its own only. */
} mpidht_params_t;

/* Fills *params with the defaults above and zero sizes. Returns
 * MPIDHT_ERR_NULL_ARGUMENT if params is NULL. */
mpidht_status_t mpidht_params_init(mpidht_params_t *params);

/* The bytes one bucket takes for these parameters, padding included, so
 * that a caller can size memory_per_process as a bucket count. Returns
 * MPIDHT_ERR_NULL_ARGUMENT, or the error mpidht_create would report for
 * the struct's version, sizes, protocol, window or candidates. */
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
 *   candidates and hash equal on every process. memory_per_process may
 *   differ between processes and may be 0 on some of them (those processes
 *   use the table without hosting any of it), but not on all.
 * Guarantees: every hosted bucket is empty; the communicator is duplicated,
 *   so the caller may free comm afterwards; if any process fails, every
 *   process returns an error (MPIDHT_ERR_PEER where the fault was
 *   elsewhere) and nothing is left allocated. */
mpidht_status_t mpidht_create(MPI_Comm comm, const mpidht_params_t *params,
                              mpidht_t **table);

/* COLLECTIVE. Frees the table and sets *table to NULL, so that a later
 * call with the same variable returns MPIDHT_ERR_INVALID_HANDLE. */
mpidht_status_t mpidht_free(mpidht_t **table);

/* ------------------------------------------------------------------ */
/* Operations (one-sided, local to the caller)                        */
/* ------------------------------------------------------------------ */

/* Copies the value stored for key (key_size bytes) into value (value_size
 * bytes). Returns MPIDHT_OK on a hit, MPIDHT_NOT_FOUND on a miss (value is
 * then left untouched). A hit never returns a torn value or the value of
 * another key, under every protocol; under the lock-free protocol this
 * rests on the 32-bit checksum, which a torn bucket passes with
 * probability 2^-32. */
mpidht_status_t mpidht_read(mpidht_t *table, const void *key, void *value);

typedef enum mpidht_write_outcome {
    MPIDHT_WRITE_INSERTED = 0, /* stored in an empty or invalid bucket */
    MPIDHT_WRITE_UPDATED = 1,  /* the key was present; value replaced */
    MPIDHT_WRITE_EVICTED = 2   /* all candidates held other keys; the last
                                  one was overwritten */
} mpidht_write_outcome_t;

/* Stores value for key. Probes the key's candidate buckets; a bucket that
 * already holds key is updated in place, otherwise the first empty or
 * invalid candidate is taken, otherwise the last candidate is evicted.
 * outcome may be NULL.
 * Concurrency: under the coarse protocol writes are serialised per window,
 * under the fine protocol per key (by the lock of its first candidate) and
 * per bucket; the outcome is exact and a key is never stored twice. The
 * lock-free protocol is last-writer-wins: two writes of different keys
 * that race for the same bucket may both report MPIDHT_WRITE_INSERTED
 * while only the later one stays; two racing writes of the same key may
 * store it in two buckets (reads return the first; remove clears both); a
 * reader that invalidates a torn bucket may discard a write that completed
 * just after its second read. Readers never see a mixed value. */
mpidht_status_t mpidht_write(mpidht_t *table, const void *key,
                             const void *value,
                             mpidht_write_outcome_t *outcome);

/* Removes key from every candidate bucket that holds it. Returns MPIDHT_OK
 * if at least one bucket held it, MPIDHT_NOT_FOUND otherwise. */
mpidht_status_t mpidht_remove(mpidht_t *table, const void *key);

/* ------------------------------------------------------------------ */
/* Batched operations (one-sided, local to the caller)                */
/* ------------------------------------------------------------------ */

/* Reads n keys at once. keys holds n keys of key_size bytes back to back,
 * values room for n values of value_size bytes, found room for n flags.
 * For every i, found[i] is set to 1 and value row i filled on a hit, and
 * found[i] to 0 with value row i untouched on a miss.
 * Requires: keys, values and found non-NULL unless n is 0; the three
 *   buffers do not overlap.
 * Guarantees: each key's result is the one mpidht_read would give at some
 *   moment during the call (keys may repeat); the statistics count n
 *   reads. The one-sided operations for all keys are issued before any is
 *   waited for: one round trip per target for the first candidates, one
 *   for the remaining candidates of the keys still missing (under the fine
 *   protocol, one more for the read registrations; under the coarse
 *   protocol, targets are locked one after another). Keys that meet a
 *   writer's lock or a checksum mismatch finish with the single-key path.
 *   Working memory is bounded: a large batch goes in chunks of at most
 *   1024 keys and about 4 MiB of buckets.
 * Returns: MPIDHT_OK whether keys hit or missed; MPIDHT_ERR_BATCH_SIZE if
 *   n * key_size or n * value_size overflows; otherwise an error, after
 *   which found and values are unspecified. n = 0 returns MPIDHT_OK. */
mpidht_status_t mpidht_read_batch(mpidht_t *table, size_t n, const void *keys,
                                  void *values, unsigned char *found);

/* Writes n keys at once: key row i gets value row i, in the order given.
 * outcomes, if not NULL, receives n outcomes as mpidht_write would report
 * them.
 * Guarantees: the table ends as if mpidht_write had been called for each
 *   i in turn, repeated keys and keys sharing buckets included (the last
 *   write of a repeated key wins). The batch is cut into rounds of keys
 *   whose candidate buckets are pairwise disjoint; each round issues its
 *   probes, and then its puts, for all its keys before waiting. Under
 *   the fine protocol a key whose lock is busy is finished with the
 *   single-key path at the end of its round. Concurrency with other
 *   processes is that of mpidht_write.
 * Returns: MPIDHT_OK; MPIDHT_ERR_BATCH_SIZE as for mpidht_read_batch;
 *   otherwise an error, after which any subset of the keys may have been
 *   written. n = 0 returns MPIDHT_OK. */
mpidht_status_t mpidht_write_batch(mpidht_t *table, size_t n, const void *keys,
                                   const void *values,
                                   mpidht_write_outcome_t *outcomes);

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
 *   a bucket still failing is skipped, not invalidated). No communication
 *   with other processes. An entry that stays in its bucket for the whole
 *   iteration is returned exactly once; entries that other processes
 *   write, evict or remove meanwhile may or may not appear (PDHT's local
 *   iteration has the same contract). The lock-free protocol can hold a
 *   key twice after racing writes (see mpidht_write); both are returned.
 * Returns: MPIDHT_OK; MPIDHT_ERR_ITERATION if max_entries is 0 or *cursor
 *   lies beyond this process's buckets; otherwise an error. The
 *   statistics are not changed. */
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
 *   thread); the directory of path writable.
 * Guarantees: the file is written as "<path>.partial", synced, and only
 *   then renamed to path, so a crash or kill at any moment leaves either
 *   the previous file at path or the complete new one. On an error the
 *   partial file is deleted and any previous file is left as it was. The
 *   table and its statistics are not changed. Each entry is read as
 *   mpidht_local_next reads it.
 * Returns: the same status on every process: MPIDHT_OK;
 *   MPIDHT_ERR_PATH_MISMATCH; MPIDHT_ERR_FILE_IO; or another error (a
 *   process whose own argument is bad reports it, the others
 *   MPIDHT_ERR_PEER). */
mpidht_status_t mpidht_dump(mpidht_t *table, const char *path);

typedef struct mpidht_restore_report {
    uint64_t entries;  /* records in the file */
    uint64_t inserted; /* written into empty or invalid buckets */
    uint64_t updated;  /* replaced the value of a key already present */
    uint64_t evicted;  /* overwrote another key: the table was too small */
} mpidht_restore_report_t;

/* COLLECTIVE. Loads a file written by mpidht_dump into the table. Every
 * record is placed through the normal addressing, so the file may come
 * from a table of another process count, size or protocol; its key and
 * value sizes must match. Records are routed to the process that hosts
 * their key, which writes them into its own buckets, so no two processes
 * race for a bucket under any protocol.
 * Requires: as mpidht_dump; path the same on every process.
 * Guarantees: the whole file (header, block table and every block's
 *   checksum) is verified before anything is written: a file that is
 *   missing, of another format or version, of other sizes, truncated,
 *   extended or corrupted leaves the table as it was. A record whose key
 *   is present replaces its value; entries not in the file stay (restore
 *   merges). Each block is verified again when it is loaded; only if the
 *   file changes between the two readings, or an MPI call fails midway,
 *   does the table keep part of the file (the call then returns
 *   MPIDHT_ERR_FILE_CORRUPT or MPIDHT_ERR_MPI). The statistics are not
 *   changed. *report, if not NULL, receives the totals over all processes.
 *   A report with evicted > 0 means that the table was too small for the
 *   file and that many entries were overwritten.
 * Returns: the same status on every process: MPIDHT_OK;
 *   MPIDHT_ERR_PATH_MISMATCH; MPIDHT_ERR_FILE_IO (cannot open or read);
 *   MPIDHT_ERR_FILE_FORMAT; MPIDHT_ERR_FILE_MISMATCH;
 *   MPIDHT_ERR_FILE_CORRUPT; or another error as for mpidht_dump. */
mpidht_status_t mpidht_restore(mpidht_t *table, const char *path,
                               mpidht_restore_report_t *report);

/* ------------------------------------------------------------------ */
/* Statistics and introspection                                        */
/* ------------------------------------------------------------------ */

/* One list yields the struct fields and their names. */
#define MPIDHT_STATS_LIST(X)                                                   \
    X(reads, "read calls")                                                     \
    X(hits, "reads that found the key")                                        \
    X(misses, "reads that did not find the key")                               \
    X(writes, "write calls")                                                   \
    X(updates, "writes that replaced the value of a present key")              \
    X(evictions, "writes that overwrote another key")                          \
    X(removes, "remove calls that removed the key")                            \
    X(checksum_retries, "lock-free re-reads after a checksum mismatch")        \
    X(corrupt_reads, "lock-free buckets marked invalid after two mismatches")  \
    X(lock_retries, "failed lock attempts and restarted fine-grained writes")

typedef struct mpidht_stats {
#define MPIDHT_STATS_FIELD_(name, description) uint64_t name;
    MPIDHT_STATS_LIST(MPIDHT_STATS_FIELD_)
#undef MPIDHT_STATS_FIELD_
} mpidht_stats_t;

#define MPIDHT_STATS_FIELD_COUNT_(name, description) +1
enum { MPIDHT_STATS_COUNT = 0 MPIDHT_STATS_LIST(MPIDHT_STATS_FIELD_COUNT_) };
#undef MPIDHT_STATS_FIELD_COUNT_

/* Name and description of counter i (0 <= i < MPIDHT_STATS_COUNT) in
 * declaration order; NULL for any other i. */
const char *mpidht_stats_name(int i);
const char *mpidht_stats_description(int i);
/* Value of counter i of *stats; 0 if stats is NULL or i out of range. */
uint64_t mpidht_stats_value(const mpidht_stats_t *stats, int i);

/* The calling process's counters, for the operations it issued. Local. */
mpidht_status_t mpidht_stats_local(const mpidht_t *table,
                                   mpidht_stats_t *stats);

/* COLLECTIVE. The counters summed over the communicator. */
mpidht_status_t mpidht_stats_global(const mpidht_t *table,
                                    mpidht_stats_t *stats);

/* Sets the calling process's counters to zero. Local. */
mpidht_status_t mpidht_stats_reset(mpidht_t *table);

typedef struct mpidht_info {
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
} mpidht_info_t;

/* Describes the table. Local. */
mpidht_status_t mpidht_get_info(const mpidht_t *table, mpidht_info_t *info);

/* Static names ("coarse", "fine", "lockfree"; "shared", "allocate",
 * "create"); "unknown" for any other value. */
const char *mpidht_protocol_name(mpidht_protocol_t protocol);
const char *mpidht_window_name(mpidht_window_kind_t window);

#ifdef __cplusplus
}
#endif

#endif /* MPIDHT_H */
