/*
 * libFuzzer target for the dump loader: every input becomes a file that
 * mpidht_restore loads into a small table on MPI_COMM_SELF. The loader
 * must either succeed with a consistent report, or refuse with a file
 * status and leave the table exactly as it was; anything else (a crash,
 * a sanitizer report, another status, a changed table) aborts.
 *
 * The file is removed after each load.
 *
 * The first input byte chooses which checksums the harness recomputes
 * before writing the file (bit 0: blocks, bit 1: block table, bit 2:
 * header), so that mutations reach the checks behind them instead of
 * always failing the first checksum.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dump_format.h"
#include "mpidht.h"

enum { KEY = 8, VALUE = 8, RECORD = KEY + VALUE, BASELINE = 5 };

static mpidht_t *table;
static char path[4096];
static uint64_t baseline_digest;

static void require(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_restore: %s\n", what);
        abort();
    }
}

static uint64_t get64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; ++i)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* Order-independent summary of the table's content. */
static uint64_t digest(void)
{
    unsigned char keys[16 * KEY], values[16 * VALUE];
    uint64_t cursor = 0, sum = 0;
    size_t count;
    do {
        require(mpidht_local_next(table, &cursor, 16, keys, values, &count) == MPIDHT_OK,
                "local iteration failed");
        for (size_t i = 0; i < count; ++i)
            sum += mpidht_dump_checksum(keys + i * KEY, KEY) * 3 +
                   mpidht_dump_checksum(values + i * VALUE, VALUE);
        sum += count;
    } while (count > 0);
    return sum;
}

static void make_table(void)
{
    mpidht_params_t p;
    mpidht_params_init(&p);
    p.key_size = KEY;
    p.value_size = VALUE;
    p.memory_per_process = 64 * 24;
    require(mpidht_create(MPI_COMM_SELF, &p, &table) == MPIDHT_OK, "create failed");
    for (uint64_t i = 0; i < BASELINE; ++i) {
        unsigned char key[KEY], value[VALUE];
        put64(key, i * 0x9e3779b97f4a7c15u);
        put64(value, i);
        require(mpidht_write(table, key, value, NULL) == MPIDHT_OK, "write failed");
    }
    baseline_digest = digest();
}

/* libFuzzer ends the run with exit(): the table and MPI are finalised
 * then, so that MPI removes its session directory. */
static void finish(void)
{
    mpidht_free(&table);
    MPI_Finalize();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    MPI_Init(NULL, NULL);
    atexit(finish);
    const char *dir = getenv("TMPDIR");
    int n = snprintf(path, sizeof path, "%s/mpidht-fuzz-%ld.bin", dir && *dir ? dir : "/tmp",
                     (long)getpid());
    require(n > 0 && (size_t)n < sizeof path, "TMPDIR is too long");
    make_table();
    return 0;
}

/* Recomputes the checksums the mode asks for, where the layout allows. */
static void fix_checksums(unsigned char *f, size_t len, unsigned mode)
{
    if (len < MPIDHT_DUMP_HEADER_SIZE)
        return;
    uint64_t blocks = get64(f + 40);
    if (blocks <= (len - MPIDHT_DUMP_HEADER_SIZE) / MPIDHT_DUMP_BLOCK_ENTRY_SIZE) {
        unsigned char *table_bytes = f + MPIDHT_DUMP_HEADER_SIZE;
        size_t at = MPIDHT_DUMP_HEADER_SIZE + (size_t)blocks * MPIDHT_DUMP_BLOCK_ENTRY_SIZE;
        for (uint64_t b = 0; (mode & 1) && b < blocks; ++b) {
            uint64_t n = get64(table_bytes + b * 16);
            if (n > (len - at) / RECORD)
                break;
            put64(table_bytes + b * 16 + 8, mpidht_dump_checksum(f + at, (size_t)n * RECORD));
            at += (size_t)n * RECORD;
        }
        if (mode & 2)
            put64(f + 48, mpidht_dump_checksum(table_bytes, (size_t)blocks * 16));
    }
    if (mode & 4)
        put64(f + 56, mpidht_dump_checksum(f, 56));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    size_t len = size - 1;
    unsigned char *file = malloc(len + 1);
    require(file != NULL, "out of memory");
    memcpy(file, data + 1, len);
    fix_checksums(file, len, data[0]);
    uint64_t entries = len >= MPIDHT_DUMP_HEADER_SIZE ? get64(file + 32) : 0;
    FILE *out = fopen(path, "wb");
    require(out && fwrite(file, 1, len, out) == len && fclose(out) == 0,
            "cannot write the input file");
    free(file);

    mpidht_restore_report_t r = MPIDHT_RESTORE_REPORT_INIT;
    mpidht_status_t st = mpidht_restore(table, path, &r);
    remove(path); /* libFuzzer keeps any input that fails */
    if (st == MPIDHT_OK) {
        require(r.inserted + r.updated + r.evicted == r.entries,
                "report does not add up");
        require(r.entries == entries, "report disagrees with the file");
        /* Back to the baseline for the next input. */
        require(mpidht_free(&table) == MPIDHT_OK, "free failed");
        make_table();
    } else {
        require(st == MPIDHT_ERR_FILE_FORMAT || st == MPIDHT_ERR_FILE_CORRUPT ||
                    st == MPIDHT_ERR_FILE_MISMATCH,
                mpidht_strerror(st));
        require(digest() == baseline_digest, "a refused file changed the table");
    }
    return 0;
}
