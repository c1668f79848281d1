/*
 * Long paths: dump and restore work up to the longest path the MPI's
 * MPI-IO takes, and one byte more is refused with MPIDHT_ERR_FILE_IO and
 * a detail that says why, never an abort. With Open MPI that is 244 bytes
 * for the name opened on up to 10 processes (its ompio copies the name,
 * ".locktest." and the rank into 256 bytes; a dump opens
 * "<path>.partial"); with other MPIs paths of 300 bytes work. With Open
 * MPI the last part of the name opened may be at most 215 bytes (its
 * shared file pointer components make files named after it, and one
 * whose name is over 255 bytes left the processes waiting for each other
 * for ever): a file name of 207 bytes dumps and one of 215 restores, one
 * byte more is refused; other MPIs take both. A file name over the file
 * system's 255 bytes is refused by every MPI alike, and so is one whose
 * "<path>.partial" would be (MPICH failed it naming no reason). No file is left
 * behind by a refusal. Paths are relative, so the test's working
 * directory does not count.
 */
#include <sys/stat.h>
#include <unistd.h>

#include "table_digest.h"

enum { IDS = 300, KEY = 16, VALUE = 24 };

static char dir[64], sub[512];

static bool open_mpi(void)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    CHECK(MPI_Get_library_version(version, &length) == MPI_SUCCESS);
    return strncmp(version, "Open MPI", strlen("Open MPI")) == 0;
}

/* A path of exactly `length` bytes in sub, into buf (the file name is
 * what is left: a run of 'f'). */
static const char *path_of(char *buf, size_t size, size_t length)
{
    size_t prefix = strlen(sub) + 1;
    CHECK(length > prefix && length < size);
    snprintf(buf, size, "%s/", sub);
    memset(buf + prefix, 'f', length - prefix);
    buf[length] = '\0';
    return buf;
}

static bool exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

static mpidht_t *make_table(void)
{
    mpidht_params_t p = test_params(MPIDHT_PROTOCOL_LOCKFREE, KEY, VALUE, 1 << 17);
    mpidht_t *table = NULL;
    CHECK_OK(mpidht_create(MPI_COMM_WORLD, &p, &table));
    return table;
}

/* A path of a file name of exactly `length` bytes in dir, into buf. */
static const char *file_in_dir(char *buf, size_t size, size_t length)
{
    size_t prefix = strlen(dir) + 1;
    CHECK(prefix + length < size);
    snprintf(buf, size, "%s/", dir);
    memset(buf + prefix, 'n', length);
    buf[prefix + length] = '\0';
    return buf;
}

/* A dump to path refused: the status, the detail, nothing left. */
static void check_refused(mpidht_t *table, mpidht_status_t st, const char *path,
                          const char *why)
{
    CHECK_STATUS(st, MPIDHT_ERR_FILE_IO);
    CHECK(strstr(mpidht_error_detail(table), why) != NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    char partial[1024];
    snprintf(partial, sizeof partial, "%s.partial", path);
    CHECK(!exists(partial));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size = test_size();
    CHECK(size <= 10); /* the limits below are those of one-digit ranks */
    snprintf(dir, sizeof dir, "long_path_np%d", size);
    /* sub: dir and a directory of 150 bytes, 171 or 172 bytes in all */
    snprintf(sub, sizeof sub, "%s/", dir);
    memset(sub + strlen(sub), 'd', 150);
    sub[strlen(dir) + 1 + 150] = '\0';
    if (test_rank() == 0) {
        CHECK(mkdir(dir, 0700) == 0 || exists(dir));
        CHECK(mkdir(sub, 0700) == 0 || exists(sub));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    bool limited = open_mpi();
    size_t longest = limited ? 244 : 300; /* the name MPI-IO opens */

    mpidht_t *table = make_table();
    fill_ids(table, IDS, KEY, VALUE, 7);
    table_digest_t want = digest_table(table, KEY, VALUE);
    static char at[1024], beyond[1024], name[1024];

    /* The longest dump path: the name opened has ".partial" after it. */
    path_of(at, sizeof at, longest - strlen(".partial"));
    TEST_CONTEXT("dump to a path of %zu bytes", strlen(at));
    CHECK_OK(mpidht_dump(table, at));
    mpidht_t *back = make_table();
    TEST_CONTEXT("restore from a path of %zu bytes", strlen(at));
    CHECK_OK(mpidht_restore(back, at, NULL));
    CHECK(digest_equal(digest_table(back, KEY, VALUE), want));

    /* One byte more: refused with Open MPI, written otherwise. */
    path_of(beyond, sizeof beyond, longest - strlen(".partial") + 1);
    TEST_CONTEXT("dump to a path of %zu bytes", strlen(beyond));
    mpidht_status_t st = mpidht_dump(table, beyond);
    if (limited) {
        check_refused(table, st, beyond, "MPI-IO opens '<path>.partial', 245 bytes");
        CHECK(!exists(beyond));
    } else {
        CHECK_OK(st);
    }

    /* The longest restore path (no ".partial"), then one byte more. */
    path_of(name, sizeof name, longest);
    if (test_rank() == 0)
        CHECK(rename(at, name) == 0);
    MPI_Barrier(MPI_COMM_WORLD);
    mpidht_t *again = make_table();
    TEST_CONTEXT("restore from a path of %zu bytes", strlen(name));
    CHECK_OK(mpidht_restore(again, name, NULL));
    CHECK(digest_equal(digest_table(again, KEY, VALUE), want));
    path_of(at, sizeof at, longest + 1);
    if (test_rank() == 0)
        CHECK(rename(name, at) == 0);
    MPI_Barrier(MPI_COMM_WORLD);
    TEST_CONTEXT("restore from a path of %zu bytes", strlen(at));
    st = mpidht_restore(again, at, NULL);
    if (limited) {
        CHECK_STATUS(st, MPIDHT_ERR_FILE_IO);
        CHECK(strstr(mpidht_error_detail(again), "256 bytes") != NULL);
        /* The detail names what MPI-IO would have opened: the path itself. */
        CHECK(strstr(mpidht_error_detail(again), "MPI-IO opens '<path>', 245 bytes") != NULL);
    } else {
        CHECK_OK(st);
    }
    CHECK(digest_equal(digest_table(again, KEY, VALUE), want));

    /* Long file names in a short directory: the longest Open MPI takes
     * (215 bytes in the name opened), then one byte more. */
    static char file[1024], longer[1024];
    size_t name_limit = limited ? 215 : 255;
    file_in_dir(file, sizeof file, name_limit - strlen(".partial"));
    TEST_CONTEXT("dump to a file name of %zu bytes", name_limit - strlen(".partial"));
    CHECK_OK(mpidht_dump(table, file));
    file_in_dir(longer, sizeof longer, name_limit - strlen(".partial") + 1);
    if (limited) { /* elsewhere one byte more is over the file system's limit */
        TEST_CONTEXT("dump to a file name of %zu bytes", strlen(longer) - strlen(dir) - 1);
        check_refused(table, mpidht_dump(table, longer), longer,
                      "whose last part is 216 bytes");
        CHECK(!exists(longer));
        /* The case that waited for ever: a relative path that is all file
         * name, 236 bytes (within the whole name's limit). */
        static char bare[256];
        memset(bare, 'b', 236);
        TEST_CONTEXT("dump to a bare file name of 236 bytes");
        check_refused(table, mpidht_dump(table, bare), bare, "whose last part is 244 bytes");
    } else {
        /* "<path>.partial" is one byte over a file name's 255: MPICH's
         * MPI-IO failed it naming no reason. */
        TEST_CONTEXT("dump to a file name of %zu bytes", strlen(longer) - strlen(dir) - 1);
        check_refused(table, mpidht_dump(table, longer), longer,
                      "whose last part is 256 bytes, over the 255 a file name may have");
        CHECK(!exists(longer));
    }
    /* Restore opens the name itself: 215 bytes, then 216. */
    file_in_dir(name, sizeof name, name_limit);
    if (test_rank() == 0)
        CHECK(rename(file, name) == 0);
    MPI_Barrier(MPI_COMM_WORLD);
    mpidht_t *named = make_table();
    TEST_CONTEXT("restore from a file name of %zu bytes", name_limit);
    CHECK_OK(mpidht_restore(named, name, NULL));
    CHECK(digest_equal(digest_table(named, KEY, VALUE), want));
    if (limited) {
        file_in_dir(file, sizeof file, name_limit + 1);
        if (test_rank() == 0)
            CHECK(rename(name, file) == 0);
        MPI_Barrier(MPI_COMM_WORLD);
        TEST_CONTEXT("restore from a file name of %zu bytes", name_limit + 1);
        st = mpidht_restore(named, file, NULL);
        CHECK_STATUS(st, MPIDHT_ERR_FILE_IO);
        CHECK(strstr(mpidht_error_detail(named), "whose last part is 216 bytes") != NULL);
        CHECK(digest_equal(digest_table(named, KEY, VALUE), want));
    }
    CHECK_OK(mpidht_free(&named));
    MPI_Barrier(MPI_COMM_WORLD);
    if (test_rank() == 0) {
        unlink(file);
        unlink(name);
        unlink(longer);
    }

    /* A file name over 255 bytes: no MPI can open it. */
    path_of(name, sizeof name, strlen(sub) + 1 + 300);
    TEST_CONTEXT("dump to a file name of 300 bytes");
    check_refused(table, mpidht_dump(table, name), name, sub);
    TEST_CONTEXT("restore from a file name of 300 bytes");
    CHECK_STATUS(mpidht_restore(again, name, NULL), MPIDHT_ERR_FILE_IO);

    CHECK_OK(mpidht_free(&again));
    CHECK_OK(mpidht_free(&back));
    CHECK_OK(mpidht_free(&table));
    MPI_Barrier(MPI_COMM_WORLD);
    if (test_rank() == 0) {
        unlink(at);
        unlink(beyond);
        CHECK(rmdir(sub) == 0 && rmdir(dir) == 0);
    }
    MPI_Finalize();
    return 0;
}
