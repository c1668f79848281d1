/*
 * MPI-IO reads and writes of any length at an explicit offset, with every
 * return code and transferred count checked. Internal.
 */
#ifndef MPIDHT_FILE_IO_H
#define MPIDHT_FILE_IO_H

#include <stddef.h>
#include <stdint.h>

#include "mpidht.h"

/* Reads len bytes at offset (independent I/O). MPIDHT_OK,
 * MPIDHT_ERR_FILE_IO if MPI-IO fails, MPIDHT_ERR_FILE_CORRUPT if the file
 * ends first. */
mpidht_status_t mpidht_file_read_at(MPI_File fh, uint64_t offset, void *buf,
                                    size_t len);

/* Writes len bytes at offset (independent I/O). MPIDHT_OK or
 * MPIDHT_ERR_FILE_IO. */
mpidht_status_t mpidht_file_write_at(MPI_File fh, uint64_t offset,
                                     const void *buf, size_t len);

#endif /* MPIDHT_FILE_IO_H */
