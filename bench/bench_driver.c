/* The measurement loops, statistics and output shared by every variant of
 * the ping-pong benchmark. See bench.h for the backend interface and
 * bench/README.md for what each test measures. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>

#include "bench.h"
#include "bench_util.h"

int bm_cg;

const char *const bm_test_names[BM_NTESTS] = {
	[BM_SEND] = "send",
	[BM_INJECT] = "inject",
	[BM_WRITE] = "write",
	[BM_WRITEDATA] = "writedata",
	[BM_READ] = "read",
	[BM_ATOMIC] = "atomic",
	[BM_RSTREAM] = "rstream",
	[BM_SEND_BW] = "send_bw",
	[BM_WRITE_BW] = "write_bw",
	[BM_READ_BW] = "read_bw",
};

#define BM_ALL_TESTS ((1u << BM_SEND) | (1u << BM_INJECT) | (1u << BM_WRITE) | \
		      (1u << BM_WRITEDATA) | (1u << BM_READ) | (1u << BM_ATOMIC))
#define BM_BW_TESTS ((1u << BM_SEND_BW) | (1u << BM_WRITE_BW) | (1u << BM_READ_BW))
#define BM_DEFAULT_PORT "47593"

/* ------------------------------------------------------------------------
 * Command line
 * ---------------------------------------------------------------------- */
void bm_usage(const char *prog, const char *extra)
{
	printf("usage: %s [options]              server (waits for one client)\n"
	       "       %s [options] SERVER_ADDR  client\n"
	       "       %s [options] --local      both sides in one run (forked)\n"
	       "\n"
	       "  -t, --test LIST      comma list of send,inject,write,writedata,read,atomic\n"
	       "                       (latency), send_bw,write_bw,read_bw (bandwidth with\n"
	       "                       --window operations in flight), 'all' (the six\n"
	       "                       latency tests), 'bw' (the three bandwidth tests);\n"
	       "                       default send. rstream: see fd_rstream\n"
	       "  -s, --size LIST      comma list of N, MIN:MAX (the powers of two in\n"
	       "                       between) or 'all' (1 B..4 MiB); default 64; k/m\n"
	       "                       suffixes; at most one N not a power of two;\n"
	       "                       atomic always moves 8 B\n"
	       "  -n, --iters N        measured iterations (bandwidth: messages) per size\n"
	       "                       (default 1000)\n"
	       "  -w, --warmup N       unmeasured iterations first (default 100)\n"
	       "  -W, --window N       bandwidth tests: operations in flight (default 64,\n"
	       "                       at most 256)\n"
	       "      --batch N        send_bw: N sends per doorbell (FI_MORE on all but\n"
	       "                       the last; raw verbs: a list of N work requests,\n"
	       "                       as perftest's --post_list N); default 1\n"
	       "  -p, --port P         server port (default " BM_DEFAULT_PORT "; --local: any)\n"
	       "  -b, --bind ADDR      address to listen on (server, --local; default\n"
	       "                       $FD_RXE_ADDR0 with --local)\n"
	       "  -l, --local          fork a server and a client, pinned to --cpus\n"
	       "      --cpus S,C       CPUs of server and client (--local default 0,1)\n"
	       "      --cpu N          pin this process (server/client mode)\n"
	       "      --csv FILE       write the results as CSV\n"
	       "      --json FILE      write the results as JSON\n"
	       "      --variant NAME   label of this build in the output\n"
	       "      --callgrind      count instructions: toggle callgrind collection around\n"
	       "                       each data-path call and dump per test and size (run\n"
	       "                       under valgrind --tool=callgrind --collect-atstart=no)\n"
	       "      --progress       a line on stderr per size (default when stderr is a tty)\n"
	       "  -q, --quiet          no table on stdout\n"
	       "%s",
	       prog, prog, prog, extra ? extra : "");
}

static uint32_t bm_parse_tests(const char *s)
{
	uint32_t mask = 0;
	char *copy = strdup(s), *save = NULL, *tok;

	if (!copy)
		bu_die("out of memory");
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int found = 0;

		if (!strcmp(tok, "all")) {
			mask |= BM_ALL_TESTS;
			continue;
		}
		if (!strcmp(tok, "bw")) {
			mask |= BM_BW_TESTS;
			continue;
		}
		for (int t = 0; t < BM_NTESTS; t++) {
			if (!strcmp(tok, bm_test_names[t])) {
				mask |= 1u << t;
				found = 1;
			}
		}
		if (!found)
			bu_die("unknown test '%s'", tok);
	}
	free(copy);
	return mask;
}

static int bm_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static int bm_log2(uint64_t v)
{
	int k = 0;

	while (v > 1) {
		v >>= 1;
		k++;
	}
	return k;
}

/* The sizes as a config carries them: powers of two in a mask, at most
 * one other size on its own. */
static void bm_parse_sizes(const char *arg, struct bm_config *cfg)
{
	uint64_t sizes[64];
	size_t n = bu_parse_sizes(arg, BM_MAX_SIZE, sizes, 64);

	cfg->size_mask = 0;
	cfg->odd_size = 0;
	for (size_t i = 0; i < n; i++) {
		if (bm_pow2(sizes[i])) {
			cfg->size_mask |= (uint64_t)1 << bm_log2(sizes[i]);
		} else {
			if (cfg->odd_size && cfg->odd_size != sizes[i])
				bu_die("only one size may be no power of two");
			cfg->odd_size = sizes[i];
		}
	}
}

uint64_t bm_next_size(const struct bm_config *cfg, uint64_t s)
{
	uint64_t best = 0;

	for (int k = 0; k < 64; k++) {
		uint64_t p = (uint64_t)1 << k;

		if ((cfg->size_mask & p) && p > s) {
			best = p;
			break;
		}
	}
	if (cfg->odd_size > s && (!best || cfg->odd_size < best))
		best = cfg->odd_size;
	return best;
}

uint64_t bm_max_size(const struct bm_config *cfg)
{
	uint64_t s = 0, next;

	while ((next = bm_next_size(cfg, s)))
		s = next;
	return s;
}

int bm_config_check(const struct bm_config *cfg)
{
	if (cfg->magic != BM_WIRE_MAGIC || !cfg->iters)
		return -1;
	if (cfg->size_mask >> (bm_log2(BM_MAX_SIZE) + 1))
		return -1;
	if (cfg->odd_size > BM_MAX_SIZE || (!cfg->size_mask && !cfg->odd_size))
		return -1;
	if ((cfg->tests & BM_BW_TESTS) && (!cfg->window || cfg->window > BM_MAX_WINDOW))
		return -1;
	return 0;
}

enum { OPT_CPUS = 256, OPT_CPU, OPT_CSV, OPT_JSON, OPT_VARIANT, OPT_CG,
       OPT_PROGRESS, OPT_SQ, OPT_RQ, OPT_SGE, OPT_INLINE, OPT_HELP, OPT_BATCH };

/* --batch N: send_bw hands N sends to the device per doorbell. */
static void bm_parse_batch(const char *arg, struct bm_config *cfg)
{
	uint64_t n = bu_parse_num(arg, "batch");

	if (!n || n > BM_MAX_BATCH)
		bu_die("the batch must be 1..%u", BM_MAX_BATCH);
	cfg->flags = (cfg->flags & ~(0xffu << BM_F_BATCH_SHIFT)) |
		     ((uint32_t)n << BM_F_BATCH_SHIFT);
}

void bm_parse(int argc, char **argv, struct bm_opts *o, const char *default_variant)
{
	static const struct option longopts[] = {
		{ "test", required_argument, NULL, 't' },
		{ "size", required_argument, NULL, 's' },
		{ "iters", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "window", required_argument, NULL, 'W' },
		{ "port", required_argument, NULL, 'p' },
		{ "bind", required_argument, NULL, 'b' },
		{ "local", no_argument, NULL, 'l' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "cpus", required_argument, NULL, OPT_CPUS },
		{ "cpu", required_argument, NULL, OPT_CPU },
		{ "csv", required_argument, NULL, OPT_CSV },
		{ "json", required_argument, NULL, OPT_JSON },
		{ "variant", required_argument, NULL, OPT_VARIANT },
		{ "callgrind", no_argument, NULL, OPT_CG },
		{ "progress", no_argument, NULL, OPT_PROGRESS },
		{ "sq-size", required_argument, NULL, OPT_SQ },
		{ "rq-size", required_argument, NULL, OPT_RQ },
		{ "sge", required_argument, NULL, OPT_SGE },
		{ "inline", required_argument, NULL, OPT_INLINE },
		{ "batch", required_argument, NULL, OPT_BATCH },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *raw_help =
		"\n  raw verbs only (defaults match the fabric-direct verbs provider):\n"
		"      --sq-size N --rq-size N --sge N --inline N   (384 384 4 256)\n";
	int c, cpu = -1;

	memset(o, 0, sizeof(*o));
	o->cpu_server = o->cpu_client = -1;
	o->cfg.magic = BM_WIRE_MAGIC;
	o->cfg.tests = 1u << BM_SEND;
	o->cfg.size_mask = (uint64_t)1 << 6;
	o->cfg.iters = 1000;
	o->cfg.warmup = 100;
	o->cfg.window = 64;
	o->variant = default_variant;
	o->progress = isatty(2);
	o->sq_size = o->rq_size = 384;
	o->sge = 4;
	o->max_inline = 256;

	while ((c = getopt_long(argc, argv, "t:s:n:w:W:p:b:lqh", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
			o->cfg.tests = bm_parse_tests(optarg);
			break;
		case 's':
			bm_parse_sizes(optarg, &o->cfg);
			break;
		case 'n':
			o->cfg.iters = (uint32_t)bu_parse_num(optarg, "iteration count");
			if (!o->cfg.iters)
				bu_die("need at least one iteration");
			break;
		case 'w':
			o->cfg.warmup = (uint32_t)bu_parse_num(optarg, "warm-up count");
			break;
		case 'W':
			o->cfg.window = (uint32_t)bu_parse_num(optarg, "window");
			if (!o->cfg.window || o->cfg.window > BM_MAX_WINDOW)
				bu_die("the window must be 1..%u", BM_MAX_WINDOW);
			break;
		case 'p':
			o->port = optarg;
			break;
		case 'b':
			o->bind = optarg;
			break;
		case 'l':
			o->local = 1;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case OPT_CPUS:
			if (sscanf(optarg, "%d,%d", &o->cpu_server, &o->cpu_client) != 2)
				bu_die("--cpus wants SERVER,CLIENT");
			break;
		case OPT_CPU:
			cpu = (int)bu_parse_num(optarg, "cpu");
			break;
		case OPT_CSV:
			o->csv = optarg;
			break;
		case OPT_JSON:
			o->json = optarg;
			break;
		case OPT_VARIANT:
			o->variant = optarg;
			break;
		case OPT_CG:
			o->cfg.flags |= BM_F_CALLGRIND;
			break;
		case OPT_PROGRESS:
			o->progress = 1;
			break;
		case OPT_SQ:
			o->sq_size = (uint32_t)bu_parse_num(optarg, "sq size");
			break;
		case OPT_RQ:
			o->rq_size = (uint32_t)bu_parse_num(optarg, "rq size");
			break;
		case OPT_SGE:
			o->sge = (uint32_t)bu_parse_num(optarg, "sge count");
			break;
		case OPT_INLINE:
			o->max_inline = (uint32_t)bu_parse_num(optarg, "inline size");
			break;
		case OPT_BATCH:
			bm_parse_batch(optarg, &o->cfg);
			break;
		case 'h':
			bm_usage(argv[0], raw_help);
			exit(0);
		default:
			bm_usage(argv[0], raw_help);
			exit(2);
		}
	}
	if (optind < argc)
		o->dst = argv[optind++];
	if (optind < argc)
		bu_die("unexpected argument '%s'", argv[optind]);
	if (o->local && o->dst)
		bu_die("--local and a server address exclude each other");
	if (o->local) {
		if (!o->bind)
			o->bind = getenv("FD_RXE_ADDR0");
		if (!o->bind)
			bu_die("--local needs -b ADDR or FD_RXE_ADDR0 (an address on an RDMA device)");
		if (!o->port)
			o->port = "0";
		if (o->cpu_server < 0 && o->cpu_client < 0) {
			o->cpu_server = 0;
			o->cpu_client = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 1 : 0;
		}
	} else {
		if (!o->port)
			o->port = BM_DEFAULT_PORT;
		if (o->dst)
			o->cpu_client = cpu;
		else
			o->cpu_server = cpu;
	}
}

/* ------------------------------------------------------------------------
 * Results
 * ---------------------------------------------------------------------- */
/* Rows are struct bu_result (bench_util.h); t_* are sampled for the
 * latency tests only, bandwidth rows carry the window. */

/* ------------------------------------------------------------------------
 * Hardware counters. Where the kernel lets a process count its own cycles
 * and instructions (perf_event_paranoid <= 2 on real hardware; never in a
 * TCG VM), the client counts them over each measured loop, user space
 * only, so they line up with the callgrind counts. Otherwise the output
 * says "not available" and nothing else changes.
 * ---------------------------------------------------------------------- */
static int bm_perf_fd[2] = { -1, -1 };	/* cycles, instructions */
static char bm_perf_why[128] = "not tried";

static int bm_perf_counter(uint64_t config)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = config;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}

static void bm_perf_open(void)
{
	bm_perf_fd[0] = bm_perf_counter(PERF_COUNT_HW_CPU_CYCLES);
	if (bm_perf_fd[0] >= 0)
		bm_perf_fd[1] = bm_perf_counter(PERF_COUNT_HW_INSTRUCTIONS);
	if (bm_perf_fd[0] < 0 || bm_perf_fd[1] < 0) {
		snprintf(bm_perf_why, sizeof(bm_perf_why),
			 "not available (perf_event_open: %s)", strerror(errno));
		for (int i = 0; i < 2; i++) {
			if (bm_perf_fd[i] >= 0)
				close(bm_perf_fd[i]);
			bm_perf_fd[i] = -1;
		}
		return;
	}
	snprintf(bm_perf_why, sizeof(bm_perf_why),
		 "user-space cycles and instructions per op (perf_event_open)");
}

static void bm_perf_start(void)
{
	for (int i = 0; i < 2; i++) {
		if (bm_perf_fd[i] < 0)
			return;
		ioctl(bm_perf_fd[i], PERF_EVENT_IOC_RESET, 0);
		ioctl(bm_perf_fd[i], PERF_EVENT_IOC_ENABLE, 0);
	}
}

/* Stops the counters and stores per-op figures (or -1). */
static void bm_perf_stop(struct bu_result *r, uint64_t ops)
{
	uint64_t v[2] = { 0, 0 };

	r->cycles_per_op = r->instr_per_op = -1;
	if (bm_perf_fd[0] < 0 || !ops)
		return;
	for (int i = 0; i < 2; i++) {
		ioctl(bm_perf_fd[i], PERF_EVENT_IOC_DISABLE, 0);
		if (read(bm_perf_fd[i], &v[i], sizeof(v[i])) != (ssize_t)sizeof(v[i]))
			return;
	}
	r->cycles_per_op = (double)v[0] / (double)ops;
	r->instr_per_op = (double)v[1] / (double)ops;
}

static struct bu_result *bm_results;
static size_t bm_nresults, bm_cap;

static void bm_print_header(const struct bm_opts *o, const char *desc)
{
	if (o->quiet)
		return;
	printf("# fd_pingpong variant=%s\n# %s\n", o->variant, desc);
	printf("# iterations %u (+%u warm-up) per size; times in microseconds\n",
	       o->cfg.iters, o->cfg.warmup);
	printf("# t_*: perftest style, per-iteration round trip (CLOCK_MONOTONIC), halved\n"
	       "#      (one-way) for send/inject/write/writedata, whole for read/atomic;\n"
	       "#      t_typical = median, p99/p99.9 = sorted sample at ceil(p*n)\n"
	       "# usec/xfer: fabtests style, loop time / (iterations x transfers), a\n"
	       "#      ping-pong iteration counting two transfers\n"
	       "# *_bw: %u operations in flight, one-way stream; MB/s = 10^6 bytes per\n"
	       "#      second and Mmsg/s over the measured loop (first post to last\n"
	       "#      completion); usec/xfer = loop time / messages\n"
	       "# perf: %s\n", o->cfg.window, bm_perf_why);
	printf("%-10s %8s %8s %9s %9s %9s %9s %9s %9s %9s %9s %10s %8s %9s %9s\n",
	       "test", "bytes", "iters", "t_min", "t_max", "t_typical", "t_avg",
	       "t_stdev", "p99", "p99.9", "usec/xfer", "MB/s", "Mmsg/s",
	       "cycles/op", "instr/op");
	fflush(stdout);
}

static void bm_print_row(const struct bm_opts *o, const struct bu_result *r)
{
	if (o->quiet)
		return;
	char c[32] = "n/a", i[32] = "n/a";

	if (r->cycles_per_op >= 0) {
		snprintf(c, sizeof(c), "%.1f", r->cycles_per_op);
		snprintf(i, sizeof(i), "%.1f", r->instr_per_op);
	}
	if (!r->has_t)
		printf("%-10s %8zu %8u %9s %9s %9s %9s %9s %9s %9s %9.2f %10.2f %8.4f %9s %9s\n",
		       r->test, (size_t)r->size, r->iters, "-", "-", "-", "-", "-",
		       "-", "-", r->usec_per_xfer, r->mb_per_s, r->mmsg_per_s, c, i);
	else
		printf("%-10s %8zu %8u %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %10.2f %8.4f %9s %9s\n",
		       r->test, (size_t)r->size, r->iters, r->t_min, r->t_max,
		       r->t_typical, r->t_avg, r->t_stdev, r->t_p99, r->t_p999,
		       r->usec_per_xfer, r->mb_per_s, r->mmsg_per_s, c, i);
	fflush(stdout);
}

static FILE *bm_csv;

static void bm_write_json(const struct bm_opts *o, const char *desc)
{
	FILE *f = fopen(o->json, "w");

	if (!f)
		bu_die("cannot write %s: %s", o->json, strerror(errno));
	fprintf(f, "{\n  \"variant\": ");
	bu_json_str(f, o->variant);
	fprintf(f, ",\n  \"describe\": ");
	bu_json_str(f, desc);
	fprintf(f, ",\n  \"iters\": %u,\n  \"warmup\": %u,\n"
		"  \"window\": %u,\n  \"units\": \"us\",\n"
		"  \"method\": \"t_*: perftest style per-iteration round trip, halved when oneway; "
		"usec_per_xfer: fabtests style loop time / (iters x transfers); bw rows: "
		"window operations in flight, mb_per_s in 10^6 bytes/s\",\n"
		"  \"perf\": ", o->cfg.iters, o->cfg.warmup, o->cfg.window);
	bu_json_str(f, bm_perf_why);
	fprintf(f, ",\n  \"results\": [");
	for (size_t i = 0; i < bm_nresults; i++) {
		const struct bu_result *r = &bm_results[i];

		fprintf(f, "%s\n    ", i ? "," : "");
		bu_json_row(f, r);
	}
	fprintf(f, "\n  ]\n}\n");
	fclose(f);
}

static void bm_add_result(const struct bu_result *r)
{
	if (bm_nresults == bm_cap) {
		bm_cap = bm_cap ? 2 * bm_cap : 64;
		bm_results = realloc(bm_results, bm_cap * sizeof(*bm_results));
		if (!bm_results)
			bu_die("out of memory");
	}
	bm_results[bm_nresults++] = *r;
}

/* ------------------------------------------------------------------------
 * The loops
 * ---------------------------------------------------------------------- */

/* Counts of data-path calls in the measured iterations: the divisors of the
 * instruction counts callgrind collects. */
struct bm_counts {
	uint64_t posts, recv_posts, reaps, empties;
};

struct bm_run {
	struct bk *b;
	const struct bm_opts *o;
	const struct bm_config *cfg;
	int client;
	struct bm_counts n;
	uint32_t rx_posted;	/* receives this side keeps posted */
};

/* One poll without waiting: 1 if it reaped, counted either way, with the
 * hang check of whoever spins on it. */
static int bm_try(struct bm_run *r, int tx, struct bu_stall *st)
{
	if (bk_poll(r->b, tx)) {
		r->n.reaps++;
		bu_stall_reset(st);
		return 1;
	}
	r->n.empties++;
	bu_stall_tick(st, tx ? "the send CQ" : "the receive CQ");
	return 0;
}

static void bm_wait(struct bm_run *r, int tx)
{
	struct bu_stall st = { 0, 0 };

	while (!bm_try(r, tx, &st))
		;
}

static void bm_post(struct bm_run *r, enum bm_test t, size_t len, uint32_t seq)
{
	int rc;

	r->n.posts++;
	/* A full send queue: drive the send CQ until the provider takes it. */
	while ((rc = bk_post(r->b, t, len, seq)) == -EAGAIN) {
		if (bk_poll(r->b, 1))
			bu_die("unexpected send completion while the queue was full");
		r->n.empties++;
		r->n.posts++;
	}
}

static void bm_repost(struct bm_run *r)
{
	r->n.recv_posts++;
	if (bk_post_recv(r->b))
		bu_die("posting a receive failed");
}

static void bm_spin_byte(volatile uint8_t *p, uint8_t want)
{
	struct bu_stall st = { 0, 0 };

	while (*p != want)
		bu_stall_tick(&st, "waiting for an RMA write to land");
}

/* Both sides meet here: a zero-length send each way, so no payload byte
 * moves and the write test's polled bytes stay as they were set. */
static void bm_barrier(struct bm_run *r)
{
	if (r->client) {
		bm_post(r, BM_CTRL, 0, 0);
		bm_wait(r, 1);
		bm_wait(r, 0);
		bm_repost(r);
	} else {
		bm_wait(r, 0);
		bm_repost(r);
		bm_post(r, BM_CTRL, 0, 0);
		bm_wait(r, 1);
	}
}

/* Completions the application never sees (injects, the provider's
 * periodic signaled request) still pass through the send CQ; poll until it
 * stays empty so the next size starts clean. */
static void bm_drain_tx(struct bm_run *r)
{
	for (int quiet = 0; quiet < 64; quiet++) {
		if (bk_poll(r->b, 1))
			bu_die("unexpected send completion while draining");
		r->n.empties++;
	}
}

static uint8_t bm_seq_byte(uint32_t i)
{
	return (uint8_t)(i % 255 + 1);	/* never 0, the cleared value */
}

static void bm_client_iter(struct bm_run *r, enum bm_test t, size_t len, uint32_t i)
{
	uint8_t seq = bm_seq_byte(i);

	switch (t) {
	case BM_SEND:
		bm_post(r, t, len, i);
		bm_wait(r, 1);
		bm_wait(r, 0);
		bm_repost(r);
		break;
	case BM_INJECT:
		bm_post(r, t, len, i);
		bm_wait(r, 0);
		bm_repost(r);
		break;
	case BM_WRITE:
		bk_tx(r->b)[len - 1] = seq;
		bm_post(r, t, len, i);
		bm_wait(r, 1);
		bm_spin_byte(bk_rx(r->b) + len - 1, seq);
		break;
	case BM_WRITEDATA:
		bm_post(r, t, len, i);
		bm_wait(r, 1);
		bm_wait(r, 0);
		bm_repost(r);
		break;
	case BM_READ:
	case BM_ATOMIC:
		bm_post(r, t, len, i);
		bm_wait(r, 1);
		break;
	default:
		bu_die("test %d has no loop", t);
	}
}

static void bm_server_iter(struct bm_run *r, enum bm_test t, size_t len, uint32_t i)
{
	uint8_t seq = bm_seq_byte(i);

	switch (t) {
	case BM_SEND:
		bm_wait(r, 0);
		bm_repost(r);
		bm_post(r, t, len, i);
		bm_wait(r, 1);
		break;
	case BM_INJECT:
		bm_wait(r, 0);
		bm_repost(r);
		bm_post(r, t, len, i);
		break;
	case BM_WRITE:
		bm_spin_byte(bk_rx(r->b) + len - 1, seq);
		bk_tx(r->b)[len - 1] = seq;
		bm_post(r, t, len, i);
		bm_wait(r, 1);
		break;
	case BM_WRITEDATA:
		bm_wait(r, 0);
		bm_repost(r);
		bm_post(r, t, len, i);
		bm_wait(r, 1);
		break;
	case BM_READ:
	case BM_ATOMIC:
		break;	/* one-sided: the target's CPU takes no part */
	default:
		bu_die("test %d has no loop", t);
	}
}

/* Instruction-count bookkeeping: the dump's label and the call counts go
 * out together so the report can divide one by the other. */
#define BM_PROBES 100

static void bm_cg_finish(struct bm_run *r, enum bm_test t, size_t len)
{
	char tag[128];
	int dirty = 0;

	/* Calibrate an empty poll and the brackets, then dump everything
	 * collected for this size. */
	bm_cg = 1;
	for (int i = 0; i < BM_PROBES; i++) {
		dirty |= bk_poll_empty(r->b, 0);
		dirty |= bk_poll_empty(r->b, 1);
		bk_nop();
	}
	bm_cg = 0;
	snprintf(tag, sizeof(tag), "fdpp:%s:%s:%s:%zu", r->o->variant,
		 r->client ? "client" : "server", bm_test_names[t], len);
	BM_CG_DUMP(tag);
	printf("#CG tag=%s iters=%u posts=%" PRIu64 " recv_posts=%" PRIu64
	       " reaps=%" PRIu64 " empties=%" PRIu64 " probes=%d nops=%d dirty=%d\n",
	       tag, r->cfg->iters, r->n.posts, r->n.recv_posts, r->n.reaps,
	       r->n.empties, 2 * BM_PROBES, BM_PROBES, dirty);
	fflush(stdout);
}

/* The initiator of a bandwidth test keeps the window full: it posts
 * whenever fewer than `window` operations are in flight and otherwise
 * reaps, until `msgs` have completed. A full queue (-EAGAIN) just means
 * reaping first. */
/* send_bw --batch: the window refills a batch at a time, so each doorbell
 * carries up to `batch` sends (fewer at the end of the run). */
static void bm_bw_initiate_batch(struct bm_run *r, size_t len, uint64_t msgs)
{
	uint64_t posted = 0, done = 0;
	uint32_t window = r->cfg->window, batch = bm_batch(r->cfg);
	struct bu_stall st = { 0, 0 };

	if (batch > window)
		batch = window;
	while (done < msgs) {
		while (posted < msgs && posted - done + batch <= window) {
			uint32_t n = msgs - posted < batch ? (uint32_t)(msgs - posted) : batch;
			int got;

			r->n.posts++;
			got = bk_post_batch(r->b, len, (uint32_t)(posted % BM_MAX_WINDOW), n);
			posted += (uint64_t)got;
			if ((uint32_t)got < n)
				break;
		}
		done += (uint64_t)bm_try(r, 1, &st);
	}
}

static void bm_bw_initiate(struct bm_run *r, enum bm_test t, size_t len, uint64_t msgs)
{
	uint64_t posted = 0, done = 0;
	uint32_t window = r->cfg->window;
	struct bu_stall st = { 0, 0 };

	if (t == BM_SEND_BW && bm_batch(r->cfg) > 1) {
		bm_bw_initiate_batch(r, len, msgs);
		return;
	}

	while (done < msgs) {
		while (posted < msgs && posted - done < window) {
			r->n.posts++;
			if (bk_post(r->b, t, len, (uint32_t)(posted % BM_MAX_WINDOW)) == -EAGAIN)
				break;
			posted++;
		}
		done += (uint64_t)bm_try(r, 1, &st);
	}
}

/* The target of a send stream reaps and reposts; it started with
 * BM_MAX_WINDOW + 1 receives posted (see bm_run_bw). */
static void bm_bw_absorb(struct bm_run *r, uint64_t msgs)
{
	uint64_t got = 0;
	struct bu_stall st = { 0, 0 };

	while (got < msgs) {
		if (bm_try(r, 0, &st)) {
			got++;
			bm_repost(r);
		}
	}
}

/* The measured part of every test, latency or bandwidth: counters and
 * callgrind collection start, the clock (and hardware counters) run around
 * the loop only, and the closing barrier is neither timed nor counted. */
static void bm_measure_start(struct bm_run *r, uint64_t *t_start)
{
	memset(&r->n, 0, sizeof(r->n));
	if (r->cfg->flags & BM_F_CALLGRIND) {
		BM_CG_ZERO();
		bm_cg = 1;
	}
	if (r->client)
		bm_perf_start();
	*t_start = bu_now_ns();
}

static void bm_measure_stop(struct bm_run *r, struct bu_result *res, uint64_t ops,
			    uint64_t *t_end)
{
	*t_end = bu_now_ns();
	if (r->client)
		bm_perf_stop(res, ops);
}

static void bm_measure_finish(struct bm_run *r, enum bm_test t, size_t len,
			      struct bu_result *res)
{
	struct bm_counts keep;

	bm_cg = 0;
	keep = r->n;
	bm_barrier(r);
	r->n = keep;
	if (r->cfg->flags & BM_F_CALLGRIND)
		bm_cg_finish(r, t, len);
	if (!r->client)
		return;
	bm_add_result(res);
	bm_print_row(r->o, res);
	bu_csv_row(bm_csv, r->o->variant, r->cfg->warmup, res);
	if (!r->o->progress)
		return;
	if (res->has_t)
		bu_log("%s %zu B: t_typical %.2f us", res->test, len, res->t_typical);
	else
		bu_log("%s %zu B: %.2f MB/s, %.4f Mmsg/s", res->test, len, res->mb_per_s,
		       res->mmsg_per_s);
}

/* Bandwidth: the client keeps the window full (send, write and read alike;
 * only the backend's post differs), the target of a send stream absorbs. */
static void bm_run_bw(struct bm_run *r, enum bm_test t, size_t len)
{
	const struct bm_config *cfg = r->cfg;
	int absorb = t == BM_SEND_BW && !r->client;
	struct bu_result res = { .test = bm_test_names[t], .size = len, .iters = cfg->iters,
				 .window = cfg->window };
	uint64_t t_start, t_end;

	/* As many receives as the backends take, whatever the window (as
	 * perftest's ib_send_bw posts its rx depth, 512): a send completes
	 * when the peer's ACK arrives, before the target has reposted, so
	 * with window + 1 a target descheduled for a moment lets the sender
	 * outrun it and rxe answers RNR NAKs (~60 per 4000 messages here,
	 * none for ib_send_bw). */
	while (absorb && r->rx_posted < BM_MAX_WINDOW + 1) {
		bm_repost(r);
		r->rx_posted++;
	}
	bm_barrier(r);
	for (int measured = 0; measured < 2; measured++) {
		uint64_t msgs = measured ? cfg->iters : cfg->warmup;

		if (measured)
			bm_measure_start(r, &t_start);
		if (r->client)
			bm_bw_initiate(r, t, len, msgs);
		else if (absorb)
			bm_bw_absorb(r, msgs);
	}
	bm_measure_stop(r, &res, cfg->iters, &t_end);
	bu_loop_stats(&res, (double)cfg->iters, t_end - t_start);
	bm_measure_finish(r, t, len, &res);
}

static void bm_run_size(struct bm_run *r, enum bm_test t, size_t len,
			uint64_t *rtt)
{
	const struct bm_config *cfg = r->cfg;
	uint32_t total = cfg->warmup + cfg->iters;
	uint64_t t_start = 0, t_end;
	struct bu_result res = { .test = bm_test_names[t], .size = len, .iters = cfg->iters,
				 .oneway = bm_test_oneway(t) };

	if (bm_test_bw(t)) {
		bm_run_bw(r, t, len);
		return;
	}

	if (t == BM_WRITE) {
		memset((void *)bk_rx(r->b), 0, len);
		memset(bk_tx(r->b), 0, len);
	}
	bm_barrier(r);

	for (uint32_t i = 0; i < total; i++) {
		if (i == cfg->warmup)
			bm_measure_start(r, &t_start);
		if (r->client) {
			uint64_t t0 = bu_now_ns();

			bm_client_iter(r, t, len, i);
			if (i >= cfg->warmup)
				rtt[i - cfg->warmup] = bu_now_ns() - t0;
		} else {
			bm_server_iter(r, t, len, i);
		}
	}
	bm_measure_stop(r, &res, cfg->iters, &t_end);
	/* Untimed but counted: what injects leave in the send CQ is part of
	 * their cost, even if a ping-pong never waits for it. */
	if (t == BM_INJECT)
		bm_drain_tx(r);
	if (r->client) {
		bu_stats(&res, rtt, cfg->iters);
		/* fabtests: a ping-pong iteration is two transfers. */
		bu_loop_stats(&res, (double)cfg->iters * (res.oneway ? 2 : 1),
			      t_end - t_start);
	}
	bm_measure_finish(r, t, len, &res);
}

static int bm_run(struct bk *b, const struct bm_opts *o, const struct bm_config *cfg,
		  int client)
{
	struct bm_run r = { .b = b, .o = o, .cfg = cfg, .client = client, .rx_posted = 1 };
	uint64_t *rtt = calloc(cfg->iters, sizeof(*rtt));

	if (!rtt)
		bu_die("out of memory");
	if (client)
		bm_print_header(o, bk_describe(b));
	for (int t = 0; t < BM_NTESTS; t++) {
		const char *why = NULL;

		if (!(cfg->tests & (1u << t)))
			continue;
		/* Both sides decide the same way: the decision depends only
		 * on the test and the provider, which both ends share. */
		if (bk_supports(b, (enum bm_test)t, &why)) {
			if (client)
				printf("# %s: skipped: %s\n", bm_test_names[t], why);
			continue;
		}
		if (t == BM_ATOMIC) {
			bm_run_size(&r, BM_ATOMIC, 8, rtt);
			continue;
		}
		for (uint64_t s = bm_next_size(cfg, 0); s; s = bm_next_size(cfg, s)) {
			if (t == BM_INJECT && s > bk_inject_size(b))
				break;
			bm_run_size(&r, (enum bm_test)t, (size_t)s, rtt);
		}
	}
	free(rtt);
	return 0;
}

/* ------------------------------------------------------------------------
 * Roles
 * ---------------------------------------------------------------------- */
static int bm_server(const struct bm_opts *o, int port_fd)
{
	char port[32];
	struct bm_config cfg;
	struct bk *b;

	bu_set_role("server");
	bu_pin(o->cpu_server);
	b = bk_listen(o, port, sizeof(port));
	bu_hand_port(port_fd, port, o->bind, o->quiet);
	if (bk_accept(b, &cfg))
		return 1;
	bm_run(b, o, &cfg, 0);
	bk_close(b);
	return 0;
}

static int bm_client(const struct bm_opts *o)
{
	struct bk *b;

	bu_set_role("client");
	bu_pin(o->cpu_client);
	if (o->csv)
		bm_csv = bu_csv_open(o->csv);
	if (!(o->cfg.flags & BM_F_CALLGRIND))
		bm_perf_open();
	else
		snprintf(bm_perf_why, sizeof(bm_perf_why), "not measured under callgrind");
	b = bk_connect(o, &o->cfg);
	bm_run(b, o, &o->cfg, 1);
	if (bm_csv)
		fclose(bm_csv);
	if (o->json)
		bm_write_json(o, bk_describe(b));
	bk_close(b);
	return 0;
}

static int bm_local_server(void *arg, int port_fd)
{
	struct bm_opts *o = arg;

	o->quiet = 1;
	return bm_server(o, port_fd);
}

static int bm_local_client(void *arg, const char *port)
{
	struct bm_opts *o = arg;

	o->dst = o->bind;
	o->port = port;
	return bm_client(o);
}

int bm_main(int argc, char **argv, const char *default_variant)
{
	struct bm_opts o;

	setvbuf(stdout, NULL, _IOLBF, 0);
	bm_parse(argc, argv, &o, default_variant);
	if (o.local)
		return bu_local(bm_local_server, bm_local_client, &o);
	if (o.dst)
		return bm_client(&o);
	return bm_server(&o, -1);
}
