#include "params.h"

#include <string.h>

#include "protocol.h"

/* The largest bucket (8-byte header, meta byte, largest key and value,
 * padding) times the most buckets per process must be a valid window
 * displacement; then no offset computation can overflow. */
_Static_assert((MPIDHT_MAX_KEY_SIZE + MPIDHT_MAX_VALUE_SIZE + 16) *
                       MPIDHT_MAX_BUCKETS_PER_PROCESS <
                   ((uint64_t)1 << 62),
               "bucket offsets must fit a signed 64-bit MPI_Aint");
_Static_assert(sizeof(MPI_Aint) >= 8, "mpidht needs a 64-bit MPI_Aint");

mpidht_status_t mpidht_params_init(mpidht_params_t *params)
{
    if (!params)
        return MPIDHT_ERR_NULL_ARGUMENT;
    memset(params, 0, sizeof *params);
    params->struct_size = sizeof *params;
    params->protocol = MPIDHT_PROTOCOL_LOCKFREE;
    params->window = MPIDHT_WINDOW_AUTO;
    params->candidates = 0;
    return MPIDHT_OK;
}

mpidht_status_t mpidht_params_check(const mpidht_params_t *params)
{
    if (!params)
        return MPIDHT_ERR_NULL_ARGUMENT;
    if (params->struct_size != sizeof *params)
        return MPIDHT_ERR_PARAMS_VERSION;
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
    return MPIDHT_OK;
}

size_t mpidht_params_bucket_size(const mpidht_params_t *params)
{
    const mpidht_protocol_ops_t *ops = mpidht_protocol_lookup(params->protocol);
    /* Both sizes are bounded above, so the sum cannot wrap. */
    size_t raw = ops->header_size + 1 + params->key_size + params->value_size;
    return (raw + 7) & ~(size_t)7;
}

unsigned mpidht_params_candidates(const mpidht_params_t *params)
{
    return params->candidates ? params->candidates : MPIDHT_DEFAULT_CANDIDATES;
}

mpidht_status_t mpidht_params_buckets(const mpidht_params_t *params,
                                      uint64_t *buckets)
{
    uint64_t n = (uint64_t)params->memory_per_process /
                 mpidht_params_bucket_size(params);
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
    mpidht_status_t st = mpidht_params_check(params);
    if (st == MPIDHT_OK)
        *bucket_size = mpidht_params_bucket_size(params);
    return st;
}
