/* RDM benchmarks (FI_EP_RDM, "verbs;ofi_rxm"): tagged and untagged
 * ping-pong latency, streaming bandwidth and message rate between two
 * processes on one device, and user-space instructions per round trip
 * under callgrind. The public API only, so the same source builds against
 * this library (direct and OFF) and against Debian's libfabric 1.17.
 *
 *   fd_rdm [-t tlat|lat|tbw|rate] [-s SIZE[,SIZE..]] [-n ITERS] [-w WINDOW]
 *          [--callgrind] [--variant NAME] [--peer-wait[=split]]
 *
 * The process forks a server and a client before touching the device;
 * names travel over a pipe. Output: one line per size,
 *   test size iters usec_per_rtt/2 | MB/s | Mmsg/s
 * and with --callgrind the client brackets every data-path call (post,
 * receive post, CQ read) with CALLGRIND_TOGGLE_COLLECT, dumps the loop
 * ("fdrdm:VARIANT:TEST:SIZE:loop"), a calibration of ITERS empty CQ
 * reads ("...:empty") and one of ITERS empty brackets ("...:nop"), and
 * prints the counts needed to turn the dumps into instructions per round
 * trip (bench/rdm-callgrind.sh does, as bench/report.py does for MSG:
 * empty reads and the brackets' own cost taken out).
 *
 * --peer-wait (tlat and lat): after the warm-up, each side waits for the
 * peer's message outside the brackets, on a counter in memory the two
 * processes share, instead of polling the CQ for it: the client's
 * counted reads then find the completions already there, and its loop
 * counts no empty reads to subtract at a calibrated cost. The device can
 * still be later than the counter (the counter says "posted", not
 * "arrived"), so the client still polls until the completions come and
 * reports how many of those counted reads were empty (#CG ... empties=).
 * A wait that sees no progress in PW_TIMEOUT_NS falls back to polling
 * (a library that needs the waiting side's progress to deliver would
 * otherwise hang), counted in late= / srvlate=.
 * Two orders: --peer-wait waits for the reply, so the client's first read
 * finds both its send and its receive completion (a library that returns
 * one per call keeps the other for the next: the path of a reader that
 * falls behind); --peer-wait=split has the server wait to post its reply
 * until the client has reaped its send completion, so each counted read
 * finds exactly one, as in the default mode's productive reads. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include "bench_util.h"

#ifdef BENCH_HAVE_CALLGRIND
#include <valgrind/callgrind.h>
#define CG_TOGGLE() do { if (cg) CALLGRIND_TOGGLE_COLLECT; } while (0)
#define CG_DUMP(tag) do { if (cg) CALLGRIND_DUMP_STATS_AT(tag); } while (0)
#define CG_ZERO() do { if (cg) CALLGRIND_ZERO_STATS; } while (0)
#else
#define CG_TOGGLE() do { } while (0)
#define CG_DUMP(tag) do { (void)(tag); } while (0)
#define CG_ZERO() do { } while (0)
#endif

#ifndef BENCH_VARIANT
#define BENCH_VARIANT "unknown"
#endif

#define DIE(...) do { fprintf(stderr, "fd_rdm: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)
#define OK(call) do { long rc_ = (long)(call); if (rc_ < 0) \
	DIE("%s = %ld (%s)", #call, rc_, fi_strerror((int)-rc_)); } while (0)

enum test { T_TLAT, T_LAT, T_TBW, T_RATE };
static const char *test_names[] = { "tlat", "lat", "tbw", "rate" };

static int cg;
static const char *variant = BENCH_VARIANT;

/* --peer-wait: each side's count of sends posted in waiting round trips
 * (sent[0] the server's, sent[1] the client's) and of waits that timed
 * out, in one anonymous shared page mapped before the fork (the two
 * sides are parent and child: nothing to name, nothing left behind). */
struct peer_wait {
	uint64_t sent[2];
	/* split: the server has reaped request n (got[0]); the client has
	 * reaped its send completion n (got[1]) */
	uint64_t got[2];
	uint64_t late[2];
};
enum { PW_OFF, PW_REPLY, PW_SPLIT };
static int pw_mode;
static struct peer_wait *pw;
/* a wait that long without the peer's counter moving is not coming: a
 * round trip takes milliseconds under callgrind in the TCG VM */
#define PW_TIMEOUT_NS 2000000000ull
/* after that many timeouts a side stops waiting (it still publishes) */
#define PW_MAX_LATE 3

#define MAXWIN 256
#define STASH (MAXWIN + 2)

struct side {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_av *av;
	fi_addr_t peer;
	uint8_t *sbuf, *rbuf;
	/* callgrind bookkeeping: empty CQ reads, and the bracketed calls
	 * that did something (posts, receive posts, reads that returned a
	 * completion), whose bracket cost is taken out */
	uint64_t empties, calls;
	/* completions read while retrying a send, handed out by reap() */
	struct fi_cq_tagged_entry stash[STASH];
	unsigned nstash;
};

static void open_side(struct side *s, size_t maxlen)
{
	struct fi_info *hints = fi_allocinfo();
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED, .wait_obj = FI_WAIT_NONE };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	const char *addr = getenv("FD_RXE_ADDR0");

	if (!addr)
		DIE("no FD_RXE_ADDR0 (run under tests/rxe/run)");
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_TAGGED;
	hints->mode = FI_CONTEXT;
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	hints->fabric_attr->prov_name = strdup("verbs;ofi_rxm");
	if (getenv("FD_RXE_DEV0"))
		hints->domain_attr->name = strdup(getenv("FD_RXE_DEV0"));
	OK(fi_getinfo(FI_VERSION(1, 17), addr, NULL, FI_SOURCE, hints, &s->info));
	fi_freeinfo(hints);
	OK(fi_fabric(s->info->fabric_attr, &s->fabric, NULL));
	OK(fi_domain(s->fabric, s->info, &s->domain, NULL));
	OK(fi_cq_open(s->domain, &cq_attr, &s->cq, NULL));
	OK(fi_av_open(s->domain, &av_attr, &s->av, NULL));
	OK(fi_endpoint(s->domain, s->info, &s->ep, NULL));
	OK(fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV));
	OK(fi_ep_bind(s->ep, &s->av->fid, 0));
	OK(fi_enable(s->ep));
	s->sbuf = aligned_alloc(4096, (maxlen + 4095) & ~(size_t)4095);
	s->rbuf = aligned_alloc(4096, (maxlen + 4095) & ~(size_t)4095);
	if (!s->sbuf || !s->rbuf)
		DIE("out of memory");
	memset(s->sbuf, 0x5a, maxlen);
	memset(s->rbuf, 0, maxlen);
}

static void close_side(struct side *s)
{
	fi_close(&s->ep->fid);
	fi_close(&s->av->fid);
	fi_close(&s->cq->fid);
	fi_close(&s->domain->fid);
	fi_close(&s->fabric->fid);
	fi_freeinfo(s->info);
	free(s->sbuf);
	free(s->rbuf);
}

/* One bracketed CQ read: 1 with a completion in *e, 0 when empty; a
 * completion error ends the run. Not inlined: the loop and the
 * calibration of empty reads run the very same instructions. */
static __attribute__((noinline)) int poll_once(struct side *s, struct fi_cq_tagged_entry *e)
{
	ssize_t n;

	CG_TOGGLE();
	n = fi_cq_read(s->cq, e, 1);
	CG_TOGGLE();
	if (n == 1) {
		s->calls++;
		return 1;
	}
	if (n != -FI_EAGAIN) {
		struct fi_cq_err_entry err = { 0 };

		fi_cq_readerr(s->cq, &err, 0);
		DIE("completion error %d (%s)", err.err, fi_strerror(err.err));
	}
	s->empties++;
	return 0;
}

/* Reap one completion: one a retried send found first (stash), else the
 * next from the CQ; empty reads are counted for the calibration. */
static void reap(struct side *s, struct fi_cq_tagged_entry *e)
{
	uint64_t spins = 0;

	if (s->nstash) {
		*e = s->stash[--s->nstash];
		return;
	}
	while (!poll_once(s, e))
		if (++spins > 4000000000ull)
			DIE("no completion");
}

/* A send answered -FI_EAGAIN (upstream's rxm does while the connection
 * to the peer is being made; this library queues the send instead) is
 * retried after one CQ read, which drives progress. Whatever that read
 * returns is kept for reap(): the reply may already be there, so waiting
 * for a completion here could wait forever. */
static ssize_t post_send(struct side *s, enum test t, size_t len, void *ctx)
{
	struct fi_cq_tagged_entry e;
	ssize_t rc;

	for (;;) {
		CG_TOGGLE();
		rc = t == T_LAT ? fi_send(s->ep, s->sbuf, len, NULL, s->peer, ctx)
				: fi_tsend(s->ep, s->sbuf, len, NULL, s->peer, 1, ctx);
		CG_TOGGLE();
		s->calls++;
		if (rc != -FI_EAGAIN)
			return rc;
		if (poll_once(s, &e)) {
			if (s->nstash == STASH)
				DIE("more completions than operations");
			s->stash[s->nstash++] = e;
		}
	}
}

static ssize_t post_recv(struct side *s, enum test t, size_t len, void *ctx)
{
	ssize_t rc;

	CG_TOGGLE();
	rc = t == T_LAT ? fi_recv(s->ep, s->rbuf, len, NULL, FI_ADDR_UNSPEC, ctx)
			: fi_trecv(s->ep, s->rbuf, len, NULL, FI_ADDR_UNSPEC, 1, 0, ctx);
	CG_TOGGLE();
	s->calls++;
	return rc;
}

/* Wait until `want` receives and `sends` send completions came in. */
static void reap_until(struct side *s, int recvs, int sends)
{
	struct fi_cq_tagged_entry e;

	while (recvs > 0 || sends > 0) {
		reap(s, &e);
		if (e.flags & FI_RECV)
			recvs--;
		else
			sends--;
	}
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

/* --peer-wait: this side has done step `seq` (posted its send, reaped) */
static void pw_publish(uint64_t *word, uint64_t seq)
{
	/* release: the count goes out after what it announces */
	__atomic_store_n(word, seq, __ATOMIC_RELEASE);
}

/* --peer-wait: wait, outside every callgrind bracket, until the peer's
 * `word` reaches `seq`. Spins on the shared word (pause between reads;
 * sched_yield when both sides share one CPU). Gives up after
 * PW_TIMEOUT_NS, and for good after PW_MAX_LATE timeouts. */
static void pw_wait(int client, const uint64_t *word, uint64_t seq, int onecpu)
{
	uint64_t spins = 0, t0 = 0;

	if (__atomic_load_n(&pw->late[client], __ATOMIC_RELAXED) >= PW_MAX_LATE)
		return;
	while (__atomic_load_n(word, __ATOMIC_ACQUIRE) < seq) {
		if (onecpu)
			sched_yield();
		else
			cpu_relax();
		if ((++spins & 1023) == 0) {
			uint64_t now = bu_now_ns();

			if (!t0)
				t0 = now;
			else if (now - t0 > PW_TIMEOUT_NS) {
				__atomic_fetch_add(&pw->late[client], 1, __ATOMIC_RELAXED);
				return;
			}
		}
	}
}

static void pingpong(struct side *s, int client, enum test t, size_t len, unsigned iters,
		     unsigned warmup)
{
	/* --peer-wait: the sends of waiting round trips, the same count on
	 * both sides (they run the same sizes and iterations) */
	static uint64_t pw_seq;
	int onecpu = sysconf(_SC_NPROCESSORS_ONLN) < 2;
	uint64_t late0 = pw ? pw->late[client] : 0, srvlate0 = pw ? pw->late[0] : 0;
	struct fi_context ctx[2];
	uint64_t t0 = 0;
	unsigned i;

	for (i = 0; i < warmup + iters; i++) {
		if (i == warmup) {
			s->empties = 0;
			s->calls = 0;
			CG_ZERO();
			t0 = bu_now_ns();
		}
		OK(post_recv(s, t, len, &ctx[0]));
		if (pw && i >= warmup) {
			/* the warm-up polled: connections are made and the
			 * credits flow before anybody waits on the counter */
			pw_seq++;
			if (client) {
				OK(post_send(s, t, len, &ctx[1]));
				pw_publish(&pw->sent[1], pw_seq);
				if (pw_mode == PW_SPLIT) {
					/* the server has the request: the ACK
					 * that completes our send is on the way,
					 * the reply not yet */
					pw_wait(client, &pw->got[0], pw_seq, onecpu);
					reap_until(s, 0, 1);
					pw_publish(&pw->got[1], pw_seq);
					pw_wait(client, &pw->sent[0], pw_seq, onecpu);
					reap_until(s, 1, 0);
				} else {
					/* the server posts its reply only after
					 * it has the request: both completions
					 * are on the way */
					pw_wait(client, &pw->sent[0], pw_seq, onecpu);
					reap_until(s, 1, 1);
				}
			} else {
				pw_wait(client, &pw->sent[1], pw_seq, onecpu);
				reap_until(s, 1, 0);
				if (pw_mode == PW_SPLIT) {
					pw_publish(&pw->got[0], pw_seq);
					pw_wait(client, &pw->got[1], pw_seq, onecpu);
				}
				OK(post_send(s, t, len, &ctx[1]));
				pw_publish(&pw->sent[0], pw_seq);
				reap_until(s, 0, 1);
			}
			continue;
		}
		if (client) {
			OK(post_send(s, t, len, &ctx[1]));
			reap_until(s, 1, 1);
		} else {
			reap_until(s, 1, 0);
			OK(post_send(s, t, len, &ctx[1]));
			reap_until(s, 0, 1);
		}
	}
	if (client) {
		double us = (double)(bu_now_ns() - t0) / 1000.0 / iters / 2;
		char tag[128];

		snprintf(tag, sizeof(tag), "fdrdm:%s:%s:%zu:loop", variant, test_names[t], len);
		CG_DUMP(tag);
		printf("%-5s %9zu %7u %10.2f usec (half round trip)\n", test_names[t], len, iters, us);
		if (cg) {
			struct fi_cq_tagged_entry e;
			uint64_t loop_empties = s->empties, loop_calls = s->calls;

			/* calibration: empty CQ reads alone, through the same
			 * bracketed code as the loop's (a different call
			 * site may compile to an instruction more or less,
			 * which the loop's many empty reads would multiply) */
			for (i = 0; i < iters; i++)
				if (poll_once(s, &e))
					DIE("a completion after the last round trip");
			snprintf(tag, sizeof(tag), "fdrdm:%s:%s:%zu:empty", variant,
				 test_names[t], len);
			CG_DUMP(tag);
			/* calibration: the bracket alone (two toggles) */
			for (i = 0; i < iters; i++) {
				CG_TOGGLE();
				CG_TOGGLE();
			}
			snprintf(tag, sizeof(tag), "fdrdm:%s:%s:%zu:nop", variant,
				 test_names[t], len);
			CG_DUMP(tag);
			printf("#CG variant=%s test=%s size=%zu iters=%u empties=%llu probes=%u "
			       "calls=%llu nops=%u",
			       variant, test_names[t], len, iters,
			       (unsigned long long)loop_empties, iters,
			       (unsigned long long)loop_calls, iters);
			/* the server publishes its timeouts before its last
			 * reply (it is done waiting by then) */
			if (pw)
				printf(" peerwait=%d late=%llu srvlate=%llu", pw_mode,
				       (unsigned long long)(pw->late[1] - late0),
				       (unsigned long long)(pw->late[0] - srvlate0));
			printf("\n");
		}
		fflush(stdout);
	}
}

/* Streaming: the client keeps `window` sends in flight; the server keeps
 * as many receives posted and acknowledges the end. */
static void stream(struct side *s, int client, enum test t, size_t len, unsigned iters,
		   unsigned window)
{
	static struct fi_context ctx[MAXWIN + 1];
	struct fi_cq_tagged_entry e;
	unsigned posted = 0, done = 0, i;
	uint64_t t0;

	if (client) {
		t0 = bu_now_ns();
		while (done < iters) {
			while (posted < iters && posted - done < window) {
				OK(post_send(s, T_TBW, len, &ctx[posted % MAXWIN]));
				posted++;
			}
			reap(s, &e);
			done++;
		}
		/* the server's acknowledgement: everything arrived */
		OK(post_recv(s, T_TBW, 8, &ctx[MAXWIN]));
		reap_until(s, 1, 0);
		{
			double secs = (double)(bu_now_ns() - t0) / 1e9;

			if (t == T_RATE)
				printf("%-5s %9zu %7u %10.4f Mmsg/s\n", test_names[t], len, iters,
				       iters / secs / 1e6);
			else
				printf("%-5s %9zu %7u %10.2f MB/s\n", test_names[t], len, iters,
				       (double)len * iters / secs / 1e6);
			fflush(stdout);
		}
	} else {
		unsigned want = iters;

		for (i = 0; i < window && i < want; i++)
			OK(post_recv(s, T_TBW, len, &ctx[i]));
		posted = i;
		while (done < want) {
			reap(s, &e);
			done++;
			if (posted < want) {
				OK(post_recv(s, T_TBW, len, e.op_context));
				posted++;
			}
		}
		OK(post_send(s, T_TBW, 8, &ctx[MAXWIN]));
		reap_until(s, 0, 1);
	}
}

static void write_all(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			DIE("pipe write");
		p = (const char *)p + w;
		n -= (size_t)w;
	}
}

static void read_all(int fd, void *p, size_t n)
{
	while (n) {
		ssize_t r = read(fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			DIE("pipe read");
		p = (char *)p + r;
		n -= (size_t)r;
	}
}

static size_t parse_size(const char *s, char **end)
{
	size_t v = strtoull(s, end, 0);

	switch (**end) {
	case 'k': case 'K': v <<= 10; (*end)++; break;
	case 'm': case 'M': v <<= 20; (*end)++; break;
	}
	return v;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "test", required_argument, NULL, 't' },
		{ "size", required_argument, NULL, 's' },
		{ "iters", required_argument, NULL, 'n' },
		{ "window", required_argument, NULL, 'w' },
		{ "callgrind", no_argument, NULL, 'C' },
		{ "variant", required_argument, NULL, 'V' },
		{ "peer-wait", optional_argument, NULL, 'P' },
		{ NULL, 0, NULL, 0 },
	};
	enum test t = T_TLAT;
	size_t sizes[32], maxlen = 0;
	int nsizes = 0, c, i, fds[2][2], client;
	unsigned iters = 1000, window = 64;
	uint8_t name[256];
	size_t namelen;
	struct side s = { 0 };
	pid_t pid;

	while ((c = getopt_long(argc, argv, "t:s:n:w:", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			for (i = 0; i < 4 && strcmp(optarg, test_names[i]); i++)
				;
			if (i == 4)
				DIE("unknown test %s (tlat, lat, tbw, rate)", optarg);
			t = (enum test)i;
			break;
		case 's': {
			char *p = optarg, *end;

			while (*p && nsizes < 32) {
				sizes[nsizes++] = parse_size(p, &end);
				p = *end == ',' ? end + 1 : end;
				if (end == p && *p)
					DIE("bad size list %s", optarg);
			}
			break;
		}
		case 'n': iters = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'w': window = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'C': cg = 1; break;
		case 'V': variant = optarg; break;
		case 'P':
			if (!optarg || !strcmp(optarg, "reply"))
				pw_mode = PW_REPLY;
			else if (!strcmp(optarg, "split"))
				pw_mode = PW_SPLIT;
			else
				DIE("--peer-wait=%s: reply or split", optarg);
			break;
		default: DIE("usage: fd_rdm [-t tlat|lat|tbw|rate] [-s SIZES] [-n ITERS] [-w WINDOW] "
			     "[--callgrind] [--variant NAME] [--peer-wait[=split]]");
		}
	}
	if (!nsizes) {
		if (t == T_RATE)
			sizes[nsizes++] = 64;
		else
			for (size_t l = 64; l <= (t == T_TBW ? (4u << 20) : (1u << 20)); l *= 16)
				sizes[nsizes++] = l;
	}
	if (window < 1 || window > MAXWIN)
		DIE("window 1..%d", MAXWIN);
	if (pw_mode && t != T_TLAT && t != T_LAT)
		DIE("--peer-wait is for the ping-pongs (tlat, lat)");
	for (i = 0; i < nsizes; i++)
		if (sizes[i] > maxlen)
			maxlen = sizes[i];
	if (maxlen < 8)
		maxlen = 8;

	/* fork before any verbs call */
	if (pipe(fds[0]) || pipe(fds[1]))
		DIE("pipe");
	if (pw_mode) {
		/* shared with the child across the fork; zero-filled */
		void *p = mmap(NULL, sizeof(*pw), PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			DIE("mmap of the peer-wait counters: %s", strerror(errno));
		pw = p;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		DIE("fork");
	client = pid == 0;
	if (client)
		prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* One CPU: both sides share it, nothing to pin. */
	if (sysconf(_SC_NPROCESSORS_ONLN) >= 2)
		bu_pin(client ? 1 : 0);
	open_side(&s, maxlen);
	namelen = sizeof(name);
	OK(fi_getname(&s.ep->fid, name, &namelen));
	write_all(fds[client][1], name, sizeof(name));
	read_all(fds[!client][0], name, sizeof(name));
	if (fi_av_insert(s.av, name, 1, &s.peer, 0, NULL) != 1)
		DIE("fi_av_insert");
	if (client)
		printf("# fd_rdm variant=%s provider=%s test=%s iters=%u%s\n", variant,
		       s.info->fabric_attr->prov_name, test_names[t], iters,
		       pw_mode == PW_SPLIT ? " peer-wait=split" : pw_mode ? " peer-wait" : "");
	for (i = 0; i < nsizes; i++) {
		uint8_t token = 0;

		/* both sides ready before each size */
		write_all(fds[client][1], &token, 1);
		read_all(fds[!client][0], &token, 1);
		if (t == T_TLAT || t == T_LAT)
			pingpong(&s, client, t, sizes[i], iters, iters / 10 + 10);
		else
			stream(&s, client, t, sizes[i], iters, window);
	}
	{
		uint8_t token = 0;

		write_all(fds[client][1], &token, 1);
		read_all(fds[!client][0], &token, 1);
	}
	close_side(&s);
	if (client)
		return 0;
	{
		int status;

		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			DIE("client failed");
	}
	return 0;
}
