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
/* A poll loop that sees nothing for this long is a hang, not a slow link. */
#define BM_STALL_NS (30ull * 1000000000ull)

static const char *bm_role = "bench";

void bm_die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", bm_role);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

void bm_log(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", bm_role);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static inline uint64_t bm_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

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

static uint64_t bm_parse_num(const char *s, const char *what)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		bm_die("bad %s '%s'", what, s);
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	default: break;
	}
	if (*end)
		bm_die("bad %s '%s'", what, s);
	return v;
}

static uint32_t bm_parse_tests(const char *s)
{
	uint32_t mask = 0;
	char *copy = strdup(s), *save = NULL, *tok;

	if (!copy)
		bm_die("out of memory");
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
			bm_die("unknown test '%s'", tok);
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

/* "64", "1:65536" (the powers of two in between), "all", or a comma list
 * of those. At most one size may be no power of two. */
static void bm_parse_sizes(const char *arg, struct bm_config *cfg)
{
	char *copy = strdup(arg), *save = NULL, *tok;

	if (!copy)
		bm_die("out of memory");
	cfg->size_mask = 0;
	cfg->odd_size = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');
		uint64_t lo, hi;

		if (!strcmp(tok, "all")) {
			lo = 1;
			hi = BM_MAX_SIZE;
		} else if (colon) {
			*colon = 0;
			lo = bm_parse_num(tok, "size");
			hi = bm_parse_num(colon + 1, "size");
		} else {
			lo = hi = bm_parse_num(tok, "size");
			if (lo && lo <= BM_MAX_SIZE && !bm_pow2(lo)) {
				if (cfg->odd_size && cfg->odd_size != lo)
					bm_die("only one size may be no power of two");
				cfg->odd_size = lo;
				continue;
			}
		}
		if (!lo || lo > hi || hi > BM_MAX_SIZE)
			bm_die("sizes must be 1 B .. 4 MiB, MIN <= MAX: '%s'", arg);
		for (uint64_t p = 1; p <= hi; p *= 2)
			if (p >= lo)
				cfg->size_mask |= (uint64_t)1 << bm_log2(p);
	}
	free(copy);
	if (!cfg->size_mask && !cfg->odd_size)
		bm_die("no size in '%s'", arg);
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
	uint64_t n = bm_parse_num(arg, "batch");

	if (!n || n > BM_MAX_BATCH)
		bm_die("the batch must be 1..%u", BM_MAX_BATCH);
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
			o->cfg.iters = (uint32_t)bm_parse_num(optarg, "iteration count");
			if (!o->cfg.iters)
				bm_die("need at least one iteration");
			break;
		case 'w':
			o->cfg.warmup = (uint32_t)bm_parse_num(optarg, "warm-up count");
			break;
		case 'W':
			o->cfg.window = (uint32_t)bm_parse_num(optarg, "window");
			if (!o->cfg.window || o->cfg.window > BM_MAX_WINDOW)
				bm_die("the window must be 1..%u", BM_MAX_WINDOW);
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
				bm_die("--cpus wants SERVER,CLIENT");
			break;
		case OPT_CPU:
			cpu = (int)bm_parse_num(optarg, "cpu");
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
			o->sq_size = (uint32_t)bm_parse_num(optarg, "sq size");
			break;
		case OPT_RQ:
			o->rq_size = (uint32_t)bm_parse_num(optarg, "rq size");
			break;
		case OPT_SGE:
			o->sge = (uint32_t)bm_parse_num(optarg, "sge count");
			break;
		case OPT_INLINE:
			o->max_inline = (uint32_t)bm_parse_num(optarg, "inline size");
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
		bm_die("unexpected argument '%s'", argv[optind]);
	if (o->local && o->dst)
		bm_die("--local and a server address exclude each other");
	if (o->local) {
		if (!o->bind)
			o->bind = getenv("FD_RXE_ADDR0");
		if (!o->bind)
			bm_die("--local needs -b ADDR or FD_RXE_ADDR0 (an address on an RDMA device)");
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

static void bm_pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		bm_log("warning: cannot pin to CPU %d: %s", cpu, strerror(errno));
}

/* ------------------------------------------------------------------------
 * Results
 * ---------------------------------------------------------------------- */
struct bm_result {
	enum bm_test test;
	size_t size;
	uint32_t iters;
	int oneway;
	int bw;			/* a bandwidth row: no t_* samples */
	uint32_t window;
	double t_min, t_max, t_typical, t_avg, t_stdev, t_p99, t_p999; /* us */
	double usec_per_xfer, mb_per_s, mmsg_per_s;
	/* perf_event_open over the measured loop, per iteration (bandwidth:
	 * per message); negative when not available */
	double cycles_per_op, instr_per_op;
};

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
static void bm_perf_stop(struct bm_result *r, uint64_t ops)
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

static struct bm_result *bm_results;
static size_t bm_nresults, bm_cap;

static int bm_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* perftest style: sorted per-iteration samples, median as t_typical, the
 * percentile as the sample at ceil(p * n) - 1. */
static double bm_pct(const uint64_t *s, size_t n, double p)
{
	size_t i = (size_t)ceil(p * (double)n);

	return (double)s[i ? i - 1 : 0];
}

static void bm_stats(struct bm_result *r, uint64_t *rtt, size_t n, uint64_t total_ns)
{
	double div = r->oneway ? 2000.0 : 1000.0;	/* ns -> us, halved one-way */
	double sum = 0, sq = 0, mean;
	int xfers = r->oneway ? 2 : 1;

	qsort(rtt, n, sizeof(*rtt), bm_cmp_u64);
	for (size_t i = 0; i < n; i++)
		sum += (double)rtt[i];
	mean = sum / (double)n;
	for (size_t i = 0; i < n; i++)
		sq += ((double)rtt[i] - mean) * ((double)rtt[i] - mean);
	r->t_min = (double)rtt[0] / div;
	r->t_max = (double)rtt[n - 1] / div;
	r->t_typical = (double)rtt[n / 2] / div;
	r->t_avg = mean / div;
	r->t_stdev = sqrt(sq / (double)n) / div;
	r->t_p99 = bm_pct(rtt, n, 0.99) / div;
	r->t_p999 = bm_pct(rtt, n, 0.999) / div;
	/* fabtests: the whole loop over every transfer, each direction one. */
	r->usec_per_xfer = (double)total_ns / 1000.0 / ((double)n * xfers);
	r->mb_per_s = (double)r->size * (double)n * xfers / ((double)total_ns / 1000.0);
	r->mmsg_per_s = (double)n * xfers / ((double)total_ns / 1000.0);
}

/* Bandwidth: one figure per size, from the whole measured loop. MB are
 * 10^6 bytes (perftest's MB/sec are 2^20: the report converts). */
static void bm_bw_stats(struct bm_result *r, uint64_t msgs, uint64_t total_ns)
{
	double us = (double)total_ns / 1000.0;

	r->usec_per_xfer = us / (double)msgs;
	r->mb_per_s = (double)r->size * (double)msgs / us;
	r->mmsg_per_s = (double)msgs / us;
}

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

static void bm_print_row(const struct bm_opts *o, const struct bm_result *r)
{
	if (o->quiet)
		return;
	char c[32] = "n/a", i[32] = "n/a";

	if (r->cycles_per_op >= 0) {
		snprintf(c, sizeof(c), "%.1f", r->cycles_per_op);
		snprintf(i, sizeof(i), "%.1f", r->instr_per_op);
	}
	if (r->bw)
		printf("%-10s %8zu %8u %9s %9s %9s %9s %9s %9s %9s %9.2f %10.2f %8.4f %9s %9s\n",
		       bm_test_names[r->test], r->size, r->iters, "-", "-", "-", "-", "-",
		       "-", "-", r->usec_per_xfer, r->mb_per_s, r->mmsg_per_s, c, i);
	else
		printf("%-10s %8zu %8u %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %10.2f %8.4f %9s %9s\n",
		       bm_test_names[r->test], r->size, r->iters, r->t_min, r->t_max,
		       r->t_typical, r->t_avg, r->t_stdev, r->t_p99, r->t_p999,
		       r->usec_per_xfer, r->mb_per_s, r->mmsg_per_s, c, i);
	fflush(stdout);
}

/* Rows go out as they are measured, so a run cut short by a timeout still
 * leaves what it measured. */
static FILE *bm_csv;

static void bm_open_csv(const struct bm_opts *o)
{
	if (!o->csv)
		return;
	bm_csv = fopen(o->csv, "w");
	if (!bm_csv)
		bm_die("cannot write %s: %s", o->csv, strerror(errno));
	fprintf(bm_csv, "variant,test,bytes,iters,warmup,oneway,t_min_us,t_max_us,"
		"t_typical_us,t_avg_us,t_stdev_us,t_p99_us,t_p999_us,"
		"usec_per_xfer,mb_per_s,window,mmsg_per_s,cycles_per_op,instr_per_op\n");
	fflush(bm_csv);
}

static void bm_csv_row(const struct bm_opts *o, const struct bm_result *r)
{
	if (!bm_csv)
		return;
	char c[32] = "", i[32] = "";

	if (r->cycles_per_op >= 0) {
		snprintf(c, sizeof(c), "%.1f", r->cycles_per_op);
		snprintf(i, sizeof(i), "%.1f", r->instr_per_op);
	}
	fprintf(bm_csv, "%s,%s,%zu,%u,%u,%d,", o->variant, bm_test_names[r->test], r->size,
		r->iters, o->cfg.warmup, r->oneway);
	if (r->bw)
		fprintf(bm_csv, ",,,,,,,");
	else
		fprintf(bm_csv, "%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,", r->t_min, r->t_max,
			r->t_typical, r->t_avg, r->t_stdev, r->t_p99, r->t_p999);
	fprintf(bm_csv, "%.3f,%.3f,%u,%.6f,%s,%s\n", r->usec_per_xfer, r->mb_per_s,
		r->bw ? r->window : 0, r->mmsg_per_s, c, i);
	fflush(bm_csv);
}

static void bm_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void bm_write_json(const struct bm_opts *o, const char *desc)
{
	FILE *f = fopen(o->json, "w");

	if (!f)
		bm_die("cannot write %s: %s", o->json, strerror(errno));
	fprintf(f, "{\n  \"variant\": ");
	bm_json_str(f, o->variant);
	fprintf(f, ",\n  \"describe\": ");
	bm_json_str(f, desc);
	fprintf(f, ",\n  \"iters\": %u,\n  \"warmup\": %u,\n"
		"  \"window\": %u,\n  \"units\": \"us\",\n"
		"  \"method\": \"t_*: perftest style per-iteration round trip, halved when oneway; "
		"usec_per_xfer: fabtests style loop time / (iters x transfers); bw rows: "
		"window operations in flight, mb_per_s in 10^6 bytes/s\",\n"
		"  \"perf\": ", o->cfg.iters, o->cfg.warmup, o->cfg.window);
	bm_json_str(f, bm_perf_why);
	fprintf(f, ",\n  \"results\": [");
	for (size_t i = 0; i < bm_nresults; i++) {
		const struct bm_result *r = &bm_results[i];

		fprintf(f, "%s\n    {\"test\": \"%s\", \"bytes\": %zu, \"iters\": %u, "
			"\"oneway\": %s, ", i ? "," : "", bm_test_names[r->test], r->size,
			r->iters, r->oneway ? "true" : "false");
		if (r->bw)
			fprintf(f, "\"window\": %u, \"mmsg_per_s\": %.6f, ", r->window,
				r->mmsg_per_s);
		else
			fprintf(f, "\"t_min\": %.3f, \"t_max\": %.3f, "
				"\"t_typical\": %.3f, \"t_avg\": %.3f, \"t_stdev\": %.3f, "
				"\"t_p99\": %.3f, \"t_p999\": %.3f, ", r->t_min, r->t_max,
				r->t_typical, r->t_avg, r->t_stdev, r->t_p99, r->t_p999);
		if (r->cycles_per_op >= 0)
			fprintf(f, "\"cycles_per_op\": %.1f, \"instr_per_op\": %.1f, ",
				r->cycles_per_op, r->instr_per_op);
		fprintf(f, "\"usec_per_xfer\": %.3f, \"mb_per_s\": %.3f}",
			r->usec_per_xfer, r->mb_per_s);
	}
	fprintf(f, "\n  ]\n}\n");
	fclose(f);
}

static void bm_add_result(const struct bm_result *r)
{
	if (bm_nresults == bm_cap) {
		bm_cap = bm_cap ? 2 * bm_cap : 64;
		bm_results = realloc(bm_results, bm_cap * sizeof(*bm_results));
		if (!bm_results)
			bm_die("out of memory");
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
	uint64_t stall_check;
	uint32_t rx_posted;	/* receives this side keeps posted */
};

static void bm_wait(struct bm_run *r, int tx)
{
	uint64_t spins = 0, t0 = 0;

	while (!bk_poll(r->b, tx)) {
		r->n.empties++;
		/* Looking at the clock is itself costly under TCG: only now
		 * and then. */
		if ((++spins & 0xfffff) == 0) {
			uint64_t now = bm_now_ns();

			if (!t0)
				t0 = now;
			else if (now - t0 > BM_STALL_NS)
				bm_die("no %s completion for 30 s", tx ? "send" : "receive");
		}
	}
	r->n.reaps++;
}

static void bm_post(struct bm_run *r, enum bm_test t, size_t len, uint32_t seq)
{
	int rc;

	r->n.posts++;
	/* A full send queue: drive the send CQ until the provider takes it. */
	while ((rc = bk_post(r->b, t, len, seq)) == -EAGAIN) {
		if (bk_poll(r->b, 1))
			bm_die("unexpected send completion while the queue was full");
		r->n.empties++;
		r->n.posts++;
	}
}

static void bm_repost(struct bm_run *r)
{
	r->n.recv_posts++;
	if (bk_post_recv(r->b))
		bm_die("posting a receive failed");
}

static void bm_spin_byte(volatile uint8_t *p, uint8_t want)
{
	uint64_t spins = 0, t0 = 0;

	while (*p != want) {
		if ((++spins & 0xfffff) == 0) {
			uint64_t now = bm_now_ns();

			if (!t0)
				t0 = now;
			else if (now - t0 > BM_STALL_NS)
				bm_die("RMA write did not land within 30 s");
		}
	}
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
			bm_die("unexpected send completion while draining");
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
		bm_die("test %d has no loop", t);
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
		bm_die("test %d has no loop", t);
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

/* One poll without waiting, with bm_wait's hang check. */
static int bm_try(struct bm_run *r, int tx, uint64_t *spins, uint64_t *t0)
{
	if (bk_poll(r->b, tx)) {
		r->n.reaps++;
		*spins = *t0 = 0;
		return 1;
	}
	r->n.empties++;
	if ((++*spins & 0xfffff) == 0) {
		uint64_t now = bm_now_ns();

		if (!*t0)
			*t0 = now;
		else if (now - *t0 > BM_STALL_NS)
			bm_die("no %s completion for 30 s", tx ? "send" : "receive");
	}
	return 0;
}

/* The initiator of a bandwidth test keeps the window full: it posts
 * whenever fewer than `window` operations are in flight and otherwise
 * reaps, until `msgs` have completed. A full queue (-EAGAIN) just means
 * reaping first. */
/* send_bw --batch: the window refills a batch at a time, so each doorbell
 * carries up to `batch` sends (fewer at the end of the run). */
static void bm_bw_initiate_batch(struct bm_run *r, size_t len, uint64_t msgs)
{
	uint64_t posted = 0, done = 0, spins = 0, t0 = 0;
	uint32_t window = r->cfg->window, batch = bm_batch(r->cfg);

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
		done += (uint64_t)bm_try(r, 1, &spins, &t0);
	}
}

static void bm_bw_initiate(struct bm_run *r, enum bm_test t, size_t len, uint64_t msgs)
{
	uint64_t posted = 0, done = 0, spins = 0, t0 = 0;
	uint32_t window = r->cfg->window;

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
		done += (uint64_t)bm_try(r, 1, &spins, &t0);
	}
}

/* The target of a send stream reaps and reposts; it started with
 * window + 1 receives posted, so the sender seldom outruns it. */
static void bm_bw_absorb(struct bm_run *r, uint64_t msgs)
{
	uint64_t got = 0, spins = 0, t0 = 0;

	while (got < msgs) {
		if (bm_try(r, 0, &spins, &t0)) {
			got++;
			bm_repost(r);
		}
	}
}

static void bm_run_bw(struct bm_run *r, enum bm_test t, size_t len)
{
	const struct bm_config *cfg = r->cfg;
	int cg = (cfg->flags & BM_F_CALLGRIND) != 0;
	int absorb = t == BM_SEND_BW && !r->client;
	struct bm_result res = { .test = t, .size = len, .iters = cfg->iters, .bw = 1,
				 .window = cfg->window };
	uint64_t t_start, t_end;

	while (absorb && r->rx_posted < cfg->window + 1) {
		bm_repost(r);
		r->rx_posted++;
	}
	bm_barrier(r);
	if (r->client)
		bm_bw_initiate(r, t, len, cfg->warmup);
	else if (absorb)
		bm_bw_absorb(r, cfg->warmup);

	memset(&r->n, 0, sizeof(r->n));
	if (cg) {
		BM_CG_ZERO();
		bm_cg = 1;
	}
	if (r->client)
		bm_perf_start();
	t_start = bm_now_ns();
	if (r->client)
		bm_bw_initiate(r, t, len, cfg->iters);
	else if (absorb)
		bm_bw_absorb(r, cfg->iters);
	t_end = bm_now_ns();
	if (r->client)
		bm_perf_stop(&res, cfg->iters);
	bm_cg = 0;
	{
		struct bm_counts keep = r->n;

		bm_barrier(r);
		r->n = keep;
	}
	if (cg)
		bm_cg_finish(r, t, len);
	if (r->client) {
		bm_bw_stats(&res, cfg->iters, t_end - t_start);
		bm_add_result(&res);
		bm_print_row(r->o, &res);
		bm_csv_row(r->o, &res);
		if (r->o->progress)
			bm_log("%s %zu B: %.2f MB/s, %.4f Mmsg/s", bm_test_names[t], len,
			       res.mb_per_s, res.mmsg_per_s);
	}
}

static void bm_run_size(struct bm_run *r, enum bm_test t, size_t len,
			uint64_t *rtt)
{
	const struct bm_config *cfg = r->cfg;
	uint32_t total = cfg->warmup + cfg->iters;
	int cg = (cfg->flags & BM_F_CALLGRIND) != 0;
	uint64_t t_start = 0, t_end;
	struct bm_result res = { .test = t, .size = len, .iters = cfg->iters,
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
		if (i == cfg->warmup) {
			memset(&r->n, 0, sizeof(r->n));
			if (cg) {
				BM_CG_ZERO();
				bm_cg = 1;
			}
			if (r->client)
				bm_perf_start();
			t_start = bm_now_ns();
		}
		if (r->client) {
			uint64_t t0 = bm_now_ns();

			bm_client_iter(r, t, len, i);
			if (i >= cfg->warmup)
				rtt[i - cfg->warmup] = bm_now_ns() - t0;
		} else {
			bm_server_iter(r, t, len, i);
		}
	}
	t_end = bm_now_ns();
	if (r->client)
		bm_perf_stop(&res, cfg->iters);
	/* Untimed but counted: what injects leave in the send CQ is part of
	 * their cost, even if a ping-pong never waits for it. */
	if (t == BM_INJECT)
		bm_drain_tx(r);
	bm_cg = 0;
	{
		struct bm_counts keep = r->n;

		bm_barrier(r);
		r->n = keep;
	}
	if (cg)
		bm_cg_finish(r, t, len);

	if (r->client) {
		bm_stats(&res, rtt, cfg->iters, t_end - t_start);
		bm_add_result(&res);
		bm_print_row(r->o, &res);
		bm_csv_row(r->o, &res);
		if (r->o->progress)
			bm_log("%s %zu B: t_typical %.2f us", bm_test_names[t], len,
			       res.t_typical);
	}
}

static int bm_run(struct bk *b, const struct bm_opts *o, const struct bm_config *cfg,
		  int client)
{
	struct bm_run r = { .b = b, .o = o, .cfg = cfg, .client = client, .rx_posted = 1 };
	uint64_t *rtt = calloc(cfg->iters, sizeof(*rtt));

	if (!rtt)
		bm_die("out of memory");
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

	bm_role = "server";
	bm_pin(o->cpu_server);
	b = bk_listen(o, port, sizeof(port));
	if (port_fd >= 0) {
		if (write(port_fd, port, strlen(port)) < 0)
			bm_die("cannot hand the port to the client");
		close(port_fd);
	} else if (!o->quiet) {
		printf("# server: listening on %s port %s\n", o->bind ? o->bind : "*", port);
		fflush(stdout);
	}
	if (bk_accept(b, &cfg))
		return 1;
	bm_run(b, o, &cfg, 0);
	bk_close(b);
	return 0;
}

static int bm_client(const struct bm_opts *o)
{
	struct bk *b;

	bm_role = "client";
	bm_pin(o->cpu_client);
	bm_open_csv(o);
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

/* The fork comes before any verbs call: a child must not share device
 * contexts opened by its parent. The client runs in the parent so that
 * its output comes last and the exit code is its own. */
static int bm_local(struct bm_opts *o)
{
	int pfd[2], status = 0, rc;
	char port[32] = "";
	ssize_t n;
	pid_t pid;

	if (pipe(pfd))
		bm_die("pipe: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		bm_die("fork: %s", strerror(errno));
	if (pid == 0) {
		close(pfd[0]);
		o->quiet = 1;
		_exit(bm_server(o, pfd[1]));
	}
	close(pfd[1]);
	n = read(pfd[0], port, sizeof(port) - 1);
	close(pfd[0]);
	if (n <= 0) {
		waitpid(pid, &status, 0);
		bm_die("the server failed before listening");
	}
	port[n] = 0;
	o->dst = o->bind;
	o->port = strdup(port);
	rc = bm_client(o);
	if (waitpid(pid, &status, 0) < 0)
		bm_die("waitpid: %s", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		bm_log("server exited with status 0x%x", status);
		return 1;
	}
	return rc;
}

int bm_main(int argc, char **argv, const char *default_variant)
{
	struct bm_opts o;

	setvbuf(stdout, NULL, _IOLBF, 0);
	bm_parse(argc, argv, &o, default_variant);
	if (o.local)
		return bm_local(&o);
	if (o.dst)
		return bm_client(&o);
	return bm_server(&o, -1);
}
