/*
 * Two tables dumping to one path at the same time (each half of the
 * processes has its own table, with other values): rank 0 of each dump
 * locks "<path>.partial" until its rename, so a dump that finds it locked
 * is refused (MPIDHT_ERR_FILE_IO, its detail naming the other dump) and
 * one that returns MPIDHT_OK left its whole table at path. In every round
 * at least one dump succeeds, and the file then restores to exactly the
 * table of a dump that returned MPIDHT_OK: never a mix, never cut short,
 * never the refused table's. Needs at least 2 processes.
 */
#include "table_digest.h"

enum { IDS = 4000, KEY = 16, VALUE = 48, ROUNDS = 10 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(test_size() >= 2);
    int half = test_rank() % 2;
    MPI_Comm comm;
    MPI_Comm_split(MPI_COMM_WORLD, half, test_rank(), &comm);
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    const char *file = "test_dump_concurrent.mpidht";
    /* half h writes ids [0, IDS) with values of salt 5 + h, into a table
     * roomy enough that none is evicted (a tenth full at one process: at
     * 1 MiB, four fifths of the room, a few were) */
    mpidht_params_t p = test_params(MPIDHT_PROTOCOL_LOCKFREE, KEY, VALUE, 4 << 20);
    mpidht_t *mine = NULL;
    CHECK_OK(mpidht_create(comm, &p, &mine));
    unsigned char key[KEY], value[VALUE];
    for (uint64_t id = (uint64_t)rank; id < IDS; id += (uint64_t)size) {
        test_fill(key, KEY, id, 1);
        test_fill(value, VALUE, id, 5 + (uint64_t)half);
        mpidht_write_outcome_t outcome;
        CHECK_OK(mpidht_write(mine, key, value, &outcome));
        CHECK(outcome == MPIDHT_WRITE_INSERTED);
    }
    table_digest_t of_half[2] = {digest_ids(IDS, KEY, VALUE, 5), digest_ids(IDS, KEY, VALUE, 6)};
    for (int round = 0; round < ROUNDS; ++round) {
        TEST_CONTEXT("round %d", round);
        MPI_Barrier(MPI_COMM_WORLD);
        mpidht_status_t st = mpidht_dump(mine, file);
        if (st != MPIDHT_OK) {
            CHECK(st == MPIDHT_ERR_FILE_IO);
            if (rank == 0)
                CHECK(strstr(mpidht_error_detail(mine), "another dump") != NULL);
        }
        /* which halves' dumps succeeded, from each half's rank 0 */
        int ok[2] = {0, 0}, mine_ok = rank == 0 && st == MPIDHT_OK;
        int flags[2] = {half == 0 && mine_ok, half == 1 && mine_ok};
        MPI_Allreduce(flags, ok, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        CHECK(ok[0] || ok[1]);
        mpidht_params_t all = test_params(MPIDHT_PROTOCOL_LOCKFREE, KEY, VALUE, 4 << 20);
        mpidht_t *check = NULL;
        CHECK_OK(mpidht_create(MPI_COMM_WORLD, &all, &check));
        CHECK_OK(mpidht_restore(check, file, NULL));
        table_digest_t got = digest_table(check, KEY, VALUE);
        CHECK((ok[0] && digest_equal(got, of_half[0])) || (ok[1] && digest_equal(got, of_half[1])));
        CHECK_OK(mpidht_free(&check));
    }
    TEST_CONTEXT("%s", "");
    CHECK_OK(mpidht_free(&mine));
    MPI_Comm_free(&comm);
    MPI_Barrier(MPI_COMM_WORLD);
    if (test_rank() == 0)
        remove(file);
    MPI_Finalize();
    return 0;
}
