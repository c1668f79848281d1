/*
 * Structs that carry their size: the library fills an output struct only
 * up to the caller's struct_size (an older caller's shorter struct is not
 * written past), refuses a struct_size below any layout it knows, and
 * accepts parameters from a caller compiled before the fields appended in
 * 0.2 (taking their defaults). Status numbers are fixed.
 */
#include <stddef.h>

#include "test_util.h"

/* The parameters as 0.1 laid them out: what an older caller passes. */
typedef struct {
    size_t struct_size, key_size, value_size, memory_per_process;
    mpidht_protocol_t protocol;
    mpidht_window_kind_t window;
    unsigned candidates;
    mpidht_hash_fn hash;
    void *hash_user_data;
} params_0_1_t;

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    /* Numbers that callers and other languages may have stored. */
    CHECK(MPIDHT_OK == 0 && MPIDHT_NOT_FOUND == 1 && MPIDHT_ERR_MPI == 18);
    CHECK(MPIDHT_ERR_FILE_CORRUPT == 26 && MPIDHT_ERR_CONCURRENT_USE == 27);
    CHECK(MPIDHT_ERR_TIMEOUT == 28 && MPIDHT_ERR_STRUCT_SIZE == 29);
    CHECK(offsetof(mpidht_params_t, eviction) == sizeof(params_0_1_t));

    /* An older caller's parameters: accepted, defaults for the rest. */
    params_0_1_t old;
    memset(&old, 0, sizeof old);
    old.struct_size = sizeof old;
    old.key_size = 8;
    old.value_size = 8;
    old.memory_per_process = 4096;
    old.protocol = MPIDHT_PROTOCOL_FINE;
    mpidht_t *table = NULL;
    CHECK_OK(mpidht_create(MPI_COMM_WORLD, (const mpidht_params_t *)(void *)&old, &table));
    mpidht_info_t info = MPIDHT_INFO_INIT;
    CHECK_OK(mpidht_get_info(table, &info));
    CHECK(info.eviction == MPIDHT_EVICT_RECENCY && info.protocol == MPIDHT_PROTOCOL_FINE);
    size_t bucket = 0;
    CHECK_OK(mpidht_bucket_size((const mpidht_params_t *)(void *)&old, &bucket));
    CHECK(bucket == info.bucket_size);
    CHECK_OK(mpidht_free(&table));

    /* A 0.2.0 caller's parameters end before error_detail: accepted, with
     * its eviction and timeout, and no detail written anywhere. */
    mpidht_params_t p;
    CHECK_OK(mpidht_params_init(&p));
    p.key_size = 8;
    p.value_size = 8;
    p.memory_per_process = 4096;
    p.eviction = MPIDHT_EVICT_LAST;
    p.timeout = 7.5;
    p.struct_size = offsetof(mpidht_params_t, error_detail);
    p.error_detail = (char *)(uintptr_t)1; /* beyond its struct: never read */
    p.error_detail_size = 1;
    CHECK_OK(mpidht_create(MPI_COMM_WORLD, &p, &table));
    CHECK_OK(mpidht_get_info(table, &info));
    CHECK(info.eviction == MPIDHT_EVICT_LAST && info.timeout == 7.5);
    p.key_size = 0;
    CHECK_STATUS(mpidht_bucket_size(&p, &bucket), MPIDHT_ERR_KEY_SIZE);
    CHECK_OK(mpidht_params_init(&p));
    p.struct_size = sizeof old - 1; /* no known layout */
    CHECK_STATUS(mpidht_bucket_size(&p, &bucket), MPIDHT_ERR_PARAMS_VERSION);

    /* A short output struct: only what fits is written. */
    unsigned char key[8] = {1}, value[8] = {2};
    CHECK_OK(mpidht_write(table, key, value, NULL));
    CHECK_OK(mpidht_read(table, key, value));
    struct {
        mpidht_stats_t stats;
        unsigned char guard[64];
    } s;
    memset(&s, 0xab, sizeof s);
    s.stats.struct_size = offsetof(mpidht_stats_t, hits) + sizeof(uint64_t);
    CHECK_OK(mpidht_stats_local(table, &s.stats));
    CHECK(s.stats.reads == 1 && s.stats.hits == 1);
    const unsigned char *after = (const unsigned char *)&s.stats + s.stats.struct_size;
    for (size_t i = 0; after + i < (const unsigned char *)(&s + 1); ++i)
        CHECK(after[i] == 0xab);
    CHECK(mpidht_stats_value(&s.stats, 1) == 1);  /* hits: inside */
    CHECK(mpidht_stats_value(&s.stats, 2) == 0);  /* misses: beyond the struct */
    s.stats.struct_size = offsetof(mpidht_stats_t, reads) - 1;
    CHECK_STATUS(mpidht_stats_local(table, &s.stats), MPIDHT_ERR_STRUCT_SIZE);
    mpidht_stats_t zero = {0};
    CHECK_STATUS(mpidht_stats_local(table, &zero), MPIDHT_ERR_STRUCT_SIZE);
    CHECK_STATUS(mpidht_stats_global(table, &zero), MPIDHT_ERR_STRUCT_SIZE);
    mpidht_info_t short_info;
    memset(&short_info, 0xcd, sizeof short_info);
    short_info.struct_size = offsetof(mpidht_info_t, value_size);
    CHECK_OK(mpidht_get_info(table, &short_info));
    CHECK(short_info.key_size == 8);
    const unsigned char *rest = (const unsigned char *)&short_info.value_size;
    for (size_t i = 0; i < sizeof short_info.value_size; ++i)
        CHECK(rest[i] == 0xcd);
    mpidht_info_t no_info = {0};
    CHECK_STATUS(mpidht_get_info(table, &no_info), MPIDHT_ERR_STRUCT_SIZE);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(mpidht_free(&table));
    MPI_Finalize();
    return 0;
}
