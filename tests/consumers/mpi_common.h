/* What the MPI consumer tests share: the rank, a failure that ends the
 * whole job, and the libfabric.so this process mapped (so the log proves
 * whose library ran). */
#ifndef MPI_COMMON_H
#define MPI_COMMON_H

#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int rank, nranks;

#define FAIL(...)							\
	do {								\
		fprintf(stderr, "rank %d: ", rank);			\
		fprintf(stderr, __VA_ARGS__);				\
		fprintf(stderr, "\n");					\
		MPI_Abort(MPI_COMM_WORLD, 1);				\
	} while (0)

static inline void show_library(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *path = strchr(line, '/');

		if (path && strstr(path, "libfabric.so")) {
			printf("rank 0 mapped: %s", path);
			break;
		}
	}
	fclose(f);
}

#endif
