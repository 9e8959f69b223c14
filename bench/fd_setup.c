/* fd_setup: what it costs to get going and to stay connected.
 *
 * Time to first message: wall time and user-space instructions from the
 * client's exec through fi_getinfo, fabric/EQ/domain, CQ and memory
 * registration, endpoint, connect, up to the first completed send. Memory:
 * RSS, pinned memory (VmPin: what ibv_reg_mr pins), file descriptors and
 * the kernel's RDMA objects (`rdma res`) with N connected endpoints, each
 * with its own CQ, against a baseline taken before the first CQ.
 *
 * Built like fd_pingpong in three variants (direct, ops tables, Debian's
 * libfabric 1.17 with its own headers), so it uses the public API only.
 *
 *   fd_setup [-e N] [-p PORT] [-b ADDR]              server for N endpoints
 *   fd_setup [-e N] [-p PORT] SERVER_ADDR            client
 *   fd_setup --local [-e N] [-- WRAPPER...]          both: the server forked,
 *                     then the client exec'd (under WRAPPER, e.g. valgrind)
 *
 * With --local the launcher forks the server, learns its port, reads the
 * clock and execs the client with that reading (--t0), so the client's
 * times start before the dynamic loader runs. Under callgrind
 * (--tool=callgrind, collection on from the start) the client dumps at each
 * phase boundary ("fdsu:VARIANT:PHASE"): each dump holds the instructions
 * of that phase only, the first one everything from the first instruction
 * of the process (the dynamic loader) through main.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include "bench_util.h"

#ifdef BENCH_HAVE_CALLGRIND
#include <valgrind/callgrind.h>
#define SU_CG_DUMP(tag) CALLGRIND_DUMP_STATS_AT(tag)
#else
#define SU_CG_DUMP(tag) ((void)(tag))
#endif

#ifndef BENCH_VARIANT
#define BENCH_VARIANT "direct"
#endif

#define SU_MAX_EPS 1024
#define SU_MSG 64
#define SU_TIMEOUT_MS 600000	/* a peer under valgrind may take minutes */

#define SU_CHECK(call)							\
	do {								\
		long su_rc_ = (long)(call);				\
		if (su_rc_ < 0)						\
			bu_die("%s: %s (%ld)", #call,			\
			       fi_strerror((int)-su_rc_), su_rc_);	\
	} while (0)

struct su_opts {
	const char *dst, *bind, *port;
	unsigned eps;
	int local;
	int mem;		/* -m: snapshots of memory and kernel objects */
	uint64_t t0;		/* CLOCK_MONOTONIC at exec, 0: main's entry */
	char **wrap;		/* --local: the client runs under this */
	int nwrap;
	char **argv;
};

struct su {
	struct fi_info *hints, *info;
	struct fid_fabric *fabric;
	struct fid_eq *eq;
	struct fid_domain *domain;
	struct fid_pep *pep;
	struct fid_mr *mr;
	struct fid_cq *cq[SU_MAX_EPS];
	struct fid_ep *ep[SU_MAX_EPS];
	uint8_t *buf;		/* SU_MSG bytes per endpoint, one registration */
	struct fi_context ctx[SU_MAX_EPS];
};

static struct fi_info *su_hints(void)
{
	struct fi_info *h = fi_allocinfo();

	if (!h)
		bu_die("fi_allocinfo");
	h->ep_attr->type = FI_EP_MSG;
	h->caps = FI_MSG;
	h->mode = FI_CONTEXT;
	h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
				  FI_MR_PROV_KEY;
	h->fabric_attr->prov_name = strdup("verbs");
	return h;
}

static void su_wait_event(struct su *s, uint32_t want, struct fi_eq_cm_entry *e)
{
	uint32_t ev;
	ssize_t rc = fi_eq_sread(s->eq, &ev, e, sizeof(*e), SU_TIMEOUT_MS, 0);

	if (rc == -FI_EAVAIL) {
		struct fi_eq_err_entry err = { 0 };

		fi_eq_readerr(s->eq, &err, 0);
		bu_die("connection event error: %s", fi_strerror(err.err));
	}
	if (rc < 0)
		bu_die("fi_eq_sread: %s", fi_strerror((int)-rc));
	if (ev != want)
		bu_die("expected connection event %u, got %u", want, ev);
}

static void su_cq_wait(struct fid_cq *cq)
{
	struct fi_cq_entry e;
	struct bu_stall st = { 0, 0 };
	ssize_t rc;

	while ((rc = fi_cq_read(cq, &e, 1)) == -FI_EAGAIN)
		bu_stall_tick(&st, "a set-up completion");
	if (rc != 1)
		bu_die("completion failed: %s", fi_strerror((int)-rc));
}

static void su_open_common(struct su *s, unsigned eps)
{
	struct fi_eq_attr ea = { .wait_obj = FI_WAIT_UNSPEC };

	SU_CHECK(fi_fabric(s->info->fabric_attr, &s->fabric, NULL));
	SU_CHECK(fi_eq_open(s->fabric, &ea, &s->eq, NULL));
	SU_CHECK(fi_domain(s->fabric, s->info, &s->domain, NULL));
	s->buf = calloc(eps, SU_MSG);
	if (!s->buf)
		bu_die("out of memory");
}

static void su_open_cqs(struct su *s, unsigned eps)
{
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_NONE };

	SU_CHECK(fi_mr_reg(s->domain, s->buf, (size_t)eps * SU_MSG, FI_SEND | FI_RECV, 0, 0,
			   0, &s->mr, NULL));
	for (unsigned i = 0; i < eps; i++)
		SU_CHECK(fi_cq_open(s->domain, &ca, &s->cq[i], NULL));
}

static void su_open_ep(struct su *s, unsigned i, struct fi_info *info)
{
	SU_CHECK(fi_endpoint(s->domain, info, &s->ep[i], NULL));
	SU_CHECK(fi_ep_bind(s->ep[i], &s->eq->fid, 0));
	SU_CHECK(fi_ep_bind(s->ep[i], &s->cq[i]->fid, FI_TRANSMIT | FI_RECV));
	SU_CHECK(fi_enable(s->ep[i]));
}

static void su_close(struct su *s, unsigned eps)
{
	for (unsigned i = 0; i < eps; i++)
		if (s->ep[i])
			fi_close(&s->ep[i]->fid);
	for (unsigned i = 0; i < eps; i++)
		if (s->cq[i])
			fi_close(&s->cq[i]->fid);
	if (s->mr)
		fi_close(&s->mr->fid);
	if (s->pep)
		fi_close(&s->pep->fid);
	if (s->domain)
		fi_close(&s->domain->fid);
	if (s->eq)
		fi_close(&s->eq->fid);
	if (s->fabric)
		fi_close(&s->fabric->fid);
	fi_freeinfo(s->info);
	fi_freeinfo(s->hints);
	free(s->buf);
}

/* ------------------------------------------------------------------------
 * What the process holds: /proc/self/status, /proc/self/fd, `rdma res`.
 * ---------------------------------------------------------------------- */
struct su_fds {
	int total, uverbs, rdma_cm, ib_event, epoll, eventfd, other;
};

static void su_count_fds(struct su_fds *n)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;

	memset(n, 0, sizeof(*n));
	if (!d)
		return;
	while ((de = readdir(d))) {
		char path[300], target[256];
		ssize_t len;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len < 0)
			continue;
		target[len] = 0;
		n->total++;
		if (strstr(target, "uverbs"))
			n->uverbs++;
		else if (strstr(target, "rdma_cm"))
			n->rdma_cm++;
		else if (strstr(target, "infinibandevent"))
			n->ib_event++;	/* a completion channel */
		else if (strstr(target, "eventpoll"))
			n->epoll++;
		else if (strstr(target, "eventfd"))
			n->eventfd++;
		else
			n->other++;
	}
	closedir(d);
	n->total--;	/* the directory's own descriptor */
	n->other--;
}

/* Lines of `rdma res show KIND` that belong to this process; -1 without
 * the tool. */
static int su_rdma_res(const char *kind)
{
	char cmd[96], line[1024], want[32];
	int n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "rdma res show %s 2>/dev/null", kind);
	snprintf(want, sizeof(want), " pid %d ", (int)getpid());
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		size_t l = strlen(line);

		if (l && line[l - 1] == '\n')
			line[l - 1] = ' ';
		if (strstr(line, want))
			n++;
	}
	if (pclose(p))
		return -1;
	return n;
}

static void su_snapshot(const char *stage, unsigned eps)
{
	struct su_fds f;

	su_count_fds(&f);
	printf("#MEM variant=%s eps=%u stage=%s rss_kb=%ld pin_kb=%ld lck_kb=%ld "
	       "fds=%d fd_uverbs=%d fd_rdma_cm=%d fd_comp_channel=%d fd_epoll=%d "
	       "fd_eventfd=%d fd_other=%d qp=%d cq=%d cm_id=%d mr=%d pd=%d\n",
	       BENCH_VARIANT, eps, stage, bu_status_kb("VmRSS"), bu_status_kb("VmPin"),
	       bu_status_kb("VmLck"), f.total, f.uverbs, f.rdma_cm, f.ib_event, f.epoll,
	       f.eventfd, f.other, su_rdma_res("qp"), su_rdma_res("cq"),
	       su_rdma_res("cm_id"), su_rdma_res("mr"), su_rdma_res("pd"));
	fflush(stdout);
}

/* ------------------------------------------------------------------------
 * Client: the phases
 * ---------------------------------------------------------------------- */
static uint64_t su_t0, su_last;

/* Phase times are kept and printed at the end, so that neither the clock
 * nor callgrind counts our own printing in the next phase. */
#define SU_MAX_PHASES 16
static struct {
	const char *name;
	uint64_t ns, since_start;
} su_phases[SU_MAX_PHASES];
static int su_nphases;

static void su_phase(const char *name)
{
	uint64_t now = bu_now_ns();
	char tag[96];

	snprintf(tag, sizeof(tag), "fdsu:%s:%s", BENCH_VARIANT, name);
	SU_CG_DUMP(tag);
	if (su_nphases < SU_MAX_PHASES) {
		su_phases[su_nphases].name = name;
		su_phases[su_nphases].ns = now - su_last;
		su_phases[su_nphases].since_start = now - su_t0;
		su_nphases++;
	}
	su_last = bu_now_ns();
}

static void su_print_phases(void)
{
	for (int i = 0; i < su_nphases; i++)
		printf("#PHASE variant=%s phase=%s ns=%" PRIu64 " since_start_ns=%" PRIu64 "\n",
		       BENCH_VARIANT, su_phases[i].name, su_phases[i].ns,
		       su_phases[i].since_start);
}

static int su_client(const struct su_opts *o)
{
	struct su s = { 0 };
	struct fi_eq_cm_entry e;
	int rc;

	bu_set_role("fd_setup client");
	su_phase("start");
	s.hints = su_hints();
	rc = fi_getinfo(FI_VERSION(1, 17), o->dst, o->port, 0, s.hints, &s.info);
	if (rc)
		bu_die("fi_getinfo(%s, %s): %s", o->dst, o->port, fi_strerror(-rc));
	su_phase("getinfo");
	su_open_common(&s, o->eps);
	su_phase("fabric_domain");
	if (o->mem)
		su_snapshot("base", o->eps);
	su_open_cqs(&s, o->eps);
	su_phase("cq_mr");
	if (o->mem)
		su_snapshot("cqs", o->eps);
	su_open_ep(&s, 0, s.info);
	su_phase("endpoint");
	SU_CHECK(fi_connect(s.ep[0], NULL, NULL, 0));
	su_wait_event(&s, FI_CONNECTED, &e);
	su_phase("connect");
	SU_CHECK(fi_send(s.ep[0], s.buf, SU_MSG, fi_mr_desc(s.mr), 0, &s.ctx[0]));
	su_cq_wait(s.cq[0]);
	su_phase("first_send");
	su_print_phases();
	/* The rest: each endpoint connected and one message through it, so
	 * whatever an endpoint allocates lazily is there when we look. */
	for (unsigned i = 1; i < o->eps; i++) {
		su_open_ep(&s, i, s.info);
		SU_CHECK(fi_connect(s.ep[i], NULL, NULL, 0));
		su_wait_event(&s, FI_CONNECTED, &e);
		SU_CHECK(fi_send(s.ep[i], s.buf + (size_t)i * SU_MSG, SU_MSG, fi_mr_desc(s.mr), 0,
				 &s.ctx[i]));
		su_cq_wait(s.cq[i]);
	}
	if (o->mem)
		su_snapshot("connected", o->eps);
	su_close(&s, o->eps);
	return 0;
}

/* ------------------------------------------------------------------------
 * Server: accepts eps connections, one CQ each, receives one message on
 * each, then waits for the client to go.
 * ---------------------------------------------------------------------- */
static int su_server(const struct su_opts *o, int port_fd)
{
	struct su s = { 0 };
	struct fi_eq_cm_entry e;
	struct sockaddr_storage ss;
	size_t sslen = sizeof(ss);
	char port[16];
	int rc;

	bu_set_role("fd_setup server");
	s.hints = su_hints();
	rc = fi_getinfo(FI_VERSION(1, 17), o->bind, o->port, FI_SOURCE, s.hints, &s.info);
	if (rc)
		bu_die("fi_getinfo(%s, %s): %s", o->bind ? o->bind : "NULL", o->port,
		       fi_strerror(-rc));
	su_open_common(&s, o->eps);
	su_open_cqs(&s, o->eps);
	SU_CHECK(fi_passive_ep(s.fabric, s.info, &s.pep, NULL));
	SU_CHECK(fi_pep_bind(s.pep, &s.eq->fid, 0));
	SU_CHECK(fi_listen(s.pep));
	SU_CHECK(fi_getname(&s.pep->fid, &ss, &sslen));
	snprintf(port, sizeof(port), "%u", ntohs(ss.ss_family == AF_INET6 ?
		 ((struct sockaddr_in6 *)&ss)->sin6_port : ((struct sockaddr_in *)&ss)->sin_port));
	bu_hand_port(port_fd, port, o->bind, 0);
	for (unsigned i = 0; i < o->eps; i++) {
		su_wait_event(&s, FI_CONNREQ, &e);
		su_open_ep(&s, i, e.info);
		fi_freeinfo(e.info);
		SU_CHECK(fi_recv(s.ep[i], s.buf + (size_t)i * SU_MSG, SU_MSG, fi_mr_desc(s.mr), 0,
				 &s.ctx[i]));
		SU_CHECK(fi_accept(s.ep[i], NULL, 0));
		su_wait_event(&s, FI_CONNECTED, &e);
		su_cq_wait(s.cq[i]);
	}
	/* The client closes its endpoints once it has looked at itself. */
	for (unsigned i = 0; i < o->eps; i++) {
		uint32_t ev;

		if (fi_eq_sread(s.eq, &ev, &e, sizeof(e), SU_TIMEOUT_MS, 0) < 0)
			break;
	}
	su_close(&s, o->eps);
	return 0;
}

/* ------------------------------------------------------------------------
 * --local: fork the server, exec the client (under the wrapper).
 * ---------------------------------------------------------------------- */
static int su_local(struct su_opts *o)
{
	char port[32] = "", t0[32], eps[16], self[4096];
	char *argv[64];
	int pfd[2], n = 0, status;
	ssize_t len;
	pid_t server, client;

	if (pipe(pfd))
		bu_die("pipe: %s", strerror(errno));
	fflush(NULL);
	server = fork();
	if (server < 0)
		bu_die("fork: %s", strerror(errno));
	if (server == 0) {
		close(pfd[0]);
		_exit(su_server(o, pfd[1]));
	}
	close(pfd[1]);
	len = read(pfd[0], port, sizeof(port) - 1);
	close(pfd[0]);
	if (len <= 0) {
		waitpid(server, &status, 0);
		bu_die("the server failed before listening");
	}
	port[len] = 0;
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0)
		bu_die("readlink /proc/self/exe: %s", strerror(errno));
	self[len] = 0;
	if (o->nwrap > 48)
		bu_die("wrapper command too long");
	for (int i = 0; i < o->nwrap; i++)
		argv[n++] = o->wrap[i];
	snprintf(eps, sizeof(eps), "%u", o->eps);
	argv[n++] = self;
	argv[n++] = "-e";
	argv[n++] = eps;
	argv[n++] = "-p";
	argv[n++] = port;
	if (o->mem)
		argv[n++] = "-m";
	argv[n++] = "--t0";
	argv[n++] = t0;
	argv[n++] = (char *)o->bind;
	argv[n] = NULL;
	fflush(NULL);
	client = fork();
	if (client < 0)
		bu_die("fork: %s", strerror(errno));
	if (client == 0) {
		snprintf(t0, sizeof(t0), "%" PRIu64, bu_now_ns());
		execvp(argv[0], argv);
		bu_die("exec %s: %s", argv[0], strerror(errno));
	}
	if (waitpid(client, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		bu_log("client exited with status 0x%x", status);
		kill(server, SIGTERM);
		waitpid(server, &status, 0);
		return 1;
	}
	if (waitpid(server, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		bu_log("server exited with status 0x%x", status);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "local", no_argument, NULL, 'l' },
		{ "t0", required_argument, NULL, 1 },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct su_opts o = { .eps = 1, .argv = argv };
	int c;

	su_t0 = su_last = bu_now_ns();
	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt_long(argc, argv, "+e:p:b:lmh", lo, NULL)) != -1) {
		switch (c) {
		case 'e':
			o.eps = (unsigned)bu_parse_num(optarg, "endpoint count");
			if (!o.eps || o.eps > SU_MAX_EPS)
				bu_die("-e wants 1..%d", SU_MAX_EPS);
			break;
		case 'p': o.port = optarg; break;
		case 'b': o.bind = optarg; break;
		case 'l': o.local = 1; break;
		case 'm': o.mem = 1; break;
		case 1:
			o.t0 = bu_parse_num(optarg, "start time");
			break;
		case 'h':
			printf("usage: %s [-e N] [-p PORT] [-b ADDR]      server\n"
			       "       %s [-e N] [-p PORT] SERVER_ADDR    client\n"
			       "       %s --local [-e N] [-b ADDR] [-- WRAPPER...]\n"
			       "  -e N  endpoints (each with its own CQ), 1..%d (1)\n"
			       "  -m    client: print memory and kernel objects before the CQs,\n"
			       "        after them and with every endpoint connected (#MEM lines)\n",
			       argv[0], argv[0], argv[0], SU_MAX_EPS);
			return 0;
		default:
			return 2;
		}
	}
	if (o.t0 && o.t0 <= su_t0)
		su_t0 = su_last = o.t0;
	if (o.local) {
		if (!o.bind)
			o.bind = getenv("FD_RXE_ADDR0");
		if (!o.bind)
			bu_die("--local needs -b ADDR or FD_RXE_ADDR0");
		if (!o.port)
			o.port = "0";
		/* Whatever follows "--" is the wrapper. */
		o.wrap = argv + optind;
		o.nwrap = argc - optind;
		return su_local(&o);
	}
	if (!o.port)
		o.port = "47595";
	if (optind < argc) {
		o.dst = argv[optind];
		return su_client(&o);
	}
	return su_server(&o, -1);
}
