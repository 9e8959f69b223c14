/* tests/mpich/two-vm/mpi_twovm.c - one MPI job with ranks in both VMs of
 * tests/rxe/run2 (tests/mpich/two-vm.sh starts it): every message crosses
 * the emulated cable.
 *
 *   mpi_twovm RDV_DIR
 *
 * 1. ping-pong between rank 0 and rank 1, 8 B .. 1 MiB in powers of 4,
 *    every byte of every message checked (a pattern of size, iteration and
 *    sender);
 * 2. MPI_Allreduce of 64 integers on all ranks, every element checked,
 *    200 rounds;
 * 3. the cut: rank 0 asks the host to pull the cable (RDV_DIR/link-request
 *    "off", waits for link-done), then every rank keeps exchanging 64 KiB
 *    with MPI_Sendrecv (errors returned, not fatal). MPICH 4.0.2 aborts
 *    the job itself when a completion queue reports an error (its
 *    MPIDI_OFI_handle_cq_error is fatal whatever the error handler), so the
 *    lines below run only with an MPI that returns the error. Each rank
 *    that gets an error writes "RANK SECONDS ERRORCLASS TEXT" into RDV_DIR/error.RANK
 *    and prints it; rank 0 then waits (at most 60 s) for the other ranks'
 *    reports, puts the cable back ("on") so that mpiexec can take the job
 *    down, and exits 3. A rank whose exchange keeps succeeding after the
 *    cut is the failure this test is for: it would print "no error" after
 *    120 s and exit 4 (the wrapper script's timeout catches a hang).
 * Exit: 0 never (the cut must end the job); 1 a content or setup error,
 * 3 the expected error, 4 no error within 120 s of the cut.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int rank, nranks;
static const char *rdv;

static void fail(const char *what, long a, long b)
{
	fprintf(stderr, "mpi_twovm[%d] FAIL: %s (%ld, %ld)\n", rank, what, a, b);
	fflush(stderr);
	MPI_Abort(MPI_COMM_WORLD, 1);
	exit(1);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static unsigned char pat(size_t size, long it, int from, size_t i)
{
	return (unsigned char)(i * 131u + size * 7u + (size_t)it * 13u + (size_t)from * 101u + (i >> 9));
}

static void fill(unsigned char *b, size_t size, long it, int from)
{
	for (size_t i = 0; i < size; i++)
		b[i] = pat(size, it, from, i);
}

static void check(const unsigned char *b, size_t size, long it, int from)
{
	for (size_t i = 0; i < size; i++)
		if (b[i] != pat(size, it, from, i))
			fail("content mismatch (size, byte)", (long)size, (long)i);
}

static void write_file(const char *name, const char *text)
{
	char path[4096], tmp[4200];
	snprintf(path, sizeof(path), "%s/%s", rdv, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp%d", path, rank);
	FILE *f = fopen(tmp, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0 || rename(tmp, path) != 0)
		fail("cannot write to the rendezvous directory", 0, 0);
}

static int file_says(const char *name, const char *word)
{
	char path[4096], buf[64] = "";
	snprintf(path, sizeof(path), "%s/%s", rdv, name);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	int ok = fgets(buf, sizeof(buf), f) && !strncmp(buf, word, strlen(word));
	fclose(f);
	return ok;
}

/* the host sets both ends of the cable (tests/rxe/run2's link control) */
static void set_link(const char *word)
{
	char text[16];
	snprintf(text, sizeof(text), "%s\n", word);
	write_file("link-request", text);
	for (int i = 0; i < 300 && !file_says("link-done", word); i++)
		usleep(100000);
	if (!file_says("link-done", word))
		fail("the host did not set the link", 0, 0);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (argc < 2 || nranks < 2)
		fail("usage: mpi_twovm RDV_DIR, at least 2 ranks", argc, nranks);
	rdv = argv[1];
	char host[256] = "";
	gethostname(host, sizeof(host));
	printf("mpi_twovm: rank %d of %d on %s\n", rank, nranks, host);
	fflush(stdout);

	const size_t max = 1u << 20;
	unsigned char *sb = malloc(max), *rb = malloc(max);
	if (!sb || !rb)
		fail("out of memory", 0, 0);

	/* 1. ping-pong, rank 0 <-> rank 1 */
	double t0 = MPI_Wtime();
	int sizes = 0;
	for (size_t size = 8; size <= max; size *= 4, sizes++) {
		int iters = size <= 8192 ? 20 : 4;
		for (long it = 0; it < iters; it++) {
			if (rank == 0) {
				fill(sb, size, it, 0);
				MPI_Send(sb, (int)size, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
				memset(rb, 0, size);
				MPI_Recv(rb, (int)size, MPI_BYTE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				check(rb, size, it, 1);
			} else if (rank == 1) {
				memset(rb, 0, size);
				MPI_Recv(rb, (int)size, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				check(rb, size, it, 0);
				fill(sb, size, it, 1);
				MPI_Send(sb, (int)size, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
			}
		}
	}
	if (rank == 0)
		printf("mpi_twovm: ping-pong 8 B .. 1 MiB (%d sizes) checked, %.1f s\n", sizes,
		       MPI_Wtime() - t0);

	/* 2. allreduce */
	t0 = MPI_Wtime();
	enum { N = 64, ROUNDS = 200 };
	long long in[N], out[N];
	for (long r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < N; i++)
			in[i] = (long long)rank * 1000003 + r * 31 + i;
		MPI_Allreduce(in, out, N, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
		for (int i = 0; i < N; i++) {
			long long want = 1000003LL * nranks * (nranks - 1) / 2 + (r * 31 + i) * nranks;
			if (out[i] != want)
				fail("allreduce element wrong (round, element)", r, i);
		}
	}
	if (rank == 0)
		printf("mpi_twovm: %d allreduces of %d integers on %d ranks checked, %.1f s\n", ROUNDS,
		       N, nranks, MPI_Wtime() - t0);
	fflush(stdout);
	MPI_Barrier(MPI_COMM_WORLD);

	/* 3. the cut */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	if (rank == 0) {
		struct timespec rt;
		char text[64];
		set_link("off");
		clock_gettime(CLOCK_REALTIME, &rt);
		snprintf(text, sizeof(text), "%.3f\n", (double)rt.tv_sec + rt.tv_nsec * 1e-9);
		write_file("cut", text);	/* two-vm.sh times the end of the job from here */
		printf("mpi_twovm: cable cut\n");
		fflush(stdout);
	}
	double tcut = now();
	const size_t size = 64 * 1024;
	int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
	for (long it = 0;; it++) {
		fill(sb, size, it, rank);
		int rc = MPI_Sendrecv(sb, (int)size, MPI_BYTE, right, 9, rb, (int)size, MPI_BYTE, left, 9,
				      MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		double t = now() - tcut;
		if (rc != MPI_SUCCESS) {
			char text[MPI_MAX_ERROR_STRING], line[MPI_MAX_ERROR_STRING + 128], name[32];
			int len = 0, cls = 0;
			MPI_Error_string(rc, text, &len);
			MPI_Error_class(rc, &cls);
			for (char *p = text; *p; p++)
				if (*p == '\n')
					*p = ' ';
			snprintf(line, sizeof(line), "%d %.1f %d %s\n", rank, t, cls, text);
			snprintf(name, sizeof(name), "error.%d", rank);
			write_file(name, line);
			printf("mpi_twovm: rank %d: MPI error %.1f s after the cut (exchange %ld): class %d: %s\n",
			       rank, t, it, cls, text);
			fflush(stdout);
			break;
		}
		check(rb, size, it, left);
		if (t > 120) {
			printf("mpi_twovm: rank %d: no error 120 s after the cut (%ld exchanges)\n", rank, it);
			fflush(stdout);
			if (rank == 0)
				set_link("on");
			return 4;
		}
	}
	if (rank == 0) {
		/* let the other ranks report theirs, then give mpiexec its wire back */
		for (int i = 0; i < 600; i++) {
			int all = 1;
			for (int r = 1; r < nranks; r++) {
				char path[4096];
				snprintf(path, sizeof(path), "%s/error.%d", rdv, r);
				all &= access(path, F_OK) == 0;
			}
			if (all)
				break;
			usleep(100000);
		}
		set_link("on");
		printf("mpi_twovm: cable back\n");
		fflush(stdout);
	}
	return 3;
}
