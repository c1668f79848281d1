#include "rma.h"

#include "bucket.h"

mpidht_status_t mpidht_rma_flush(mpidht_t *t, int rank)
{
    return mpidht_mpi_status(MPI_Win_flush(rank, t->win));
}

mpidht_status_t mpidht_rma_get_own(mpidht_t *t, unsigned char *buf,
                                   uint32_t first, size_t n)
{
    /* n buckets fit one scan step (src/scan.h), far below INT_MAX bytes. */
    int len = (int)(n * t->bucket_size);
    return mpidht_mpi_status(MPI_Get(buf, len, MPI_BYTE, t->rank,
                                     mpidht_bucket_disp(t, first), len, MPI_BYTE,
                                     t->win));
}

mpidht_status_t mpidht_rma_get_slots(mpidht_t *t, unsigned char *slots,
                                     const mpidht_address_t *addr,
                                     unsigned first, unsigned count,
                                     size_t offset, size_t len)
{
    for (unsigned i = first; i < first + count; ++i) {
        int rc = MPI_Get(mpidht_slot(t, slots, i) + offset, (int)len,
                         MPI_BYTE, addr->rank,
                         mpidht_bucket_disp(t, addr->index[i]) + (MPI_Aint)offset,
                         (int)len, MPI_BYTE, t->win);
        if (rc != MPI_SUCCESS)
            return MPIDHT_ERR_MPI;
    }
    return MPIDHT_OK;
}

mpidht_status_t mpidht_rma_probe_keys(mpidht_t *t, const mpidht_address_t *addr)
{
    mpidht_status_t st = mpidht_rma_get_slots(t, t->probe, addr, 0, addr->count,
                                              t->meta_offset, 1 + t->key_size);
    return st == MPIDHT_OK ? mpidht_rma_flush(t, addr->rank) : st;
}

mpidht_status_t mpidht_rma_probe_buckets(mpidht_t *t,
                                         const mpidht_address_t *addr,
                                         unsigned first, unsigned count)
{
    mpidht_status_t st = mpidht_rma_get_slots(t, t->probe, addr, first, count,
                                              t->data_offset, t->data_size);
    return st == MPIDHT_OK ? mpidht_rma_flush(t, addr->rank) : st;
}

mpidht_status_t mpidht_rma_put_bucket(mpidht_t *t, int rank, uint32_t index,
                                      const unsigned char *b)
{
    return mpidht_mpi_status(
        MPI_Put(b + t->data_offset, (int)t->data_size, MPI_BYTE, rank,
                mpidht_bucket_disp(t, index) + (MPI_Aint)t->data_offset,
                (int)t->data_size, MPI_BYTE, t->win));
}

mpidht_status_t mpidht_rma_put_staged(mpidht_t *t, int rank, uint32_t index)
{
    mpidht_status_t st = mpidht_rma_put_bucket(t, rank, index, t->staging);
    return st == MPIDHT_OK ? mpidht_rma_flush(t, rank) : st;
}

mpidht_status_t mpidht_rma_put_meta(mpidht_t *t, int rank, uint32_t index,
                                    unsigned char meta)
{
    int rc = MPI_Put(&meta, 1, MPI_BYTE, rank,
                     mpidht_bucket_disp(t, index) + (MPI_Aint)t->meta_offset, 1,
                     MPI_BYTE, t->win);
    if (rc != MPI_SUCCESS)
        return MPIDHT_ERR_MPI;
    /* Completing before returning keeps &meta valid for the transfer. */
    return mpidht_rma_flush(t, rank);
}

mpidht_status_t mpidht_rma_clear_header(mpidht_t *t, int rank, uint32_t index)
{
    static const unsigned char zeros[8];
    int len = (int)(t->meta_offset + 1 - t->data_offset);
    int rc = MPI_Put(zeros, len, MPI_BYTE, rank,
                     mpidht_bucket_disp(t, index) + (MPI_Aint)t->data_offset, len,
                     MPI_BYTE, t->win);
    if (rc != MPI_SUCCESS)
        return MPIDHT_ERR_MPI;
    return mpidht_rma_flush(t, rank);
}
