/* fd_rdm_mem: an RDM receiver's memory as peers connect (issue 14's
 * "receive memory with 256 peers no more than with 8").
 *
 *   fd_rdm_mem [-b ADDR] [-p LIST]     LIST: peer counts, default 8,256
 *
 * Sender processes are forked first (before any verbs call: a child must
 * not inherit device contexts) and wait on a pipe. The receiver opens one
 * FI_EP_RDM endpoint and reports its process's VmRSS and VmPin (what
 * ibv_reg_mr pins) with no peer; then, for each count, wakes senders
 * until that many endpoints have each sent it one 64 B tagged message
 * (so each holds a connection to it), receives them all, and reports
 * again. The senders keep their connections open until the end. Output:
 * one "#RDMMEM peers=N rss_kb=.. pin_kb=.." line per stage.
 *
 * Sender endpoints are small (FI_VERBS_RX_SIZE=16 in the children, tx
 * size 16), so 256 of them fit a small VM; the receiver keeps the
 * defaults, which is what is measured. */
#define _GNU_SOURCE	/* setenv, getopt, strsep */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include "bench_util.h"

#define MAX_STAGES 8
#define PER_CHILD 64		/* endpoints per sender process at most */
#define MAX_CHILDREN 16
#define MSG 64
#define WAIT_MS 60000

#define CHECK(call)							\
	do {								\
		int rc_ = (int)(call);					\
		if (rc_)						\
			bu_die("%s: %d (%s)", #call, rc_, fi_strerror(-rc_)); \
	} while (0)

struct child {
	pid_t pid;
	int go;		/* parent -> child: endpoint count, then 0 = exit */
	int done;	/* child -> parent: one byte when its sends completed */
};

static const char *addr;

static struct fi_info *rdm_info(int small)
{
	struct fi_info *hints = fi_allocinfo(), *info = NULL;

	if (!hints)
		bu_die("fi_allocinfo");
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_TAGGED;
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->addr_format = FI_SOCKADDR_IN;
	if (small) {
		hints->tx_attr->size = 16;
		hints->rx_attr->size = 16;
	}
	CHECK(fi_getinfo(FI_VERSION(1, 17), addr, NULL, FI_SOURCE, hints, &info));
	fi_freeinfo(hints);
	return info;
}

static long now_ms(void)
{
	return (long)(bu_now_ns() / 1000000u);
}

static void read_exact(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(2);	/* the other side is gone */
		p += n;
		len -= (size_t)n;
	}
}

static void write_exact(int fd, const void *buf, size_t len)
{
	if (write(fd, buf, len) != (ssize_t)len)
		bu_die("pipe write: %s", strerror(errno));
}

/* A sender process: told how many endpoints to open and the receiver's
 * name, each sends one message; then it holds them until told to go. */
static int child_main(int go, int done)
{
	struct fid_ep *ep[PER_CHILD];
	struct fid_av *av[PER_CHILD];
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_cq *cq;
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_info *info;
	uint8_t name[64], buf[MSG] = { 1 }, byte = 1;
	uint32_t n, opened = 0;
	size_t namelen;
	long end;
	int got = 0;

	bu_set_role("sender");
	read_exact(go, &n, sizeof(n));
	read_exact(go, &namelen, sizeof(namelen));
	if (n > PER_CHILD || namelen > sizeof(name))
		bu_die("bad request");
	read_exact(go, name, namelen);
	setenv("FI_VERBS_RX_SIZE", "16", 1);
	info = rdm_info(1);
	CHECK(fi_fabric(info->fabric_attr, &fabric, NULL));
	CHECK(fi_domain(fabric, info, &domain, NULL));
	cq_attr.size = 4 * PER_CHILD;
	CHECK(fi_cq_open(domain, &cq_attr, &cq, NULL));
	for (uint32_t i = 0; i < n; i++) {
		fi_addr_t peer;

		CHECK(fi_endpoint(domain, info, &ep[i], NULL));
		CHECK(fi_av_open(domain, &av_attr, &av[i], NULL));
		CHECK(fi_ep_bind(ep[i], &av[i]->fid, 0));
		CHECK(fi_ep_bind(ep[i], &cq->fid, FI_TRANSMIT | FI_RECV));
		CHECK(fi_enable(ep[i]));
		opened++;
		if (fi_av_insert(av[i], name, 1, &peer, 0, NULL) != 1)
			bu_die("fi_av_insert");
		for (;;) {
			ssize_t rc = fi_tsend(ep[i], buf, MSG, NULL, peer, 7, NULL);
			struct fi_cq_tagged_entry e;

			if (!rc)
				break;
			if (rc != -FI_EAGAIN)
				bu_die("fi_tsend: %zd", rc);
			if (fi_cq_read(cq, &e, 1) == 1)
				got++;
		}
	}
	end = now_ms() + WAIT_MS;
	while (got < (int)n) {
		struct fi_cq_tagged_entry e;
		ssize_t rc = fi_cq_read(cq, &e, 1);

		if (rc == 1)
			got++;
		else if (rc != -FI_EAGAIN)
			bu_die("sender completion: %zd", rc);
		if (now_ms() > end)
			bu_die("%d of %u sends completed", got, n);
	}
	write_exact(done, &byte, 1);
	read_exact(go, &n, sizeof(n));	/* hold the connections until then */
	end = now_ms();
	for (uint32_t i = 0; i < opened; i++) {
		fi_close(&ep[i]->fid);
		fi_close(&av[i]->fid);
	}
	fi_close(&cq->fid);
	fi_close(&domain->fid);
	fi_close(&fabric->fid);
	fi_freeinfo(info);
	bu_log("%u endpoints closed in %ld ms", opened, now_ms() - end);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned int stages[MAX_STAGES] = { 8, 256 }, nstages = 2, connected = 0;
	struct child kids[MAX_CHILDREN];
	int nkids = 0, used = 0, opt;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_ep *ep;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED, .size = 1024 };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_info *info;
	static uint8_t rbuf[1024][MSG];
	uint8_t name[64];
	size_t namelen = sizeof(name);

	bu_set_role("receiver");
	addr = getenv("FD_RXE_ADDR0");
	while ((opt = getopt(argc, argv, "b:p:")) != -1) {
		if (opt == 'b') {
			addr = optarg;
		} else if (opt == 'p') {
			char *s = optarg, *tok;

			nstages = 0;
			while ((tok = strsep(&s, ",")) && nstages < MAX_STAGES)
				stages[nstages++] = (unsigned int)strtoul(tok, NULL, 10);
		} else {
			fprintf(stderr, "usage: %s [-b ADDR] [-p PEERS,...]\n", argv[0]);
			return 2;
		}
	}
	if (!addr)
		bu_die("no address: -b ADDR or FD_RXE_ADDR0");
	for (unsigned int i = 0; i < nstages; i++)
		if (stages[i] > 1024 || (i && stages[i] <= stages[i - 1]))
			bu_die("peer counts must grow, at most 1024");
	nkids = (int)((stages[nstages - 1] + PER_CHILD - 1) / PER_CHILD) + (int)nstages;
	if (nkids > MAX_CHILDREN)
		bu_die("too many peers");
	for (int k = 0; k < nkids; k++) {
		int go[2], done[2];

		if (pipe(go) || pipe(done))
			bu_die("pipe");
		kids[k].pid = fork();
		if (kids[k].pid < 0)
			bu_die("fork");
		if (!kids[k].pid) {
			close(go[1]);
			close(done[0]);
			_exit(child_main(go[0], done[1]));
		}
		close(go[0]);
		close(done[1]);
		kids[k].go = go[1];
		kids[k].done = done[0];
	}

	info = rdm_info(0);
	CHECK(fi_fabric(info->fabric_attr, &fabric, NULL));
	CHECK(fi_domain(fabric, info, &domain, NULL));
	CHECK(fi_cq_open(domain, &cq_attr, &cq, NULL));
	CHECK(fi_endpoint(domain, info, &ep, NULL));
	CHECK(fi_av_open(domain, &av_attr, &av, NULL));
	CHECK(fi_ep_bind(ep, &av->fid, 0));
	CHECK(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
	CHECK(fi_enable(ep));
	CHECK(fi_getname(&ep->fid, name, &namelen));
	printf("#RDMMEM variant=%s peers=0 rss_kb=%ld pin_kb=%ld rx_size=%zu\n",
	       BENCH_VARIANT, bu_status_kb("VmRSS"), bu_status_kb("VmPin"), info->rx_attr->size);

	for (unsigned int s = 0; s < nstages; s++) {
		unsigned int want = stages[s], received = 0, first = connected;
		long end = now_ms() + WAIT_MS;
		int from = used;

		for (unsigned int i = connected; i < want; i++)
			CHECK(fi_trecv(ep, rbuf[i], MSG, NULL, FI_ADDR_UNSPEC, 0, ~0ULL, NULL));
		while (connected < want) {
			uint32_t n = want - connected < PER_CHILD ? want - connected : PER_CHILD;

			if (used == nkids)
				bu_die("out of sender processes");
			write_exact(kids[used].go, &n, sizeof(n));
			write_exact(kids[used].go, &namelen, sizeof(namelen));
			write_exact(kids[used].go, name, namelen);
			used++;
			connected += n;
		}
		/* receive everything; the senders' connections are made as
		 * this endpoint's progress accepts them */
		while (received < want - first) {
			struct fi_cq_tagged_entry e[16];
			ssize_t rc = fi_cq_read(cq, e, 16);

			if (rc > 0)
				received += (unsigned int)rc;
			else if (rc != -FI_EAGAIN)
				bu_die("receiver completion: %zd", rc);
			if (now_ms() > end)
				bu_die("%u of %u messages", received, want - first);
		}
		for (int k = from; k < used; k++) {
			uint8_t byte;

			read_exact(kids[k].done, &byte, 1);
		}
		printf("#RDMMEM variant=%s peers=%u rss_kb=%ld pin_kb=%ld\n", BENCH_VARIANT,
		       want, bu_status_kb("VmRSS"), bu_status_kb("VmPin"));
		fflush(stdout);
	}
	for (int k = 0; k < nkids; k++) {
		uint32_t zero = 0;
		int st;

		if (write(kids[k].go, &zero, sizeof(zero)) < 0)
			bu_log("child %d: %s", k, strerror(errno));
		close(kids[k].go);
		waitpid(kids[k].pid, &st, 0);
	}
	fi_close(&ep->fid);
	fi_close(&av->fid);
	fi_close(&cq->fid);
	fi_close(&domain->fid);
	fi_close(&fabric->fid);
	fi_freeinfo(info);
	return 0;
}
