// The public headers from C++ (C++11, -pedantic -Wall -Wextra -Werror):
// the _INIT macros initialize their structs (C's designated initializers
// were none before C++20, and left fields without an initializer), and a
// program links with MPI's C library alone (mpi.h's C++ bindings are left
// out). Then the calls a C++ program makes: create, write, read, the
// statistics and the info, POET's API, free.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <mpidht.h>
#include <mpidht_poet.h>

#define EXPECT(cond)                                                                \
    do {                                                                            \
        if (!(cond)) {                                                              \
            std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            MPI_Abort(MPI_COMM_WORLD, 1);                                           \
        }                                                                           \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    mpidht_params_t params;
    EXPECT(mpidht_params_init(&params) == MPIDHT_OK);
    params.key_size = sizeof(long);
    params.value_size = sizeof(double);
    params.memory_per_process = 1 << 16;
    mpidht_t *table = nullptr;
    EXPECT(mpidht_create(MPI_COMM_WORLD, &params, &table) == MPIDHT_OK);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    long key = rank;
    double value = 2.5 * rank, back = 0;
    EXPECT(mpidht_write(table, &key, &value, nullptr) == MPIDHT_OK);
    EXPECT(mpidht_read(table, &key, &back) == MPIDHT_OK && back == value);

    mpidht_stats_t stats = MPIDHT_STATS_INIT;
    EXPECT(stats.struct_size == sizeof stats && stats.reads == 0);
    EXPECT(mpidht_stats_local(table, &stats) == MPIDHT_OK);
    EXPECT(stats.reads == 1 && stats.hits == 1 && stats.writes == 1);
    mpidht_info_t info = MPIDHT_INFO_INIT;
    EXPECT(info.struct_size == sizeof info && info.direct == 0);
    EXPECT(mpidht_get_info(table, &info) == MPIDHT_OK);
    EXPECT(info.key_size == sizeof(long) && info.protocol == MPIDHT_PROTOCOL_LOCKFREE);
    mpidht_restore_report_t report = MPIDHT_RESTORE_REPORT_INIT;
    EXPECT(report.struct_size == sizeof report && report.entries == 0);
    EXPECT(mpidht_free(&table) == MPIDHT_OK && table == nullptr);

    DHT *poet = DHT_create(MPI_COMM_WORLD, 64, sizeof(double), sizeof(long), nullptr);
    EXPECT(poet != nullptr);
    EXPECT(DHT_write(poet, &key, &value) == DHT_SUCCESS);
    EXPECT(DHT_read(poet, &key, &back) == DHT_SUCCESS && back == value);
    EXPECT(DHT_free(poet, nullptr, nullptr) == DHT_SUCCESS);
    MPI_Finalize();
    return 0;
}
