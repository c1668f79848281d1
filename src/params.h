/*
 * Validation of creation parameters on one process, and the bucket
 * geometry they imply. Pure functions, no communication. Internal.
 */
#ifndef MPIDHT_PARAMS_H
#define MPIDHT_PARAMS_H

#include "layout.h"
#include "mpidht.h"

/* The caller's parameters as this version's struct: the fields a caller
 * compiled against an older header did not have take their defaults.
 * MPIDHT_ERR_NULL_ARGUMENT, or MPIDHT_ERR_PARAMS_VERSION if struct_size is
 * no layout this library knows. */
mpidht_status_t mpidht_params_read(const mpidht_params_t *params, mpidht_params_t *full);

/* Checks everything about *params (as read) that one process can check. */
mpidht_status_t mpidht_params_check(const mpidht_params_t *params);

/* The bucket layout for checked params. */
mpidht_layout_t mpidht_params_layout(const mpidht_params_t *params);

/* The candidates setting with the default applied. */
unsigned mpidht_params_candidates(const mpidht_params_t *params);

/* Buckets that fit in the memory budget, or an error if the budget is
 * non-zero but below one bucket, or above 2^32 buckets. */
mpidht_status_t mpidht_params_buckets(const mpidht_params_t *params,
                                      uint64_t *buckets);

#endif /* MPIDHT_PARAMS_H */
