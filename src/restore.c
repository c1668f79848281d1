/*
 * mpidht_restore: rank 0 reads and checks the header and the block table
 * and sends them to everyone; every process verifies a share of the
 * blocks; only then, in rounds, each process reads one block, sends its
 * records to the processes hosting their keys (MPI_Alltoallv), and writes
 * what it receives into its own buckets: on a direct table with loads and
 * stores, one record after the other, else with mpidht_write_batch; a
 * record that finds its candidates taken is placed by a search
 * (restore_search.h). Memory is bounded by a block per process and round
 * (and the search's work space).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <xxhash.h>

#include "bucket.h"
#include "collective.h"
#include "collective_check.h"
#include "dump_format.h"
#include "engine.h"
#include "file_io.h"
#include "restore_search.h"
#include "rma.h"
#include "table.h"

typedef struct dump_file {
    MPI_File fh;
    const char *path;            /* the file fh is open on */
    mpidht_dump_header_t header;
    mpidht_dump_block_t *blocks; /* [header.blocks] */
    uint64_t *offsets;           /* [header.blocks] byte offset of each */
    size_t record_size;
    MPI_Datatype entry;          /* a routed record (route_and_write) */
    unsigned char *block;        /* one block's records */
} dump_file_t;

/* Records travel to the process hosting their key as entries: the record
 * (key, then value), then the key's hash (as the host computes it, which
 * it need not compute again). */
enum { HASH_BYTES = sizeof(uint64_t) };

static size_t entry_size(const mpidht_t *t)
{
    return t->key_size + t->value_size + HASH_BYTES;
}

static uint64_t entry_hash(const mpidht_t *t, const unsigned char *entry)
{
    uint64_t hash;
    memcpy(&hash, entry + t->key_size + t->value_size, sizeof hash);
    return hash;
}

/* Rank 0: reads and checks header and block table. */
static mpidht_status_t read_index_root(const mpidht_t *t, dump_file_t *f)
{
    MPI_Offset size = 0;
    int rc = MPI_File_get_size(f->fh, &size);
    if (rc != MPI_SUCCESS || size < 0) {
        /* /proc/self/status: the lseek of Open MPI's ompio fails. */
        if (rc != MPI_SUCCESS)
            mpidht_set_mpi_detail(t, rc, "cannot find the size of", f->path);
        else
            mpidht_set_detail(t, "cannot find the size of '%s': MPI gave %lld bytes", f->path,
                              (long long)size);
        return MPIDHT_ERR_FILE_IO;
    }
    unsigned char header[MPIDHT_DUMP_HEADER_SIZE];
    size_t len = (uint64_t)size < sizeof header ? (size_t)size : sizeof header;
    mpidht_status_t st = mpidht_file_read_at(t, f->fh, f->path, 0, header, len);
    if (st == MPIDHT_OK)
        st = mpidht_dump_decode_header(header, len, &f->header);
    if (st == MPIDHT_OK)
        st = mpidht_dump_check_layout(&f->header, t->key_size, t->value_size,
                                      (uint64_t)size);
    if (st != MPIDHT_OK)
        return st;
    /* The layout check bounds the table by the file's size. */
    size_t table_len = (size_t)(f->header.blocks * MPIDHT_DUMP_BLOCK_ENTRY_SIZE);
    unsigned char *table = malloc(table_len + 1);
    f->blocks = malloc((size_t)(f->header.blocks + 1) * sizeof *f->blocks);
    st = table && f->blocks ? MPIDHT_OK : MPIDHT_ERR_NO_MEMORY;
    if (st == MPIDHT_OK)
        st = mpidht_file_read_at(t, f->fh, f->path, MPIDHT_DUMP_HEADER_SIZE, table, table_len);
    if (st == MPIDHT_OK)
        st = mpidht_dump_decode_blocks(&f->header, table, f->blocks);
    free(table);
    return st;
}

/* Everyone: the index rank 0 read, or the same error. */
static mpidht_status_t read_index(const mpidht_t *t, dump_file_t *f)
{
    mpidht_status_t st = t->rank == 0 ? read_index_root(t, f) : MPIDHT_OK;
    st = mpidht_agree_same(t->comm, st);
    if (st != MPIDHT_OK)
        return st;
    uint64_t h[5] = {f->header.key_size, f->header.value_size, f->header.entries,
                     f->header.blocks, f->header.table_checksum};
    if (MPI_Bcast(h, 5, MPI_UINT64_T, 0, t->comm) != MPI_SUCCESS)
        return MPIDHT_ERR_MPI;
    f->header.key_size = h[0];
    f->header.value_size = h[1];
    f->header.entries = h[2];
    f->header.blocks = h[3];
    f->header.table_checksum = h[4];
    if (t->rank != 0)
        f->blocks = malloc((size_t)(f->header.blocks + 1) * sizeof *f->blocks);
    f->offsets = malloc((size_t)(f->header.blocks + 1) * sizeof *f->offsets);
    st = mpidht_agree_same(t->comm, f->blocks && f->offsets ? MPIDHT_OK
                                                            : MPIDHT_ERR_NO_MEMORY);
    /* In pieces: MPI counts are int. */
    const uint64_t piece = (uint64_t)1 << 26;
    for (uint64_t at = 0; st == MPIDHT_OK && at < f->header.blocks; at += piece) {
        uint64_t n = f->header.blocks - at < piece ? f->header.blocks - at : piece;
        if (MPI_Bcast(f->blocks + at, (int)(2 * n), MPI_UINT64_T, 0, t->comm) !=
            MPI_SUCCESS)
            st = MPIDHT_ERR_MPI;
    }
    if (st != MPIDHT_OK)
        return st;
    f->record_size = (size_t)(f->header.key_size + f->header.value_size);
    uint64_t offset = mpidht_dump_records_offset(&f->header);
    for (uint64_t i = 0; i < f->header.blocks; ++i) {
        f->offsets[i] = offset;
        offset += f->blocks[i].entries * f->record_size;
    }
    size_t block_bytes = (size_t)mpidht_dump_block_cap(f->record_size) * f->record_size;
    f->block = malloc(block_bytes);
    if (!f->block)
        st = MPIDHT_ERR_NO_MEMORY;
    else if (MPI_Type_contiguous((int)(f->record_size + HASH_BYTES), MPI_BYTE, &f->entry) !=
                 MPI_SUCCESS ||
             MPI_Type_commit(&f->entry) != MPI_SUCCESS)
        st = MPIDHT_ERR_MPI;
    return mpidht_agree_same(t->comm, st);
}

/* Reads block i into f->block and checks its checksum. */
static mpidht_status_t read_block(const mpidht_t *t, dump_file_t *f, uint64_t i)
{
    size_t len = (size_t)f->blocks[i].entries * f->record_size;
    mpidht_status_t st = mpidht_file_read_at(t, f->fh, f->path, f->offsets[i], f->block, len);
    if (st == MPIDHT_OK && mpidht_dump_checksum(f->block, len) != f->blocks[i].checksum)
        st = MPIDHT_ERR_FILE_CORRUPT;
    return st;
}

/* Every block, each by one process, before anything is written. */
static mpidht_status_t verify_blocks(const mpidht_t *t, dump_file_t *f)
{
    mpidht_status_t st = MPIDHT_OK;
    for (uint64_t i = (uint64_t)t->rank; st == MPIDHT_OK && i < f->header.blocks;
         i += (uint64_t)t->comm_size)
        st = read_block(t, f, i);
    return mpidht_agree_same(t->comm, st);
}

/* Buffers of the load rounds, grown as needed. */
typedef struct load_buffers {
    int *send_counts, *send_displs, *recv_counts, *recv_displs, *dest;
    uint64_t *hash; /* of each record of the block */
    unsigned char *send, *recv, *keys, *values;
    uint32_t *keep;                             /* place's work space: a count per record */
    uint32_t *set;                              /* and a set of set_size slots */
    size_t set_size;
    size_t recv_capacity; /* records */
    mpidht_write_outcome_t *outcomes;
    mpidht_search_t *search; /* at the first record deferred */
    /* This process's part held no entry when the restore began (a direct
     * table): every entry in it sits in the first of its candidates that
     * was free when it came, and none has left (mpidht_search_store). */
    bool ordered;
} load_buffers_t;

static void free_buffers(load_buffers_t *b)
{
    free(b->send_counts);
    free(b->send_displs);
    free(b->recv_counts);
    free(b->recv_displs);
    free(b->dest);
    free(b->hash);
    free(b->send);
    free(b->recv);
    free(b->keys);
    free(b->values);
    free(b->keep);
    free(b->set);
    free(b->outcomes);
    mpidht_search_free(b->search);
}

/* buffer grown to bytes, or, if that fails, buffer as it was and *ok
 * false. */
static void *grown(void *buffer, size_t bytes, bool *ok)
{
    void *larger = realloc(buffer, bytes);
    if (!larger)
        *ok = false;
    return larger ? larger : buffer;
}

/* Room for `records` entries received, and on a table that is not
 * direct for place's work on them. */
static mpidht_status_t grow_receive(const mpidht_t *t, load_buffers_t *b, size_t records)
{
    if (records <= b->recv_capacity)
        return MPIDHT_OK;
    bool ok = true; /* every buffer stays valid, grown or not */
    b->recv = grown(b->recv, records * entry_size(t), &ok);
    if (ok && t->direct) {
        b->recv_capacity = records;
        return MPIDHT_OK;
    }
    b->keys = grown(b->keys, records * t->key_size, &ok);
    b->values = grown(b->values, records * t->value_size, &ok);
    b->outcomes = grown(b->outcomes, records * sizeof *b->outcomes, &ok);
    b->keep = grown(b->keep, records * sizeof *b->keep, &ok);
    size_t set_size = 1;
    while (set_size < 2 * records)
        set_size *= 2;
    b->set = grown(b->set, set_size * sizeof *b->set, &ok);
    if (!ok)
        return MPIDHT_ERR_NO_MEMORY;
    b->set_size = set_size;
    b->recv_capacity = records;
    return MPIDHT_OK;
}

/* What restore counts, per process, then summed. */
enum {
    TALLY_INSERTED, /* records added */
    TALLY_UPDATED,  /* records that replaced the value of a present key */
    TALLY_LOST,     /* records that found no room */
    TALLY_COUNT
};

/* Keeps, of rows with equal keys among the m rows of keys and values,
 * only the last (what writing them in order leaves), moving the rows kept
 * to the front in their order; returns how many. count[k] is then the
 * number of rows the k-th row kept stands for (itself and the earlier
 * rows of its key). set (set_size slots, a power of two of at least 2 m)
 * is work space; count has m entries. */
static size_t keep_last_of_each_key(const mpidht_t *t, unsigned char *keys,
                                    unsigned char *values, size_t m, uint32_t *count,
                                    uint32_t *set, size_t set_size)
{
    size_t ks = t->key_size, vs = t->value_size;
    memset(set, 0, set_size * sizeof *set);
    for (size_t i = m; i-- > 0;) { /* from the last: the first seen of a key is kept */
        const unsigned char *key = keys + i * ks;
        size_t at = (size_t)XXH3_64bits(key, ks) & (set_size - 1);
        while (set[at] != 0 && memcmp(keys + (size_t)(set[at] - 1) * ks, key, ks) != 0)
            at = (at + 1) & (set_size - 1);
        count[i] = set[at] == 0;
        if (count[i])
            set[at] = (uint32_t)(i + 1);
        else
            count[set[at] - 1]++;
    }
    size_t kept = 0;
    for (size_t i = 0; i < m; ++i) {
        if (!count[i])
            continue;
        if (kept != i) {
            memcpy(keys + kept * ks, keys + i * ks, ks);
            memcpy(values + kept * vs, values + i * vs, vs);
            count[kept] = count[i];
        }
        ++kept;
    }
    return kept;
}

/* Counts in tally a record that stands for `records` records of its key
 * (the last of them; keep_last_of_each_key): placed (inserted or, where
 * its key was present, updated) or not. As if written in order: where
 * the last finds room, the earlier ones did too and the later replaced
 * them (updates); where it finds none, none of them did. */
static void count_records(uint64_t tally[TALLY_COUNT], bool placed, bool updated,
                          uint32_t records)
{
    if (!placed) {
        tally[TALLY_LOST] += records;
        return;
    }
    tally[updated ? TALLY_UPDATED : TALLY_INSERTED]++;
    tally[TALLY_UPDATED] += records - 1;
}

/* Places key and value, whose candidates every one holds another key, by
 * a search (restore_search.h; its work space made at the first), and
 * counts it in tally as count_records does. Once the part is full, the
 * first search that fails has reached every bucket it could, and the
 * others pass them by. */
static mpidht_status_t search_one(mpidht_t *t, load_buffers_t *b, const void *key,
                                  const void *value, uint64_t stamp, uint32_t records,
                                  uint64_t tally[TALLY_COUNT])
{
    if (!b->search && !(b->search = mpidht_search_new(t)))
        return MPIDHT_ERR_NO_MEMORY;
    bool placed = false;
    mpidht_status_t st = mpidht_search_place(t, b->search, key, value, stamp, &placed);
    count_records(tally, placed, false, records);
    return st;
}

/* Places the rows among the first m of b->keys and b->values whose
 * writes were deferred (every candidate held another key), in order. */
static mpidht_status_t search_places(mpidht_t *t, load_buffers_t *b, size_t m,
                                     uint64_t tally[TALLY_COUNT])
{
    mpidht_status_t st = MPIDHT_OK;
    uint64_t stamp = mpidht_now_ms(t);
    for (size_t i = 0; st == MPIDHT_OK && i < m; ++i)
        if (b->outcomes[i] == MPIDHT_WRITE_DEFERRED)
            st = search_one(t, b, b->keys + i * t->key_size, b->values + i * t->value_size,
                            stamp, b->keep[i], tally);
    return st;
}

/* Whether no bucket of this process's part holds an entry (a direct
 * table; nothing in flight, restore's requirement). */
static bool own_part_empty(const mpidht_t *t)
{
    for (uint64_t i = 0; i < t->local_buckets; ++i)
        if (!mpidht_bucket_is_free(t, t->local_base + mpidht_bucket_disp(t, (uint32_t)i)))
            return false;
    return true;
}

/* b->ordered: on a direct table, whether this process's part holds no
 * entry now, at the start of the restore. */
static mpidht_status_t start_ordered(const mpidht_t *t, load_buffers_t *b)
{
    b->ordered = false;
    if (!t->direct)
        return MPIDHT_OK;
    /* Loads after the caller's synchronisation (MPI's unified model). */
    mpidht_status_t st = mpidht_mpi_status(MPI_Win_sync(t->win));
    b->ordered = st == MPIDHT_OK && own_part_empty(t);
    return st;
}

/* On a direct table: writes the m entries of b->recv into this
 * process's buckets one after the other, with loads and stores
 * (mpidht_search_store; the candidates of the record DIRECT_AHEAD on
 * asked for meanwhile: the first ASK_ORDERED of them where b->ordered,
 * for the store looks no further than the first free one), and places
 * each that finds its candidates taken by a search right away; adds what
 * they did to tally. Records with one key end as if written in order (the
 * last value; the others updates, or lost where the key finds no
 * room). */
enum { DIRECT_AHEAD = 8, ASK_ORDERED = 2 };

static void locate_ahead(mpidht_t *t, const load_buffers_t *b, size_t i,
                         mpidht_address_t *a)
{
    unsigned n = b->ordered ? ASK_ORDERED : MPIDHT_MAX_CANDIDATES;
    mpidht_locate_hashed(t, entry_hash(t, b->recv + i * entry_size(t)), a, n);
    mpidht_search_ask(t, a, n);
}

static mpidht_status_t place_direct(mpidht_t *t, load_buffers_t *b, size_t m,
                                    uint64_t tally[TALLY_COUNT])
{
    mpidht_address_t ahead[DIRECT_AHEAD];
    size_t es = entry_size(t);
    for (size_t i = 0; i < m && i < DIRECT_AHEAD; ++i)
        locate_ahead(t, b, i, &ahead[i]);
    mpidht_status_t st = MPIDHT_OK;
    uint64_t stamp = mpidht_now_ms(t);
    for (size_t i = 0; st == MPIDHT_OK && i < m; ++i) {
        mpidht_address_t a = ahead[i % DIRECT_AHEAD];
        if (i + DIRECT_AHEAD < m)
            locate_ahead(t, b, i + DIRECT_AHEAD, &ahead[i % DIRECT_AHEAD]);
        const unsigned char *key = b->recv + i * es, *value = key + t->key_size;
        mpidht_write_outcome_t o = mpidht_search_store(t, &a, key, value, stamp, b->ordered);
        if (o != MPIDHT_WRITE_DEFERRED)
            count_records(tally, true, o == MPIDHT_WRITE_UPDATED, 1);
        else
            st = search_one(t, b, key, value, stamp, 1, tally);
    }
    mpidht_status_t synced = mpidht_mpi_status(MPI_Win_sync(t->win));
    return st != MPIDHT_OK ? st : synced;
}

/* Writes the m entries received in b->recv into this process's buckets
 * (they are all its keys) and adds what they did to tally: on a direct
 * table place_direct, else through the engine, their keys and values
 * copied into b->keys and b->values. There, of records
 * with one key only the last is written (the others count as it does,
 * count_records), first every
 * record that finds room: an empty candidate, or its key; then the
 * others, each by a search for a path of moves that frees one of its
 * candidates (search_places). No entry leaves the table, so an older
 * value never comes back over a newer one. */
static mpidht_status_t place(mpidht_t *t, load_buffers_t *b, size_t m,
                             uint64_t tally[TALLY_COUNT])
{
    mpidht_status_t st = mpidht_engine_reserve(t, 1);
    if (st != MPIDHT_OK)
        return st;
    /* No operation is in flight anywhere (mpidht_restore's requirement)
     * and each process writes its own buckets: writes take no locks. */
    mpidht_engine_t *e = t->engine;
    e->exclusive = true;
    if (t->direct) {
        st = place_direct(t, b, m, tally);
        e->exclusive = false;
        return st;
    }
    for (size_t i = 0; i < m; ++i) {
        const unsigned char *r = b->recv + i * entry_size(t);
        memcpy(b->keys + i * t->key_size, r, t->key_size);
        memcpy(b->values + i * t->value_size, r + t->key_size, t->value_size);
    }
    size_t distinct = keep_last_of_each_key(t, b->keys, b->values, m, b->keep, b->set,
                                            b->set_size);
    e->defer_evictions = true;
    st = mpidht_write_batch(t, distinct, b->keys, b->values, b->outcomes);
    e->defer_evictions = false;
    bool deferred = false;
    for (size_t i = 0; st == MPIDHT_OK && i < distinct; ++i) {
        mpidht_write_outcome_t o = b->outcomes[i];
        deferred |= o == MPIDHT_WRITE_DEFERRED;
        if (o != MPIDHT_WRITE_DEFERRED)
            count_records(tally, true, o == MPIDHT_WRITE_UPDATED, b->keep[i]);
    }
    if (st == MPIDHT_OK && deferred)
        st = search_places(t, b, distinct, tally);
    e->exclusive = false;
    return st;
}

/* Sends the n records in f->block to the processes hosting their keys
 * and writes the ones received; adds the outcomes to tally. */
static mpidht_status_t route_and_write(mpidht_t *t, const dump_file_t *f,
                                       load_buffers_t *b, size_t n, uint64_t tally[TALLY_COUNT])
{
    int p = t->comm_size;
    memset(b->send_counts, 0, (size_t)p * sizeof *b->send_counts);
    for (size_t i = 0; i < n; ++i) {
        mpidht_address_t addr;
        mpidht_locate(t, f->block + i * f->record_size, &addr, 0); /* the host alone */
        b->dest[i] = addr.rank;
        b->hash[i] = addr.hash;
        b->send_counts[addr.rank]++;
    }
    int at = 0;
    for (int r = 0; r < p; ++r) {
        b->send_displs[r] = at;
        at += b->send_counts[r];
    }
    /* Placed by destination; send_displs are restored afterwards. */
    size_t es = entry_size(t);
    for (size_t i = 0; i < n; ++i) {
        unsigned char *e = b->send + (size_t)b->send_displs[b->dest[i]]++ * es;
        memcpy(e, f->block + i * f->record_size, f->record_size);
        memcpy(e + f->record_size, &b->hash[i], HASH_BYTES);
    }
    for (int r = 0; r < p; ++r)
        b->send_displs[r] -= b->send_counts[r];
    if (MPI_Alltoall(b->send_counts, 1, MPI_INT, b->recv_counts, 1, MPI_INT, t->comm) !=
        MPI_SUCCESS)
        return MPIDHT_ERR_MPI;
    size_t m = 0;
    for (int r = 0; r < p; ++r) {
        b->recv_displs[r] = (int)m;
        m += (size_t)b->recv_counts[r];
    }
    mpidht_status_t st = mpidht_agree_same(t->comm, grow_receive(t, b, m + 1));
    if (st != MPIDHT_OK)
        return st;
    if (MPI_Alltoallv(b->send, b->send_counts, b->send_displs, f->entry, b->recv,
                      b->recv_counts, b->recv_displs, f->entry, t->comm) != MPI_SUCCESS)
        return MPIDHT_ERR_MPI;
    return place(t, b, m, tally);
}

/* The load rounds: in round k process r handles block k * p + r. */
static mpidht_status_t load_blocks(mpidht_t *t, dump_file_t *f, uint64_t tally[TALLY_COUNT])
{
    size_t p = (size_t)t->comm_size;
    uint64_t cap = mpidht_dump_block_cap(f->record_size);
    load_buffers_t b = {0};
    b.send_counts = malloc(p * sizeof(int));
    b.send_displs = malloc(p * sizeof(int));
    b.recv_counts = malloc(p * sizeof(int));
    b.recv_displs = malloc(p * sizeof(int));
    b.dest = malloc((size_t)cap * sizeof(int));
    b.hash = malloc((size_t)cap * sizeof(uint64_t));
    b.send = malloc((size_t)cap * entry_size(t));
    mpidht_status_t st = b.send_counts && b.send_displs && b.recv_counts &&
                                 b.recv_displs && b.dest && b.hash && b.send
                             ? MPIDHT_OK
                             : MPIDHT_ERR_NO_MEMORY;
    if (st == MPIDHT_OK)
        st = start_ordered(t, &b);
    st = mpidht_agree_same(t->comm, st);
    uint64_t rounds = (f->header.blocks + p - 1) / p;
    for (uint64_t k = 0; st == MPIDHT_OK && k < rounds; ++k) {
        uint64_t i = k * p + (uint64_t)t->rank;
        size_t n = 0;
        if (i < f->header.blocks) {
            /* Verified before; a mismatch now means the file changed. */
            st = read_block(t, f, i);
            n = (size_t)f->blocks[i].entries;
        }
        st = mpidht_agree_same(t->comm, st);
        if (st == MPIDHT_OK)
            st = mpidht_agree_same(t->comm, route_and_write(t, f, &b, n, tally));
    }
    free_buffers(&b);
    return st;
}

/* Whether path names a regular file or nothing, and so does the name
 * after a file-system prefix that MPICH's MPI-IO strips. */
static bool regular_or_missing(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
        return false;
    const char *stripped = mpidht_file_unprefixed(path);
    return !(stripped && stat(stripped, &sb) == 0 && !S_ISREG(sb.st_mode));
}

static mpidht_status_t restore_file(mpidht_t *t, const char *path,
                                    mpidht_restore_report_t *report)
{
    /* A directory would read as a short file, and opening a FIFO waits
     * for a writer; a missing file is MPI_File_open's to report. */
    bool regular = regular_or_missing(path);
    if (!regular)
        mpidht_set_detail(t, "cannot open '%s': not a regular file", path);
    mpidht_status_t st =
        mpidht_agree_same(t->comm, regular ? MPIDHT_OK : MPIDHT_ERR_FILE_IO);
    if (st != MPIDHT_OK)
        return st;
    dump_file_t f = {.fh = MPI_FILE_NULL, .path = path, .entry = MPI_DATATYPE_NULL};
    int rc = MPI_File_open(t->comm, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &f.fh);
    if (rc != MPI_SUCCESS)
        mpidht_set_mpi_detail(t, rc, "cannot open", path);
    st = mpidht_agree_same(t->comm, rc == MPI_SUCCESS ? MPIDHT_OK : MPIDHT_ERR_FILE_IO);
    if (st != MPIDHT_OK) {
        if (rc == MPI_SUCCESS)
            MPI_File_close(&f.fh);
        return st;
    }
    st = read_index(t, &f);
    if (st == MPIDHT_OK)
        st = verify_blocks(t, &f);
    uint64_t tally[TALLY_COUNT] = {0}, total[TALLY_COUNT] = {0};
    if (st == MPIDHT_OK) {
        mpidht_stats_t kept = t->stats;
        st = load_blocks(t, &f, tally);
        t->stats = kept;
        if (MPI_Allreduce(tally, total, TALLY_COUNT, MPI_UINT64_T, MPI_SUM, t->comm) !=
                MPI_SUCCESS &&
            st == MPIDHT_OK)
            st = MPIDHT_ERR_MPI;
    }
    if (st == MPIDHT_OK && report) {
        mpidht_restore_report_t full = {
            .struct_size = report->struct_size,
            .entries = f.header.entries,
            .inserted = total[TALLY_INSERTED],
            .updated = total[TALLY_UPDATED],
            .evicted = total[TALLY_LOST],
        };
        memcpy(report, &full,
               report->struct_size < sizeof full ? report->struct_size : sizeof full);
    }
    if (f.entry != MPI_DATATYPE_NULL)
        MPI_Type_free(&f.entry);
    MPI_File_close(&f.fh);
    free(f.blocks);
    free(f.offsets);
    free(f.block);
    return st;
}

mpidht_status_t mpidht_restore(mpidht_t *table, const char *path,
                               mpidht_restore_report_t *report)
{
    mpidht_status_t st = mpidht_enter_collective(table, MPIDHT_CALL_RESTORE);
    if (st != MPIDHT_OK)
        return st;
    mpidht_status_t mine = path ? MPIDHT_OK : MPIDHT_ERR_NULL_ARGUMENT;
    if (mine == MPIDHT_OK && report && report->struct_size <= sizeof report->struct_size)
        mine = MPIDHT_ERR_STRUCT_SIZE;
    st = mpidht_agree_path(table, "restoring from", path, mine);
    if (st == MPIDHT_OK)
        st = mpidht_file_check_name(table, "restoring from", path, path);
    if (st != MPIDHT_OK)
        return st;
    /* Entries are placed without the writers' locks: what misses saw
     * before is no guide to where a write goes (engine.h). */
    mpidht_engine_forget_hints(table);
    st = restore_file(table, path, report);
    if (st != MPIDHT_OK && table->diag->detail[0] == '\0')
        mpidht_set_detail(table, "restoring from '%s': %s", path, mpidht_strerror(st));
    return st;
}
