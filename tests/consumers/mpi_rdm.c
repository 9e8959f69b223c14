/* An MPI program for Open MPI's OFI transport (pml cm, mtl ofi), which is
 * a consumer of FI_EP_RDM tagged messages. On 4 ranks (an even number at
 * least 2 works):
 *  - ping-pong between ranks 2k and 2k+1 for sizes 0 B .. 4 MiB, every
 *    byte checked on both sides;
 *  - MPI_ANY_SOURCE: rank 0 receives one message from every other rank,
 *    status.MPI_SOURCE must name the sender whose bytes arrived;
 *  - MPI_ANY_TAG: status.MPI_TAG must be the tag the bytes were sent with;
 *  - out-of-order tags: tags 1, 2, 3 sent, received 3, 2, 1 (one 1 MiB);
 *  - MPI_Barrier and MPI_Allreduce (a scalar and 4096 doubles).
 * Rank 0 also prints which libfabric.so.1 this process mapped (from
 * /proc/self/maps), so the log proves whose library ran. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_common.h"

static void fill(uint8_t *p, size_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 7;

	for (size_t i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (uint8_t)(x >> 16);
	}
}

static void check(const uint8_t *p, size_t len, uint32_t seed, const char *what)
{
	uint32_t x = seed * 2654435761u + 7;

	for (size_t i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		if (p[i] != (uint8_t)(x >> 16))
			FAIL("%s: byte %zu of %zu wrong", what, i, len);
	}
}

static void pingpong(void)
{
	size_t max = 4u << 20, len;
	uint8_t *sbuf = malloc(max), *rbuf = malloc(max);
	int peer = rank ^ 1, iter;
	MPI_Status st;
	int count;

	if (!sbuf || !rbuf)
		FAIL("out of memory");
	for (len = 0; len <= max; len = len ? len * 4 : 1) {
		for (iter = 0; iter < 2; iter++) {
			uint32_t seed = (uint32_t)(len * 8 + (size_t)iter * 2);

			memset(rbuf, 0, len);
			if (rank % 2 == 0) {
				fill(sbuf, len, seed);
				MPI_Send(sbuf, (int)len, MPI_BYTE, peer, 10, MPI_COMM_WORLD);
				MPI_Recv(rbuf, (int)len, MPI_BYTE, peer, 11, MPI_COMM_WORLD, &st);
				check(rbuf, len, seed + 1, "pong");
			} else {
				MPI_Recv(rbuf, (int)len, MPI_BYTE, peer, 10, MPI_COMM_WORLD, &st);
				check(rbuf, len, seed, "ping");
				fill(sbuf, len, seed + 1);
				MPI_Send(sbuf, (int)len, MPI_BYTE, peer, 11, MPI_COMM_WORLD);
			}
			MPI_Get_count(&st, MPI_BYTE, &count);
			if ((size_t)count != len)
				FAIL("ping-pong: %d bytes, expected %zu", count, len);
		}
	}
	free(sbuf);
	free(rbuf);
	if (rank == 0)
		printf("ping-pong 0 B .. 4 MiB: ok\n");
}

static void any_source(void)
{
	uint8_t buf[1000];
	MPI_Status st;
	int i, seen[64] = { 0 };

	if (rank == 0) {
		for (i = 1; i < nranks; i++) {
			MPI_Recv(buf, sizeof(buf), MPI_BYTE, MPI_ANY_SOURCE, 20, MPI_COMM_WORLD, &st);
			if (st.MPI_SOURCE <= 0 || st.MPI_SOURCE >= nranks || seen[st.MPI_SOURCE]++)
				FAIL("MPI_ANY_SOURCE: bad or repeated source %d", st.MPI_SOURCE);
			check(buf, sizeof(buf), 1000u + (uint32_t)st.MPI_SOURCE,
			      "MPI_ANY_SOURCE: bytes are not the named source's");
		}
		printf("MPI_ANY_SOURCE from %d ranks: ok\n", nranks - 1);
	} else {
		fill(buf, sizeof(buf), 1000u + (uint32_t)rank);
		MPI_Send(buf, sizeof(buf), MPI_BYTE, 0, 20, MPI_COMM_WORLD);
	}
}

static void any_tag_and_order(void)
{
	static uint8_t small[3][4096], big[1 << 20];
	MPI_Request req[4];
	MPI_Status st;
	int t;

	if (rank == 0) {
		/* out of order: 1, 2 (1 MiB), 3 sent; 3, 2, 1 received */
		fill(small[0], sizeof(small[0]), 31);
		fill(big, sizeof(big), 32);
		fill(small[2], sizeof(small[2]), 33);
		MPI_Isend(small[0], sizeof(small[0]), MPI_BYTE, 1, 1, MPI_COMM_WORLD, &req[0]);
		MPI_Isend(big, sizeof(big), MPI_BYTE, 1, 2, MPI_COMM_WORLD, &req[1]);
		MPI_Isend(small[2], sizeof(small[2]), MPI_BYTE, 1, 3, MPI_COMM_WORLD, &req[2]);
		/* any tag: one message of a tag the receiver does not know */
		fill(small[1], 100, 77);
		MPI_Isend(small[1], 100, MPI_BYTE, 1, 4242, MPI_COMM_WORLD, &req[3]);
		MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
	} else if (rank == 1) {
		static uint8_t r[4096], rbig[1 << 20];

		MPI_Recv(r, sizeof(r), MPI_BYTE, 0, 3, MPI_COMM_WORLD, &st);
		check(r, sizeof(r), 33, "tag 3");
		MPI_Recv(rbig, sizeof(rbig), MPI_BYTE, 0, 2, MPI_COMM_WORLD, &st);
		check(rbig, sizeof(rbig), 32, "tag 2 (1 MiB)");
		MPI_Recv(r, sizeof(r), MPI_BYTE, 0, 1, MPI_COMM_WORLD, &st);
		check(r, sizeof(r), 31, "tag 1");
		memset(r, 0, sizeof(r));
		MPI_Recv(r, sizeof(r), MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
		if (st.MPI_TAG != 4242)
			FAIL("MPI_ANY_TAG: tag %d, expected 4242", st.MPI_TAG);
		MPI_Get_count(&st, MPI_BYTE, &t);
		if (t != 100)
			FAIL("MPI_ANY_TAG: %d bytes", t);
		check(r, 100, 77, "MPI_ANY_TAG");
		printf("rank 1: out-of-order tags and MPI_ANY_TAG: ok\n");
	}
}

static void collectives(void)
{
	static double v[4096], sum[4096];
	int one = rank + 1, total = 0, i;

	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (total != nranks * (nranks + 1) / 2)
		FAIL("allreduce: %d", total);
	for (i = 0; i < 4096; i++)
		v[i] = rank * 4096.0 + i;
	MPI_Allreduce(v, sum, 4096, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	for (i = 0; i < 4096; i++) {
		double want = 4096.0 * nranks * (nranks - 1) / 2 + (double)i * nranks;

		if (sum[i] != want)
			FAIL("allreduce[%d] = %g, expected %g", i, sum[i], want);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("barrier and allreduce: ok\n");
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (nranks < 2 || nranks % 2 || nranks > 64)
		FAIL("needs an even number of ranks, 2..64");
	if (rank == 0)
		show_library();
	pingpong();
	any_source();
	any_tag_and_order();
	collectives();
	if (rank == 0)
		printf("mpi_rdm: all checks passed on %d ranks\n", nranks);
	MPI_Finalize();
	return 0;
}
