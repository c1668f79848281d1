/*
 * Built with the other MPI's compiler wrapper than mpidht was, and linked
 * to that mpidht (tests/c/mixed-mpi.sh): mpidht_create must refuse with
 * MPIDHT_ERR_MPI_LIBRARY and a detail naming both MPI libraries, instead
 * of passing this MPI's handles to code compiled for the other's (which
 * crashed in the first call that took one). Exits 0 if it does.
 */
#include <stdio.h>
#include <string.h>

#include <mpidht.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    char detail[640] = "";
    mpidht_params_t p;
    mpidht_params_init(&p);
    p.key_size = 8;
    p.value_size = 8;
    p.memory_per_process = 1 << 16;
    p.error_detail = detail;
    p.error_detail_size = sizeof detail;
    mpidht_t *table = NULL;
    mpidht_status_t st = mpidht_create(MPI_COMM_WORLD, &p, &table);
    int ok = st == MPIDHT_ERR_MPI_LIBRARY && table == NULL && strstr(detail, "Open MPI") &&
             strstr(detail, "MPICH");
    printf("mpidht_create: %s (%d); detail: %s\n", mpidht_strerror(st), (int)st, detail);
    MPI_Finalize();
    return ok ? 0 : 1;
}
