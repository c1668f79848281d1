#include "queue.h"

#include <stdlib.h>
#include <string.h>

enum { QUEUED_GET, QUEUED_ATOMIC };

struct mpidht_queued {
    int kind;
    int rank;
    MPI_Aint disp;
    void *buf;        /* get: where the bytes go; atomic: the result or NULL */
    int len;          /* get: bytes */
    MPI_Op op;        /* atomic: MPI_SUM or MPI_NO_OP */
    int64_t operand;  /* atomic: what MPI_SUM adds */
};

void mpidht_queue_free(mpidht_queue_t *q)
{
    free(q->ops);
    free(q->per_target);
    free(q->targets);
    free(q->order);
    free(q->origin_at);
    free(q->target_at);
    free(q->lengths);
    free(q->operands);
    free(q->seen_disp);
    free(q->seen_mark);
    memset(q, 0, sizeof *q);
}

mpidht_status_t mpidht_queue_reserve(mpidht_queue_t *q, size_t capacity, int comm_size)
{
    if (q->capacity >= capacity)
        return MPIDHT_OK;
    size_t seen = 2;
    while (seen < 2 * capacity)
        seen *= 2;
    mpidht_queue_t n = {
        .capacity = capacity,
        .ops = calloc(capacity, sizeof *n.ops),
        .per_target = calloc((size_t)comm_size, sizeof *n.per_target),
        .targets = calloc((size_t)comm_size, sizeof *n.targets),
        .order = calloc(capacity, sizeof *n.order),
        .origin_at = calloc(capacity, sizeof *n.origin_at),
        .target_at = calloc(capacity, sizeof *n.target_at),
        .lengths = calloc(capacity, sizeof *n.lengths),
        .operands = calloc(capacity, sizeof *n.operands),
        .seen_disp = calloc(seen, sizeof *n.seen_disp),
        .seen_mark = calloc(seen, sizeof *n.seen_mark),
        .seen_capacity = seen,
    };
    if (!n.ops || !n.per_target || !n.targets || !n.order || !n.origin_at || !n.target_at ||
        !n.lengths || !n.operands || !n.seen_disp || !n.seen_mark) {
        mpidht_queue_free(&n);
        return MPIDHT_ERR_NO_MEMORY;
    }
    mpidht_queue_free(q);
    *q = n;
    return MPIDHT_OK;
}

static mpidht_queued_t *push(mpidht_queue_t *q, int rank)
{
    if (q->per_target[rank]++ == 0)
        q->targets[q->target_count++] = rank;
    return &q->ops[q->count++];
}

void mpidht_queue_get(mpidht_queue_t *q, int rank, MPI_Aint disp, void *origin, int len)
{
    *push(q, rank) = (mpidht_queued_t){
        .kind = QUEUED_GET, .rank = rank, .disp = disp, .buf = origin, .len = len};
}

void mpidht_queue_atomic(mpidht_queue_t *q, int rank, MPI_Aint disp, int64_t *result,
                         const int64_t *delta)
{
    *push(q, rank) = (mpidht_queued_t){.kind = QUEUED_ATOMIC,
                                       .rank = rank,
                                       .disp = disp,
                                       .buf = result,
                                       .op = delta ? MPI_SUM : MPI_NO_OP,
                                       .operand = delta ? *delta : 0};
}

void mpidht_queue_drop(mpidht_queue_t *q)
{
    for (size_t i = 0; i < q->target_count; ++i)
        q->per_target[q->targets[i]] = 0;
    q->target_count = 0;
    q->count = 0;
}

/* Frees the two datatypes (MPI keeps them until their call completes). */
static void free_types(MPI_Datatype *a, MPI_Datatype *b)
{
    if (*a != MPI_DATATYPE_NULL)
        MPI_Type_free(a);
    if (*b != MPI_DATATYPE_NULL)
        MPI_Type_free(b);
}

/* The gets of order[begin, end) whose kind is a get, all to rank. */
static int issue_gets(mpidht_queue_t *q, MPI_Win win, int rank, size_t begin, size_t end)
{
    size_t n = 0;
    const mpidht_queued_t *one = NULL;
    int rc = MPI_SUCCESS;
    for (size_t j = begin; j < end && rc == MPI_SUCCESS; ++j) {
        const mpidht_queued_t *g = &q->ops[q->order[j]];
        if (g->kind != QUEUED_GET)
            continue;
        one = g;
        q->lengths[n] = g->len;
        q->target_at[n] = g->disp;
        rc = MPI_Get_address(g->buf, &q->origin_at[n]);
        ++n;
    }
    if (rc != MPI_SUCCESS || n == 0)
        return rc;
    if (n == 1)
        return MPI_Get(one->buf, one->len, MPI_BYTE, rank, one->disp, one->len, MPI_BYTE, win);
    MPI_Datatype origin = MPI_DATATYPE_NULL, target = MPI_DATATYPE_NULL;
    rc = MPI_Type_create_hindexed((int)n, q->lengths, q->origin_at, MPI_BYTE, &origin);
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_create_hindexed((int)n, q->lengths, q->target_at, MPI_BYTE, &target);
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_commit(&origin);
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_commit(&target);
    if (rc == MPI_SUCCESS)
        rc = MPI_Get(MPI_BOTTOM, 1, origin, rank, 0, 1, target, win);
    free_types(&origin, &target);
    return rc;
}

/* Starts a run of atomics: no word seen yet. */
static void new_run(mpidht_queue_t *q)
{
    if (++q->mark == 0) { /* wrapped: forget every mark */
        memset(q->seen_mark, 0, q->seen_capacity * sizeof *q->seen_mark);
        q->mark = 1;
    }
}

/* Notes the word at disp in the run; false if the run has it already. */
static bool see(mpidht_queue_t *q, MPI_Aint disp)
{
    size_t mask = q->seen_capacity - 1;
    size_t i = (size_t)(((uint64_t)disp * 0x9e3779b97f4a7c15u) >> 32) & mask;
    for (; q->seen_mark[i] == q->mark; i = (i + 1) & mask)
        if (q->seen_disp[i] == disp)
            return false;
    q->seen_mark[i] = q->mark;
    q->seen_disp[i] = disp;
    return true;
}

/* Whether b may join the run a started. */
static bool same_run(const mpidht_queued_t *a, const mpidht_queued_t *b)
{
    return b->op == a->op && b->operand == a->operand && (b->buf == NULL) == (a->buf == NULL);
}

/* The run of atomics whose operands are operands[at, at + n), all to
 * rank, whose first is a, their words in target_at[at..] and results (if
 * they fetch) in origin_at[at..]. */
static int issue_run(mpidht_queue_t *q, MPI_Win win, int rank, const mpidht_queued_t *a,
                     size_t at, size_t n)
{
    int64_t *operands = &q->operands[at];
    if (n == 1)
        return a->buf ? MPI_Fetch_and_op(operands, a->buf, MPI_INT64_T, rank, a->disp, a->op,
                                         win)
                      : MPI_Accumulate(operands, 1, MPI_INT64_T, rank, a->disp, 1,
                                       MPI_INT64_T, a->op, win);
    MPI_Datatype result = MPI_DATATYPE_NULL, target = MPI_DATATYPE_NULL;
    int rc = MPI_Type_create_hindexed_block((int)n, 1, &q->target_at[at], MPI_INT64_T, &target);
    if (rc == MPI_SUCCESS && a->buf)
        rc = MPI_Type_create_hindexed_block((int)n, 1, &q->origin_at[at], MPI_INT64_T,
                                            &result);
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_commit(&target);
    if (rc == MPI_SUCCESS && a->buf)
        rc = MPI_Type_commit(&result);
    if (rc == MPI_SUCCESS)
        rc = a->buf ? MPI_Get_accumulate(operands, (int)n, MPI_INT64_T, MPI_BOTTOM, 1, result,
                                         rank, 0, 1, target, a->op, win)
                    : MPI_Accumulate(operands, (int)n, MPI_INT64_T, rank, 0, 1, target, a->op,
                                     win);
    free_types(&result, &target);
    return rc;
}

/* The atomics of order[begin, end), all to rank, in runs. A run's entries
 * are written to the scratch arrays from its first entry's position on;
 * it holds no more entries than lie between its first and last, so runs
 * never share positions (the operands must stay until the flush). */
static int issue_atomics(mpidht_queue_t *q, MPI_Win win, int rank, size_t begin, size_t end)
{
    int rc = MPI_SUCCESS;
    const mpidht_queued_t *first = NULL;
    size_t at = 0, n = 0;
    for (size_t j = begin; j < end && rc == MPI_SUCCESS; ++j) {
        const mpidht_queued_t *a = &q->ops[q->order[j]];
        if (a->kind != QUEUED_ATOMIC)
            continue;
        if (first && (!same_run(first, a) || !see(q, a->disp))) {
            rc = issue_run(q, win, rank, first, at, n);
            if (rc != MPI_SUCCESS)
                return rc;
            first = NULL;
        }
        if (!first) {
            first = a;
            at = j;
            n = 0;
            new_run(q);
            see(q, a->disp);
        }
        q->operands[at + n] = a->operand;
        q->target_at[at + n] = a->disp;
        if (a->buf)
            rc = MPI_Get_address(a->buf, &q->origin_at[at + n]);
        ++n;
    }
    if (first && rc == MPI_SUCCESS)
        rc = issue_run(q, win, rank, first, at, n);
    return rc;
}

int mpidht_queue_issue(mpidht_queue_t *q, MPI_Win win)
{
    if (q->count == 0)
        return MPI_SUCCESS;
    /* Grouped by target, each group in the order queued: where each
     * target's group starts, then the entries placed. */
    size_t start = 0;
    for (size_t i = 0; i < q->target_count; ++i) {
        int rank = q->targets[i];
        size_t n = q->per_target[rank];
        q->per_target[rank] = start;
        start += n;
    }
    for (size_t i = 0; i < q->count; ++i)
        q->order[q->per_target[q->ops[i].rank]++] = i;
    int rc = MPI_SUCCESS;
    size_t begin = 0;
    for (size_t i = 0; i < q->target_count; ++i) {
        int rank = q->targets[i];
        size_t end = q->per_target[rank]; /* where its group ends, now */
        /* Gets first: their datatypes are built from the scratch arrays'
         * first entries, which the atomics' runs may then overwrite
         * (MPI copied them). */
        if (rc == MPI_SUCCESS)
            rc = issue_gets(q, win, rank, begin, end);
        if (rc == MPI_SUCCESS)
            rc = issue_atomics(q, win, rank, begin, end);
        begin = end;
    }
    for (size_t i = 0; i < q->target_count; ++i)
        q->per_target[q->targets[i]] = 0;
    q->target_count = 0;
    q->count = 0;
    return rc;
}
