/*
 * Validation of creation parameters on one process, and the bucket
 * geometry they imply. Pure functions, no communication. Internal.
 */
#ifndef MPIDHT_PARAMS_H
#define MPIDHT_PARAMS_H

#include "mpidht.h"

/* Checks everything about *params that one process can check alone. */
mpidht_status_t mpidht_params_check(const mpidht_params_t *params);

/* Bucket stride for the protocol: header + meta + key + value, rounded
 * up to 8 bytes. Requires checked params. */
size_t mpidht_params_bucket_size(const mpidht_params_t *params);

/* The candidates setting with the default applied. */
unsigned mpidht_params_candidates(const mpidht_params_t *params);

/* Buckets that fit in the memory budget, or an error if the budget is
 * non-zero but below one bucket, or above 2^32 buckets. */
mpidht_status_t mpidht_params_buckets(const mpidht_params_t *params,
                                      uint64_t *buckets);

#endif /* MPIDHT_PARAMS_H */
