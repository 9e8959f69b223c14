/* Receives and registrations of several shapes, and what a blocking CQ read
 * and an error entry carry (issue 16):
 *  - fi_recvv (3 buffers) and fi_recvmsg (2 buffers, FI_COMPLETION) each
 *    receive one 64-byte message scattered in order: every byte checked,
 *    the entries' context and length too;
 *  - the receive buffer is registered with fi_mr_regv (one range), the
 *    RMA target with fi_mr_regattr (access, offset and requested_key as a
 *    FI_MR_VIRT_ADDR | FI_MR_PROV_KEY domain takes them): the peer's
 *    fi_write lands there; fi_mr_regv of two ranges is -FI_ENOSYS;
 *  - FI_CQ_COND_THRESHOLD: the receive CQ is opened with it, and
 *    fi_cq_sread with threshold 3 returns the three messages the client
 *    sends 100 ms apart in one call (any completion would wake a plain
 *    sread after the first); with nothing coming it times out with
 *    -FI_EAGAIN, and with fewer than the threshold by the timeout it
 *    returns what it has;
 *  - vendor_err: a message too long for its receive gives FI_ETRUNC, and
 *    fi_cq_readerr hands the device's vendor_err over as 4 bytes of
 *    err_data (into the caller's buffer), which fi_cq_strerror prints. */
#include <time.h>
#include <unistd.h>

#include "fdt.h"

#define MSG_LEN 64
#define RMA_LEN 128

static uint8_t rbuf[4096];	/* receives, registered with fi_mr_regv */
static uint8_t wbuf[4096];	/* RMA target, registered with fi_mr_regattr */
static uint8_t sbuf[4096];
static struct fid_mr *rmr, *wmr, *smr;

/* The receives posted before the connection, in queue order:
 * msg1 -> recvv of 10 + 20 + 34 bytes, msg2 -> recvmsg of 16 + 48,
 * msg3 and msg4 -> plain receives, msg5 (64 bytes) -> an 8-byte receive. */
#define R1 (rbuf)
#define R2 (rbuf + 256)
#define R3 (rbuf + 512)
#define R4 (rbuf + 768)
#define R5 (rbuf + 1024)

static void server_open(struct fdt_side *s, struct fi_info *info)
{
	struct fi_cq_attr ca = { .size = 64, .format = FI_CQ_FORMAT_MSG,
				 .wait_obj = FI_WAIT_FD,
				 .wait_cond = FI_CQ_COND_THRESHOLD };
	struct iovec one = { rbuf, sizeof(rbuf) }, two[2] = {
		{ rbuf, 2048 }, { rbuf + 2048, 2048 } };
	struct iovec wiov = { wbuf, sizeof(wbuf) };
	struct fi_mr_attr wattr = {
		.mr_iov = &wiov, .iov_count = 1,
		.access = FI_REMOTE_WRITE | FI_REMOTE_READ,
		.offset = 0, .requested_key = 0x1234,
	};
	struct fid_mr *mr2 = NULL;

	FDT_OK(fi_domain(s->fabric, info, &s->domain, NULL));
	FDT_OK(fi_cq_open(s->domain, &ca, &s->rxcq, NULL));
	ca.wait_cond = FI_CQ_COND_NONE;
	FDT_OK(fi_cq_open(s->domain, &ca, &s->txcq, NULL));
	FDT_OK(fi_endpoint(s->domain, info, &s->ep, NULL));
	FDT_OK(fi_ep_bind(s->ep, &s->eq->fid, 0));
	FDT_OK(fi_ep_bind(s->ep, &s->txcq->fid, FI_TRANSMIT));
	FDT_OK(fi_ep_bind(s->ep, &s->rxcq->fid, FI_RECV));
	FDT_OK(fi_enable(s->ep));

	FDT_EXPECT(fi_mr_regv(s->domain, two, 2, FI_RECV, 0, 0, 0, &mr2, NULL), -FI_ENOSYS);
	FDT_ASSERT(mr2 == NULL, "a failed fi_mr_regv returned a region");
	FDT_OK(fi_mr_regv(s->domain, &one, 1, FI_RECV, 0, 0, 0, &rmr, NULL));
	FDT_OK(fi_mr_regattr(s->domain, &wattr, 0, &wmr));
	smr = fdt_reg(s, sbuf, sizeof(sbuf), FI_SEND);
}

static void server_post(struct fdt_side *s)
{
	void *d = fi_mr_desc(rmr);
	struct iovec v1[3] = { { R1, 10 }, { R1 + 10, 20 }, { R1 + 30, 34 } };
	void *d1[3] = { d, d, d };
	struct iovec v2[2] = { { R2, 16 }, { R2 + 16, 48 } };
	void *d2[2] = { d, d };
	struct fi_msg m2 = { .msg_iov = v2, .desc = d2, .iov_count = 2,
			     .context = R2 };

	FDT_OK(fi_recvv(s->ep, v1, d1, 3, 0, R1));
	FDT_OK(fi_recvmsg(s->ep, &m2, FI_COMPLETION));
	FDT_OK(fi_recv(s->ep, R3, MSG_LEN, d, 0, R3));
	FDT_OK(fi_recv(s->ep, R4, MSG_LEN, d, 0, R4));
	FDT_OK(fi_recv(s->ep, R5, 8, d, 0, R5));
}

static void server_go(struct fdt_side *s)
{
	struct fi_cq_msg_entry e;

	sbuf[0] = 'g';
	FDT_OK(fi_send(s->ep, sbuf, 1, fi_mr_desc(smr), 0, sbuf));
	FDT_ASSERT(fdt_wait_cq(s->txcq, &e, NULL) == 1, "go send");
}

static int server(struct fdt_side *s, void *arg)
{
	uint8_t buf[sizeof(struct fi_eq_cm_entry) + 64];
	struct fi_eq_cm_entry *cm = (struct fi_eq_cm_entry *)buf;
	uint8_t region[FDT_REGION_WIRE];
	struct fi_cq_msg_entry e[4];
	struct fi_cq_err_entry err;
	uint32_t vendor_err[2] = { 0xdeadbeef, 0xdeadbeef };
	size_t thr;
	ssize_t n;
	char text[128];

	(void)arg;
	fdt_wait_event(s, FI_CONNREQ, buf, sizeof(buf));
	server_open(s, cm->info);
	fi_freeinfo(cm->info);
	server_post(s);
	fdt_region_pack(region, wbuf, RMA_LEN, wmr);
	FDT_OK(fi_accept(s->ep, region, sizeof(region)));
	fdt_wait_event(s, FI_CONNECTED, buf, sizeof(buf));

	/* msg1..msg3 come 100 ms apart: one call takes all three */
	thr = 3;
	n = fi_cq_sread(s->rxcq, e, 4, &thr, 10000);
	FDT_ASSERT(n == 3, "sread with threshold 3 returned %zd", n);
	FDT_ASSERT(e[0].op_context == R1 && e[0].len == MSG_LEN &&
		   e[0].flags == (FI_MSG | FI_RECV), "recvv entry: ctx %p len %zu",
		   e[0].op_context, e[0].len);
	FDT_ASSERT(e[1].op_context == R2 && e[1].len == MSG_LEN, "recvmsg entry: ctx %p len %zu",
		   e[1].op_context, e[1].len);
	FDT_ASSERT(e[2].op_context == R3 && e[2].len == MSG_LEN, "third entry");
	FDT_ASSERT(fdt_check(R1, MSG_LEN, 1), "fi_recvv scattered msg1 wrongly");
	FDT_ASSERT(fdt_check(R2, MSG_LEN, 2), "fi_recvmsg scattered msg2 wrongly");
	FDT_ASSERT(fdt_check(R3, MSG_LEN, 3), "msg3");
	/* the write came before msg3 on the same connection */
	FDT_ASSERT(fdt_check(wbuf, RMA_LEN, 7), "fi_write into the fi_mr_regattr region");
	printf("recvv 3 iovs, recvmsg 2 iovs, regv and regattr: data checked\n");

	/* nothing is coming: the timeout */
	thr = 2;
	FDT_EXPECT(fi_cq_sread(s->rxcq, e, 4, &thr, 200), -FI_EAGAIN);
	/* msg4 alone: fewer than the threshold by the timeout, returned */
	server_go(s);
	n = fi_cq_sread(s->rxcq, e, 4, &thr, 1500);
	FDT_ASSERT(n == 1 && e[0].op_context == R4, "sread at timeout: %zd", n);
	FDT_ASSERT(fdt_check(R4, MSG_LEN, 4), "msg4");
	printf("FI_CQ_COND_THRESHOLD: 3 of 3, timeout, 1 of 2 at the timeout\n");

	/* msg5 into 8 bytes: FI_ETRUNC with the vendor_err */
	server_go(s);
	thr = 1;
	n = fi_cq_sread(s->rxcq, e, 1, &thr, 10000);
	FDT_EXPECT(n, -FI_EAVAIL);
	memset(&err, 0, sizeof(err));
	err.err_data = vendor_err;
	err.err_data_size = sizeof(vendor_err);
	FDT_ASSERT(fi_cq_readerr(s->rxcq, &err, 0) == 1, "readerr");
	FDT_ASSERT(err.err == FI_ETRUNC && err.op_context == R5, "err %d ctx %p",
		   err.err, err.op_context);
	FDT_ASSERT(err.err_data == vendor_err && err.err_data_size == sizeof(uint32_t),
		   "err_data %p size %zu: no vendor_err", err.err_data, err.err_data_size);
	FDT_ASSERT(vendor_err[0] != 0xdeadbeef && vendor_err[1] == 0xdeadbeef,
		   "vendor_err not written, or more than 4 bytes");
	fi_cq_strerror(s->rxcq, err.prov_errno, err.err_data, text, sizeof(text));
	FDT_ASSERT(strstr(text, "vendor_err") != NULL, "fi_cq_strerror: %s", text);
	printf("truncation: prov_errno %d, vendor_err 0x%x: \"%s\"\n",
	       err.prov_errno, vendor_err[0], text);

	fi_close(&rmr->fid);
	fi_close(&wmr->fid);
	fi_close(&smr->fid);
	fdt_close_side(s);
	return 0;
}

static void client_pre(struct fdt_side *s, void *arg)
{
	(void)arg;
	rmr = fdt_reg(s, rbuf, sizeof(rbuf), FI_RECV);
	smr = fdt_reg(s, sbuf, sizeof(sbuf), FI_SEND | FI_WRITE);
	FDT_OK(fi_recv(s->ep, rbuf, 16, fi_mr_desc(rmr), 0, rbuf));
	FDT_OK(fi_recv(s->ep, rbuf + 16, 16, fi_mr_desc(rmr), 0, rbuf + 16));
}

static void client_send(struct fdt_side *s, uint32_t seed)
{
	struct fi_cq_data_entry e;

	fdt_fill(sbuf, MSG_LEN, seed);
	FDT_OK(fi_send(s->ep, sbuf, MSG_LEN, fi_mr_desc(smr), 0, sbuf));
	FDT_ASSERT(fdt_wait_cq(s->txcq, &e, NULL) == 1, "send %u", seed);
}

static void client_wait_go(struct fdt_side *s)
{
	struct fi_cq_data_entry e;

	FDT_ASSERT(fdt_wait_cq(s->rxcq, &e, NULL) == 1, "go");
}

static int client(struct fdt_side *s, void *arg)
{
	uint8_t region_wire[FDT_REGION_WIRE];
	struct fdt_region r;
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry err;

	(void)arg;
	FDT_ASSERT(fdt_client_connect_reply(s, NULL, region_wire, sizeof(region_wire),
					    client_pre, NULL) == FDT_REGION_WIRE,
		   "region");
	fdt_region_unpack(&r, region_wire);
	client_send(s, 1);
	usleep(100 * 1000);
	client_send(s, 2);
	usleep(100 * 1000);
	fdt_fill(sbuf + 1024, RMA_LEN, 7);
	FDT_OK(fi_write(s->ep, sbuf + 1024, RMA_LEN, fi_mr_desc(smr), 0, r.addr,
			r.key, sbuf + 1024));
	FDT_ASSERT(fdt_wait_cq(s->txcq, &e, NULL) == 1, "write");
	client_send(s, 3);
	client_wait_go(s);
	client_send(s, 4);
	client_wait_go(s);
	/* msg5: too long for its receive; the send may fail or not */
	fdt_fill(sbuf, MSG_LEN, 5);
	FDT_OK(fi_send(s->ep, sbuf, MSG_LEN, fi_mr_desc(smr), 0, sbuf));
	(void)fdt_wait_cq(s->txcq, &e, &err);
	fi_close(&rmr->fid);
	fi_close(&smr->fid);
	fdt_close_side(s);
	return 0;
}

int main(void)
{
	struct fi_info *hints = fdt_hints();

	hints->caps = FI_MSG | FI_RMA;
	hints->rx_attr->iov_limit = 4;
	return fdt_run_pair(hints, server, client, NULL);
}
