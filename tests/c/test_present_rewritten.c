/*
 * A key present all along is always found. Every rank writes keys of its
 * own once, then keeps rewriting them in place (the same keys, new
 * values) while it reads every rank's keys, one at a time and all in one
 * batch. No key is removed, and none is evicted (every first write must
 * insert, every rewrite update), so every read must hit and return a
 * whole value of its key. The reads race the rewrites of other ranks:
 * under the lock-free protocol a copy torn by a rewrite must be read
 * again, never taken for a miss; large values widen that window.
 *
 * With "shared", every key hashes alike, so all keys share one list of
 * candidate buckets: rank 0 first fills the candidates that the ranks'
 * keys (one each) leave over with keys nobody rewrites, and the ranks'
 * keys take the last candidates. A read then passes by other keys'
 * buckets, whole or torn, before it reaches its own, which may be torn;
 * and a key never written, read as often, must be a miss every time.
 *
 * Large values (VALUE bytes) widen every protocol's window: a fine reader
 * that let go of its registration before its copy ended, or a coarse one
 * that copied outside its lock, would copy while a rewrite writes.
 *
 * usage: test_present_rewritten coarse|fine|lockfree [OPS] [shared|spread]
 *        [VALUE] (OPS per rank, default 20000, scaled by MPIDHT_TEST_SCALE;
 *        VALUE bytes, a multiple of 8, default 2048)
 */
#include "test_util.h"

enum { KEY_SIZE = 16, OWN_KEYS = 4, MAX_RANKS = 64, CANDIDATES = 6 };

/* A value: its key's id, its write's sequence number, then words that
 * both determine (a copy torn between two writes mismatches somewhere). */
enum { HEAD = 2 };

static void make_key(unsigned char *key, uint64_t id)
{
    test_fill(key, KEY_SIZE, id, 5);
}

static uint64_t word(uint64_t key_id, uint64_t seq, size_t i)
{
    uint64_t x = (key_id * 0x9e3779b97f4a7c15u ^ seq) + i * 0xbf58476d1ce4e5b9u;
    return x ^ x >> 31;
}

static void make_value(uint64_t *v, size_t words, uint64_t key_id, uint64_t seq)
{
    v[0] = key_id;
    v[1] = seq;
    for (size_t i = HEAD; i < words; ++i)
        v[i] = word(key_id, seq, i);
}

/* v is a whole value written for key id. */
static void check_whole(const uint64_t *v, size_t words, uint64_t id)
{
    CHECK(v[0] == id);
    size_t i = HEAD;
    while (i < words && v[i] == word(id, v[1], i))
        ++i;
    CHECK(i == words);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(argc >= 2);
    mpidht_protocol_t protocol = test_protocol_arg(argv[1]);
    uint64_t ops = test_scaled(argc >= 3 ? strtoull(argv[2], NULL, 10) : 20000, 200);
    bool shared = argc >= 4 && !strcmp(argv[3], "shared");
    CHECK(argc < 4 || shared || !strcmp(argv[3], "spread"));
    size_t value_size = argc >= 5 ? strtoull(argv[4], NULL, 10) : 2048;
    CHECK(value_size % 8 == 0 && value_size >= 8 * HEAD);
    size_t words = value_size / 8;
    int rank = test_rank(), size = test_size();
    CHECK(size <= (shared ? CANDIDATES : MAX_RANKS));
    /* Keys 0 .. fillers-1: rank 0's, written once; then own_keys per rank. */
    uint64_t own_keys = shared ? 1 : OWN_KEYS, fillers = shared ? CANDIDATES - (uint64_t)size : 0;
    size_t keys = (size_t)(fillers + (uint64_t)size * own_keys);
    /* Room for every key in its first candidate, at any value size. */
    size_t memory = (size_t)1 << 20;
    while (memory < 64 * (value_size + 64))
        memory *= 2;
    mpidht_params_t p = test_params(protocol, KEY_SIZE, value_size, memory);
    if (shared) {
        p.hash = test_hash_constant;
        p.candidates = CANDIDATES;
    }
    mpidht_t *table = NULL;
    CHECK_OK(mpidht_create(MPI_COMM_WORLD, &p, &table));

    uint64_t *value = malloc(value_size), *got = malloc(value_size),
             *all = malloc(MAX_RANKS * OWN_KEYS * value_size);
    CHECK(value && got && all);
    static unsigned char all_keys[MAX_RANKS * OWN_KEYS + 1][KEY_SIZE];
    unsigned char found[MAX_RANKS * OWN_KEYS], key[KEY_SIZE];
    for (size_t id = 0; id <= keys; ++id)
        make_key(all_keys[id], id); /* all_keys[keys]: never written */
    for (uint64_t id = 0; rank == 0 && id < fillers; ++id) {
        mpidht_write_outcome_t outcome;
        make_value(value, words, id, 0);
        TEST_CONTEXT("%s: write of filler key %" PRIu64, argv[1], id);
        CHECK_OK(mpidht_write(table, all_keys[id], value, &outcome));
        CHECK(outcome == MPIDHT_WRITE_INSERTED);
    }
    /* In rank order, so that in shared mode each key takes the next candidate. */
    for (int r = 0; r < size; ++r) {
        for (uint64_t k = 0; r == rank && k < own_keys; ++k) {
            uint64_t id = fillers + (uint64_t)rank * own_keys + k;
            mpidht_write_outcome_t outcome;
            make_value(value, words, id, 0);
            TEST_CONTEXT("%s: first write of key %" PRIu64, argv[1], id);
            CHECK_OK(mpidht_write(table, all_keys[id], value, &outcome));
            CHECK(outcome == MPIDHT_WRITE_INSERTED);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }

    uint64_t state = (uint64_t)rank * 0x9e3779b97f4a7c15u + 1, reads = 0;
    for (uint64_t op = 1; op <= ops; ++op) {
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        if (op % 2 == 0) {
            uint64_t id = fillers + (uint64_t)rank * own_keys + op / 2 % own_keys;
            mpidht_write_outcome_t outcome;
            make_value(value, words, id, op);
            TEST_CONTEXT("%s: rewrite %" PRIu64 " of key %" PRIu64, argv[1], op, id);
            CHECK_OK(mpidht_write(table, all_keys[id], value, &outcome));
            CHECK(outcome == MPIDHT_WRITE_UPDATED);
        } else if (op % 4 == 1) {
            /* In shared mode one read in keys + 1 is of the key never written. */
            uint64_t id = state % (keys + shared);
            memcpy(key, all_keys[id], KEY_SIZE);
            TEST_CONTEXT("%s: read %" PRIu64 " of key %" PRIu64, argv[1], op, id);
            if (id == keys) {
                CHECK_STATUS(mpidht_read(table, key, got), MPIDHT_NOT_FOUND);
                continue;
            }
            CHECK_OK(mpidht_read(table, key, got));
            check_whole(got, words, id);
            ++reads;
        } else {
            TEST_CONTEXT("%s: batched read %" PRIu64 " of all %zu keys", argv[1], op, keys);
            /* Whatever a row was left with before: each must be answered. */
            memset(found, 2, keys);
            memset(all, 0xa5, keys * value_size);
            CHECK_OK(mpidht_read_batch(table, keys, all_keys, all, found));
            for (size_t id = 0; id < keys; ++id) {
                CHECK(found[id] == 1);
                check_whole(all + id * words, words, id);
            }
            reads += keys;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    uint64_t all_reads = 0;
    MPI_Reduce(&reads, &all_reads, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s np=%d: %" PRIu64 " operations per rank, %" PRIu64 " reads, all hits\n",
               argv[1], size, ops, all_reads);
    CHECK_OK(mpidht_free(&table));
    free(value);
    free(got);
    free(all);
    MPI_Finalize();
    return 0;
}
