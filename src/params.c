#include "params.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "protocol.h"

/* The largest bucket (lock, recency and checksum words, meta byte,
 * largest key and value, padding) times the most buckets per process must
 * be a valid window displacement; then no offset computation can
 * overflow. */
_Static_assert((MPIDHT_MAX_KEY_SIZE + MPIDHT_MAX_VALUE_SIZE + 40) *
                       MPIDHT_MAX_BUCKETS_PER_PROCESS <
                   ((uint64_t)1 << 62),
               "bucket offsets must fit a signed 64-bit MPI_Aint");
_Static_assert(sizeof(MPI_Aint) >= 8, "mpidht needs a 64-bit MPI_Aint");

/* The struct as 0.1 knew it ended before eviction, as 0.2.0 knew it
 * before error_detail. */
#define PARAMS_SIZE_0_1 offsetof(mpidht_params_t, eviction)
#define PARAMS_SIZE_0_2 offsetof(mpidht_params_t, error_detail)

mpidht_status_t mpidht_params_init(mpidht_params_t *params)
{
    if (!params)
        return MPIDHT_ERR_NULL_ARGUMENT;
    memset(params, 0, sizeof *params);
    params->struct_size = sizeof *params;
    params->protocol = MPIDHT_PROTOCOL_LOCKFREE;
    params->window = MPIDHT_WINDOW_AUTO;
    params->candidates = 0;
    params->eviction = MPIDHT_EVICT_RECENCY;
    params->timeout = MPIDHT_DEFAULT_TIMEOUT;
    return MPIDHT_OK;
}

mpidht_status_t mpidht_params_read(const mpidht_params_t *params, mpidht_params_t *full)
{
    if (!params)
        return MPIDHT_ERR_NULL_ARGUMENT;
    size_t size = params->struct_size;
    if (size != PARAMS_SIZE_0_1 && size != PARAMS_SIZE_0_2 && size != sizeof *params)
        return MPIDHT_ERR_PARAMS_VERSION;
    mpidht_params_init(full);
    memcpy(full, params, size);
    full->struct_size = sizeof *full;
    return MPIDHT_OK;
}

mpidht_status_t mpidht_params_check(const mpidht_params_t *params)
{
    if (params->key_size == 0 || params->key_size > MPIDHT_MAX_KEY_SIZE)
        return MPIDHT_ERR_KEY_SIZE;
    if (params->value_size == 0 || params->value_size > MPIDHT_MAX_VALUE_SIZE)
        return MPIDHT_ERR_VALUE_SIZE;
    if (!mpidht_protocol_lookup(params->protocol))
        return MPIDHT_ERR_UNKNOWN_PROTOCOL;
    switch (params->window) {
    case MPIDHT_WINDOW_AUTO:
    case MPIDHT_WINDOW_SHARED:
    case MPIDHT_WINDOW_ALLOCATE:
    case MPIDHT_WINDOW_CREATE:
        break;
    default:
        return MPIDHT_ERR_UNKNOWN_WINDOW;
    }
    if (params->candidates > MPIDHT_MAX_CANDIDATES)
        return MPIDHT_ERR_CANDIDATES;
    if (params->eviction != MPIDHT_EVICT_RECENCY && params->eviction != MPIDHT_EVICT_LAST)
        return MPIDHT_ERR_UNKNOWN_EVICTION;
    if (!(params->timeout >= 0) || !isfinite(params->timeout))
        return MPIDHT_ERR_TIMEOUT_SETTING;
    return MPIDHT_OK;
}

mpidht_layout_t mpidht_params_layout(const mpidht_params_t *params)
{
    return mpidht_layout(params->protocol, params->key_size, params->value_size);
}

unsigned mpidht_params_candidates(const mpidht_params_t *params)
{
    return params->candidates ? params->candidates : MPIDHT_DEFAULT_CANDIDATES;
}

mpidht_status_t mpidht_params_buckets(const mpidht_params_t *params,
                                      uint64_t *buckets)
{
    uint64_t n = (uint64_t)params->memory_per_process /
                 mpidht_params_layout(params).bucket_size;
    if (params->memory_per_process > 0 && n == 0)
        return MPIDHT_ERR_BUDGET_TOO_SMALL;
    if (n > MPIDHT_MAX_BUCKETS_PER_PROCESS)
        return MPIDHT_ERR_BUDGET_TOO_LARGE;
    *buckets = n;
    return MPIDHT_OK;
}

mpidht_status_t mpidht_bucket_size(const mpidht_params_t *params,
                                   size_t *bucket_size)
{
    if (!bucket_size)
        return MPIDHT_ERR_NULL_ARGUMENT;
    mpidht_params_t full;
    mpidht_status_t st = mpidht_params_read(params, &full);
    if (st == MPIDHT_OK)
        st = mpidht_params_check(&full);
    if (st == MPIDHT_OK)
        *bucket_size = mpidht_params_layout(&full).bucket_size;
    return st;
}
