/* The error detail of a table: what its last collective call failed on. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "table.h"

void mpidht_set_detail(const mpidht_t *t, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(t->diag->detail, sizeof t->diag->detail, format, args);
    va_end(args);
}

void mpidht_append(char *out, size_t size, const char *format, ...)
{
    size_t used = strlen(out);
    va_list args;
    va_start(args, format);
    vsnprintf(out + used, size - used, format, args);
    va_end(args);
}

void mpidht_set_mpi_detail(const mpidht_t *t, int rc, const char *what, const char *path)
{
    char reason[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (MPI_Error_string(rc, reason, &len) != MPI_SUCCESS)
        snprintf(reason, sizeof reason, "MPI error %d", rc);
    mpidht_set_detail(t, "%s '%s': %s", what, path, reason);
}

const char *mpidht_error_detail(const mpidht_t *table)
{
    return table ? table->diag->detail : "";
}
