/*
 * The dump file format (described in include/mpidht.h): encoding and
 * checking the header and the block table. Pure functions, no MPI and no
 * I/O, so that they can be unit-tested and fuzzed directly. Internal.
 */
#ifndef MPIDHT_DUMP_FORMAT_H
#define MPIDHT_DUMP_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "mpidht.h"

#define MPIDHT_DUMP_HEADER_SIZE 64
#define MPIDHT_DUMP_BLOCK_ENTRY_SIZE 16

enum { MPIDHT_BYTE_ORDER_LITTLE = 1, MPIDHT_BYTE_ORDER_BIG = 2 };

typedef struct mpidht_dump_header {
    uint32_t version;
    uint32_t byte_order;
    uint64_t key_size;
    uint64_t value_size;
    uint64_t entries;
    uint64_t blocks;
    uint64_t table_checksum;
} mpidht_dump_header_t;

typedef struct mpidht_dump_block {
    uint64_t entries;
    uint64_t checksum; /* XXH3-64 of the block's records */
} mpidht_dump_block_t;

/* XXH3-64 of len bytes. */
uint64_t mpidht_dump_checksum(const void *data, size_t len);

/* The byte order of this machine, MPIDHT_BYTE_ORDER_LITTLE or _BIG. */
uint32_t mpidht_dump_native_byte_order(void);

/* Records per block for records of record_size bytes (at least 1). */
uint64_t mpidht_dump_block_cap(size_t record_size);

/* Writes the 64-byte header, its own checksum included. */
void mpidht_dump_encode_header(const mpidht_dump_header_t *h,
                               unsigned char out[MPIDHT_DUMP_HEADER_SIZE]);

/* Reads a header from the first len bytes of a file (all of them if
 * fewer than 64). MPIDHT_ERR_FILE_FORMAT for another magic or version, or
 * an empty file; MPIDHT_ERR_FILE_CORRUPT for a file that starts like a
 * dump but ends within the header, a failing header checksum or a byte
 * order that is neither value. */
mpidht_status_t mpidht_dump_decode_header(const unsigned char *in, size_t len,
                                          mpidht_dump_header_t *h);

/* Checks a decoded header against the table's sizes and the file's size:
 * MPIDHT_ERR_FILE_MISMATCH for other key or value sizes,
 * MPIDHT_ERR_FILE_CORRUPT unless the file is exactly header, block table
 * and records, with no more blocks than entries and blocks only when
 * there are entries. Nothing overflows for any header. */
mpidht_status_t mpidht_dump_check_layout(const mpidht_dump_header_t *h,
                                         size_t key_size, size_t value_size,
                                         uint64_t file_size);

/* Byte offset of the first record, for a checked header. */
uint64_t mpidht_dump_records_offset(const mpidht_dump_header_t *h);

/* Writes n block entries (16 bytes each) to out. */
void mpidht_dump_encode_blocks(const mpidht_dump_block_t *blocks, uint64_t n,
                               unsigned char *out);

/* Decodes the block table of a checked header (h->blocks entries of 16
 * bytes at in) into out. MPIDHT_ERR_FILE_CORRUPT unless its checksum
 * matches the header's, every block holds 1 to
 * mpidht_dump_block_cap(key + value) records and the counts sum to
 * h->entries. */
mpidht_status_t mpidht_dump_decode_blocks(const mpidht_dump_header_t *h,
                                          const unsigned char *in,
                                          mpidht_dump_block_t *out);

#endif /* MPIDHT_DUMP_FORMAT_H */
