#include <string.h>

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

/* The counters are uint64_t fields in list order; they are viewed as an
 * array through memcpy. */
_Static_assert(sizeof(mpidht_stats_t) == MPIDHT_STATS_COUNT * sizeof(uint64_t),
               "mpidht_stats_t must hold only its uint64_t counters");

const char *mpidht_stats_name(int i)
{
    return i >= 0 && i < MPIDHT_STATS_COUNT ? stats_names[i] : NULL;
}

const char *mpidht_stats_description(int i)
{
    return i >= 0 && i < MPIDHT_STATS_COUNT ? stats_descriptions[i] : NULL;
}

uint64_t mpidht_stats_value(const mpidht_stats_t *stats, int i)
{
    uint64_t values[MPIDHT_STATS_COUNT];
    if (!stats || i < 0 || i >= MPIDHT_STATS_COUNT)
        return 0;
    memcpy(values, stats, sizeof values);
    return values[i];
}

mpidht_status_t mpidht_stats_local(const mpidht_t *table, mpidht_stats_t *stats)
{
    if (!table)
        return MPIDHT_ERR_INVALID_HANDLE;
    if (!stats)
        return MPIDHT_ERR_NULL_ARGUMENT;
    *stats = table->stats;
    return MPIDHT_OK;
}

mpidht_status_t mpidht_stats_global(const mpidht_t *table, mpidht_stats_t *stats)
{
    if (!table)
        return MPIDHT_ERR_INVALID_HANDLE;
    /* Every process must still enter the reduction, or the others hang;
     * the last element counts the processes that passed no buffer. */
    uint64_t mine[MPIDHT_STATS_COUNT + 1], total[MPIDHT_STATS_COUNT + 1];
    memcpy(mine, &table->stats, sizeof table->stats);
    mine[MPIDHT_STATS_COUNT] = stats == NULL;
    if (MPI_Allreduce(mine, total, MPIDHT_STATS_COUNT + 1, MPI_UINT64_T,
                      MPI_SUM, table->comm) != MPI_SUCCESS)
        return MPIDHT_ERR_MPI;
    if (!stats)
        return MPIDHT_ERR_NULL_ARGUMENT;
    if (total[MPIDHT_STATS_COUNT] != 0)
        return MPIDHT_ERR_PEER;
    memcpy(stats, total, sizeof *stats);
    return MPIDHT_OK;
}

mpidht_status_t mpidht_stats_reset(mpidht_t *table)
{
    if (!table)
        return MPIDHT_ERR_INVALID_HANDLE;
    memset(&table->stats, 0, sizeof table->stats);
    return MPIDHT_OK;
}
