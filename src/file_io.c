#include "file_io.h"

#include <stdio.h>
#include <string.h>

#include "table.h"

/* MPI counts are int: move at most this many bytes per call. */
#define PIECE ((size_t)1 << 30)

typedef int (*transfer_fn)(MPI_File fh, MPI_Offset offset, void *buf, int count,
                           MPI_Datatype type, MPI_Status *status);

static int write_piece(MPI_File fh, MPI_Offset offset, void *buf, int count,
                       MPI_Datatype type, MPI_Status *status)
{
    return MPI_File_write_at(fh, offset, buf, count, type, status);
}

/* Moves len bytes piece by piece; short_status is what a short transfer
 * means (the file ended, or the write fell short). Where it fails, t's
 * detail says so, naming the file (name), the byte and MPI's reason:
 * `doing` is "read" or "write". */
static mpidht_status_t transfer(const mpidht_t *t, MPI_File fh, const char *name,
                                uint64_t offset, unsigned char *buf, size_t len,
                                transfer_fn fn, const char *doing,
                                mpidht_status_t short_status)
{
    while (len > 0) {
        int piece = (int)(len < PIECE ? len : PIECE), done = 0;
        MPI_Status status;
        int rc = fn(fh, (MPI_Offset)offset, buf, piece, MPI_BYTE, &status);
        if (rc == MPI_SUCCESS)
            rc = MPI_Get_count(&status, MPI_BYTE, &done);
        if (rc != MPI_SUCCESS) {
            char what[64];
            snprintf(what, sizeof what, "cannot %s %d bytes at byte %llu of", doing, piece,
                     (unsigned long long)offset);
            mpidht_set_mpi_detail(t, rc, what, name);
            return MPIDHT_ERR_FILE_IO;
        }
        if (done != piece) {
            mpidht_set_detail(t, "a %s of %d bytes at byte %llu of '%s' moved %d: %s", doing,
                              piece, (unsigned long long)offset, name, done,
                              short_status == MPIDHT_ERR_FILE_CORRUPT
                                  ? "the file ends there"
                                  : "no room left on the file system, or a size limit");
            return short_status;
        }
        offset += (uint64_t)piece;
        buf += piece;
        len -= (size_t)piece;
    }
    return MPIDHT_OK;
}

const char *mpidht_file_unprefixed(const char *path)
{
    size_t prefix = strspn(path, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789");
    return prefix > 0 && path[prefix] == ':' ? path + prefix + 1 : NULL;
}

mpidht_status_t mpidht_file_read_at(const mpidht_t *t, MPI_File fh, const char *name,
                                    uint64_t offset, void *buf, size_t len)
{
    return transfer(t, fh, name, offset, buf, len, MPI_File_read_at, "read",
                    MPIDHT_ERR_FILE_CORRUPT);
}

mpidht_status_t mpidht_file_write_at(const mpidht_t *t, MPI_File fh, const char *name,
                                     uint64_t offset, const void *buf, size_t len)
{
    /* MPI_File_write_at takes const void * since MPI-3; the buffer is
     * only read. */
    return transfer(t, fh, name, offset, (unsigned char *)buf, len, write_piece, "write",
                    MPIDHT_ERR_FILE_IO);
}

/* Bytes Open MPI's shared file pointer components add to the last part
 * of the name of a file ompio opens, for the files of their own that they
 * make while it opens one (4.1 and the later sources read: sm makes
 * "<name>_cid-<cid>-<n>.sm" in the session directory, lockedfile
 * "<path>.lockedfile" or "<path>-<jobid>-<pid>.lock", up to 31 bytes with
 * every number at its widest), with room to spare. */
#define OPEN_MPI_NAME_ROOM 40
/* The longest last part of a path (a file name) a file system takes. */
#define FILE_NAME_MAX 255

/* The limits on the name MPI-IO opens on t's communicator
 * (mpidht_file_check_name), in bytes without the NUL: of the whole name
 * (SIZE_MAX where no limit is known), and of its last part (at most what
 * a file name may have; MPICH failed "<path>.partial" over it with an
 * error of its MPI-IO that named no reason). */
static void name_limits(const mpidht_t *t, size_t *whole, size_t *last)
{
    *whole = SIZE_MAX;
    *last = FILE_NAME_MAX;
    if (!mpidht_runs_open_mpi(t))
        return;
    size_t digits = 1; /* of the highest rank */
    for (int r = t->comm_size - 1; r >= 10; r /= 10)
        ++digits;
    *whole = 256 - 1 - (sizeof ".locktest." - 1) - digits;
    *last = FILE_NAME_MAX - OPEN_MPI_NAME_ROOM;
}

mpidht_status_t mpidht_file_check_name(const mpidht_t *t, const char *doing,
                                       const char *path, const char *opened)
{
    size_t whole, last, length = strlen(opened);
    name_limits(t, &whole, &last);
    const char *slash = strrchr(opened, '/');
    size_t name = length - (slash ? (size_t)(slash - opened) + 1 : 0);
    if (length > whole) {
        mpidht_set_detail(t,
                          "%s '%s': %s: MPI-IO opens '<path>%s', %zu bytes, and Open MPI's "
                          "takes file names of at most %zu bytes here (its ompio copies each "
                          "into 256 bytes, a longer one aborts the process); a shorter path, "
                          "e.g. a relative one, works",
                          doing, path, mpidht_strerror(MPIDHT_ERR_FILE_IO),
                          opened + strlen(path), length, whole);
        return MPIDHT_ERR_FILE_IO;
    }
    if (name > last && !mpidht_runs_open_mpi(t)) {
        mpidht_set_detail(t,
                          "%s '%s': %s: MPI-IO opens '<path>%s', whose last part is %zu bytes, "
                          "over the %d a file name may have; a shorter file name works",
                          doing, path, mpidht_strerror(MPIDHT_ERR_FILE_IO),
                          opened + strlen(path), name, FILE_NAME_MAX);
        return MPIDHT_ERR_FILE_IO;
    }
    if (name > last) {
        mpidht_set_detail(t,
                          "%s '%s': %s: MPI-IO opens '<path>%s', whose last part is %zu bytes, "
                          "and Open MPI's takes at most %zu there (its shared file pointer "
                          "components make files of their own named after it, up to %d bytes "
                          "longer, and a name over %d bytes leaves its processes waiting for "
                          "each other); a shorter file name works",
                          doing, path, mpidht_strerror(MPIDHT_ERR_FILE_IO),
                          opened + strlen(path), name, last, OPEN_MPI_NAME_ROOM,
                          FILE_NAME_MAX);
        return MPIDHT_ERR_FILE_IO;
    }
    return MPIDHT_OK;
}
