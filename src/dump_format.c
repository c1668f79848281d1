#include "dump_format.h"

#include <string.h>

#include <xxhash.h>

static const unsigned char magic[8] = {'M', 'P', 'I', 'D', 'H', 'T', 'D', 'B'};

uint64_t mpidht_dump_checksum(const void *data, size_t len)
{
    return XXH3_64bits(data, len);
}

uint32_t mpidht_dump_native_byte_order(void)
{
    const uint16_t probe = 1;
    unsigned char first;
    memcpy(&first, &probe, 1);
    return first ? MPIDHT_BYTE_ORDER_LITTLE : MPIDHT_BYTE_ORDER_BIG;
}

uint64_t mpidht_dump_block_cap(size_t record_size)
{
    uint64_t cap = MPIDHT_DUMP_BLOCK_BYTES / record_size;
    return cap ? cap : 1;
}

static void put_le(unsigned char *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; ++i)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

void mpidht_dump_encode_header(const mpidht_dump_header_t *h,
                               unsigned char out[MPIDHT_DUMP_HEADER_SIZE])
{
    memcpy(out, magic, sizeof magic);
    put_le(out + 8, h->version, 4);
    put_le(out + 12, h->byte_order, 4);
    put_le(out + 16, h->key_size, 8);
    put_le(out + 24, h->value_size, 8);
    put_le(out + 32, h->entries, 8);
    put_le(out + 40, h->blocks, 8);
    put_le(out + 48, h->table_checksum, 8);
    put_le(out + 56, mpidht_dump_checksum(out, 56), 8);
}

mpidht_status_t mpidht_dump_decode_header(const unsigned char *in, size_t len,
                                          mpidht_dump_header_t *h)
{
    size_t compared = len < sizeof magic ? len : sizeof magic;
    if (len == 0 || memcmp(in, magic, compared) != 0)
        return MPIDHT_ERR_FILE_FORMAT;
    if (len < MPIDHT_DUMP_HEADER_SIZE)
        return MPIDHT_ERR_FILE_CORRUPT;
    h->version = (uint32_t)get_le(in + 8, 4);
    if (h->version != MPIDHT_DUMP_FORMAT_VERSION)
        return MPIDHT_ERR_FILE_FORMAT;
    if (get_le(in + 56, 8) != mpidht_dump_checksum(in, 56))
        return MPIDHT_ERR_FILE_CORRUPT;
    h->byte_order = (uint32_t)get_le(in + 12, 4);
    h->key_size = get_le(in + 16, 8);
    h->value_size = get_le(in + 24, 8);
    h->entries = get_le(in + 32, 8);
    h->blocks = get_le(in + 40, 8);
    h->table_checksum = get_le(in + 48, 8);
    if (h->byte_order != MPIDHT_BYTE_ORDER_LITTLE && h->byte_order != MPIDHT_BYTE_ORDER_BIG)
        return MPIDHT_ERR_FILE_CORRUPT;
    return MPIDHT_OK;
}

mpidht_status_t mpidht_dump_check_layout(const mpidht_dump_header_t *h,
                                         size_t key_size, size_t value_size,
                                         uint64_t file_size)
{
    if (h->key_size != key_size || h->value_size != value_size)
        return MPIDHT_ERR_FILE_MISMATCH;
    /* The table's sizes are bounded (MPIDHT_MAX_*), so this cannot wrap. */
    uint64_t record = (uint64_t)key_size + value_size;
    if (h->blocks > h->entries || (h->entries > 0) != (h->blocks > 0))
        return MPIDHT_ERR_FILE_CORRUPT;
    /* With blocks <= entries, header + entries * (record + 16) bounds the
     * layout; refuse anything that would not fit 64 bits before
     * multiplying. */
    if (h->entries > (UINT64_MAX - MPIDHT_DUMP_HEADER_SIZE) /
                         (record + MPIDHT_DUMP_BLOCK_ENTRY_SIZE))
        return MPIDHT_ERR_FILE_CORRUPT;
    uint64_t expected = MPIDHT_DUMP_HEADER_SIZE +
                        h->blocks * MPIDHT_DUMP_BLOCK_ENTRY_SIZE + h->entries * record;
    return expected == file_size ? MPIDHT_OK : MPIDHT_ERR_FILE_CORRUPT;
}

uint64_t mpidht_dump_records_offset(const mpidht_dump_header_t *h)
{
    return MPIDHT_DUMP_HEADER_SIZE + h->blocks * MPIDHT_DUMP_BLOCK_ENTRY_SIZE;
}

void mpidht_dump_encode_blocks(const mpidht_dump_block_t *blocks, uint64_t n,
                               unsigned char *out)
{
    for (uint64_t i = 0; i < n; ++i) {
        put_le(out + i * MPIDHT_DUMP_BLOCK_ENTRY_SIZE, blocks[i].entries, 8);
        put_le(out + i * MPIDHT_DUMP_BLOCK_ENTRY_SIZE + 8, blocks[i].checksum, 8);
    }
}

mpidht_status_t mpidht_dump_decode_blocks(const mpidht_dump_header_t *h,
                                          const unsigned char *in,
                                          mpidht_dump_block_t *out)
{
    /* A checked header's block table fits in the file, hence in size_t. */
    if (mpidht_dump_checksum(in, (size_t)(h->blocks * MPIDHT_DUMP_BLOCK_ENTRY_SIZE)) !=
        h->table_checksum)
        return MPIDHT_ERR_FILE_CORRUPT;
    uint64_t cap = mpidht_dump_block_cap((size_t)(h->key_size + h->value_size));
    uint64_t total = 0;
    for (uint64_t i = 0; i < h->blocks; ++i) {
        out[i].entries = get_le(in + i * MPIDHT_DUMP_BLOCK_ENTRY_SIZE, 8);
        out[i].checksum = get_le(in + i * MPIDHT_DUMP_BLOCK_ENTRY_SIZE + 8, 8);
        /* total <= entries, and each count <= cap: no wrap. */
        if (out[i].entries == 0 || out[i].entries > cap ||
            out[i].entries > h->entries - total)
            return MPIDHT_ERR_FILE_CORRUPT;
        total += out[i].entries;
    }
    return total == h->entries ? MPIDHT_OK : MPIDHT_ERR_FILE_CORRUPT;
}
