/* Open MPI programs that hung over this library (issue 21), each checked
 * for content, on an even number of ranks (4 in CI):
 *  - ssend: MPI_Ssend / MPI_Issend to the partner rank with tags 0, 1,
 *    MPI_TAG_UB and a few between; the synchronous-send acknowledgement
 *    travels with protocol bits at the top of the match bits (bit 63 in
 *    mtl_ofi_tag_mode ofi_tag_1), so every tag layout the mtl has is run
 *    by the script;
 *  - intercomm: MPI_Intercomm_create between the even and the odd ranks
 *    (the communicator-id agreement exchanges messages with the mtl's
 *    internal negative tags from inside its progress callback), then a
 *    message across it, MPI_Allreduce over it (each group gets the other
 *    group's sum), MPI_Intercomm_merge and a barrier on the result.
 * Prints "mpi_defects: all checks passed on N ranks". */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_common.h"

#define MPI_OK(call)							\
	do {								\
		int rc_ = (call);					\
		if (rc_ != MPI_SUCCESS)					\
			FAIL("%s returned %d", #call, rc_);		\
	} while (0)

static void check_ssend(void)
{
	int *ub, flag, tag_ub, partner = rank ^ 1;
	MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
	if (!flag)
		FAIL("no MPI_TAG_UB");
	tag_ub = *ub;
	const int tags[] = { 0, 1, 77, 0xffff, tag_ub / 2, tag_ub - 1, tag_ub };

	for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
		int tag = tags[i];
		int64_t out[64], in[64];

		for (int k = 0; k < 64; k++)
			out[k] = ((int64_t)rank << 40) | ((int64_t)i << 20) | k;
		memset(in, 0, sizeof(in));
		/* the lower rank sends first: a synchronous send only returns
		 * once its receive has been matched at the partner */
		if (rank < partner) {
			MPI_OK(MPI_Ssend(out, 64, MPI_INT64_T, partner, tag, MPI_COMM_WORLD));
			MPI_OK(MPI_Recv(in, 64, MPI_INT64_T, partner, tag, MPI_COMM_WORLD,
					MPI_STATUS_IGNORE));
		} else {
			MPI_OK(MPI_Recv(in, 64, MPI_INT64_T, partner, tag, MPI_COMM_WORLD,
					MPI_STATUS_IGNORE));
			MPI_OK(MPI_Ssend(out, 64, MPI_INT64_T, partner, tag, MPI_COMM_WORLD));
		}
		for (int k = 0; k < 64; k++)
			if (in[k] != (((int64_t)partner << 40) | ((int64_t)i << 20) | k))
				FAIL("ssend tag %d: element %d wrong", tag, k);

		/* both at once, non-blocking, large enough for rendezvous */
		size_t n = 1u << 17;
		int64_t *big_out = malloc(n * 8), *big_in = calloc(n, 8);
		MPI_Request rq[2];

		if (!big_out || !big_in)
			FAIL("no memory");
		for (size_t k = 0; k < n; k++)
			big_out[k] = (int64_t)(k * 31 + (size_t)rank * 7 + i);
		MPI_OK(MPI_Irecv(big_in, (int)n, MPI_INT64_T, partner, tag, MPI_COMM_WORLD, &rq[0]));
		MPI_OK(MPI_Issend(big_out, (int)n, MPI_INT64_T, partner, tag, MPI_COMM_WORLD, &rq[1]));
		MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
		for (size_t k = 0; k < n; k++)
			if (big_in[k] != (int64_t)(k * 31 + (size_t)partner * 7 + i))
				FAIL("issend tag %d: element %zu wrong", tag, k);
		free(big_out);
		free(big_in);
	}
}

static void check_intercomm(void)
{
	MPI_Comm half, inter, merged;
	int color = rank & 1, hrank, hsize, rsize, mrank, msize;

	MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half));
	MPI_OK(MPI_Comm_rank(half, &hrank));
	MPI_OK(MPI_Comm_size(half, &hsize));
	/* the leaders are world ranks 0 (evens) and 1 (odds) */
	MPI_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, color ? 0 : 1, 42, &inter));
	MPI_OK(MPI_Comm_remote_size(inter, &rsize));
	if (rsize != nranks - hsize)
		FAIL("intercomm: remote size %d, want %d", rsize, nranks - hsize);

	/* rank i of one group talks to rank i of the other */
	if (hrank < rsize) {
		int64_t out = 1000 * rank + 5, in = -1;

		MPI_OK(MPI_Sendrecv(&out, 1, MPI_INT64_T, hrank, 7, &in, 1, MPI_INT64_T, hrank, 7,
				    inter, MPI_STATUS_IGNORE));
		int peer_world = color ? 2 * hrank : 2 * hrank + 1;
		if (in != 1000 * peer_world + 5)
			FAIL("intercomm message: %lld, want %d", (long long)in, 1000 * peer_world + 5);
	}

	/* an intercommunicator allreduce: each group gets the sum of the
	 * other group's contributions */
	int64_t mine = rank + 1, sum = -1, want = 0;
	for (int r = 0; r < nranks; r++)
		if ((r & 1) != color)
			want += r + 1;
	MPI_OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT64_T, MPI_SUM, inter));
	if (sum != want)
		FAIL("intercomm allreduce: %lld, want %lld", (long long)sum, (long long)want);

	MPI_OK(MPI_Intercomm_merge(inter, color, &merged));
	MPI_OK(MPI_Comm_rank(merged, &mrank));
	MPI_OK(MPI_Comm_size(merged, &msize));
	if (msize != nranks)
		FAIL("merged size %d", msize);
	int64_t all = 0;
	MPI_OK(MPI_Allreduce(&mine, &all, 1, MPI_INT64_T, MPI_SUM, merged));
	if (all != (int64_t)nranks * (nranks + 1) / 2)
		FAIL("merged allreduce: %lld", (long long)all);
	MPI_OK(MPI_Barrier(merged));

	MPI_OK(MPI_Comm_free(&merged));
	MPI_OK(MPI_Comm_free(&inter));
	MPI_OK(MPI_Comm_free(&half));
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "all";

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (nranks < 2 || nranks % 2)
		FAIL("needs an even number of ranks");
	if (rank == 0)
		show_library();
	if (!strcmp(what, "ssend") || !strcmp(what, "all")) {
		check_ssend();
		if (rank == 0)
			printf("mpi_defects: ssend passed\n");
	}
	if (!strcmp(what, "intercomm") || !strcmp(what, "all")) {
		check_intercomm();
		if (rank == 0)
			printf("mpi_defects: intercomm passed\n");
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi_defects: all checks passed on %d ranks\n", nranks);
	MPI_Finalize();
	return 0;
}
