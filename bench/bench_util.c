/* Shared benchmark utilities: see bench_util.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

static const char *bu_role = "bench";

void bu_set_role(const char *role)
{
	bu_role = role;
}

static void bu_vmsg(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", bu_role);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void bu_die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	va_start(ap, fmt);
	bu_vmsg(fmt, ap);
	va_end(ap);
	exit(1);
}

void bu_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	bu_vmsg(fmt, ap);
	va_end(ap);
}

uint64_t bu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

long bu_status_kb(const char *key)
{
	char line[256];
	size_t klen = strlen(key);
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			v = strtol(line + klen + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

void bu_pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		bu_log("warning: cannot pin to CPU %d: %s", cpu, strerror(errno));
}

uint64_t bu_parse_num(const char *s, const char *what)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *s == '-')
		bu_die("bad %s '%s'", what, s);
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	default: break;
	}
	if (*end)
		bu_die("bad %s '%s'", what, s);
	return v;
}

static void bu_add_size(uint64_t *sizes, size_t *n, size_t cap, uint64_t s, uint64_t max)
{
	if (!s || s > max)
		bu_die("sizes must be 1 B .. %llu B", (unsigned long long)max);
	if (*n == cap)
		bu_die("at most %zu sizes", cap);
	sizes[(*n)++] = s;
}

size_t bu_parse_sizes(const char *arg, uint64_t max, uint64_t *sizes, size_t cap)
{
	char *copy = strdup(arg), *save = NULL, *tok;
	size_t n = 0;

	if (!copy)
		bu_die("out of memory");
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');
		uint64_t lo, hi;

		if (!strcmp(tok, "all")) {
			lo = 1;
			hi = max;
		} else if (colon) {
			*colon = 0;
			lo = bu_parse_num(tok, "size");
			hi = bu_parse_num(colon + 1, "size");
			if (!lo || lo > hi || hi > max)
				bu_die("sizes must be 1 B .. %llu B, MIN <= MAX: '%s'",
				       (unsigned long long)max, arg);
		} else {
			bu_add_size(sizes, &n, cap, bu_parse_num(tok, "size"), max);
			continue;
		}
		for (uint64_t p = 1; p <= hi; p *= 2)
			if (p >= lo)
				bu_add_size(sizes, &n, cap, p, max);
	}
	free(copy);
	if (!n)
		bu_die("no size in '%s'", arg);
	return n;
}

void bu_stall_slow(struct bu_stall *st, const char *what)
{
	uint64_t now = bu_now_ns();

	if (!st->t0)
		st->t0 = now;
	else if (now - st->t0 > BU_STALL_NS)
		bu_die("%s made no progress for 30 s", what);
}

void bu_hand_port(int port_fd, const char *port, const char *bind, int quiet)
{
	if (port_fd >= 0) {
		if (write(port_fd, port, strlen(port)) < 0)
			bu_die("cannot hand the port to the client");
		close(port_fd);
	} else if (!quiet) {
		printf("# server: listening on %s port %s\n", bind ? bind : "*", port);
		fflush(stdout);
	}
}

int bu_local(int (*server)(void *arg, int port_fd), int (*client)(void *arg, const char *port),
	     void *arg)
{
	int pfd[2], status = 0, rc;
	char port[32] = "";
	ssize_t n;
	pid_t pid;

	if (pipe(pfd))
		bu_die("pipe: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		bu_die("fork: %s", strerror(errno));
	if (pid == 0) {
		close(pfd[0]);
		_exit(server(arg, pfd[1]));
	}
	close(pfd[1]);
	n = read(pfd[0], port, sizeof(port) - 1);
	close(pfd[0]);
	if (n <= 0) {
		waitpid(pid, &status, 0);
		bu_die("the server failed before listening");
	}
	port[n] = 0;
	rc = client(arg, port);
	if (waitpid(pid, &status, 0) < 0)
		bu_die("waitpid: %s", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		bu_log("server exited with status 0x%x", status);
		return 1;
	}
	return rc;
}

/* ------------------------------------------------------------------------
 * Statistics and output
 * ---------------------------------------------------------------------- */
static int bu_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double bu_pct(const uint64_t *s, size_t n, double p)
{
	size_t i = (size_t)ceil(p * (double)n);

	return (double)s[i ? i - 1 : 0];
}

void bu_stats(struct bu_result *r, uint64_t *rtt, size_t n)
{
	double div = r->oneway ? 2000.0 : 1000.0;	/* ns -> us, halved one-way */
	double sum = 0, sq = 0, mean;

	r->has_t = 1;
	qsort(rtt, n, sizeof(*rtt), bu_cmp_u64);
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
	r->t_p99 = bu_pct(rtt, n, 0.99) / div;
	r->t_p999 = bu_pct(rtt, n, 0.999) / div;
}

void bu_loop_stats(struct bu_result *r, double xfers, uint64_t total_ns)
{
	double us = (double)total_ns / 1000.0;

	r->usec_per_xfer = us / xfers;
	r->mb_per_s = (double)r->size * xfers / us;
	r->mmsg_per_s = xfers / us;
}

FILE *bu_csv_open(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		bu_die("cannot write %s: %s", path, strerror(errno));
	fprintf(f, "variant,test,bytes,iters,warmup,oneway,t_min_us,t_max_us,"
		"t_typical_us,t_avg_us,t_stdev_us,t_p99_us,t_p999_us,"
		"usec_per_xfer,mb_per_s,window,mmsg_per_s,cycles_per_op,instr_per_op\n");
	fflush(f);
	return f;
}

/* Rows go out as they are measured, so a run cut short by a timeout still
 * leaves what it measured. */
void bu_csv_row(FILE *f, const char *variant, uint32_t warmup, const struct bu_result *r)
{
	char c[32] = "", i[32] = "";

	if (!f)
		return;
	if (r->cycles_per_op >= 0) {
		snprintf(c, sizeof(c), "%.1f", r->cycles_per_op);
		snprintf(i, sizeof(i), "%.1f", r->instr_per_op);
	}
	fprintf(f, "%s,%s,%llu,%u,%u,%d,", variant, r->test, (unsigned long long)r->size,
		r->iters, warmup, r->oneway);
	if (r->has_t)
		fprintf(f, "%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,", r->t_min, r->t_max,
			r->t_typical, r->t_avg, r->t_stdev, r->t_p99, r->t_p999);
	else
		fprintf(f, ",,,,,,,");
	fprintf(f, "%.3f,%.3f,%u,%.6f,%s,%s\n", r->usec_per_xfer, r->mb_per_s,
		r->has_t ? 0 : r->window, r->mmsg_per_s, c, i);
	fflush(f);
}

void bu_json_str(FILE *f, const char *s)
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

void bu_json_row(FILE *f, const struct bu_result *r)
{
	fprintf(f, "{\"test\": \"%s\", \"bytes\": %llu, \"iters\": %u, \"oneway\": %s, ",
		r->test, (unsigned long long)r->size, r->iters, r->oneway ? "true" : "false");
	if (r->has_t)
		fprintf(f, "\"t_min\": %.3f, \"t_max\": %.3f, \"t_typical\": %.3f, "
			"\"t_avg\": %.3f, \"t_stdev\": %.3f, \"t_p99\": %.3f, \"t_p999\": %.3f, ",
			r->t_min, r->t_max, r->t_typical, r->t_avg, r->t_stdev, r->t_p99,
			r->t_p999);
	else
		fprintf(f, "\"window\": %u, ", r->window);
	if (r->cycles_per_op >= 0)
		fprintf(f, "\"cycles_per_op\": %.1f, \"instr_per_op\": %.1f, ",
			r->cycles_per_op, r->instr_per_op);
	fprintf(f, "\"usec_per_xfer\": %.3f, \"mb_per_s\": %.3f, \"mmsg_per_s\": %.6f}",
		r->usec_per_xfer, r->mb_per_s, r->mmsg_per_s);
}
