#include "collective.h"

#include <limits.h>
#include <stdbool.h>
#include <string.h>

#include <xxhash.h>

#include "table.h"

mpidht_status_t mpidht_agree_who(MPI_Comm comm, mpidht_status_t local, int *who,
                                 mpidht_status_t *theirs)
{
    /* The lowest rank that failed, its status riding as MINLOC's index
     * (ranks are distinct, so the index is that rank's). */
    int rank = 0, mine[2], first[2];
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        return MPIDHT_ERR_MPI;
    mine[0] = local != MPIDHT_OK ? rank : INT_MAX;
    mine[1] = (int)local;
    if (MPI_Allreduce(mine, first, 1, MPI_2INT, MPI_MINLOC, comm) != MPI_SUCCESS)
        return MPIDHT_ERR_MPI;
    if (local != MPIDHT_OK)
        return local;
    if (first[0] == INT_MAX)
        return MPIDHT_OK;
    *who = first[0];
    *theirs = (mpidht_status_t)first[1];
    return MPIDHT_ERR_PEER;
}

mpidht_status_t mpidht_agree(MPI_Comm comm, mpidht_status_t local)
{
    int who;
    mpidht_status_t theirs;
    return mpidht_agree_who(comm, local, &who, &theirs);
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
    bool empty = mine == MPIDHT_OK && path && !*path;
    mpidht_status_t st = mpidht_agree(t->comm, empty ? MPIDHT_ERR_FILE_IO : mine);
    bool same = false;
    if (st == MPIDHT_OK)
        st = same_string(t->comm, path, &same);
    if (st == MPIDHT_OK && !same)
        st = MPIDHT_ERR_PATH_MISMATCH;
    if (empty)
        mpidht_set_detail(t, "%s an empty path: %s (an empty path names no file)", doing,
                          mpidht_strerror(st));
    else if (st != MPIDHT_OK && path)
        mpidht_set_detail(t, "%s '%s': %s", doing, path, mpidht_strerror(st));
    else if (st != MPIDHT_OK)
        mpidht_set_detail(t, "%s a NULL path: %s", doing, mpidht_strerror(st));
    return st;
}
