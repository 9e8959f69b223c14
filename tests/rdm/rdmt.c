#define _GNU_SOURCE
#include <errno.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "rdmt.h"

#define RDMT_MAX_CQS 256

static struct rdmt_cq *all_cqs[RDMT_MAX_CQS];
static int ncqs;

long rdmt_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

struct fi_info *rdmt_hints(uint64_t caps)
{
	struct fi_info *hints = fi_allocinfo();
	const char *prov = getenv("RDMT_PROV");

	if (!hints)
		FDT_FAIL("fi_allocinfo");
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = caps;
	hints->mode = FI_CONTEXT;	/* every context below is a struct fi_context */
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	hints->addr_format = FI_SOCKADDR_IN;
	/* the provider as consumers name it; RDMT_PROV="" leaves it open */
	if (!prov)
		prov = "verbs;ofi_rxm";
	if (*prov)
		hints->fabric_attr->prov_name = strdup(prov);
	if (getenv("FD_RXE_DEV0"))
		hints->domain_attr->name = strdup(getenv("FD_RXE_DEV0"));
	return hints;
}

void rdmt_dom_open(struct rdmt_dom *d, struct fi_info *hints)
{
	const char *addr = fdt_addr();

	memset(d, 0, sizeof(*d));
	setvbuf(stdout, NULL, _IOLBF, 0);	/* a killed test still shows its lines */
	FDT_OK(fi_getinfo(FI_VERSION(1, 17), addr, NULL, FI_SOURCE, hints, &d->info));
	FDT_ASSERT(d->info->ep_attr->type == FI_EP_RDM, "not an RDM endpoint");
	FDT_OK(fi_fabric(d->info->fabric_attr, &d->fabric, NULL));
	FDT_OK(fi_domain(d->fabric, d->info, &d->domain, NULL));
}

void rdmt_dom_close(struct rdmt_dom *d)
{
	FDT_OK(fi_close(&d->domain->fid));
	FDT_OK(fi_close(&d->fabric->fid));
	fi_freeinfo(d->info);
}

struct rdmt_cq *rdmt_cq_open(struct rdmt_dom *d)
{
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_TAGGED, .wait_obj = FI_WAIT_NONE };
	struct rdmt_cq *c = calloc(1, sizeof(*c));

	FDT_ASSERT(c && ncqs < RDMT_MAX_CQS, "too many CQs");
	FDT_OK(fi_cq_open(d->domain, &attr, &c->cq, c));
	all_cqs[ncqs++] = c;
	return c;
}

void rdmt_cq_close(struct rdmt_cq *c)
{
	int i;

	FDT_OK(fi_close(&c->cq->fid));
	for (i = 0; i < ncqs; i++) {
		if (all_cqs[i] == c) {
			all_cqs[i] = all_cqs[--ncqs];
			break;
		}
	}
	free(c->q);
	free(c);
}

void rdmt_ep_open(struct rdmt_dom *d, struct rdmt_ep *e, struct rdmt_cq *cq,
		  enum fi_av_type av_type)
{
	rdmt_ep_open_info(d, e, cq, av_type, d->info);
}

void rdmt_ep_open_info(struct rdmt_dom *d, struct rdmt_ep *e, struct rdmt_cq *cq,
		       enum fi_av_type av_type, struct fi_info *info)
{
	struct fi_av_attr av_attr = { .type = av_type ? av_type : FI_AV_TABLE };

	memset(e, 0, sizeof(*e));
	e->dom = d;
	e->own_cq = !cq;
	e->cq = cq ? cq : rdmt_cq_open(d);
	FDT_OK(fi_av_open(d->domain, &av_attr, &e->av, NULL));
	FDT_OK(fi_endpoint(d->domain, info, &e->ep, e));
	FDT_OK(fi_ep_bind(e->ep, &e->cq->cq->fid, FI_TRANSMIT | FI_RECV));
	FDT_OK(fi_ep_bind(e->ep, &e->av->fid, 0));
	FDT_OK(fi_enable(e->ep));
	e->namelen = sizeof(e->name);
	FDT_OK(fi_getname(&e->ep->fid, e->name, &e->namelen));
	FDT_ASSERT(e->namelen > 0 && e->namelen <= sizeof(e->name), "name length %zu",
		   e->namelen);
}

void rdmt_ep_close(struct rdmt_ep *e)
{
	FDT_OK(fi_close(&e->ep->fid));
	FDT_OK(fi_close(&e->av->fid));
	if (e->own_cq)
		rdmt_cq_close(e->cq);
}

fi_addr_t rdmt_insert_name(struct rdmt_ep *e, const void *name)
{
	fi_addr_t a = FI_ADDR_NOTAVAIL;
	int n = fi_av_insert(e->av, name, 1, &a, 0, NULL);

	FDT_ASSERT(n == 1, "fi_av_insert = %d (%s)", n, fi_strerror(-n));
	FDT_ASSERT(a != FI_ADDR_NOTAVAIL, "no fi_addr_t");
	return a;
}

fi_addr_t rdmt_insert(struct rdmt_ep *e, const struct rdmt_ep *peer)
{
	return rdmt_insert_name(e, peer->name);
}

static void rdmt_keep(struct rdmt_cq *c, const struct rdmt_comp *comp)
{
	if (c->tail == c->cap) {
		if (c->head > 0) {
			memmove(c->q, c->q + c->head, (c->tail - c->head) * sizeof(*c->q));
			c->tail -= c->head;
			c->head = 0;
		}
		if (c->tail == c->cap) {
			c->cap = c->cap ? c->cap * 2 : 64;
			c->q = realloc(c->q, c->cap * sizeof(*c->q));
			FDT_ASSERT(c->q, "out of memory");
		}
	}
	c->q[c->tail++] = *comp;
}

static void rdmt_read_cq(struct rdmt_cq *c)
{
	struct fi_cq_tagged_entry e[16];
	fi_addr_t src[16];
	struct rdmt_comp comp;
	ssize_t n, i;

	for (;;) {
		n = fi_cq_readfrom(c->cq, e, 16, src);
		if (n == -FI_EAGAIN)
			return;
		if (n == -FI_EAVAIL) {
			memset(&comp, 0, sizeof(comp));
			n = fi_cq_readerr(c->cq, &comp.errent, 0);
			FDT_ASSERT(n == 1, "fi_cq_readerr = %zd", n);
			comp.err = comp.errent.err;
			comp.src = FI_ADDR_NOTAVAIL;
			comp.e.op_context = comp.errent.op_context;
			comp.e.flags = comp.errent.flags;
			comp.e.len = comp.errent.len;
			comp.e.buf = comp.errent.buf;
			comp.e.data = comp.errent.data;
			comp.e.tag = comp.errent.tag;
			rdmt_keep(c, &comp);
			continue;
		}
		FDT_ASSERT(n > 0, "fi_cq_readfrom = %zd (%s)", n, fi_strerror((int)-n));
		for (i = 0; i < n; i++) {
			memset(&comp, 0, sizeof(comp));
			comp.e = e[i];
			comp.src = src[i];
			rdmt_keep(c, &comp);
		}
	}
}

void rdmt_progress(void)
{
	int i;

	for (i = 0; i < ncqs; i++)
		rdmt_read_cq(all_cqs[i]);
}

int rdmt_poll(struct rdmt_cq *c, struct rdmt_comp *out, int ms)
{
	long end = rdmt_now_ms() + ms;

	for (;;) {
		if (c->head < c->tail) {
			*out = c->q[c->head++];
			return 1;
		}
		rdmt_progress();
		if (c->head == c->tail && rdmt_now_ms() > end)
			return 0;
	}
}

void rdmt_wait(struct rdmt_cq *c, struct rdmt_comp *out)
{
	if (!rdmt_poll(c, out, RDMT_WAIT_MS))
		FDT_FAIL("pid %d: no completion within %d ms", (int)getpid(), RDMT_WAIT_MS);
}

void rdmt_wait_ok(struct rdmt_cq *c, struct rdmt_comp *out)
{
	rdmt_wait(c, out);
	if (out->err)
		FDT_FAIL("error completion: %d (%s), prov_errno %d, ctx %p",
			 out->err, fi_strerror(out->err), out->errent.prov_errno,
			 out->e.op_context);
}

void rdmt_quiet(struct rdmt_cq *c, int ms, const char *what)
{
	struct rdmt_comp comp;

	if (rdmt_poll(c, &comp, ms))
		FDT_FAIL("%s: unexpected completion (err %d, ctx %p, len %zu, tag %#llx)",
			 what, comp.err, comp.e.op_context, comp.e.len,
			 (unsigned long long)comp.e.tag);
}

void rdmt_check_recv_at(const char *file, int line, const struct rdmt_comp *c,
			void *ctx, uint64_t want_flags, size_t len, uint64_t tag)
{
	const char *bad = NULL;

	if (c->err)
		bad = "error completion";
	else if (c->e.op_context != ctx)
		bad = "wrong context";
	else if ((c->e.flags & want_flags) != want_flags)
		bad = "flags missing";
	else if (c->e.len != len)
		bad = "wrong length";
	else if ((want_flags & FI_TAGGED) && c->e.tag != tag)
		bad = "wrong tag";
	if (!bad)
		return;
	fprintf(stderr, "%s:%d: receive completion: %s: err %d (%s) ctx %p (expected %p) "
		"flags %#llx (want %#llx) len %zu (expected %zu) tag %#llx (expected %#llx)\n",
		file, line, bad, c->err, c->err ? fi_strerror(c->err) : "", c->e.op_context,
		ctx, (unsigned long long)c->e.flags, (unsigned long long)want_flags,
		c->e.len, len, (unsigned long long)c->e.tag, (unsigned long long)tag);
	exit(1);
}

int rdmt_pass(const char *name)
{
	printf("PASS %s\n", name);
	fflush(stdout);
	return 0;
}

void rdmt_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		FDT_ASSERT(n > 0, "pipe write: %s", strerror(errno));
		p += n;
		len -= (size_t)n;
	}
}

void rdmt_read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		FDT_ASSERT(n > 0, "pipe read: %s", n ? strerror(errno) : "EOF");
		p += n;
		len -= (size_t)n;
	}
}

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

static void prctl_pdeathsig(void)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
}

pid_t rdmt_spawn(rdmt_child_fn fn, void *arg, int *to_child, int *from_child)
{
	int down[2], up[2];
	pid_t pid;

	FDT_ASSERT(pipe(down) == 0 && pipe(up) == 0, "pipe: %s", strerror(errno));
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	FDT_ASSERT(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(down[1]);
		close(up[0]);
		/* a child outliving a failed parent would hold the device */
		prctl_pdeathsig();
		exit(fn(up[1], down[0], arg));
	}
	close(down[0]);
	close(up[1]);
	*to_child = down[1];
	*from_child = up[0];
	return pid;
}

int rdmt_reap(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		FDT_ASSERT(errno == EINTR, "waitpid: %s", strerror(errno));
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 1;
}

void rdmt_send_name(int fd, const struct rdmt_ep *e)
{
	uint8_t rec[256];

	memset(rec, 0, sizeof(rec));
	memcpy(rec, e->name, e->namelen);
	rdmt_write_all(fd, rec, sizeof(rec));
}

void rdmt_recv_name(int fd, uint8_t name[256])
{
	rdmt_read_all(fd, name, 256);
}

/* ---- the commanded peer of rdm_wait and rdm_waitset ---- */

struct rdmt_peer_cmd {
	char op;		/* 'S' send after delay_ms, 'R' receive one, 'Q' quit */
	uint32_t delay_ms;
	uint32_t seed;
};

int rdmt_peer_main(int to_parent, int from_parent, void *arg)
{
	struct fi_info *hints = rdmt_hints(FI_MSG);
	static uint8_t buf[RDMT_PEER_MSG];
	struct rdmt_dom pd;
	struct rdmt_ep e;
	uint8_t name[256], token = 1;
	struct fi_context ctx;
	struct rdmt_comp c;
	struct rdmt_peer_cmd cmd;
	fi_addr_t w;

	(void)arg;
	rdmt_dom_open(&pd, hints);
	fi_freeinfo(hints);
	rdmt_ep_open(&pd, &e, NULL, FI_AV_TABLE);
	rdmt_send_name(to_parent, &e);
	rdmt_recv_name(from_parent, name);
	w = rdmt_insert_name(&e, name);
	for (;;) {
		rdmt_read_all(from_parent, &cmd, sizeof(cmd));
		if (cmd.op == 'Q')
			break;
		if (cmd.op == 'S') {
			usleep(cmd.delay_ms * 1000u);
			fdt_fill(buf, RDMT_PEER_MSG, cmd.seed);
			RDMT_POST(fi_send(e.ep, buf, RDMT_PEER_MSG, NULL, w, &ctx));
			rdmt_wait_ok(e.cq, &c);
		} else {
			RDMT_POST(fi_recv(e.ep, buf, RDMT_PEER_MSG, NULL, FI_ADDR_UNSPEC, &ctx));
			rdmt_wait_ok(e.cq, &c);
			FDT_ASSERT(c.e.len == RDMT_PEER_MSG &&
				   fdt_check(buf, RDMT_PEER_MSG, cmd.seed), "peer: wrong message");
		}
		rdmt_write_all(to_parent, &token, 1);
	}
	rdmt_ep_close(&e);
	rdmt_dom_close(&pd);
	return 0;
}

void rdmt_peer_tell(int to_peer, char op, uint32_t delay_ms, uint32_t seed)
{
	struct rdmt_peer_cmd cmd = { .op = op, .delay_ms = delay_ms, .seed = seed };

	rdmt_write_all(to_peer, &cmd, sizeof(cmd));
}

void rdmt_peer_done(int from_peer)
{
	uint8_t token;

	rdmt_read_all(from_peer, &token, 1);
}

long rdmt_cpu_ms(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000L +
		(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000L;
}

void rdmt_check_cpu(long cpu0, long wall0, const char *what)
{
	long cpu = rdmt_cpu_ms() - cpu0, wall = rdmt_now_ms() - wall0;

	printf("%s: %ld ms wall, %ld ms CPU\n", what, wall, cpu);
	FDT_ASSERT(cpu * 3 < wall, "%s: %ld ms of CPU in %ld ms: spinning, not sleeping",
		   what, cpu, wall);
}

long rdmt_rnr_count(const char *dev)
{
	static const char *const names[] = { "rcvd_rnr_err", "send_rnr_err" };
	long total = 0;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[256];
		long v;
		FILE *f;

		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/hw_counters/%s",
			 dev, names[i]);
		f = fopen(path, "r");
		if (!f)
			return -1;
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
		if (v < 0)
			return -1;
		total += v;
	}
	return total;
}
