/*
 * What the header promises about order, under every protocol: operations
 * on keys are linearizable. Rank 0 writes sequence numbers 1, 2, ... into
 * key A, then the same number into key B; every other rank keeps reading B
 * and then A. A reader never sees a number go down in either key, and
 * having seen s in B it finds at least s in A (B was written after A).
 *
 * usage: test_read_order coarse|fine|lockfree [WRITES]
 * (default 5000, scaled by MPIDHT_TEST_SCALE)
 */
#include "test_util.h"

enum { KEY_SIZE = 16 };

typedef struct {
    uint64_t seq;
    unsigned char payload[56];
} value_t;

static bool read_seq(mpidht_t *table, const unsigned char *key, uint64_t id, uint64_t *seq)
{
    value_t v, expect;
    mpidht_status_t st = mpidht_read(table, key, &v);
    CHECK(st == MPIDHT_OK || st == MPIDHT_NOT_FOUND);
    if (st != MPIDHT_OK)
        return false;
    test_fill(expect.payload, sizeof expect.payload, id, v.seq);
    expect.seq = v.seq;
    CHECK(memcmp(&v, &expect, sizeof v) == 0);
    *seq = v.seq;
    return true;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(argc >= 2);
    mpidht_protocol_t protocol = test_protocol_arg(argv[1]);
    uint64_t writes = test_scaled(argc >= 3 ? strtoull(argv[2], NULL, 10) : 5000, 200);
    int rank = test_rank(), size = test_size();
    mpidht_params_t p = test_params(protocol, KEY_SIZE, sizeof(value_t), 1 << 16);
    mpidht_t *table = NULL;
    CHECK_OK(mpidht_create(MPI_COMM_WORLD, &p, &table));
    unsigned char a[KEY_SIZE], b[KEY_SIZE];
    test_fill(a, KEY_SIZE, 1, 0);
    test_fill(b, KEY_SIZE, 2, 0);
    MPI_Barrier(MPI_COMM_WORLD);

    uint64_t last_a = 0, last_b = 0, reads = 0;
    if (rank == 0) {
        value_t v;
        for (uint64_t s = 1; s <= writes; ++s) {
            v.seq = s;
            test_fill(v.payload, sizeof v.payload, 1, s);
            CHECK_OK(mpidht_write(table, a, &v, NULL));
            test_fill(v.payload, sizeof v.payload, 2, s);
            CHECK_OK(mpidht_write(table, b, &v, NULL));
        }
    } else {
        /* Until the last number shows in B (bounded: the writer finishes). */
        while (last_b < writes) {
            uint64_t sa = 0, sb = 0;
            bool has_b = read_seq(table, b, 2, &sb);
            bool has_a = read_seq(table, a, 1, &sa);
            ++reads;
            TEST_CONTEXT("%s: read %" PRIu64 ": B %" PRIu64 " (last %" PRIu64 "), A %" PRIu64
                         " (last %" PRIu64 ")", argv[1], reads, sb, last_b, sa, last_a);
            CHECK(!has_b || sb >= last_b);
            CHECK(!has_a || sa >= last_a);
            CHECK(!has_b || has_a);
            CHECK(!has_b || sa >= sb);
            last_b = has_b ? sb : last_b;
            last_a = has_a ? sa : last_a;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    uint64_t all_reads = 0;
    MPI_Reduce(&reads, &all_reads, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s np=%d: %" PRIu64 " writes each of A and B, %" PRIu64
               " ordered read pairs\n", argv[1], size, writes, all_reads);
    CHECK_OK(mpidht_free(&table));
    MPI_Finalize();
    return 0;
}
