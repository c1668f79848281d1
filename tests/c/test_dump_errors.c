/*
 * Every damaged or unsuitable file is refused with the same clear status
 * on every rank, and the table it was to be loaded into keeps exactly its
 * content: missing, empty, foreign, of a newer version, truncated inside
 * the header or by one byte, with a byte too many, with a bit flipped in
 * the header, the block table or a record, of other key or value sizes.
 * A directory and a FIFO in place of the file are refused as unreadable
 * (not read as a short file, not waited on), also named with a ROMIO
 * prefix ("ufs:", which MPICH's MPI-IO strips). Then the argument rejections
 * of dump and restore (an empty path too: a dump to it replaced and
 * removed the working folder's ".partial"), and a dump into a directory
 * that does not exist (nothing left behind). A dump replaces only a regular file: one to a
 * FIFO or a symbolic link, or whose "<path>.partial" is a FIFO, is
 * refused and leaves them as they were; a file of the user's named
 * "<path>.lock" is refused and kept (a dump removes its own lock file),
 * while a lock file a killed dump left is taken; so with a ROMIO prefix
 * on the path, whose partial file MPICH would delete under the name
 * without it. A dump whose writes fail (a file size limit) leaves nothing
 * and says which write failed and why. Every refusal leaves a
 * detail, on every process, that names the file and the status
 * (mpidht_error_detail).
 */
#define _DEFAULT_SOURCE /* lstat, symlink */
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "table_digest.h"

enum { IDS = 500, KEY = 16, VALUE = 24 };

static char good[64], bad[64];

static mpidht_t *make_table(size_t key, size_t value)
{
    mpidht_params_t p = test_params(MPIDHT_PROTOCOL_FINE, key, value, 1 << 17);
    mpidht_t *table = NULL;
    CHECK_OK(mpidht_create(MPI_COMM_WORLD, &p, &table));
    return table;
}

static unsigned char *read_file(const char *path, long *size)
{
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    fseek(f, 0, SEEK_END);
    *size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = malloc((size_t)*size + 1);
    CHECK(data && fread(data, 1, (size_t)*size, f) == (size_t)*size);
    fclose(f);
    return data;
}

static void write_file(const char *path, const unsigned char *data, long size)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    CHECK(fwrite(data, 1, (size_t)size, f) == (size_t)size);
    fclose(f);
}

typedef enum { FLIP, TRUNCATE, APPEND, SET_BYTE } damage_kind_t;

/* Rank 0 writes a damaged copy of the good dump to bad. */
static void damage(damage_kind_t kind, long at, unsigned char byte)
{
    if (test_rank() == 0) {
        long size;
        unsigned char *data = read_file(good, &size);
        long pos = at < 0 ? size + at : at;
        CHECK(pos >= 0 && pos <= size);
        switch (kind) {
        case FLIP:
            data[pos] ^= 0x10;
            break;
        case SET_BYTE:
            data[pos] = byte;
            break;
        case TRUNCATE:
            size = pos;
            break;
        case APPEND:
            data[size++] = byte;
            break;
        }
        write_file(bad, data, size);
        free(data);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Restoring path fails with expected, and the table is untouched. */
static void refuse(mpidht_t *table, const char *path, mpidht_status_t expected,
                   const char *what)
{
    TEST_CONTEXT("restoring %s", what);
    table_digest_t before = digest_table(table, KEY, VALUE);
    mpidht_stats_t stats_before = MPIDHT_STATS_INIT, stats_after = MPIDHT_STATS_INIT;
    CHECK_OK(mpidht_stats_local(table, &stats_before));
    mpidht_restore_report_t r = {sizeof r, 7, 7, 7, 7};
    CHECK_STATUS(mpidht_restore(table, path, &r), expected);
    CHECK(r.entries == 7 && r.inserted == 7); /* untouched on failure */
    CHECK(digest_equal(digest_table(table, KEY, VALUE), before));
    CHECK_OK(mpidht_stats_local(table, &stats_after));
    CHECK(memcmp(&stats_before, &stats_after, sizeof stats_before) == 0);
}

/* The last call's detail holds the path (or "a NULL path") and the
 * message of its status. */
static void expect_detail(mpidht_t *table, const char *path, mpidht_status_t status)
{
    const char *detail = mpidht_error_detail(table);
    TEST_CONTEXT("detail '%s' should name '%s' and say '%s'", detail, path,
                 mpidht_strerror(status));
    CHECK(strstr(detail, path) != NULL);
    CHECK(strstr(detail, mpidht_strerror(status)) != NULL);
}

/* A directory and a FIFO where the file should be. */
static void unreadable_files(mpidht_t *table)
{
    char dir[80], fifo[80];
    snprintf(dir, sizeof dir, "%s.dir", good);
    snprintf(fifo, sizeof fifo, "%s.fifo", good);
    if (test_rank() == 0) {
        rmdir(dir); /* left by a run that failed */
        remove(fifo);
        CHECK(mkdir(dir, 0700) == 0);
        CHECK(mkfifo(fifo, 0600) == 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    refuse(table, dir, MPIDHT_ERR_FILE_IO, "a directory");
    CHECK(strstr(mpidht_error_detail(table), "not a regular file") != NULL);
    refuse(table, fifo, MPIDHT_ERR_FILE_IO, "a FIFO");
    CHECK(strstr(mpidht_error_detail(table), fifo) != NULL);
    char prefixed[96];
    snprintf(prefixed, sizeof prefixed, "ufs:%s", fifo);
    refuse(table, prefixed, MPIDHT_ERR_FILE_IO, "a FIFO named with a ROMIO prefix");
    snprintf(prefixed, sizeof prefixed, "ufs:%s", dir);
    refuse(table, prefixed, MPIDHT_ERR_FILE_IO, "a directory named with a ROMIO prefix");
    MPI_Barrier(MPI_COMM_WORLD);
    if (test_rank() == 0)
        CHECK(rmdir(dir) == 0 && remove(fifo) == 0);
    /* A file the system sizes as 0 bytes, which reads text: Open MPI
     * cannot find its size (the detail gave no reason), MPICH reads a
     * file too short to be a dump. */
    const char *proc = "/proc/self/status";
    struct stat sb;
    if (stat(proc, &sb) == 0) {
        TEST_CONTEXT("restoring %s", proc);
        mpidht_restore_report_t r = {sizeof r, 7, 7, 7, 7};
        mpidht_status_t st = mpidht_restore(table, proc, &r);
        CHECK(st == MPIDHT_ERR_FILE_IO || st == MPIDHT_ERR_FILE_CORRUPT);
        CHECK(r.entries == 7);
        if (test_rank() == 0) {
            TEST_CONTEXT("detail '%s'", mpidht_error_detail(table));
            CHECK(strstr(mpidht_error_detail(table), proc) != NULL);
            CHECK(strstr(mpidht_error_detail(table), "could not be opened, read") == NULL);
        }
        TEST_CONTEXT("%s", "");
    }
}

static void damaged_files(mpidht_t *table)
{
    char missing[80];
    snprintf(missing, sizeof missing, "%s.missing", good);
    refuse(table, missing, MPIDHT_ERR_FILE_IO, "a missing file");
    /* The detail names the file and the reason. */
    const char *detail = mpidht_error_detail(table);
    CHECK(strstr(detail, missing) != NULL && strstr(detail, "cannot open") != NULL);
    CHECK(strlen(detail) > strlen(missing) + 20);
    damage(TRUNCATE, 0, 0);
    refuse(table, bad, MPIDHT_ERR_FILE_FORMAT, "an empty file");
    damage(FLIP, 0, 0);
    refuse(table, bad, MPIDHT_ERR_FILE_FORMAT, "a file with another magic");
    damage(SET_BYTE, 8, 2);
    refuse(table, bad, MPIDHT_ERR_FILE_FORMAT, "format version 2");
    damage(TRUNCATE, 30, 0);
    refuse(table, bad, MPIDHT_ERR_FILE_CORRUPT, "a file cut inside the header");
    damage(TRUNCATE, 5, 0);
    refuse(table, bad, MPIDHT_ERR_FILE_CORRUPT, "a file cut inside the magic");
    damage(TRUNCATE, -1, 0);
    refuse(table, bad, MPIDHT_ERR_FILE_CORRUPT, "a file one byte short");
    damage(APPEND, 0, 0x5a);
    refuse(table, bad, MPIDHT_ERR_FILE_CORRUPT, "a file with a byte too many");
    damage(FLIP, 33, 0);
    refuse(table, bad, MPIDHT_ERR_FILE_CORRUPT, "a flipped bit in the entry count");
    damage(FLIP, 64 + 3, 0);
    refuse(table, bad, MPIDHT_ERR_FILE_CORRUPT, "a flipped bit in the block table");
    damage(FLIP, -5, 0);
    refuse(table, bad, MPIDHT_ERR_FILE_CORRUPT, "a flipped bit in the last record");
    damage(FLIP, -(long)IDS * (KEY + VALUE) + 3, 0); /* the first record */
    refuse(table, bad, MPIDHT_ERR_FILE_CORRUPT, "a flipped bit in an early record");

    static const size_t other[][2] = {{KEY + 1, VALUE}, {KEY, VALUE - 1}};
    for (int i = 0; i < 2; ++i) {
        mpidht_t *foreign = make_table(other[i][0], other[i][1]);
        CHECK_OK(mpidht_dump(foreign, bad));
        CHECK_OK(mpidht_free(&foreign));
        refuse(table, bad, MPIDHT_ERR_FILE_MISMATCH, "a dump of other sizes");
    }
}

static void rejected_arguments(mpidht_t *table)
{
    TEST_CONTEXT("passing bad arguments");
    int rank = test_rank(), size = test_size();
    mpidht_status_t peer_or = size > 1 ? MPIDHT_ERR_PEER : MPIDHT_ERR_NULL_ARGUMENT;
    CHECK_STATUS(mpidht_dump(NULL, good), MPIDHT_ERR_INVALID_HANDLE);
    CHECK_STATUS(mpidht_restore(NULL, good, NULL), MPIDHT_ERR_INVALID_HANDLE);
    CHECK_STATUS(mpidht_dump(table, rank == 0 ? NULL : good),
                 rank == 0 ? MPIDHT_ERR_NULL_ARGUMENT : peer_or);
    expect_detail(table, rank == 0 ? "a NULL path" : good,
                  rank == 0 ? MPIDHT_ERR_NULL_ARGUMENT : peer_or);
    CHECK_STATUS(mpidht_restore(table, rank == 0 ? NULL : good, NULL),
                 rank == 0 ? MPIDHT_ERR_NULL_ARGUMENT : peer_or);
    expect_detail(table, rank == 0 ? "a NULL path" : good,
                  rank == 0 ? MPIDHT_ERR_NULL_ARGUMENT : peer_or);
    /* A report too small on the last process only. */
    mpidht_restore_report_t small = {0, 0, 0, 0, 0}, fine = {sizeof fine, 0, 0, 0, 0};
    mpidht_status_t small_or = MPIDHT_ERR_STRUCT_SIZE;
    CHECK_STATUS(mpidht_restore(table, good, rank == size - 1 ? &small : &fine),
                 rank == size - 1 ? small_or : MPIDHT_ERR_PEER);
    expect_detail(table, good, rank == size - 1 ? small_or : MPIDHT_ERR_PEER);
    if (size > 1) {
        char mine[80];
        snprintf(mine, sizeof mine, "%s.rank%d", good, rank);
        CHECK_STATUS(mpidht_dump(table, mine), MPIDHT_ERR_PATH_MISMATCH);
        expect_detail(table, mine, MPIDHT_ERR_PATH_MISMATCH);
        CHECK_STATUS(mpidht_restore(table, mine, NULL), MPIDHT_ERR_PATH_MISMATCH);
        expect_detail(table, mine, MPIDHT_ERR_PATH_MISMATCH);
        CHECK(access(mine, F_OK) != 0);
    }
    /* An empty path names no file: refused before anything is touched (a
     * dump made and removed "<path>.partial", i.e. the working folder's
     * ".partial", a file of the user's). On the last process only: the
     * others learn of it. */
    static const char keep[] = "the user's own file\n";
    if (rank == 0)
        write_file(".partial", (const unsigned char *)keep, (long)strlen(keep));
    MPI_Barrier(MPI_COMM_WORLD);
    for (int restore = 0; restore < 2; ++restore) {
        const char *path = rank == size - 1 ? "" : good;
        mpidht_status_t expected = rank == size - 1 ? MPIDHT_ERR_FILE_IO : MPIDHT_ERR_PEER;
        CHECK_STATUS(restore ? mpidht_restore(table, path, NULL) : mpidht_dump(table, path),
                     expected);
        const char *detail = mpidht_error_detail(table);
        TEST_CONTEXT("detail '%s'", detail);
        CHECK(rank != size - 1 || strstr(detail, "an empty path names no file") != NULL);
        MPI_Barrier(MPI_COMM_WORLD);
        long kept = 0;
        unsigned char *content = read_file(".partial", &kept);
        CHECK(kept == (long)strlen(keep) && memcmp(content, keep, strlen(keep)) == 0);
        free(content);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK(remove(".partial") == 0);
    TEST_CONTEXT("passing bad arguments");
    /* A report is optional. */
    table_digest_t before = digest_table(table, KEY, VALUE);
    CHECK_OK(mpidht_restore(table, good, NULL));
    CHECK(digest_table(table, KEY, VALUE).entries == before.entries + IDS);
}

static void dump_nowhere(mpidht_t *table)
{
    TEST_CONTEXT("dumping into a directory that does not exist");
    char nowhere[96];
    snprintf(nowhere, sizeof nowhere, "no-such-dir-%d/table.mpidht", test_size());
    CHECK_STATUS(mpidht_dump(table, nowhere), MPIDHT_ERR_FILE_IO);
    char partial[112];
    snprintf(partial, sizeof partial, "%s.partial", nowhere);
    CHECK(strstr(mpidht_error_detail(table), partial) != NULL);
    CHECK(access(nowhere, F_OK) != 0 && access(partial, F_OK) != 0);
}

/* A path holding a ':': MPICH's MPI-IO takes what comes before it for
 * the name of a file system and fails the open (the header says so);
 * Open MPI's writes the file. Either way nothing is left half done. */
static void dump_with_a_colon(mpidht_t *table)
{
    char path[64];
    snprintf(path, sizeof path, "colon:%d.mpidht", test_size());
    TEST_CONTEXT("dumping to '%s'", path);
    mpidht_status_t st = mpidht_dump(table, path);
    if (test_open_mpi_before_5()) {
        CHECK_OK(st);
    } else {
        CHECK_STATUS(st, MPIDHT_ERR_FILE_IO);
        CHECK(strstr(mpidht_error_detail(table), path) != NULL);
        CHECK(access(path, F_OK) != 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (test_rank() == 0)
        unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Whether name is a FIFO (not followed through a link). */
static bool is_fifo(const char *name)
{
    struct stat sb;
    return lstat(name, &sb) == 0 && S_ISFIFO(sb.st_mode);
}

/* A dump refused for what is at a name it would replace or remove: the
 * status and a detail naming that name and what it is, on every process. */
static void refuse_dump(mpidht_t *table, const char *path, const char *name,
                        const char *says)
{
    CHECK_STATUS(mpidht_dump(table, path), MPIDHT_ERR_FILE_IO);
    const char *detail = mpidht_error_detail(table);
    TEST_CONTEXT("detail '%s' should name '%s' and say '%s'", detail, name, says);
    CHECK(strstr(detail, name) != NULL && strstr(detail, says) != NULL);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Dumps over what is not the dump's to replace or remove. */
static void dump_over_others(mpidht_t *table)
{
    char path[96], partial[112], lock[112], target[112];
    snprintf(path, sizeof path, "dump_errors_np%d.other", test_size());
    snprintf(partial, sizeof partial, "%s.partial", path);
    snprintf(lock, sizeof lock, "%s.lock", path);
    snprintf(target, sizeof target, "%s.target", path);
    static const char mine[] = "the user's own lock file\n";

    TEST_CONTEXT("dumping to a FIFO");
    if (test_rank() == 0) {
        const char *left[] = {path, partial, lock, target}; /* by a run that failed */
        for (size_t i = 0; i < sizeof left / sizeof *left; ++i)
            remove(left[i]);
        CHECK(mkfifo(path, 0600) == 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    refuse_dump(table, path, path, "a FIFO");
    CHECK(is_fifo(path) && access(lock, F_OK) != 0 && access(partial, F_OK) != 0);
    MPI_Barrier(MPI_COMM_WORLD);

    TEST_CONTEXT("dumping to a symbolic link");
    if (test_rank() == 0) {
        CHECK(remove(path) == 0);
        write_file(target, (const unsigned char *)mine, (long)strlen(mine));
        CHECK(symlink(target, path) == 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    refuse_dump(table, path, path, "a symbolic link");
    long size = 0;
    unsigned char *kept = read_file(path, &size); /* through the link, still there */
    CHECK(size == (long)strlen(mine) && memcmp(kept, mine, (size_t)size) == 0);
    free(kept);
    MPI_Barrier(MPI_COMM_WORLD);

    TEST_CONTEXT("dumping where the partial file is a FIFO");
    if (test_rank() == 0) {
        CHECK(remove(path) == 0 && remove(target) == 0);
        CHECK(mkfifo(partial, 0600) == 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    refuse_dump(table, path, partial, "a FIFO");
    CHECK(is_fifo(partial) && access(path, F_OK) != 0);
    MPI_Barrier(MPI_COMM_WORLD);

    /* MPICH's MPI-IO strips a ROMIO prefix, and its delete of the
     * partial file removed the FIFO there (and a symbolic link), though
     * the dump refused the path at the rename. */
    char prefixed[120];
    snprintf(prefixed, sizeof prefixed, "ufs:%s", path);
    TEST_CONTEXT("dumping to a path with a ROMIO prefix where the partial file is a FIFO");
    refuse_dump(table, prefixed, partial, "a FIFO");
    CHECK(is_fifo(partial) && access(path, F_OK) != 0);
    MPI_Barrier(MPI_COMM_WORLD);
    TEST_CONTEXT("dumping to a path with a ROMIO prefix where the partial file is a link");
    if (test_rank() == 0) {
        CHECK(remove(partial) == 0);
        write_file(target, (const unsigned char *)mine, (long)strlen(mine));
        CHECK(symlink(target, partial) == 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    refuse_dump(table, prefixed, partial, "a symbolic link");
    struct stat sb;
    CHECK(lstat(partial, &sb) == 0 && S_ISLNK(sb.st_mode));
    kept = read_file(target, &size);
    CHECK(size == (long)strlen(mine) && memcmp(kept, mine, (size_t)size) == 0);
    free(kept);
    MPI_Barrier(MPI_COMM_WORLD);
    if (test_rank() == 0)
        CHECK(remove(partial) == 0 && remove(target) == 0);

    TEST_CONTEXT("dumping where the user has a file named like the lock file");
    if (test_rank() == 0)
        write_file(lock, (const unsigned char *)mine, (long)strlen(mine));
    MPI_Barrier(MPI_COMM_WORLD);
    refuse_dump(table, path, lock, "not a dump's lock file");
    kept = read_file(lock, &size);
    CHECK(size == (long)strlen(mine) && memcmp(kept, mine, (size_t)size) == 0);
    free(kept);
    CHECK(access(path, F_OK) != 0);
    MPI_Barrier(MPI_COMM_WORLD);

    TEST_CONTEXT("dumping where a killed dump left its lock file");
    if (test_rank() == 0)
        write_file(lock, (const unsigned char *)"mpidht dump lock\n", 17);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(mpidht_dump(table, path));
    CHECK(access(path, F_OK) == 0 && access(lock, F_OK) != 0);
    MPI_Barrier(MPI_COMM_WORLD);
    if (test_rank() == 0)
        CHECK(remove(path) == 0);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* A dump whose writes fail here (a file size limit stands in for a full
 * disk) returns MPIDHT_ERR_FILE_IO and leaves nothing; the detail of a
 * process whose write failed names the partial file and the reason, at 1
 * process too (it said the dump "failed on another process"). Rank 0
 * alone is limited, below the size of its records. */
static void dump_without_room(mpidht_t *table)
{
    TEST_CONTEXT("dumping past a file size limit on rank 0");
    char path[96], partial[112];
    snprintf(path, sizeof path, "dump_errors_np%d.limited", test_size());
    snprintf(partial, sizeof partial, "%s.partial", path);
    struct rlimit before;
    CHECK(getrlimit(RLIMIT_FSIZE, &before) == 0);
    void (*handler)(int) = signal(SIGXFSZ, SIG_IGN); /* else the write kills */
    if (test_rank() == 0) {
        struct rlimit limited = {256, before.rlim_max};
        CHECK(setrlimit(RLIMIT_FSIZE, &limited) == 0);
    }
    mpidht_status_t st = mpidht_dump(table, path);
    CHECK(setrlimit(RLIMIT_FSIZE, &before) == 0);
    signal(SIGXFSZ, handler);
    CHECK_STATUS(st, MPIDHT_ERR_FILE_IO);
    const char *detail = mpidht_error_detail(table);
    TEST_CONTEXT("detail '%s'", detail);
    if (test_rank() == 0)
        CHECK(strstr(detail, partial) && strstr(detail, "write") &&
              strstr(detail, "at byte") && !strstr(detail, "another process"));
    else
        CHECK(strstr(detail, path) != NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(access(path, F_OK) != 0 && access(partial, F_OK) != 0);
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    snprintf(good, sizeof good, "dump_errors_np%d.mpidht", test_size());
    snprintf(bad, sizeof bad, "dump_errors_np%d.bad", test_size());
    mpidht_t *source = make_table(KEY, VALUE);
    fill_ids(source, IDS, KEY, VALUE, 3);
    CHECK_OK(mpidht_dump(source, good));
    CHECK_OK(mpidht_free(&source));

    /* The table refused files must leave alone: other entries of its own. */
    mpidht_t *table = make_table(KEY, VALUE);
    unsigned char key[KEY], value[VALUE];
    for (uint64_t id = IDS + (uint64_t)test_rank(); id < IDS + 40; id += (uint64_t)test_size()) {
        test_fill(key, KEY, id, 1);
        test_fill(value, VALUE, id, 9);
        CHECK_OK(mpidht_write(table, key, value, NULL));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    damaged_files(table);
    unreadable_files(table);
    rejected_arguments(table);
    dump_nowhere(table);
    dump_with_a_colon(table);
    dump_over_others(table);
    dump_without_room(table);
    CHECK_OK(mpidht_free(&table));
    if (test_rank() == 0) {
        remove(good);
        remove(bad);
    }
    MPI_Finalize();
    return 0;
}
