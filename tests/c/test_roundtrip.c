/*
 * Every rank writes its own keys; after a barrier every rank reads every
 * rank's keys back (hits with the exact value) and keys never written
 * (misses that leave the output untouched). For each protocol and for
 * aligned, odd and the paper's key/value sizes. Under the locking
 * protocols all ranks write at once.
 */
#include "test_util.h"

/* 4 ranks x 30 keys + 16 misses fit even 1-byte keys. */
enum { KEYS_PER_RANK = 30, MISSES = 16 };

static void roundtrip(mpidht_protocol_t protocol, size_t key_size, size_t value_size)
{
    int rank = test_rank(), size = test_size();
    TEST_CONTEXT("testing %s with %zu-byte keys, %zu-byte values",
                 mpidht_protocol_name(protocol), key_size, value_size);
    mpidht_params_t p = test_params(protocol, key_size, value_size, 256 * 1024);
    mpidht_t *table = NULL;
    CHECK_OK(mpidht_create(MPI_COMM_WORLD, &p, &table));
    CHECK(table != NULL);

    unsigned char *key = malloc(key_size), *value = malloc(value_size),
                  *expect = malloc(value_size), *out = malloc(value_size);
    for (uint64_t i = 0; i < KEYS_PER_RANK; ++i) {
        uint64_t id = (uint64_t)rank * KEYS_PER_RANK + i;
        test_fill(key, key_size, id, 1);
        test_fill(value, value_size, id, 2);
        mpidht_write_outcome_t outcome = MPIDHT_WRITE_EVICTED;
        CHECK_OK(mpidht_write(table, key, value, &outcome));
        CHECK(outcome == MPIDHT_WRITE_INSERTED);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = 0; r < size; ++r) {
        for (uint64_t i = 0; i < KEYS_PER_RANK; ++i) {
            uint64_t id = (uint64_t)r * KEYS_PER_RANK + i;
            test_fill(key, key_size, id, 1);
            test_fill(expect, value_size, id, 2);
            memset(out, 0xAB, value_size);
            CHECK_OK(mpidht_read(table, key, out));
            CHECK(memcmp(out, expect, value_size) == 0);
        }
    }
    for (uint64_t i = 0; i < MISSES; ++i) {
        test_fill(key, key_size, (uint64_t)size * KEYS_PER_RANK + i, 1);
        memset(out, 0xAB, value_size);
        CHECK_STATUS(mpidht_read(table, key, out), MPIDHT_NOT_FOUND);
        for (size_t b = 0; b < value_size; ++b)
            CHECK(out[b] == 0xAB);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(mpidht_free(&table));
    CHECK(table == NULL);
    free(key);
    free(value);
    free(expect);
    free(out);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    static const size_t sizes[][2] = {{16, 40}, {13, 27}, {80, 104}, {1, 1}, {8, 8}};
    for (int p = 0; p < TEST_PROTOCOL_COUNT; ++p)
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; ++s)
            roundtrip(test_protocols[p], sizes[s][0], sizes[s][1]);
    MPI_Finalize();
    return 0;
}
