/* Counters bound to RDM endpoints with every flag: FI_SEND and FI_RECV
 * count messages (injects too), FI_WRITE / FI_READ the initiator's RMA,
 * FI_REMOTE_WRITE / FI_REMOTE_READ the target's (FI_RMA_EVENT);
 * fi_cntr_wait reaches each threshold (driving progress itself) and times
 * out below it; a truncated receive counts in readerr, not read; add /
 * set / adderr / seterr; FI_GETWAIT gives a pollable fd that turns
 * readable when the counter moves; fi_close of a bound counter answers
 * -FI_EBUSY. */
#include <poll.h>

#include "rdmt.h"

static struct rdmt_dom dom;
static struct rdmt_ep A, B;
static fi_addr_t a2b;

static struct fid_cntr *cntr_open(enum fi_wait_obj wait)
{
	struct fi_cntr_attr attr = { .events = FI_CNTR_EVENTS_COMP, .wait_obj = wait };
	struct fid_cntr *c;

	FDT_OK(fi_cntr_open(dom.domain, &attr, &c, NULL));
	return c;
}

static void drain(struct rdmt_cq *cq, int n)
{
	struct rdmt_comp c;

	while (n-- > 0)
		rdmt_wait(cq, &c);
}

int main(void)
{
	struct fi_info *hints = rdmt_hints(FI_MSG | FI_TAGGED | FI_RMA | FI_RMA_EVENT);
	struct fid_cntr *send_c, *recv_c, *write_c, *read_c, *rw_c;
	static uint8_t sbuf[4096], rbuf[4096], target[65536];
	struct fi_context sctx[8], rctx[8];
	struct fi_cntr_attr bad = { .events = (enum fi_cntr_events)7 };
	struct fid_cntr *dummy = NULL;
	struct fid_mr *mr;
	struct rdmt_comp c;
	uint64_t raddr, rkey;
	int i, fd = -1, rma_event;
	struct pollfd pfd;

#ifdef FDT_UPSTREAM
	{	/* upstream 1.17's rxm has no FI_RMA_EVENT: test the rest */
		struct fi_info *probe = NULL;

		if (fi_getinfo(FI_VERSION(1, 17), fdt_addr(), NULL, FI_SOURCE, hints, &probe))
			hints->caps &= ~(uint64_t)FI_RMA_EVENT;
		fi_freeinfo(probe);
	}
#endif
	rdmt_dom_open(&dom, hints);
	fi_freeinfo(hints);
	rma_event = !!(dom.info->caps & FI_RMA_EVENT);
#ifndef FDT_UPSTREAM
	FDT_ASSERT(rma_event, "no FI_RMA_EVENT: remote counters cannot be tested");
#endif
#ifndef FDT_UPSTREAM	/* upstream 1.17 opens it */
	FDT_ASSERT(fi_cntr_open(dom.domain, &bad, &dummy, NULL) < 0,
		   "a counter of unknown events opened");
#else
	(void)bad;
	(void)dummy;
#endif

	send_c = cntr_open(FI_WAIT_UNSPEC);
	recv_c = cntr_open(FI_WAIT_FD);	/* the pollable one */
	write_c = cntr_open(FI_WAIT_UNSPEC);
	read_c = cntr_open(FI_WAIT_UNSPEC);
	rw_c = cntr_open(FI_WAIT_UNSPEC);

	/* counters bind before fi_enable: open the endpoints by hand */
	{
		struct rdmt_ep *e[2] = { &A, &B };
		struct fi_av_attr av_attr = { .type = FI_AV_TABLE };

		for (i = 0; i < 2; i++) {
			memset(e[i], 0, sizeof(*e[i]));
			e[i]->dom = &dom;
			e[i]->own_cq = 1;
			e[i]->cq = rdmt_cq_open(&dom);
			FDT_OK(fi_av_open(dom.domain, &av_attr, &e[i]->av, NULL));
			FDT_OK(fi_endpoint(dom.domain, dom.info, &e[i]->ep, NULL));
			FDT_OK(fi_ep_bind(e[i]->ep, &e[i]->cq->cq->fid, FI_TRANSMIT | FI_RECV));
			FDT_OK(fi_ep_bind(e[i]->ep, &e[i]->av->fid, 0));
		}
		FDT_OK(fi_ep_bind(A.ep, &send_c->fid, FI_SEND));
		FDT_OK(fi_ep_bind(A.ep, &write_c->fid, FI_WRITE));
		FDT_OK(fi_ep_bind(A.ep, &read_c->fid, FI_READ));
		FDT_OK(fi_ep_bind(B.ep, &recv_c->fid, FI_RECV));
		if (rma_event)
			FDT_OK(fi_ep_bind(B.ep, &rw_c->fid, FI_REMOTE_WRITE | FI_REMOTE_READ));
		for (i = 0; i < 2; i++) {
			FDT_OK(fi_enable(e[i]->ep));
			e[i]->namelen = sizeof(e[i]->name);
			FDT_OK(fi_getname(&e[i]->ep->fid, e[i]->name, &e[i]->namelen));
		}
	}
	a2b = rdmt_insert(&A, &B);
	(void)rdmt_insert(&B, &A);
	FDT_OK(fi_mr_reg(dom.domain, target, sizeof(target),
			 FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0, &mr, NULL));
	rkey = fi_mr_key(mr);
	raddr = (dom.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) ?
		(uint64_t)(uintptr_t)target : 0;

	FDT_EXPECT(fi_cntr_read(send_c), 0);
	FDT_EXPECT(fi_cntr_wait(send_c, 1, 100), -FI_ETIMEDOUT);
#ifndef FDT_UPSTREAM
	FDT_OK(fi_control(&recv_c->fid, FI_GETWAIT, &fd));
	FDT_ASSERT(fd >= 0, "FI_GETWAIT fd %d", fd);
#else	/* upstream 1.17's rxm counters answer FI_GETWAIT with -FI_ENOSYS */
	if (fi_control(&recv_c->fid, FI_GETWAIT, &fd))
		fd = -1;
#endif

	/* 4 sends and one inject; the waits drive progress themselves */
	for (i = 0; i < 5; i++)
		RDMT_POST(fi_trecv(B.ep, rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC, 1, 0, &rctx[i]));
	for (i = 0; i < 4; i++)
		RDMT_POST(fi_tsend(A.ep, sbuf, 100, NULL, a2b, 1, &sctx[i]));
	RDMT_POST(fi_tinject(A.ep, sbuf, 8, a2b, 1));
	/* the fd turns readable once the receives have been counted: drive
	 * progress through the other endpoint's counter meanwhile */
	FDT_OK(fi_cntr_wait(send_c, 5, RDMT_WAIT_MS));
	if (fd >= 0) {
		long end = rdmt_now_ms() + RDMT_WAIT_MS;

		pfd.fd = fd;
		pfd.events = POLLIN;
		while (poll(&pfd, 1, 0) != 1) {
			(void)fi_cntr_read(send_c);
			FDT_ASSERT(rdmt_now_ms() < end,
				   "the FI_WAIT_FD counter's fd never became readable");
		}
	}
	FDT_OK(fi_cntr_wait(recv_c, 5, RDMT_WAIT_MS));
	FDT_EXPECT(fi_cntr_read(recv_c), 5);
	FDT_EXPECT(fi_cntr_read(send_c), 5);
	FDT_EXPECT(fi_cntr_readerr(send_c), 0);
	FDT_EXPECT(fi_cntr_readerr(recv_c), 0);
	FDT_EXPECT(fi_cntr_read(write_c), 0);
	FDT_EXPECT(fi_cntr_read(read_c), 0);
	drain(A.cq, 4);
	drain(B.cq, 5);

	/* a truncated receive is an error event */
	RDMT_POST(fi_trecv(B.ep, rbuf, 10, NULL, FI_ADDR_UNSPEC, 2, 0, &rctx[0]));
	RDMT_POST(fi_tsend(A.ep, sbuf, 100, NULL, a2b, 2, &sctx[0]));
	rdmt_wait(B.cq, &c);
	FDT_ASSERT(c.err == FI_ETRUNC, "truncation: err %d", c.err);
	drain(A.cq, 1);
	FDT_EXPECT(fi_cntr_readerr(recv_c), 1);
	FDT_EXPECT(fi_cntr_read(recv_c), 5);

	/* RMA: 3 writes, 2 reads */
	for (i = 0; i < 3; i++)
		RDMT_POST(fi_write(A.ep, sbuf, 512, NULL, a2b, raddr + 512 * i, rkey, &sctx[i]));
	for (i = 0; i < 2; i++)
		RDMT_POST(fi_read(A.ep, rbuf, 512, NULL, a2b, raddr + 4096 * i, rkey, &sctx[3 + i]));
	FDT_OK(fi_cntr_wait(write_c, 3, RDMT_WAIT_MS));
	FDT_OK(fi_cntr_wait(read_c, 2, RDMT_WAIT_MS));
	FDT_EXPECT(fi_cntr_read(write_c), 3);
	FDT_EXPECT(fi_cntr_read(read_c), 2);
	FDT_EXPECT(fi_cntr_read(send_c), 6);	/* RMA is not a send */
	drain(A.cq, 5);
	if (rma_event) {
		FDT_OK(fi_cntr_wait(rw_c, 5, RDMT_WAIT_MS));
		FDT_EXPECT(fi_cntr_read(rw_c), 5);
	} else {
		printf("note: no FI_RMA_EVENT, remote RMA counters not checked\n");
	}

	/* the user's own updates */
	FDT_OK(fi_cntr_add(send_c, 10));
	FDT_EXPECT(fi_cntr_read(send_c), 16);
	FDT_OK(fi_cntr_set(send_c, 3));
	FDT_EXPECT(fi_cntr_read(send_c), 3);
	FDT_OK(fi_cntr_wait(send_c, 3, 0));
	FDT_OK(fi_cntr_adderr(send_c, 2));
	FDT_EXPECT(fi_cntr_readerr(send_c), 2);
	FDT_OK(fi_cntr_seterr(send_c, 7));
	FDT_EXPECT(fi_cntr_readerr(send_c), 7);
	FDT_EXPECT(fi_cntr_wait(send_c, 4, 50), -FI_ETIMEDOUT);

	/* bound counters stay open */
	FDT_EXPECT(fi_close(&send_c->fid), -FI_EBUSY);
	FDT_OK(fi_close(&mr->fid));
	rdmt_ep_close(&A);
	rdmt_ep_close(&B);
	FDT_OK(fi_close(&send_c->fid));
	FDT_OK(fi_close(&recv_c->fid));
	FDT_OK(fi_close(&write_c->fid));
	FDT_OK(fi_close(&read_c->fid));
	FDT_OK(fi_close(&rw_c->fid));
	rdmt_dom_close(&dom);
	return rdmt_pass("rdm_cntr");
}
