/*
 * MPI-IO reads and writes of any length at an explicit offset, with every
 * return code and transferred count checked; the file names MPI-IO can
 * open. Internal.
 */
#ifndef MPIDHT_FILE_IO_H
#define MPIDHT_FILE_IO_H

#include <stddef.h>
#include <stdint.h>

#include "mpidht.h"

/* MPIDHT_OK if `opened` (the name MPI-IO is to open for path: path, or
 * path with a suffix) is a name this MPI's MPI-IO opens on t's
 * communicator without harm; else MPIDHT_ERR_FILE_IO, on every process
 * alike (the path is the same everywhere), with a detail that starts with
 * `doing` and path. Open MPI's ompio (4.1 here, and the later sources
 * read) copies the name of each file it opens, with ".locktest." and the
 * caller's rank after it, into 256 bytes while it chooses a shared file
 * pointer component; a longer name overflows them (glibc aborts the
 * process). Those components make files of their own named after the
 * file, up to 31 bytes longer in its last part; where that is over the
 * file system's 255 bytes some processes fail to open it and the others
 * wait in the open for ever, so the last part of the name is held to 215
 * bytes. The limits hold for any Open MPI, also where ompio was
 * deselected for ROMIO (--mca io romio321), which takes longer names:
 * which component opens a file is not known before it is opened. */
mpidht_status_t mpidht_file_check_name(const mpidht_t *t, const char *doing,
                                       const char *path, const char *opened);

/* The name a ROMIO MPI-IO (MPICH's) opens for path where path starts with
 * a file-system prefix ("ufs:name", "nfs:name", ...: letters and digits,
 * then a colon), which it strips: the rest of path; NULL where path has
 * no such prefix. Whatever the library checks on disk before MPI-IO opens
 * or deletes a file it checks under both names. */
const char *mpidht_file_unprefixed(const char *path);

/* Reads len bytes at offset of fh, the file `name` (independent I/O).
 * MPIDHT_OK, MPIDHT_ERR_FILE_IO if MPI-IO fails, MPIDHT_ERR_FILE_CORRUPT
 * if the file ends first; on this process a failure is t's error detail,
 * naming the file, the byte and the reason. */
mpidht_status_t mpidht_file_read_at(const mpidht_t *t, MPI_File fh, const char *name,
                                    uint64_t offset, void *buf, size_t len);

/* Writes len bytes at offset of fh, the file `name` (independent I/O).
 * MPIDHT_OK or MPIDHT_ERR_FILE_IO (MPI-IO failed or wrote less: a full
 * file system), with t's error detail as for mpidht_file_read_at. */
mpidht_status_t mpidht_file_write_at(const mpidht_t *t, MPI_File fh, const char *name,
                                     uint64_t offset, const void *buf, size_t len);

#endif /* MPIDHT_FILE_IO_H */
