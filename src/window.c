/* madvise and MADV_HUGEPAGE (Linux) beside the POSIX interfaces. */
#define _DEFAULT_SOURCE
#include "window.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "rma.h"

mpidht_status_t mpidht_window_resolve(mpidht_window_kind_t requested,
                                      bool single_node,
                                      mpidht_window_kind_t *resolved)
{
    switch (requested) {
    case MPIDHT_WINDOW_AUTO:
        *resolved = single_node ? MPIDHT_WINDOW_SHARED : MPIDHT_WINDOW_ALLOCATE;
        return MPIDHT_OK;
    case MPIDHT_WINDOW_SHARED:
        *resolved = requested;
        return single_node ? MPIDHT_OK : MPIDHT_ERR_WINDOW_UNSUPPORTED;
    case MPIDHT_WINDOW_ALLOCATE:
    case MPIDHT_WINDOW_CREATE:
        *resolved = requested;
        return MPIDHT_OK;
    }
    return MPIDHT_ERR_UNKNOWN_WINDOW;
}

/* The bytes this process has mapped (VmSize), or -1 where unknown. */
static double mapped_bytes(long page)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long pages = 0;
    if (!f)
        return -1.0;
    bool known = fscanf(f, "%llu", &pages) == 1;
    fclose(f);
    return known ? (double)pages * (double)page : -1.0;
}

/* What MPI maps beside a window's memory while it creates it, allowed for
 * in the address space: Open MPI 4.1's osc rdma failed an allocate window
 * with 64 KiB left beyond the node's part, made it with 256 KiB. */
#define ADDRESS_SLACK (4.0 * 1024 * 1024)

/* MPIDHT_ERR_NO_MEMORY (with the detail) if mapping `needed` more bytes
 * (and ADDRESS_SLACK) would take this process past its address-space
 * limit (RLIMIT_AS). */
static mpidht_status_t check_address_space(const mpidht_t *t, double needed,
                                           bool node_segment, long page)
{
    struct rlimit limit;
    if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
        return MPIDHT_OK;
    double mapped = mapped_bytes(page);
    double left = (double)limit.rlim_cur - mapped;
    if (mapped < 0 || needed + ADDRESS_SLACK <= left)
        return MPIDHT_OK;
    mpidht_set_detail(t,
                      "the %s window maps %.0f bytes into this process (%s) and MPI some more, "
                      "but its address space limit (RLIMIT_AS, ulimit -v) leaves %.0f of %.0f: "
                      "give less memory_per_process, or raise the limit",
                      mpidht_window_name(t->window), needed,
                      node_segment ? "the node's part: every process of a node maps it"
                                   : "its own part",
                      left > 0 ? left : 0.0, (double)limit.rlim_cur);
    return MPIDHT_ERR_NO_MEMORY;
}

/* Whether Open MPI may serve a window with osc rdma: not where
 * the osc list given to this job (OMPI_MCA_osc, as `--mca osc` sets it)
 * leaves it out. */
static bool rdma_may_serve(void)
{
    const char *list = getenv("OMPI_MCA_osc");
    if (!list || !*list)
        return true;
    bool named = strstr(list, "rdma") != NULL;
    return list[0] == '^' ? !named : named;
}

/* Open MPI 4.1's osc rdma backs the part of an allocate window on a node
 * with a file named after the job and the communicator's id, which
 * disjoint communicators on one node may share (open-mpi/ompi#7393): two
 * tables on the halves of a split then wrote into one memory, each
 * reading the other's values. A create window's state (its lock words
 * and its peers' addresses) sits in such a file too: two tables of
 * create windows on the halves crashed in MPI_Fetch_and_op, hung, or
 * were made on one half only. Refused where the table's communicator
 * holds more than one but not all of the job's processes on this node
 * (OMPI_COMM_WORLD_LOCAL_SIZE, set by Open MPI's launcher), so that another
 * communicator there could share its id. */
static mpidht_status_t check_rdma_segment(const mpidht_t *t)
{
    const char *local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    long job_here = local ? strtol(local, NULL, 10) : 0;
    if (t->window == MPIDHT_WINDOW_SHARED || !mpidht_runs_open_mpi(t) || t->node_size < 2 ||
        job_here <= t->node_size || !rdma_may_serve())
        return MPIDHT_OK;
    mpidht_set_detail(t,
                      "the %s window on %d of the job's %ld processes on this node: Open "
                      "MPI's osc rdma may back it with the same memory as another "
                      "communicator's there (open-mpi/ompi#7393); use the shared window "
                      "(MPIDHT_WINDOW_AUTO on one node), a communicator holding all of the "
                      "node's processes, or --mca osc %s",
                      mpidht_window_name(t->window), t->node_size, job_here,
                      /* Without rdma, osc ucx serves a create window here, and
                       * the fine and lock-free protocols' calls timed out on it. */
                      t->window == MPIDHT_WINDOW_CREATE ? "pt2pt" : "^rdma");
    return MPIDHT_ERR_WINDOW_UNSUPPORTED;
}

mpidht_status_t mpidht_window_check_room(mpidht_t *t)
{
    mpidht_status_t refused = check_rdma_segment(t);
    if (refused != MPIDHT_OK)
        return refused;
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0)
        return MPIDHT_OK;
    /* As double: no wrap however large the budgets. Every process of a
     * node maps the node's whole part of a shared or allocate window
     * (both MPI libraries take it from one segment there). */
    bool node_segment = t->window != MPIDHT_WINDOW_CREATE && t->node_size > 1;
    double tail = (double)(MPIDHT_WINDOW_TAIL + (size_t)page);
    double needed = node_segment
                        ? t->node_bytes + (double)t->node_size * tail
                        : (double)t->local_buckets * (double)t->layout.bucket_size + tail;
    mpidht_status_t st = check_address_space(t, needed, node_segment, page);
    if (st != MPIDHT_OK || !node_segment)
        return st;
    const char *dir = getenv("OMPI_MCA_osc_sm_backing_directory");
    if (!dir || !*dir)
        dir = MPIDHT_SHARED_DIRECTORY;
    struct statvfs fs;
    if (statvfs(dir, &fs) != 0)
        return MPIDHT_OK;
    double free_bytes = (double)fs.f_bavail * (double)fs.f_frsize;
    if (needed <= free_bytes)
        return MPIDHT_OK;
    mpidht_set_detail(t,
                      "the %s window's part on this node (%d processes) needs %.0f bytes of "
                      "%s, which has %.0f free: give less memory_per_process, or make %s "
                      "larger",
                      mpidht_window_name(t->window), t->node_size, needed, dir, free_bytes,
                      dir);
    return MPIDHT_ERR_NO_MEMORY;
}

static mpidht_status_t create_window(mpidht_t *t, size_t bytes, MPI_Info info)
{
    void *base = NULL;
    int rc = MPI_SUCCESS;
    switch (t->window) {
    case MPIDHT_WINDOW_SHARED:
        rc = MPI_Win_allocate_shared((MPI_Aint)bytes, 1, info, t->comm, &base,
                                     &t->win);
        break;
    case MPIDHT_WINDOW_ALLOCATE:
        rc = MPI_Win_allocate((MPI_Aint)bytes, 1, info, t->comm, &base, &t->win);
        break;
    default: /* MPIDHT_WINDOW_CREATE */
        if (bytes > 0) {
            rc = MPI_Alloc_mem((MPI_Aint)bytes, MPI_INFO_NULL, &t->alloc_mem);
            base = t->alloc_mem;
        }
        /* Every process must enter MPI_Win_create, even after a failed
         * allocation (with size 0), or the others would hang in it. */
        {
            int created = MPI_Win_create(rc == MPI_SUCCESS ? base : NULL,
                                         rc == MPI_SUCCESS ? (MPI_Aint)bytes : 0,
                                         1, info, t->comm, &t->win);
            rc = rc == MPI_SUCCESS ? created : rc;
        }
        break;
    }
    t->local_base = base;
    if (rc == MPI_SUCCESS)
        return MPIDHT_OK;
    /* Memory was refused, or the library has no component for this window
     * kind here: Open MPI 4.1 from Debian cannot MPI_Win_create on a
     * single process (osc pt2pt is disabled there and osc rdma needs a
     * peer), nor make any window between nodes over TCP (osc rdma needs a
     * network with RDMA; osc pt2pt and ucx are disabled). */
    if (t->window == MPIDHT_WINDOW_CREATE && bytes > 0 && !t->alloc_mem)
        return MPIDHT_ERR_NO_MEMORY;
    int class = MPI_ERR_OTHER;
    MPI_Error_class(rc, &class);
    if (class == MPI_ERR_NO_MEM)
        return MPIDHT_ERR_NO_MEMORY;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "error %d", rc);
    static const char *const calls[] = {[MPIDHT_WINDOW_SHARED] = "MPI_Win_allocate_shared",
                                        [MPIDHT_WINDOW_ALLOCATE] = "MPI_Win_allocate",
                                        [MPIDHT_WINDOW_CREATE] = "MPI_Win_create"};
    mpidht_set_detail(t, "%s failed: %s", calls[t->window], text);
    return t->window == MPIDHT_WINDOW_CREATE || !t->single_node ? MPIDHT_ERR_WINDOW_UNSUPPORTED
                                                                 : MPIDHT_ERR_NO_MEMORY;
}

/* Fills t->node_base (calloc'ed: NULL where no address is known). */
static mpidht_status_t find_node_bases(mpidht_t *t)
{
    t->node_base = calloc((size_t)t->comm_size, sizeof *t->node_base);
    if (!t->node_base)
        return MPIDHT_ERR_NO_MEMORY;
    t->node_base[t->rank] = t->local_base;
    if (t->window != MPIDHT_WINDOW_SHARED)
        return MPIDHT_OK;
    t->window_lock = calloc((size_t)t->comm_size, sizeof *t->window_lock);
    if (!t->window_lock)
        return MPIDHT_ERR_NO_MEMORY;
    for (int r = 0; r < t->comm_size; ++r) {
        MPI_Aint size;
        int disp_unit;
        void *base = NULL;
        if (MPI_Win_shared_query(t->win, r, &size, &disp_unit, &base) != MPI_SUCCESS)
            return MPIDHT_ERR_MPI;
        if (size < (MPI_Aint)MPIDHT_WINDOW_TAIL)
            return MPIDHT_ERR_MPI;
        size -= (MPI_Aint)MPIDHT_WINDOW_TAIL;
        t->node_base[r] = size > 0 ? base : NULL;
        t->window_lock[r] = (int64_t *)((unsigned char *)base + size);
    }
    return MPIDHT_OK;
}

/* MPIDHT_SHARED_ACCESS: whether this process lets the table go direct. */
static mpidht_status_t access_setting(const mpidht_t *t, bool *direct)
{
    const char *text = getenv(MPIDHT_ACCESS_ENV);
    *direct = !text || !*text || !strcmp(text, "direct");
    if (*direct || !strcmp(text, "mpi"))
        return MPIDHT_OK;
    mpidht_set_detail(t, MPIDHT_ACCESS_ENV "='%s' on this process", text);
    return MPIDHT_ERR_ACCESS_SETTING;
}

mpidht_status_t mpidht_window_decide_direct(mpidht_t *t)
{
    bool wanted;
    mpidht_status_t st = access_setting(t, &wanted);
    int usable = wanted && t->window == MPIDHT_WINDOW_SHARED;
    /* MPI defines loads and stores on a shared window for the unified
     * memory model only (MPI_Win_allocate_shared's advice to users). */
    int *model = NULL, known = 0;
    if (usable && (MPI_Win_get_attr(t->win, MPI_WIN_MODEL, &model, &known) != MPI_SUCCESS ||
                   !known || *model != MPI_WIN_UNIFIED))
        usable = 0;
    for (int r = 0; usable && r < t->comm_size; ++r)
        usable = (uintptr_t)t->window_lock[r] % 8 == 0 &&
                 (uintptr_t)t->node_base[r] % 8 == 0;
    int all = 0;
    /* Every process reduces, whatever its setting: the caller agrees. */
    if (MPI_Allreduce(&usable, &all, 1, MPI_INT, MPI_LAND, t->comm) != MPI_SUCCESS)
        return MPIDHT_ERR_MPI;
    t->direct = all;
    return st;
}

/* The size of a transparent huge page (a power of two), or 0 where the
 * kernel has none (or says nothing sensible). */
static uintptr_t huge_page_size(void)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r");
    unsigned long long size = 0;
    if (!f)
        return 0;
    if (fscanf(f, "%llu", &size) != 1)
        size = 0;
    fclose(f);
    return size > 0 && size <= UINTPTR_MAX / 2 && (size & (size - 1)) == 0 ? (uintptr_t)size
                                                                             : 0;
}

/* Whether the system gives transparent huge pages where they are asked
 * for (madvise) and only there: "[madvise]" selected in its setting. */
static bool huge_pages_on_advice(void)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char text[128] = "";
    if (!f)
        return false;
    bool read = fgets(text, sizeof text, f) != NULL;
    fclose(f);
    return read && strstr(text, "[madvise]") != NULL;
}

/* Where the system gives transparent huge pages on advice only (its
 * "madvise" setting, Debian's default), asks for them for the whole huge
 * pages inside [base, base + bytes), before the table first touches them,
 * and notes the range in t (mpidht_window_free gives it back). A read
 * lands on a random bucket of the table, so with 4 KiB pages nearly every
 * read of a table larger than the TLB's reach pays a page walk besides
 * its cache miss (under a hypervisor a two-dimensional one); with 2 MiB
 * pages the TLB covers gigabytes. Under "always" private memory has them
 * without advice, under "never" not at all; memory beside the table (say,
 * on malloc's heap) and a table smaller than a huge page are left alone.
 * Only a hint: shared memory follows shmem_enabled besides, pages the MPI
 * library touched already stay small until the kernel's khugepaged
 * collapses them, and a refusal (say, of a device's mapping) changes
 * nothing, so the result is ignored. Without MADV_HUGEPAGE (not Linux) it
 * does nothing. */
static void advise_huge_pages(mpidht_t *t, void *base, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    uintptr_t huge = huge_page_size();
    if (!base || huge == 0 || !huge_pages_on_advice())
        return;
    uintptr_t mask = huge - 1;
    uintptr_t start = ((uintptr_t)base + mask) & ~mask;
    uintptr_t end = ((uintptr_t)base + bytes) & ~mask;
    if (end > start && madvise((void *)start, end - start, MADV_HUGEPAGE) == 0) {
        t->huge_start = (void *)start;
        t->huge_bytes = end - start;
    }
#else
    (void)t;
    (void)base;
    (void)bytes;
#endif
}

/* Gives the range advise_huge_pages advised back to the system's default
 * before MPI takes the memory back (which may hand it to malloc's heap):
 * under the "madvise" setting, pages advised against huge pages get none,
 * as pages without advice. */
static void forget_huge_pages(mpidht_t *t)
{
#ifdef MADV_NOHUGEPAGE
    if (t->huge_bytes > 0)
        (void)madvise(t->huge_start, t->huge_bytes, MADV_NOHUGEPAGE);
#endif
    t->huge_start = NULL;
    t->huge_bytes = 0;
}

mpidht_status_t mpidht_window_allocate(mpidht_t *t, size_t bytes)
{
    MPI_Info info;
    if (MPI_Info_create(&info) != MPI_SUCCESS)
        return MPIDHT_ERR_MPI;
    /* Let each process's part live on its own NUMA node. */
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
    MPI_Info_set(info, "same_disp_unit", "true");
    t->win = MPI_WIN_NULL;
    size_t tail = t->window == MPIDHT_WINDOW_SHARED ? MPIDHT_WINDOW_TAIL : 0;
    mpidht_status_t st = create_window(t, bytes + tail, info);
    MPI_Info_free(&info);
    if (t->win != MPI_WIN_NULL &&
        MPI_Win_set_errhandler(t->win, MPI_ERRORS_RETURN) != MPI_SUCCESS)
        st = MPIDHT_ERR_MPI;
    if (st == MPIDHT_OK)
        st = find_node_bases(t);
    if (st != MPIDHT_OK)
        return st;

    advise_huge_pages(t, t->local_base, bytes + tail);
    /* Neither allocate call promises zeroed memory. The local exclusive
     * lock orders the stores with later remote access; the caller's
     * agreement on the result keeps every process from touching the table
     * before all are zeroed. */
    if (bytes + tail > 0) {
        if (MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t->rank, 0, t->win) != MPI_SUCCESS)
            return MPIDHT_ERR_MPI;
        memset(t->local_base, 0, bytes + tail);
        if (MPI_Win_unlock(t->rank, t->win) != MPI_SUCCESS)
            return MPIDHT_ERR_MPI;
    }
    return MPIDHT_OK;
}

mpidht_status_t mpidht_window_free(mpidht_t *t)
{
    mpidht_status_t st = MPIDHT_OK;
    forget_huge_pages(t);
    if (t->win != MPI_WIN_NULL)
        st = mpidht_mpi_status(MPI_Win_free(&t->win));
    if (t->alloc_mem) {
        if (MPI_Free_mem(t->alloc_mem) != MPI_SUCCESS && st == MPIDHT_OK)
            st = MPIDHT_ERR_MPI;
        t->alloc_mem = NULL;
    }
    mpidht_window_forget(t);
    return st;
}

void mpidht_window_forget(mpidht_t *t)
{
    t->win = MPI_WIN_NULL;
    t->alloc_mem = NULL;
    t->local_base = NULL;
    t->huge_start = NULL;
    t->huge_bytes = 0;
    free(t->node_base);
    t->node_base = NULL;
    free(t->window_lock);
    t->window_lock = NULL;
    t->direct = false;
}
