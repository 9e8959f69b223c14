/* bench/mpi/mpi_pingpong.c - MPI ping-pong (MPI_Send/MPI_Recv) and
 * MPI_Allreduce latency, with every message's content checked; compiled
 * with the mpicc of whichever MPI is measured (MPICH on the direct build,
 * MPICH on the OFF build or Debian's libfabric, Open MPI over the drop-in
 * or over UCX), so the same code runs on each.
 *
 *   mpi_pingpong [--variant NAME] [--max BYTES] [--iters N]
 *   (--iters caps the iterations per size: 1000 up to 4 KiB, 200 up to
 *   256 KiB, 20 above; and sets the allreduce count)
 *   mpi_pingpong --callgrind N [--variant NAME]
 *
 * Normal mode, any number of ranks >= 2: ranks 0 and 1 ping-pong
 * 8 B .. --max (default 4 MiB) in powers of 4 (and 4 MiB itself), every
 * rank then runs MPI_Allreduce on one 8-byte integer. One CSV line per
 * measurement on stdout from rank 0:
 *   mpi,VARIANT,pingpong,BYTES,ITERS,half_round_trip_us,MB_per_s
 *   mpi,VARIANT,allreduce,8,ITERS,us_per_call,NRANKS
 *
 * Content: before timing, each size is sent once with every byte a
 * function of (size, byte index) and compared in full on both sides; in
 * the timed loop each message carries the iteration number in its first
 * and last 8 bytes, checked on receipt (a stale or torn buffer fails).
 * Any mismatch aborts the job (MPI_Abort, exit 1).
 *
 * Callgrind mode (run rank 0 under valgrind --tool=callgrind
 * --collect-atstart=no): N round trips of 8 B with the instruction
 * counter on only inside the MPI calls of rank 0, in two phases (see
 * callgrind_rounds).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <valgrind/callgrind.h>

static int rank, nranks;
static const char *variant = "mpi";

static void die(const char *what, long a, long b)
{
	fprintf(stderr, "mpi_pingpong[%d] %s: %s (%ld, %ld)\n", rank, variant, what, a, b);
	MPI_Abort(MPI_COMM_WORLD, 1);
	exit(1);
}

static unsigned char pattern(size_t size, size_t i)
{
	return (unsigned char)((i * 131u + size * 7u + (i >> 8)) & 0xff);
}

static void stamp(unsigned char *buf, size_t size, uint64_t it)
{
	memcpy(buf, &it, 8);
	memcpy(buf + size - 8, &it, 8);
}

static void check_stamp(const unsigned char *buf, size_t size, uint64_t it)
{
	uint64_t a, b;
	memcpy(&a, buf, 8);
	memcpy(&b, buf + size - 8, 8);
	if (a != it || b != it)
		die("stamp mismatch", (long)size, (long)it);
}

/* one full-content exchange of SIZE bytes, both directions */
static void verify_size(unsigned char *sbuf, unsigned char *rbuf, size_t size)
{
	int peer = 1 - rank;
	for (size_t i = 0; i < size; i++)
		sbuf[i] = pattern(size, i) ^ (unsigned char)rank;
	memset(rbuf, 0xee, size);
	if (rank == 0) {
		MPI_Send(sbuf, (int)size, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
		MPI_Recv(rbuf, (int)size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	} else {
		MPI_Recv(rbuf, (int)size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Send(sbuf, (int)size, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
	}
	for (size_t i = 0; i < size; i++)
		if (rbuf[i] != (unsigned char)(pattern(size, i) ^ (unsigned char)peer))
			die("content mismatch at byte", (long)i, (long)size);
}

static double pingpong(unsigned char *sbuf, unsigned char *rbuf, size_t size, int iters, int warm)
{
	int peer = 1 - rank;
	double t0 = 0;
	for (int it = -warm; it < iters; it++) {
		if (it == 0)
			t0 = MPI_Wtime();
		stamp(sbuf, size, (uint64_t)(it + warm));
		if (rank == 0) {
			MPI_Send(sbuf, (int)size, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
			MPI_Recv(rbuf, (int)size, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(rbuf, (int)size, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(sbuf, (int)size, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
		}
		check_stamp(rbuf, size, (uint64_t)(it + warm));
	}
	return MPI_Wtime() - t0;
}

/* Two counted phases, each N round trips of 8 B after 10 uncounted ones:
 * "sendrecv": MPI_Send then MPI_Recv, as a program writes them; the count
 *   includes every poll of MPICH's or Open MPI's waiting loops while the
 *   wire works (how many depends on timing, more so under valgrind);
 * "posted": MPI_Irecv + MPI_Isend counted, a sleep not counted (the
 *   message goes out, the reply comes back into the posted buffer; 20 ms,
 *   MPI_CG_GAP_US microseconds: session 8's 2 ms left ~20 CQ polls per
 *   round trip in MPI_Waitall on a loaded host), then
 *   MPI_Waitall counted: the software cost of one send and one receive
 *   with nothing left to wait for.
 * Rank 0 dumps the first phase's counters (callgrind client request) and
 * the second is in the final dump. */
static void callgrind_rounds(int n)
{
	unsigned char sbuf[8], rbuf[8];
	const char *g = getenv("MPI_CG_GAP_US");
	long gap_us = g ? atol(g) : 20000;
	struct timespec gap = { gap_us / 1000000, (gap_us % 1000000) * 1000 };
	int peer = 1 - rank;
	for (int phase = 0; phase < 2; phase++) {
		for (int it = 0; it < n + 10; it++) {
			int counted = rank == 0 && it >= 10;
			uint64_t seq = (uint64_t)(phase * 1000000 + it);
			stamp(sbuf, 8, seq);
			if (rank != 0) {
				MPI_Recv(rbuf, 8, MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				MPI_Send(sbuf, 8, MPI_BYTE, peer, 3, MPI_COMM_WORLD);
			} else if (phase == 0) {
				if (counted)
					CALLGRIND_TOGGLE_COLLECT;
				MPI_Send(sbuf, 8, MPI_BYTE, peer, 3, MPI_COMM_WORLD);
				MPI_Recv(rbuf, 8, MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				if (counted)
					CALLGRIND_TOGGLE_COLLECT;
			} else {
				MPI_Request rq[2];
				if (counted)
					CALLGRIND_TOGGLE_COLLECT;
				MPI_Irecv(rbuf, 8, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &rq[0]);
				MPI_Isend(sbuf, 8, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &rq[1]);
				if (counted)
					CALLGRIND_TOGGLE_COLLECT;
				nanosleep(&gap, NULL);
				if (counted)
					CALLGRIND_TOGGLE_COLLECT;
				MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
				if (counted)
					CALLGRIND_TOGGLE_COLLECT;
			}
			check_stamp(rbuf, 8, seq);
		}
		if (rank == 0 && phase == 0)
			CALLGRIND_DUMP_STATS_AT("sendrecv");
		MPI_Barrier(MPI_COMM_WORLD);
	}
	if (rank == 0)
		printf("mpi,%s,callgrind_rounds,8,%d\n", variant, n);
}

int main(int argc, char **argv)
{
	size_t max = 4u << 20;
	int iters_arg = 0, cg = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--variant") && i + 1 < argc)
			variant = argv[++i];
		else if (!strcmp(argv[i], "--max") && i + 1 < argc)
			max = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
			iters_arg = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--callgrind") && i + 1 < argc)
			cg = atoi(argv[++i]);
		else
			die("unknown argument", i, 0);
	}
	if (nranks < 2)
		die("needs at least 2 ranks", nranks, 0);
	if (max < 8)
		max = 8;

	if (cg > 0) {
		if (rank < 2)
			callgrind_rounds(cg);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Finalize();
		return 0;
	}

	unsigned char *sbuf = malloc(max), *rbuf = malloc(max);
	if (!sbuf || !rbuf)
		die("out of memory", (long)max, 0);
	if (rank < 2) {
		/* 8, 32, 128, ... in powers of 4, then MAX itself */
		for (size_t size = 8;; size = size * 4 < max ? size * 4 : max) {
			verify_size(sbuf, rbuf, size);
			int iters = size <= 4096 ? 1000 : size <= 262144 ? 200 : 20;
			if (iters_arg && iters_arg < iters)	/* --iters caps, big sizes keep fewer */
				iters = iters_arg;
			double t = pingpong(sbuf, rbuf, size, iters, iters / 10 + 1);
			if (rank == 0)
				printf("mpi,%s,pingpong,%zu,%d,%.3f,%.1f\n", variant, size, iters,
				       t / iters / 2 * 1e6, 2.0 * size * iters / t / 1e6);
			if (size == max)
				break;
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);

	int iters = iters_arg ? iters_arg : 1000;
	long long in, outv;
	for (int it = -iters / 10 - 1; it < iters; it++) {
		in = (long long)rank * 1000003 + it;
		MPI_Allreduce(&in, &outv, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
		long long want = 1000003LL * nranks * (nranks - 1) / 2 + (long long)it * nranks;
		if (outv != want)
			die("allreduce result", (long)outv, (long)want);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (int it = 0; it < iters; it++) {
		in = (long long)rank * 1000003 + it;
		MPI_Allreduce(&in, &outv, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
		long long want = 1000003LL * nranks * (nranks - 1) / 2 + (long long)it * nranks;
		if (outv != want)
			die("allreduce result", (long)outv, (long)want);
	}
	double t = MPI_Wtime() - t0;
	if (rank == 0)
		printf("mpi,%s,allreduce,8,%d,%.3f,%d\n", variant, iters, t / iters * 1e6, nranks);
	free(sbuf);
	free(rbuf);
	MPI_Finalize();
	return 0;
}
