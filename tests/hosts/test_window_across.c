/*
 * The window a table uses across hosts: run with ranks on two or more
 * hosts (on-hosts.sh). The default kind resolves to an MPI_Win_allocate
 * window reached through one-sided calls (never a shared window, never
 * direct access), and every protocol stores and reads back a key hosted on
 * every process. Where the MPI library has no one-sided component between
 * the hosts (Open MPI 4.1 from Debian with its default components),
 * create must say so: MPIDHT_ERR_WINDOW_UNSUPPORTED with MPI's message in
 * the error detail, on every process, and never MPIDHT_ERR_NO_MEMORY.
 *
 * usage: test_window_across works|may-fail
 *   works     create must succeed
 *   may-fail  create may instead fail as described above
 */
#include "test_util.h"

enum { KEY_SIZE = 16, VALUE_SIZE = 24, KEYS = 64 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(argc == 2 && (!strcmp(argv[1], "works") || !strcmp(argv[1], "may-fail")));
    bool may_fail = !strcmp(argv[1], "may-fail");
    MPI_Comm node;
    int node_size = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);
    CHECK(node_size < test_size()); /* the ranks are on more than one host */

    for (int p = 0; p < TEST_PROTOCOL_COUNT; ++p) {
        TEST_CONTEXT("%s", mpidht_protocol_name(test_protocols[p]));
        char detail[256] = "";
        mpidht_params_t params = test_params(test_protocols[p], KEY_SIZE, VALUE_SIZE, 1 << 16);
        params.error_detail = detail;
        params.error_detail_size = sizeof detail;
        mpidht_t *table = NULL;
        mpidht_status_t st = mpidht_create(MPI_COMM_WORLD, &params, &table);
        if (may_fail && st == MPIDHT_ERR_WINDOW_UNSUPPORTED) {
            CHECK(strncmp(detail, "MPI_Win_allocate failed: ", 25) == 0);
            if (test_rank() == 0)
                printf("%s: no one-sided component between the hosts: %s\n",
                       mpidht_protocol_name(test_protocols[p]), detail);
            continue;
        }
        CHECK_OK(st);
        mpidht_info_t info = MPIDHT_INFO_INIT;
        CHECK_OK(mpidht_get_info(table, &info));
        CHECK(info.window == MPIDHT_WINDOW_ALLOCATE);
        CHECK(info.direct == 0);
        /* Every rank writes its own keys, then reads every rank's. */
        unsigned char key[KEY_SIZE], value[VALUE_SIZE], got[VALUE_SIZE];
        for (uint64_t i = 0; i < KEYS; ++i) {
            uint64_t id = (uint64_t)test_rank() * KEYS + i;
            test_fill(key, KEY_SIZE, id, 1);
            test_fill(value, VALUE_SIZE, id, 2);
            CHECK_OK(mpidht_write(table, key, value, NULL));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        for (uint64_t id = 0; id < (uint64_t)test_size() * KEYS; ++id) {
            test_fill(key, KEY_SIZE, id, 1);
            test_fill(value, VALUE_SIZE, id, 2);
            CHECK_OK(mpidht_read(table, key, got));
            CHECK(memcmp(got, value, VALUE_SIZE) == 0);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_OK(mpidht_free(&table));
        if (test_rank() == 0)
            printf("%s: allocate window across %d ranks, not direct, %d keys read back\n",
                   mpidht_protocol_name(test_protocols[p]), test_size(), test_size() * KEYS);
    }
    MPI_Finalize();
    return 0;
}
