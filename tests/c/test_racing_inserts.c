/*
 * Racing inserts into one free bucket: the table is a single bucket (on
 * rank 0, one candidate), and in every round every rank writes a key of
 * its own at the same moment. Afterwards exactly one of the keys is in the
 * table, whole; the outcomes say so (one insert, the rest evictions of the
 * key before them); and nothing is lost twice. Then the key is removed for
 * the next round.
 *
 * usage: test_racing_inserts coarse|fine|lockfree VALUE_BYTES ROUNDS
 * (ROUNDS scaled by MPIDHT_TEST_SCALE)
 */
#include "test_util.h"

enum { KEY_SIZE = 16 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(argc == 4);
    mpidht_protocol_t protocol = test_protocol_arg(argv[1]);
    size_t value_size = (size_t)strtoull(argv[2], NULL, 10);
    uint64_t rounds = test_scaled(strtoull(argv[3], NULL, 10), 20);
    CHECK(value_size >= 16);
    int rank = test_rank(), size = test_size();

    mpidht_params_t p = test_params(protocol, KEY_SIZE, value_size, 0);
    size_t bucket = 0;
    CHECK_OK(mpidht_bucket_size(&p, &bucket));
    p.memory_per_process = rank == 0 ? bucket : 0;
    p.candidates = 1;
    mpidht_t *table = NULL;
    CHECK_OK(mpidht_create(MPI_COMM_WORLD, &p, &table));
    mpidht_info_t info = MPIDHT_INFO_INIT;
    CHECK_OK(mpidht_get_info(table, &info));
    CHECK(info.total_buckets == 1);

    unsigned char *value = malloc(value_size), *got = malloc(value_size),
                  *expect = malloc(value_size);
    CHECK(value && got && expect);
    uint64_t evictions = 0;
    for (uint64_t round = 0; round < rounds; ++round) {
        unsigned char key[KEY_SIZE];
        uint64_t id = round * (uint64_t)size + (uint64_t)rank;
        test_fill(key, KEY_SIZE, id, 1);
        test_fill(value, value_size, id, 2);
        mpidht_write_outcome_t outcome;
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_OK(mpidht_write(table, key, value, &outcome));
        MPI_Barrier(MPI_COMM_WORLD);

        /* Exactly one key of this round reads back, whole. */
        int present = 0, holder = -1;
        for (int r = 0; r < size; ++r) {
            test_fill(key, KEY_SIZE, round * (uint64_t)size + (uint64_t)r, 1);
            mpidht_status_t st = mpidht_read(table, key, got);
            CHECK(st == MPIDHT_OK || st == MPIDHT_NOT_FOUND);
            if (st != MPIDHT_OK)
                continue;
            test_fill(expect, value_size, round * (uint64_t)size + (uint64_t)r, 2);
            TEST_CONTEXT("%s: round %" PRIu64 ", key of rank %d", argv[1], round, r);
            CHECK(memcmp(got, expect, value_size) == 0);
            ++present;
            holder = r;
        }
        TEST_CONTEXT("%s: round %" PRIu64, argv[1], round);
        CHECK(present == 1);
        int inserted = outcome == MPIDHT_WRITE_INSERTED, all_inserted = 0;
        MPI_Allreduce(&inserted, &all_inserted, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK(all_inserted == 1);
        CHECK(outcome == MPIDHT_WRITE_INSERTED || outcome == MPIDHT_WRITE_EVICTED);
        evictions += outcome == MPIDHT_WRITE_EVICTED;
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            test_fill(key, KEY_SIZE, round * (uint64_t)size + (uint64_t)holder, 1);
            CHECK_OK(mpidht_remove(table, key));
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    uint64_t all_evictions = 0;
    MPI_Reduce(&evictions, &all_evictions, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        CHECK(all_evictions == rounds * (uint64_t)(size - 1));
        printf("%s np=%d value %zu B: %" PRIu64 " rounds, no key lost twice\n", argv[1],
               size, value_size, rounds);
    }
    free(value);
    free(got);
    free(expect);
    CHECK_OK(mpidht_free(&table));
    MPI_Finalize();
    return 0;
}
