#include "collective.h"

#include <stdbool.h>
#include <string.h>

#include <xxhash.h>

#include "table.h"

mpidht_status_t mpidht_agree(MPI_Comm comm, mpidht_status_t local)
{
    int failed_here = local != MPIDHT_OK, failed_anywhere = 1;
    if (MPI_Allreduce(&failed_here, &failed_anywhere, 1, MPI_INT, MPI_MAX,
                      comm) != MPI_SUCCESS)
        return MPIDHT_ERR_MPI;
    if (failed_here)
        return local;
    return failed_anywhere ? MPIDHT_ERR_PEER : MPIDHT_OK;
}

mpidht_status_t mpidht_agree_same(MPI_Comm comm, mpidht_status_t local)
{
    int mine = (int)local, worst = (int)MPIDHT_ERR_MPI;
    if (MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
        return MPIDHT_ERR_MPI;
    return (mpidht_status_t)worst;
}

/* Whether the string s is byte for byte the same on every process (a
 * process passing NULL takes part and makes the answer false). */
static mpidht_status_t same_string(MPI_Comm comm, const char *s, bool *same)
{
    /* Length and hash are equal everywhere iff OR(v) == ~OR(~v); a NULL
     * string contributes values no real string can reach on both halves. */
    uint64_t v[4] = {UINT64_MAX, 0, UINT64_MAX, 0}, any[4];
    if (s) {
        v[0] = strlen(s);
        v[1] = XXH3_64bits(s, (size_t)v[0]);
        v[2] = ~v[0];
        v[3] = ~v[1];
    }
    if (MPI_Allreduce(v, any, 4, MPI_UINT64_T, MPI_BOR, comm) != MPI_SUCCESS)
        return MPIDHT_ERR_MPI;
    *same = any[0] == ~any[2] && any[1] == ~any[3];
    return MPIDHT_OK;
}

mpidht_status_t mpidht_agree_path(const mpidht_t *t, const char *doing, const char *path,
                                  mpidht_status_t mine)
{
    mpidht_status_t st = mpidht_agree(t->comm, mine);
    bool same = false;
    if (st == MPIDHT_OK)
        st = same_string(t->comm, path, &same);
    if (st == MPIDHT_OK && !same)
        st = MPIDHT_ERR_PATH_MISMATCH;
    if (st != MPIDHT_OK && path)
        mpidht_set_detail(t, "%s '%s': %s", doing, path, mpidht_strerror(st));
    else if (st != MPIDHT_OK)
        mpidht_set_detail(t, "%s a NULL path: %s", doing, mpidht_strerror(st));
    return st;
}
