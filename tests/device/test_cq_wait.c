/* CQ formats and waiting: each of CONTEXT, MSG, DATA and TAGGED delivers
 * the fields it has; fi_cq_readfrom reports FI_ADDR_NOTAVAIL on a connected
 * endpoint; fi_cq_sread times out with -FI_EAGAIN on an empty CQ and wakes
 * for a completion; the FI_GETWAIT fd works with fi_trywait + poll();
 * fi_cq_signal wakes a blocked reader. */
#include <poll.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "fdt.h"

static uint8_t rbuf[256], sbuf[256];
static struct fid_mr *rmr, *smr;

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

static void pre(struct fdt_side *s, void *arg)
{
	(void)arg;
	rmr = fdt_reg(s, rbuf, sizeof(rbuf), FI_RECV);
	smr = fdt_reg(s, sbuf, sizeof(sbuf), FI_SEND);
	FDT_OK(fi_recv(s->ep, rbuf, sizeof(rbuf), fi_mr_desc(rmr), 0, rbuf));
}

static void *signal_later(void *arg)
{
	usleep(300 * 1000);
	fi_cq_signal(arg);
	return NULL;
}

/* Server: for each format, receive one senddata and check the entry. */
static int server(struct fdt_side *s, void *arg)
{
	enum fi_cq_format fmt = *(enum fi_cq_format *)arg;
	union {
		struct fi_cq_entry ctx;
		struct fi_cq_msg_entry msg;
		struct fi_cq_data_entry data;
		struct fi_cq_tagged_entry tagged;
	} e[2];
	fi_addr_t from = 0;
	struct timespec t0;
	ssize_t n;

	s->cq_format = fmt;
	fdt_server_accept(s, NULL, NULL, pre, NULL);
	/* an empty CQ: sread times out */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	FDT_EXPECT(fi_cq_sread(s->txcq, e, 1, NULL, 200), -FI_EAGAIN);
	FDT_ASSERT(ms_since(&t0) >= 190, "sread returned after %ld ms", ms_since(&t0));
	/* fi_cq_signal wakes a reader blocked without a timeout */
	{
		pthread_t th;

		pthread_create(&th, NULL, signal_later, s->txcq);
		FDT_EXPECT(fi_cq_sread(s->txcq, e, 1, NULL, -1), -FI_EAGAIN);
		pthread_join(th, NULL);
	}
	/* the message: sread blocks until it arrives, readfrom gives the source */
	memset(e, 0xee, sizeof(e));
	n = fi_cq_sreadfrom(s->rxcq, e, 2, &from, NULL, 10000);
	FDT_ASSERT(n == 1, "sreadfrom = %zd", n);
	FDT_ASSERT(from == FI_ADDR_NOTAVAIL, "src_addr %llu", (unsigned long long)from);
	FDT_ASSERT(e[0].ctx.op_context == rbuf, "context");
	if (fmt != FI_CQ_FORMAT_CONTEXT) {
		FDT_ASSERT(e[0].msg.len == 100, "len %zu", e[0].msg.len);
		FDT_ASSERT(e[0].msg.flags == (FI_MSG | FI_RECV | FI_REMOTE_CQ_DATA), "flags 0x%llx",
			   (unsigned long long)e[0].msg.flags);
	}
	if (fmt == FI_CQ_FORMAT_DATA || fmt == FI_CQ_FORMAT_TAGGED) {
		FDT_ASSERT(e[0].data.data == 0xabcdef12u, "data 0x%llx",
			   (unsigned long long)e[0].data.data);
		FDT_ASSERT(e[0].data.buf == NULL, "buf");
	}
	if (fmt == FI_CQ_FORMAT_TAGGED)
		FDT_ASSERT(e[0].tagged.tag == 0, "tag");
	/* the format's size is all that was written: entry 1 is untouched */
	{
		size_t sz = fmt == FI_CQ_FORMAT_CONTEXT ? sizeof(struct fi_cq_entry) :
			    fmt == FI_CQ_FORMAT_MSG ? sizeof(struct fi_cq_msg_entry) :
			    fmt == FI_CQ_FORMAT_DATA ? sizeof(struct fi_cq_data_entry) :
			    sizeof(struct fi_cq_tagged_entry);
		uint8_t *raw = (uint8_t *)e;

		FDT_ASSERT(raw[sz] == 0xee && raw[2 * sz - 1] == 0xee, "wrote past one entry");
	}
	FDT_ASSERT(fdt_check(rbuf, 100, 5), "payload");
	/* reply, so the client can test its wait fd */
	fdt_fill(sbuf, 64, 6);
	FDT_OK(fi_send(s->ep, sbuf, 64, fi_mr_desc(smr), 0, sbuf));
	FDT_ASSERT(fdt_wait_cq(s->txcq, e, NULL) == 1, "send completion");
	{
		uint8_t ev[sizeof(struct fi_eq_cm_entry) + 64];

		fdt_wait_event(s, FI_SHUTDOWN, ev, sizeof(ev));
	}
	FDT_OK(fi_close(&rmr->fid));
	FDT_OK(fi_close(&smr->fid));
	fdt_close_side(s);
	return 0;
}

static int client(struct fdt_side *s, void *arg)
{
	struct fi_cq_tagged_entry e;
	struct pollfd pfd;
	struct fid *fids[1];
	int fd = -1, rc;

	s->cq_format = *(enum fi_cq_format *)arg;
	fdt_client_connect(s, NULL, NULL, pre, NULL);
	FDT_OK(fi_control(&s->rxcq->fid, FI_GETWAIT, &fd));
	FDT_ASSERT(fd >= 0, "wait fd");
	fids[0] = &s->rxcq->fid;
	fdt_fill(sbuf, 100, 5);
	usleep(100 * 1000);	/* let the server block in sread first */
	FDT_OK(fi_senddata(s->ep, sbuf, 100, fi_mr_desc(smr), 0xabcdef12u, 0, sbuf));
	FDT_ASSERT(fdt_wait_cq(s->txcq, &e, NULL) == 1, "send completion");
	/* wait for the reply the way an event loop would */
	for (;;) {
		rc = fi_trywait(s->fabric, fids, 1);
		if (rc == -FI_EAGAIN) {
			if (fi_cq_read(s->rxcq, &e, 1) == 1)
				break;
			continue;
		}
		FDT_OK(rc);
		pfd.fd = fd;
		pfd.events = POLLIN;
		FDT_ASSERT(poll(&pfd, 1, 10000) == 1, "wait fd never became readable");
	}
	FDT_ASSERT(e.op_context == rbuf && fdt_check(rbuf, 64, 6), "reply");
	FDT_OK(fi_shutdown(s->ep, 0));
	FDT_OK(fi_close(&rmr->fid));
	FDT_OK(fi_close(&smr->fid));
	fdt_close_side(s);
	return 0;
}

int main(void)
{
	static const enum fi_cq_format fmts[] = {
		FI_CQ_FORMAT_CONTEXT, FI_CQ_FORMAT_MSG, FI_CQ_FORMAT_DATA, FI_CQ_FORMAT_TAGGED,
	};
	struct fi_info *hints = fdt_hints();
	int rc = 0;

	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]) && !rc; i++) {
		enum fi_cq_format f = fmts[i];

		rc = fdt_run_pair_fresh(hints, server, client, &f);
		printf("format %d: %s\n", (int)f, rc ? "FAILED" : "ok");
	}
	fi_freeinfo(hints);
	return rc;
}
