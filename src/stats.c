#include <inttypes.h>
#include <stddef.h>
#include <string.h>

#include "collective_check.h"
#include "table.h"

static const char *const stats_names[] = {
#define MPIDHT_STATS_NAME_(name, description) #name,
    MPIDHT_STATS_LIST(MPIDHT_STATS_NAME_)
#undef MPIDHT_STATS_NAME_
};

static const char *const stats_descriptions[] = {
#define MPIDHT_STATS_DESCRIPTION_(name, description) description,
    MPIDHT_STATS_LIST(MPIDHT_STATS_DESCRIPTION_)
#undef MPIDHT_STATS_DESCRIPTION_
};

/* The counters are uint64_t fields in list order after struct_size; they
 * are viewed as an array through memcpy. */
#define COUNTERS_OFFSET offsetof(mpidht_stats_t, reads)
_Static_assert(sizeof(mpidht_stats_t) ==
                   COUNTERS_OFFSET + MPIDHT_STATS_COUNT * sizeof(uint64_t),
               "mpidht_stats_t must hold only struct_size and its uint64_t counters");

const char *mpidht_stats_name(int i)
{
    return i >= 0 && i < MPIDHT_STATS_COUNT ? stats_names[i] : NULL;
}

const char *mpidht_stats_description(int i)
{
    return i >= 0 && i < MPIDHT_STATS_COUNT ? stats_descriptions[i] : NULL;
}

/* Counters the caller's struct has room for. */
static int counters_fitting(size_t struct_size)
{
    if (struct_size <= COUNTERS_OFFSET)
        return 0;
    size_t n = (struct_size - COUNTERS_OFFSET) / sizeof(uint64_t);
    return n < MPIDHT_STATS_COUNT ? (int)n : MPIDHT_STATS_COUNT;
}

uint64_t mpidht_stats_value(const mpidht_stats_t *stats, int i)
{
    uint64_t value = 0;
    if (stats && i >= 0 && i < counters_fitting(stats->struct_size))
        memcpy(&value, (const unsigned char *)stats + COUNTERS_OFFSET + (size_t)i * 8,
               sizeof value);
    return value;
}

/* Copies counters into the caller's struct, as many as fit. */
static void fill(mpidht_stats_t *stats, const uint64_t *counters)
{
    memcpy((unsigned char *)stats + COUNTERS_OFFSET, counters,
           (size_t)counters_fitting(stats->struct_size) * sizeof(uint64_t));
}

static void counters_of(const mpidht_stats_t *s, uint64_t *counters)
{
    memcpy(counters, (const unsigned char *)s + COUNTERS_OFFSET,
           MPIDHT_STATS_COUNT * sizeof(uint64_t));
}

/* The caller's struct must reach past struct_size (the minimum is one
 * counter: the first layout with struct_size had them all). */
static mpidht_status_t check_stats(const mpidht_stats_t *stats)
{
    if (!stats)
        return MPIDHT_ERR_NULL_ARGUMENT;
    return stats->struct_size > COUNTERS_OFFSET ? MPIDHT_OK : MPIDHT_ERR_STRUCT_SIZE;
}

mpidht_status_t mpidht_stats_local(const mpidht_t *table, mpidht_stats_t *stats)
{
    if (!table)
        return MPIDHT_ERR_INVALID_HANDLE;
    mpidht_status_t st = check_stats(stats);
    if (st != MPIDHT_OK)
        return st;
    uint64_t counters[MPIDHT_STATS_COUNT];
    counters_of(&table->stats, counters);
    fill(stats, counters);
    return MPIDHT_OK;
}

mpidht_status_t mpidht_stats_global(const mpidht_t *table, mpidht_stats_t *stats)
{
    mpidht_status_t st = mpidht_enter_collective(table, MPIDHT_CALL_STATS_GLOBAL);
    if (st != MPIDHT_OK)
        return st;
    /* Every process must still enter the reduction, or the others hang;
     * the last element counts the processes whose struct was unusable. */
    mpidht_status_t mine = check_stats(stats);
    uint64_t local[MPIDHT_STATS_COUNT + 1], total[MPIDHT_STATS_COUNT + 1];
    counters_of(&table->stats, local);
    local[MPIDHT_STATS_COUNT] = mine != MPIDHT_OK;
    if (MPI_Allreduce(local, total, MPIDHT_STATS_COUNT + 1, MPI_UINT64_T, MPI_SUM,
                      table->comm) != MPI_SUCCESS)
        return MPIDHT_ERR_MPI;
    if (mine != MPIDHT_OK) {
        mpidht_set_detail(table, "global statistics: on this process (rank %d): %s",
                          table->rank, mpidht_strerror(mine));
        return mine;
    }
    if (total[MPIDHT_STATS_COUNT] != 0) {
        mpidht_set_detail(table, "global statistics: %" PRIu64 " other process%s gave no "
                          "usable struct (NULL or too small a struct_size)",
                          total[MPIDHT_STATS_COUNT],
                          total[MPIDHT_STATS_COUNT] == 1 ? "" : "es");
        return MPIDHT_ERR_PEER;
    }
    fill(stats, total);
    return MPIDHT_OK;
}

mpidht_status_t mpidht_stats_reset(mpidht_t *table)
{
    if (!table)
        return MPIDHT_ERR_INVALID_HANDLE;
    memset(&table->stats, 0, sizeof table->stats);
    table->stats.struct_size = sizeof table->stats;
    return MPIDHT_OK;
}
