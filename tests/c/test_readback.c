/*
 * A completed write stays: every rank rewrites a few keys of its own and
 * reads each one back at once, while the other ranks read those same keys
 * all the time. Nobody else writes a rank's keys, so the read-back must
 * return exactly the value just written, under every protocol; and every
 * read of another rank's key returns a whole value of that key.
 *
 * usage: test_readback coarse|fine|lockfree [OPS] (OPS per rank, default
 * 20000, scaled by MPIDHT_TEST_SCALE)
 */
#include "test_util.h"

enum { KEY_SIZE = 16, OWN_KEYS = 4 };

typedef struct {
    uint64_t key_id;
    uint64_t seq;
    unsigned char payload[88]; /* 104-byte values, as in the paper */
} value_t;

static void make_value(value_t *v, uint64_t key_id, uint64_t seq)
{
    v->key_id = key_id;
    v->seq = seq;
    test_fill(v->payload, sizeof v->payload, key_id, seq);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(argc >= 2);
    mpidht_protocol_t protocol = test_protocol_arg(argv[1]);
    uint64_t ops = test_scaled(argc >= 3 ? strtoull(argv[2], NULL, 10) : 20000, 200);
    int rank = test_rank(), size = test_size();
    mpidht_params_t p = test_params(protocol, KEY_SIZE, sizeof(value_t), 1 << 20);
    mpidht_t *table = NULL;
    CHECK_OK(mpidht_create(MPI_COMM_WORLD, &p, &table));

    uint64_t state = (uint64_t)rank * 0x9e3779b97f4a7c15u + 1, readbacks = 0, others = 0;
    for (uint64_t op = 0; op < ops; ++op) {
        unsigned char key[KEY_SIZE];
        value_t value, got;
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        if (op % 2 == 0 || size == 1) {
            uint64_t id = (uint64_t)rank * OWN_KEYS + op / 2 % OWN_KEYS;
            test_fill(key, KEY_SIZE, id, 3);
            make_value(&value, id, op);
            CHECK_OK(mpidht_write(table, key, &value, NULL));
            TEST_CONTEXT("%s: reading back key %" PRIu64 " after write %" PRIu64,
                         argv[1], id, op);
            CHECK_OK(mpidht_read(table, key, &got));
            CHECK(memcmp(&got, &value, sizeof value) == 0);
            ++readbacks;
        } else {
            uint64_t id = state % ((uint64_t)size * OWN_KEYS);
            test_fill(key, KEY_SIZE, id, 3);
            mpidht_status_t st = mpidht_read(table, key, &got);
            CHECK(st == MPIDHT_OK || st == MPIDHT_NOT_FOUND);
            if (st == MPIDHT_OK) {
                make_value(&value, id, got.seq);
                CHECK(memcmp(&got, &value, sizeof value) == 0);
                ++others;
            }
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    uint64_t all_others = 0;
    MPI_Reduce(&others, &all_others, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s np=%d: %" PRIu64 " read-backs per rank, %" PRIu64
               " reads of other ranks' keys hit\n", argv[1], size, readbacks, all_others);
    CHECK_OK(mpidht_free(&table));
    MPI_Finalize();
    return 0;
}
