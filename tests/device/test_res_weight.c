/* What each CQ, EQ and endpoint holds in the kernel (issue 16): file
 * descriptors from /proc/self/fd, RDMA objects from `rdma res show`
 * (tests/device/fdt_res.c). Asserts that only what the program asked for is
 * created:
 *  - a CQ without a wait object: one kernel CQ and no descriptor (no
 *    completion channel); with FI_WAIT_FD at most two (the completion
 *    channel, and the eventfd fi_cq_signal writes);
 *  - an enabled endpoint bound to its EQ: one QP, one rdma_cm id and no
 *    descriptor of its own (its id's events go through the EQ's channel);
 *    the memory region non-fetching atomics need is one per domain, not
 *    one per endpoint.
 * Prints the per-object counts. With --teardown N [--wait] [--eps M] it
 * instead measures how long the kernel takes to tear down N CQs (and M
 * enabled endpoints) of a process killed with SIGKILL (not a ctest run:
 * it reports, asserts nothing about time). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fdt.h"
#include "fdt_res.h"

#define NCQ 8
#define NEP 4

struct bed {
	struct fi_info *info;		/* source side, for the listener */
	struct fi_info *cinfo;		/* toward the listener */
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_eq *eq;
	struct fid_pep *pep;
};

static void bed_open(struct bed *b)
{
	struct fi_info *hints = fdt_hints(), *h;
	struct fi_eq_attr ea = { .wait_obj = FI_WAIT_UNSPEC };
	struct sockaddr_in *src, name;
	size_t len = sizeof(name);
	char port[16];

	FDT_OK(fi_getinfo(FI_VERSION(1, 17), fdt_addr(), "0", FI_SOURCE, hints, &b->info));
	FDT_OK(fi_fabric(b->info->fabric_attr, &b->fabric, NULL));
	FDT_OK(fi_domain(b->fabric, b->info, &b->domain, NULL));
	FDT_OK(fi_eq_open(b->fabric, &ea, &b->eq, NULL));
	FDT_OK(fi_passive_ep(b->fabric, b->info, &b->pep, NULL));
	FDT_OK(fi_pep_bind(b->pep, &b->eq->fid, 0));
	FDT_OK(fi_listen(b->pep));
	FDT_OK(fi_getname(&b->pep->fid, &name, &len));
	snprintf(port, sizeof(port), "%u", ntohs(name.sin_port));
	h = fi_dupinfo(hints);
	src = calloc(1, sizeof(*src));
	FDT_ASSERT(h && src, "out of memory");
	*src = name;
	src->sin_port = 0;
	free(h->src_addr);
	h->src_addr = src;
	h->src_addrlen = sizeof(*src);
	h->addr_format = FI_SOCKADDR_IN;
	FDT_OK(fi_getinfo(FI_VERSION(1, 17), fdt_addr(), port, 0, h, &b->cinfo));
	fi_freeinfo(h);
	fi_freeinfo(hints);
}

static struct fid_cq *cq_open(struct bed *b, enum fi_wait_obj wait)
{
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_CONTEXT, .wait_obj = wait };
	struct fid_cq *cq;

	FDT_OK(fi_cq_open(b->domain, &ca, &cq, NULL));
	return cq;
}

static struct fid_ep *ep_open(struct bed *b, struct fid_cq *cq, bool enable)
{
	struct fid_ep *ep;

	FDT_OK(fi_endpoint(b->domain, b->cinfo, &ep, NULL));
	FDT_OK(fi_ep_bind(ep, &b->eq->fid, 0));
	FDT_OK(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
	if (enable)
		FDT_OK(fi_enable(ep));
	return ep;
}

static struct fdt_res snap(unsigned int what)
{
	struct fdt_res r;

	FDT_ASSERT(!fdt_res_count_some(0, &r, what), "cannot read /proc/self/fd");
	return r;
}

static void report(const char *what, int n, const struct fdt_res *a,
		   const struct fdt_res *b, struct fdt_res *d_out)
{
	struct fdt_res d = fdt_res_delta(a, b);
	char text[160];

	fdt_res_format(text, sizeof(text), &d);
	printf("%-34s x%-2d: %s\n", what, n, text);
	*d_out = d;
}

static int weigh(void)
{
	struct bed b = { 0 };
	struct fid_cq *cq_none[NCQ], *cq_fd[NCQ], *ep_cq;
	struct fid_ep *ep[NEP], *ep_idle;
	struct fid_eq *eq2;
	struct fi_eq_attr ea = { .wait_obj = FI_WAIT_UNSPEC };
	struct fdt_res r0, r1, d;

	bed_open(&b);
	ep_cq = cq_open(&b, FI_WAIT_NONE);
	/* the first endpoint sets up what the domain shares (atomic scratch) */
	ep_idle = ep_open(&b, ep_cq, true);
	printf("kernel objects created, per call (delta of /proc/self/fd and `rdma res show`):\n");

	r0 = snap(FDT_RES_CQ);
	for (int i = 0; i < NCQ; i++)
		cq_none[i] = cq_open(&b, FI_WAIT_NONE);
	r1 = snap(FDT_RES_CQ);
	report("fi_cq_open FI_WAIT_NONE", NCQ, &r0, &r1, &d);
	FDT_ASSERT(d.fds == 0, "%d descriptors for %d CQs without a wait object", d.fds, NCQ);
	FDT_ASSERT(d.cq < 0 || d.cq == NCQ, "%d kernel CQs for %d", d.cq, NCQ);

	r0 = snap(FDT_RES_CQ);
	for (int i = 0; i < NCQ; i++)
		cq_fd[i] = cq_open(&b, FI_WAIT_FD);
	r1 = snap(FDT_RES_CQ);
	report("fi_cq_open FI_WAIT_FD", NCQ, &r0, &r1, &d);
	FDT_ASSERT(d.fds <= 2 * NCQ, "%d descriptors for %d waitable CQs", d.fds, NCQ);
	FDT_ASSERT(d.cq < 0 || d.cq == NCQ, "%d kernel CQs for %d", d.cq, NCQ);

	r0 = snap(0);
	FDT_OK(fi_eq_open(b.fabric, &ea, &eq2, NULL));
	r1 = snap(0);
	report("fi_eq_open", 1, &r0, &r1, &d);

	r0 = snap(FDT_RES_CM_ID);
	for (int i = 0; i < NEP; i++)
		ep[i] = ep_open(&b, ep_cq, false);
	r1 = snap(FDT_RES_CM_ID);
	report("fi_endpoint + fi_ep_bind (EQ, CQ)", NEP, &r0, &r1, &d);
	FDT_ASSERT(d.fds == 0, "%d descriptors for %d endpoints bound to an EQ", d.fds, NEP);
	FDT_ASSERT(d.cm_id < 0 || d.cm_id == NEP, "%d rdma_cm ids for %d endpoints", d.cm_id, NEP);

	r0 = snap(FDT_RES_QP | FDT_RES_MR);
	for (int i = 0; i < NEP; i++)
		FDT_OK(fi_enable(ep[i]));
	r1 = snap(FDT_RES_QP | FDT_RES_MR);
	report("fi_enable", NEP, &r0, &r1, &d);
	FDT_ASSERT(d.fds == 0, "%d descriptors for enabling %d endpoints", d.fds, NEP);
	FDT_ASSERT(d.qp < 0 || d.qp == NEP, "%d QPs for %d endpoints", d.qp, NEP);
	FDT_ASSERT(d.mr < 0 || d.mr == 0, "%d memory regions for %d endpoints", d.mr, NEP);

	for (int i = 0; i < NEP; i++)
		FDT_OK(fi_close(&ep[i]->fid));
	FDT_OK(fi_close(&ep_idle->fid));
	for (int i = 0; i < NCQ; i++) {
		FDT_OK(fi_close(&cq_none[i]->fid));
		FDT_OK(fi_close(&cq_fd[i]->fid));
	}
	FDT_OK(fi_close(&ep_cq->fid));
	FDT_OK(fi_close(&eq2->fid));
	FDT_OK(fi_close(&b.pep->fid));
	FDT_OK(fi_close(&b.eq->fid));
	FDT_OK(fi_close(&b.domain->fid));
	FDT_OK(fi_close(&b.fabric->fid));
	fi_freeinfo(b.info);
	fi_freeinfo(b.cinfo);
	return 0;
}

/* ---- --teardown: how long the kernel takes after SIGKILL ---- */

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void hold(int ncq, int nep, bool wait, int wfd)
{
	struct bed b = { 0 };
	struct fid_cq *cq = NULL;
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_CONTEXT,
				 .wait_obj = wait ? FI_WAIT_FD : FI_WAIT_NONE };

	bed_open(&b);
	for (int i = 0; i < ncq; i++)
		if (fi_cq_open(b.domain, &ca, &cq, NULL)) {
			fprintf(stderr, "fi_cq_open failed after %d CQs\n", i);
			_exit(2);
		}
	for (int i = 0; i < nep; i++)
		ep_open(&b, cq, true);
	if (write(wfd, "r", 1) != 1)
		_exit(1);
	for (;;)
		pause();
}

static int teardown(int ncq, int nep, bool wait)
{
	struct fdt_res r, base;
	double t0, t_reaped, t_cq, t_cm;
	int pfd[2], status;
	char c;
	pid_t pid;

	FDT_ASSERT(ncq > 0, "--teardown needs at least one CQ");
	fdt_res_count(-1, &base);
	FDT_ASSERT(!pipe(pfd), "pipe");
	pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		hold(ncq, nep, wait, pfd[1]);
	}
	close(pfd[1]);
	if (read(pfd[0], &c, 1) != 1) {
		waitpid(pid, &status, 0);
		FDT_FAIL("the holder failed to open its objects (status 0x%x)", status);
	}
	FDT_ASSERT(!fdt_res_count(pid, &r), "count");
	printf("holder %d: %d CQs (%s), %d endpoints: fds %d cq %d qp %d mr %d cm_id %d\n",
	       (int)pid, ncq, wait ? "FI_WAIT_FD" : "FI_WAIT_NONE", nep, r.fds, r.cq,
	       r.qp, r.mr, r.cm_id);
	t0 = now_ms();
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	t_reaped = now_ms() - t0;
	/* the kernel objects should be gone with the zombie; check */
	t_cq = t_cm = -1;
	while (t_cq < 0 || t_cm < 0) {
		fdt_res_count(-1, &r);
		if (t_cq < 0 && r.cq <= base.cq && r.qp <= base.qp)
			t_cq = now_ms() - t0;
		if (t_cm < 0 && r.cm_id <= base.cm_id)
			t_cm = now_ms() - t0;
		if (now_ms() - t0 > 300000)
			FDT_FAIL("objects still listed after 300 s: cq %d qp %d cm_id %d",
				 r.cq, r.qp, r.cm_id);
		usleep(10000);
	}
	printf("SIGKILL -> reaped %.0f ms, -> CQs and QPs unlisted %.0f ms, "
	       "-> rdma_cm ids unlisted %.0f ms\n", t_reaped, t_cq, t_cm);
	return 0;
}

int main(int argc, char **argv)
{
	int ncq = 0, nep = 0;
	bool wait = false, td = false;

	(void)fdt_addr();	/* 77 without a device */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--teardown") && i + 1 < argc) {
			td = true;
			ncq = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--eps") && i + 1 < argc) {
			nep = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--wait")) {
			wait = true;
		} else {
			fprintf(stderr, "usage: %s [--teardown NCQ [--wait] [--eps N]]\n", argv[0]);
			return 2;
		}
	}
	if (td)
		return teardown(ncq, nep, wait);
	return weigh();
}
