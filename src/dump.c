/*
 * mpidht_dump: every process writes the entries it hosts, block by block,
 * into "<path>.partial" through MPI-IO; rank 0 adds the header and block
 * table; the file is synced, closed and renamed to path. Rank 0 holds a
 * lock on "<path>.lock" from before anyone opens the partial file until
 * it is renamed, so that a second dump to the same path (another
 * table's) is refused instead of writing into the same file.
 *
 * Each process scans its buckets twice: once to count its entries (which
 * fixes every process's offset in the file), once to write them. Nothing
 * else touches the table meanwhile, since every process is inside this
 * collective call; a second count that differs means another thread used
 * the table.
 */
#define _GNU_SOURCE /* F_OFD_SETLK */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bucket.h"
#include "collective.h"
#include "collective_check.h"
#include "dump_format.h"
#include "file_io.h"
#include "scan.h"

/* What a process knows about its part of the file. */
typedef struct dump_plan {
    uint64_t record_size;
    uint64_t block_cap;      /* records per block */
    uint64_t entries;        /* this process's */
    uint64_t blocks;         /* this process's */
    uint64_t first_block;    /* index of this process's first block */
    uint64_t first_record;   /* index of this process's first record */
    uint64_t total_entries;
    uint64_t total_blocks;
} dump_plan_t;

static mpidht_status_t count_entry(void *ctx, unsigned char *bucket)
{
    (void)bucket;
    ++*(uint64_t *)ctx;
    return MPIDHT_OK;
}

static uint64_t blocks_for(uint64_t entries, uint64_t cap)
{
    return entries / cap + (entries % cap != 0);
}

/* Every process's entry count → everyone's offsets and the totals. */
static mpidht_status_t make_plan(mpidht_t *t, uint64_t entries, dump_plan_t *plan)
{
    uint64_t *counts = malloc((size_t)t->comm_size * sizeof *counts);
    mpidht_status_t st = mpidht_agree(t->comm, counts ? MPIDHT_OK : MPIDHT_ERR_NO_MEMORY);
    if (st != MPIDHT_OK) {
        free(counts);
        return st;
    }
    if (MPI_Allgather(&entries, 1, MPI_UINT64_T, counts, 1, MPI_UINT64_T, t->comm) !=
        MPI_SUCCESS) {
        free(counts);
        return MPIDHT_ERR_MPI;
    }
    plan->record_size = (uint64_t)t->key_size + t->value_size;
    plan->block_cap = mpidht_dump_block_cap((size_t)plan->record_size);
    plan->entries = entries;
    plan->blocks = blocks_for(entries, plan->block_cap);
    plan->first_block = plan->first_record = 0;
    plan->total_entries = plan->total_blocks = 0;
    for (int r = 0; r < t->comm_size; ++r) {
        if (r == t->rank) {
            plan->first_block = plan->total_blocks;
            plan->first_record = plan->total_entries;
        }
        plan->total_entries += counts[r];
        plan->total_blocks += blocks_for(counts[r], plan->block_cap);
    }
    free(counts);
    return MPIDHT_OK;
}

/* The second scan: records packed into blocks and written. */
typedef struct block_writer {
    const mpidht_t *t;
    MPI_File fh;
    const char *name;            /* of the file fh is open on */
    const dump_plan_t *plan;
    mpidht_dump_block_t *blocks; /* [plan->blocks] filled in turn */
    unsigned char *buf;          /* one block of records */
    uint64_t offset;             /* of the next block in the file */
    uint64_t written, block, filled;
} block_writer_t;

static mpidht_status_t write_block(block_writer_t *w)
{
    size_t len = (size_t)(w->filled * w->plan->record_size);
    w->blocks[w->block].entries = w->filled;
    w->blocks[w->block].checksum = mpidht_dump_checksum(w->buf, len);
    mpidht_status_t st = mpidht_file_write_at(w->t, w->fh, w->name, w->offset, w->buf, len);
    w->offset += len;
    w->written += w->filled;
    w->filled = 0;
    ++w->block;
    return st;
}

static mpidht_status_t write_entry(void *ctx, unsigned char *bucket)
{
    block_writer_t *w = ctx;
    const mpidht_t *t = w->t;
    if (w->written + w->filled == w->plan->entries)
        return MPIDHT_ERR_CONCURRENT_USE; /* more than the first scan saw */
    unsigned char *r = w->buf + w->filled * w->plan->record_size;
    memcpy(r, mpidht_bucket_key(t, bucket), t->key_size);
    memcpy(r + t->key_size, mpidht_bucket_value(t, bucket), t->value_size);
    ++w->filled;
    if (w->filled < w->plan->block_cap && w->written + w->filled < w->plan->entries)
        return MPIDHT_OK;
    return write_block(w);
}

/* Writes this process's records into fh, the file `name`, block by
 * block, and fills blocks[] with their counts and checksums. */
static mpidht_status_t write_records(mpidht_t *t, MPI_File fh, const char *name,
                                     const dump_plan_t *plan, mpidht_dump_block_t *blocks)
{
    block_writer_t w = {
        .t = t, .fh = fh, .name = name, .plan = plan, .blocks = blocks,
        .buf = malloc((size_t)(plan->block_cap * plan->record_size)),
        .offset = MPIDHT_DUMP_HEADER_SIZE + plan->total_blocks * MPIDHT_DUMP_BLOCK_ENTRY_SIZE +
                  plan->first_record * plan->record_size,
    };
    if (!w.buf)
        return MPIDHT_ERR_NO_MEMORY;
    mpidht_status_t st = mpidht_scan_all(t, write_entry, &w);
    free(w.buf);
    if (st == MPIDHT_OK && w.written != plan->entries)
        st = MPIDHT_ERR_CONCURRENT_USE; /* fewer than the first scan saw */
    return st;
}

/* Rank 0 gathers every block entry and writes the block table and the
 * header into fh, the file `name`. */
static mpidht_status_t write_index(mpidht_t *t, MPI_File fh, const char *name,
                                   const dump_plan_t *plan, const mpidht_dump_block_t *mine)
{
    MPI_Datatype entry;
    if (MPI_Type_contiguous(2, MPI_UINT64_T, &entry) != MPI_SUCCESS)
        return MPIDHT_ERR_MPI;
    MPI_Type_commit(&entry);
    int *counts = NULL, *displs = NULL;
    mpidht_dump_block_t *all = NULL;
    unsigned char *table = NULL;
    mpidht_status_t st = MPIDHT_OK;
    if (t->rank == 0) {
        counts = malloc((size_t)t->comm_size * sizeof *counts);
        displs = malloc((size_t)t->comm_size * sizeof *displs);
        all = malloc((size_t)(plan->total_blocks + 1) * sizeof *all);
        table = malloc((size_t)(plan->total_blocks * MPIDHT_DUMP_BLOCK_ENTRY_SIZE + 1));
        if (!counts || !displs || !all || !table)
            st = MPIDHT_ERR_NO_MEMORY;
    }
    st = mpidht_agree(t->comm, st);
    /* Block counts per process stay far below INT_MAX: a block holds up to
     * 1 MiB of records, and a process at most its node's memory. */
    int nblocks = (int)plan->blocks;
    if (st == MPIDHT_OK &&
        MPI_Gather(&nblocks, 1, MPI_INT, counts, 1, MPI_INT, 0, t->comm) != MPI_SUCCESS)
        st = MPIDHT_ERR_MPI;
    if (st == MPIDHT_OK && t->rank == 0) {
        int at = 0;
        for (int r = 0; r < t->comm_size; ++r) {
            displs[r] = at;
            at += counts[r];
        }
    }
    if (st == MPIDHT_OK && MPI_Gatherv(mine, nblocks, entry, all, counts, displs,
                                       entry, 0, t->comm) != MPI_SUCCESS)
        st = MPIDHT_ERR_MPI;
    if (st == MPIDHT_OK && t->rank == 0) {
        size_t table_len = (size_t)(plan->total_blocks * MPIDHT_DUMP_BLOCK_ENTRY_SIZE);
        mpidht_dump_encode_blocks(all, plan->total_blocks, table);
        mpidht_dump_header_t h = {
            .version = MPIDHT_DUMP_FORMAT_VERSION,
            .byte_order = mpidht_dump_native_byte_order(),
            .key_size = t->key_size,
            .value_size = t->value_size,
            .entries = plan->total_entries,
            .blocks = plan->total_blocks,
            .table_checksum = mpidht_dump_checksum(table, table_len),
        };
        unsigned char header[MPIDHT_DUMP_HEADER_SIZE];
        mpidht_dump_encode_header(&h, header);
        st = mpidht_file_write_at(t, fh, name, MPIDHT_DUMP_HEADER_SIZE, table, table_len);
        if (st == MPIDHT_OK)
            st = mpidht_file_write_at(t, fh, name, 0, header, sizeof header);
    }
    free(counts);
    free(displs);
    free(all);
    free(table);
    MPI_Type_free(&entry);
    return st;
}

/* Makes the rename itself durable; a failure here is not fatal (the data
 * are synced), so it is ignored, as is a directory that cannot be
 * opened. */
static void sync_directory(const char *path)
{
    char *dir = strdup(path);
    if (!dir)
        return;
    char *slash = strrchr(dir, '/');
    const char *name = slash ? (slash == dir ? "/" : dir) : ".";
    if (slash && slash != dir)
        *slash = '\0';
    int fd = open(name, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    free(dir);
}

#ifdef F_OFD_SETLK
#define LOCK_COMMAND F_OFD_SETLK /* held by this open file alone: MPI-IO's own
                                  * descriptors closing do not release it */
#else
#define LOCK_COMMAND F_SETLK
#endif

/* What a dump writes into the lock file it makes, so that a later dump
 * can tell a lock file (one left by a dump that was killed included) from
 * a file of the user's that happens to have its name. */
static const char lock_signature[] = "mpidht dump lock\n";

/* What kind of file mode is, for a message ("a directory"), or NULL for a
 * regular file. */
static const char *not_regular(mode_t mode)
{
    return S_ISREG(mode)    ? NULL
           : S_ISDIR(mode)  ? "a directory"
           : S_ISLNK(mode)  ? "a symbolic link"
           : S_ISFIFO(mode) ? "a FIFO"
           : S_ISSOCK(mode) ? "a socket"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
                            : "not a regular file";
}

/* MPIDHT_OK if nothing is at name or a regular file is (not followed
 * through a symbolic link), and likewise at the name MPICH's MPI-IO
 * would take for it (mpidht_file_unprefixed), which MPI_File_delete
 * removes; else MPIDHT_ERR_FILE_IO with a detail: a dump replaces or
 * removes only regular files. */
static mpidht_status_t check_regular(mpidht_t *t, const char *path, const char *name,
                                     const char *role)
{
    struct stat sb;
    const char *kind = lstat(name, &sb) == 0 ? not_regular(sb.st_mode) : NULL;
    const char *stripped = mpidht_file_unprefixed(name);
    if (!kind && stripped && lstat(stripped, &sb) == 0 && (kind = not_regular(sb.st_mode)))
        name = stripped;
    if (!kind)
        return MPIDHT_OK;
    mpidht_set_detail(t, "dumping to '%s': %s '%s' is %s; a dump replaces only a regular file "
                      "there", path, role, name, kind);
    return MPIDHT_ERR_FILE_IO;
}

/* Whether the file open at fd is a dump's lock file: empty (just made) or
 * holding lock_signature and nothing else. */
static bool is_lock_file(int fd)
{
    char seen[sizeof lock_signature];
    ssize_t n = pread(fd, seen, sizeof seen, 0);
    return n == 0 || (n == (ssize_t)sizeof lock_signature - 1 &&
                      memcmp(seen, lock_signature, (size_t)n) == 0);
}

/* Rank 0's claim on path for one dump: opens "<path>.lock" (creating it)
 * and takes a write lock on it without waiting; *fd is the descriptor to
 * close, once the file is renamed or deleted and the lock file unlinked,
 * -1 if there is none. The lock is on a file of its own, not the partial
 * file MPI-IO writes: an MPI-IO that locks the file it writes (ROMIO and
 * ompio on NFS) would wait for ever on a lock this process holds.
 * MPIDHT_ERR_FILE_IO, with a detail, if another dump holds the lock, if
 * "<path>.lock" is a file that is not a dump's lock file (which the dump
 * would remove), or if path or "<path>.partial" is something other than
 * a regular file (which the rename would replace, or the clean-up
 * remove); where the lock file cannot be made, or the file system has no
 * locks, the dump goes on without. */
static mpidht_status_t claim(mpidht_t *t, const char *path, const char *lock_name,
                             const char *partial, int *fd)
{
    *fd = -1;
    mpidht_status_t st = check_regular(t, path, lock_name, "the lock file");
    /* The lock is on the file the name leads to when it is taken: if the
     * name was unlinked meanwhile (a dump ending), start over (bounded). */
    for (int attempt = 0; attempt < 16 && st == MPIDHT_OK; ++attempt) {
        *fd = open(lock_name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (*fd < 0)
            break; /* no lock file here: on without */
        struct flock lock = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
        if (fcntl(*fd, LOCK_COMMAND, &lock) != 0) {
            bool taken = errno == EAGAIN || errno == EACCES;
            close(*fd);
            *fd = -1;
            if (taken) {
                mpidht_set_detail(t, "dumping to '%s': another dump to that path is under "
                                  "way ('%s' is locked)", path, lock_name);
                st = MPIDHT_ERR_FILE_IO;
            }
            break; /* or no locks here: on without */
        }
        if (!is_lock_file(*fd)) {
            close(*fd);
            *fd = -1;
            mpidht_set_detail(t, "dumping to '%s': '%s' is not a dump's lock file (a dump "
                              "makes a file of that name and removes it): move it", path,
                              lock_name);
            st = MPIDHT_ERR_FILE_IO;
            break;
        }
        struct stat held, named;
        if (fstat(*fd, &held) == 0 && stat(lock_name, &named) == 0 &&
            held.st_dev == named.st_dev && held.st_ino == named.st_ino) {
            /* Unsigned (the write failed), it is still a lock: a later
             * dump takes an empty one as a lock file too. */
            if (held.st_size == 0)
                (void)(pwrite(*fd, lock_signature, sizeof lock_signature - 1, 0) < 0);
            break;
        }
        close(*fd);
        *fd = -1;
        if (attempt == 15) {
            mpidht_set_detail(t, "dumping to '%s': '%s' kept changing while it was claimed",
                              path, lock_name);
            st = MPIDHT_ERR_FILE_IO;
        }
    }
    if (st == MPIDHT_OK)
        st = check_regular(t, path, path, "the path");
    if (st == MPIDHT_OK)
        st = check_regular(t, path, partial, "the partial file");
    if (st != MPIDHT_OK && *fd >= 0) {
        unlink(lock_name);
        close(*fd);
        *fd = -1;
    }
    return st;
}

/* Writes the whole file under partial; every process returns the same
 * status. */
static mpidht_status_t write_file(mpidht_t *t, const char *partial)
{
    uint64_t entries = 0;
    mpidht_status_t st = mpidht_agree(t->comm, mpidht_scan_reserve(t));
    if (st == MPIDHT_OK)
        st = mpidht_agree_same(t->comm, mpidht_scan_all(t, count_entry, &entries));
    dump_plan_t plan;
    if (st == MPIDHT_OK)
        st = make_plan(t, entries, &plan);
    if (st != MPIDHT_OK)
        return mpidht_agree_same(t->comm, st);

    /* Rank 0 deleted any leftover of an interrupted dump before anyone
     * opens it (mpidht_dump): a process opening it earlier would write
     * into a file that is then unlinked. */
    MPI_File fh = MPI_FILE_NULL;
    int rc = MPI_File_open(t->comm, partial, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                           MPI_INFO_NULL, &fh);
    if (rc != MPI_SUCCESS)
        mpidht_set_mpi_detail(t, rc, "cannot create", partial);
    st = mpidht_agree_same(t->comm, rc == MPI_SUCCESS ? MPIDHT_OK : MPIDHT_ERR_FILE_IO);
    if (st != MPIDHT_OK) {
        if (rc == MPI_SUCCESS)
            MPI_File_close(&fh);
        return st;
    }
    mpidht_dump_block_t *blocks = malloc((size_t)(plan.blocks + 1) * sizeof *blocks);
    st = blocks ? write_records(t, fh, partial, &plan, blocks) : MPIDHT_ERR_NO_MEMORY;
    st = mpidht_agree_same(t->comm, st);
    if (st == MPIDHT_OK)
        st = mpidht_agree_same(t->comm, write_index(t, fh, partial, &plan, blocks));
    free(blocks);
    if (st == MPIDHT_OK && (rc = MPI_File_sync(fh)) != MPI_SUCCESS) {
        mpidht_set_mpi_detail(t, rc, "cannot sync", partial);
        st = MPIDHT_ERR_FILE_IO;
    }
    if ((rc = MPI_File_close(&fh)) != MPI_SUCCESS && st == MPIDHT_OK) {
        mpidht_set_mpi_detail(t, rc, "cannot close", partial);
        st = MPIDHT_ERR_FILE_IO;
    }
    return mpidht_agree_same(t->comm, st);
}

mpidht_status_t mpidht_dump(mpidht_t *table, const char *path)
{
    mpidht_status_t usable = mpidht_enter_collective(table, MPIDHT_CALL_DUMP);
    if (usable != MPIDHT_OK)
        return usable;
    mpidht_t *t = table;
    size_t room = path ? strlen(path) + sizeof ".partial" : 0;
    char *partial = path ? malloc(room) : NULL, *lock_name = path ? malloc(room) : NULL;
    mpidht_status_t st = mpidht_agree_path(t, "dumping to", path,
                                           !path                    ? MPIDHT_ERR_NULL_ARGUMENT
                                           : !partial || !lock_name ? MPIDHT_ERR_NO_MEMORY
                                                                    : MPIDHT_OK);
    if (st == MPIDHT_OK) {
        snprintf(partial, room, "%s.partial", path);
        snprintf(lock_name, room, "%s.lock", path);
        st = mpidht_file_check_name(t, "dumping to", path, partial);
    }
    if (st == MPIDHT_OK) {
        /* Rank 0 claims the path, then deletes what an interrupted dump
         * left, before anyone opens it. */
        int fd = -1;
        int code = (int)MPIDHT_OK;
        if (t->rank == 0) {
            code = (int)claim(t, path, lock_name, partial, &fd);
            if (code == MPIDHT_OK)
                MPI_File_delete(partial, MPI_INFO_NULL);
        }
        if (MPI_Bcast(&code, 1, MPI_INT, 0, t->comm) != MPI_SUCCESS)
            code = MPIDHT_ERR_MPI;
        st = (mpidht_status_t)code;
        /* A refusal of rank 0's: its detail is every process's. */
        if (st == MPIDHT_ERR_FILE_IO &&
            MPI_Bcast(t->diag->detail, (int)sizeof t->diag->detail, MPI_CHAR, 0, t->comm) !=
                MPI_SUCCESS)
            st = MPIDHT_ERR_MPI;
        if (st == MPIDHT_OK)
            st = write_file(t, partial);
        /* Only rank 0 renames or cleans up; it tells everyone how that went. */
        if (t->rank == 0 && code == MPIDHT_OK) {
            if (st == MPIDHT_OK && rename(partial, path) != 0) {
                mpidht_set_detail(t, "cannot rename '%s' to '%s': %s", partial, path,
                                  strerror(errno));
                st = MPIDHT_ERR_FILE_IO;
            }
            if (st == MPIDHT_OK)
                sync_directory(path);
            else
                MPI_File_delete(partial, MPI_INFO_NULL);
        }
        if (fd >= 0) { /* unlinked while held, so a dump waiting for it starts over */
            unlink(lock_name);
            close(fd);
        }
        code = (int)st;
        if (MPI_Bcast(&code, 1, MPI_INT, 0, t->comm) != MPI_SUCCESS)
            code = MPIDHT_ERR_MPI;
        st = (mpidht_status_t)code;
        if (st != MPIDHT_OK && t->diag->detail[0] == '\0')
            mpidht_set_detail(t, "dumping to '%s' failed on another process: %s", path,
                              mpidht_strerror(st));
    }
    free(partial);
    free(lock_name);
    return st;
}
