/*
 * Writes the seed corpus of fuzz_restore into DIR: real dumps of tables
 * with 0, 3 and 40 entries, and a dump of three blocks assembled with the
 * format's own functions (a one-process dump has one block). Each seed
 * starts with the harness's mode byte: recompute every checksum.
 *
 *   make_seeds DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump_format.h"
#include "mpidht.h"

enum { KEY = 8, VALUE = 8, RECORD = KEY + VALUE };

static void fail(const char *what)
{
    fprintf(stderr, "make_seeds: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void write_seed(const char *dir, const char *name, const unsigned char *data,
                       size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    const unsigned char mode = 7;
    if (!f || fwrite(&mode, 1, 1, f) != 1 || fwrite(data, 1, len, f) != len || fclose(f))
        fail("cannot write a seed");
}

static void dump_seed(const char *dir, const char *name, unsigned entries)
{
    mpidht_params_t p;
    mpidht_params_init(&p);
    p.key_size = KEY;
    p.value_size = VALUE;
    p.memory_per_process = 4096;
    mpidht_t *table = NULL;
    if (mpidht_create(MPI_COMM_SELF, &p, &table) != MPIDHT_OK)
        fail("create failed");
    for (uint64_t i = 0; i < entries; ++i) {
        uint64_t kv[2] = {i * 7919 + 1, i};
        if (mpidht_write(table, &kv[0], &kv[1], NULL) != MPIDHT_OK)
            fail("write failed");
    }
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s/%s.dump", dir, name);
    if (mpidht_dump(table, tmp) != MPIDHT_OK)
        fail("dump failed");
    mpidht_free(&table);
    FILE *f = fopen(tmp, "rb");
    unsigned char buf[8192];
    size_t len = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (!f || len == 0)
        fail("cannot read a dump back");
    fclose(f);
    remove(tmp);
    write_seed(dir, name, buf, len);
}

static void three_blocks(const char *dir)
{
    const uint64_t counts[3] = {2, 1, 3};
    unsigned char file[MPIDHT_DUMP_HEADER_SIZE + 3 * MPIDHT_DUMP_BLOCK_ENTRY_SIZE + 6 * RECORD];
    unsigned char *records = file + MPIDHT_DUMP_HEADER_SIZE + 3 * MPIDHT_DUMP_BLOCK_ENTRY_SIZE;
    for (int i = 0; i < 6 * RECORD; ++i)
        records[i] = (unsigned char)(i * 37 + 11);
    mpidht_dump_block_t blocks[3];
    size_t at = 0;
    for (int b = 0; b < 3; ++b) {
        blocks[b].entries = counts[b];
        blocks[b].checksum = mpidht_dump_checksum(records + at, counts[b] * RECORD);
        at += counts[b] * RECORD;
    }
    mpidht_dump_encode_blocks(blocks, 3, file + MPIDHT_DUMP_HEADER_SIZE);
    mpidht_dump_header_t h = {
        .version = MPIDHT_DUMP_FORMAT_VERSION,
        .byte_order = mpidht_dump_native_byte_order(),
        .key_size = KEY,
        .value_size = VALUE,
        .entries = 6,
        .blocks = 3,
        .table_checksum = mpidht_dump_checksum(file + MPIDHT_DUMP_HEADER_SIZE,
                                               3 * MPIDHT_DUMP_BLOCK_ENTRY_SIZE),
    };
    mpidht_dump_encode_header(&h, file);
    write_seed(dir, "three-blocks", file, sizeof file);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc != 2)
        fail("usage: make_seeds DIR");
    dump_seed(argv[1], "empty", 0);
    dump_seed(argv[1], "three-entries", 3);
    dump_seed(argv[1], "forty-entries", 40);
    three_blocks(argv[1]);
    MPI_Finalize();
    return 0;
}
