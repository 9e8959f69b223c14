/* Soak: mixed MSG / RMA / rstream traffic between two processes for a
 * fixed time, with nothing lost and memory flat.
 *
 *   test_soak SECONDS        (FD_SOAK_SECONDS in the environment wins)
 *
 * One MSG connection and one rstream connection between the same two
 * processes. Each iteration of the client:
 *   1. RMA-writes a patterned block into the server's region, then sends a
 *      message naming the iteration; the server checks both (RC: the write
 *      lands before the send behind it) and answers with its own pattern,
 *      which the client checks;
 *   2. RMA-reads the region back and checks it;
 *   3. streams a chunk over rstream (position-keyed bytes, varying size),
 *      which the server checks and answers with a chunk of its own stream.
 * The last message says "stop" and carries the client's totals; the server
 * compares them with its own (nothing lost, nothing extra). Each side
 * samples its resident set size after a warm-up and at the end: growth
 * beyond RSS_SLACK_KB fails the test (a leak per operation would show up
 * as megabytes over thousands of iterations). */
#define _GNU_SOURCE
#include <unistd.h>

#include "flt.h"
#include "test_rstream_common.h"

#define LIMIT_MS 30000
#define BLOCK 8192
#define MAX_CHUNK 49152
#define RSS_SLACK_KB 1024
#define WARMUP_ITERS 50

static int seconds = 20;
static struct fi_info *msg_hints, *rst_hints_;

struct wire_msg {
	uint64_t iter;
	uint64_t stop;
	uint64_t msgs, rma_bytes, stream_bytes;	/* the client's totals at stop */
	uint8_t pad[64];
};

struct totals {
	uint64_t msgs, rma_bytes, stream_bytes;
};

static long rss_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	FDT_ASSERT(f, "/proc/self/status");
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			kb = atol(line + 6);
	fclose(f);
	FDT_ASSERT(kb > 0, "no VmRSS");
	return kb;
}

struct conn {
	struct fdt_side msg, rst;
	uint8_t *region;	/* server: RMA target; client: write source */
	uint8_t *back;		/* client: read-back target */
	struct fid_mr *region_mr, *back_mr;
	struct fdt_region peer;
	struct flt_bufs b;
	uint64_t rx_pos, tx_pos;	/* rstream positions */
};

static void wait_tx(struct fdt_side *s, const char *what)
{
	struct fi_cq_data_entry ce;
	struct fi_cq_err_entry err = { 0 };

	FDT_ASSERT(fdt_wait_cq_ms(s->txcq, &ce, &err, LIMIT_MS) == 1, "%s: %s", what,
		   fi_strerror(err.err));
}

static struct wire_msg *wait_rx(struct conn *c, int *slot)
{
	struct fi_cq_data_entry ce;
	struct fi_cq_err_entry err = { 0 };

	FDT_ASSERT(fdt_wait_cq_ms(c->msg.rxcq, &ce, &err, LIMIT_MS) == 1, "receive: %s",
		   fi_strerror(err.err));
	*slot = (int)(uintptr_t)ce.op_context - 1;
	FDT_ASSERT(*slot >= 0 && *slot < FLT_MSG_SLOTS && ce.len == sizeof(struct wire_msg),
		   "receive: context %p, %zu bytes", ce.op_context, ce.len);
	return (struct wire_msg *)c->b.rx[*slot];
}

static void repost(struct conn *c, int slot)
{
	FDT_OK(fi_recv(c->msg.ep, c->b.rx[slot], FLT_MSG_SIZE, fi_mr_desc(c->b.rx_mr), 0,
		       (void *)(uintptr_t)(slot + 1)));
}

static void send_msg(struct conn *c, const struct wire_msg *m)
{
	memcpy(c->b.tx[0], m, sizeof(*m));
	FDT_OK(fi_send(c->msg.ep, c->b.tx[0], sizeof(*m), fi_mr_desc(c->b.tx_mr), 0, NULL));
	wait_tx(&c->msg, "send");
}

static size_t chunk_of(uint64_t iter)
{
	return 1 + (size_t)((iter * 7919) % MAX_CHUNK);
}

static void stream_in(struct conn *c, size_t n, uint64_t seed)
{
	static uint8_t in[MAX_CHUNK], want[MAX_CHUNK];

	rst_recv_all(c->rst.ep, in, n);
	rst_gen(want, c->rx_pos, n, seed);
	FDT_ASSERT(!memcmp(in, want, n), "stream bytes at %llu..+%zu differ",
		   (unsigned long long)c->rx_pos, n);
	c->rx_pos += n;
}

static void stream_out(struct conn *c, size_t n, uint64_t seed)
{
	static uint8_t out[MAX_CHUNK];

	rst_gen(out, c->tx_pos, n, seed);
	rst_send_all(c->rst.ep, out, n);
	c->tx_pos += n;
}

static int role_client(const char *ports, void *arg)
{
	static struct conn c;
	char mport[16], rport[16];
	struct totals t = { 0 };
	uint8_t reply[64];
	long t0, rss0 = 0, rss1, end;
	uint64_t it;

	(void)arg;
	FDT_ASSERT(sscanf(ports, "%15s %15s", mport, rport) == 2, "ports '%s'", ports);
	FDT_OK(flt_client_init(&c.msg, msg_hints, fdt_addr(), mport));
	flt_client_connect(&c.msg, FLT_MSG, &c.b);
	FDT_OK(flt_client_init(&c.rst, rst_hints_, fdt_addr(), rport));
	flt_client_connect(&c.rst, FLT_RSTREAM, NULL);
	/* the server's region arrives as the first message */
	{
		int slot;
		struct wire_msg *m = wait_rx(&c, &slot);

		memcpy(reply, m->pad, FDT_REGION_WIRE);
		fdt_region_unpack(&c.peer, reply);
		repost(&c, slot);
	}
	c.region = malloc(BLOCK);
	c.back = malloc(BLOCK);
	FDT_ASSERT(c.region && c.back, "malloc");
	FDT_OK(fi_mr_reg(c.msg.domain, c.region, BLOCK, FI_WRITE, 0, 0, 0, &c.region_mr, NULL));
	FDT_OK(fi_mr_reg(c.msg.domain, c.back, BLOCK, FI_READ, 0, 0, 0, &c.back_mr, NULL));

	t0 = flt_now_ms();
	end = t0 + (long)seconds * 1000;
	for (it = 0;; it++) {
		struct wire_msg m = { .iter = it };
		struct wire_msg *r;
		size_t len = 64 + (size_t)(it * 131 % (BLOCK - 64));
		int slot;

		if (it == WARMUP_ITERS)
			rss0 = rss_kb();
		m.stop = flt_now_ms() >= end && it > WARMUP_ITERS;
		if (m.stop) {
			m.msgs = t.msgs + 1;
			m.rma_bytes = t.rma_bytes;
			m.stream_bytes = t.stream_bytes;
			send_msg(&c, &m);
			break;
		}
		/* 1: write, then the message behind it */
		fdt_fill(c.region, len, (uint32_t)it);
		FDT_OK(fi_write(c.msg.ep, c.region, len, fi_mr_desc(c.region_mr), 0,
				c.peer.addr, c.peer.key, NULL));
		wait_tx(&c.msg, "write");
		m.rma_bytes = len;
		send_msg(&c, &m);
		t.msgs++;
		t.rma_bytes += len;
		r = wait_rx(&c, &slot);
		FDT_ASSERT(r->iter == it && !r->stop &&
			   fdt_check(r->pad, sizeof(r->pad), ~(uint32_t)it),
			   "answer to %llu: iteration %llu or contents wrong",
			   (unsigned long long)it, (unsigned long long)r->iter);
		repost(&c, slot);
		/* 2: read it back */
		memset(c.back, 0, len);
		FDT_OK(fi_read(c.msg.ep, c.back, len, fi_mr_desc(c.back_mr), 0,
			       c.peer.addr, c.peer.key, NULL));
		wait_tx(&c.msg, "read");
		FDT_ASSERT(fdt_check(c.back, len, (uint32_t)it), "read-back %llu wrong",
			   (unsigned long long)it);
		/* 3: a chunk each way over the stream */
		stream_out(&c, chunk_of(it), 1);
		stream_in(&c, chunk_of(it + 1), 2);
		t.stream_bytes += chunk_of(it) + chunk_of(it + 1);
	}
	rss1 = rss_kb();
	printf("client: %llu iterations in %ld ms: %llu messages, %llu RMA bytes written "
	       "and read back, %llu stream bytes; RSS %ld -> %ld KiB\n",
	       (unsigned long long)it, flt_now_ms() - t0, (unsigned long long)t.msgs + 1,
	       (unsigned long long)t.rma_bytes, (unsigned long long)t.stream_bytes, rss0, rss1);
	FDT_ASSERT(rss1 - rss0 <= RSS_SLACK_KB, "client RSS grew by %ld KiB", rss1 - rss0);
	fdt_wait_shutdown(&c.msg);
	FDT_OK(fi_close(&c.region_mr->fid));
	FDT_OK(fi_close(&c.back_mr->fid));
	fdt_close_conn(&c.msg);
	flt_bufs_close(&c.b);
	fdt_close_side(&c.msg);
	fdt_close_side(&c.rst);
	free(c.region);
	free(c.back);
	return 0;
}

static void server(struct flt_child *cli)
{
	static struct conn c;
	struct fdt_side ml, rl;
	char mport[16], rport[16], both[40];
	struct totals t = { 0 };
	long rss0 = 0, rss1;
	uint64_t it;

	flt_listen(&ml, msg_hints, mport, sizeof(mport));
	flt_listen(&rl, rst_hints_, rport, sizeof(rport));
	snprintf(both, sizeof(both), "%s %s", mport, rport);
	flt_go(cli, both);
	flt_accept(&ml, FLT_MSG, &c.b);
	c.msg = ml;
	flt_accept(&rl, FLT_RSTREAM, NULL);
	c.rst = rl;
	c.region = calloc(1, BLOCK);
	FDT_ASSERT(c.region, "calloc");
	FDT_OK(fi_mr_reg(c.msg.domain, c.region, BLOCK, FI_REMOTE_WRITE | FI_REMOTE_READ,
			 0, 0, 0, &c.region_mr, NULL));
	{
		struct wire_msg m = { 0 };

		fdt_region_pack(m.pad, c.region, BLOCK, c.region_mr);
		send_msg(&c, &m);
	}
	for (it = 0;; it++) {
		struct wire_msg *m, a = { .iter = it };
		int slot;

		if (it == WARMUP_ITERS)
			rss0 = rss_kb();
		m = wait_rx(&c, &slot);
		FDT_ASSERT(m->iter == it, "message %llu arrived as %llu: lost or reordered",
			   (unsigned long long)it, (unsigned long long)m->iter);
		t.msgs++;
		if (m->stop) {
			FDT_ASSERT(m->msgs == t.msgs && m->rma_bytes == t.rma_bytes &&
				   m->stream_bytes == t.stream_bytes,
				   "totals differ: client %llu msgs %llu rma %llu stream, "
				   "server %llu / %llu / %llu",
				   (unsigned long long)m->msgs, (unsigned long long)m->rma_bytes,
				   (unsigned long long)m->stream_bytes, (unsigned long long)t.msgs,
				   (unsigned long long)t.rma_bytes,
				   (unsigned long long)t.stream_bytes);
			break;
		}
		FDT_ASSERT(fdt_check(c.region, m->rma_bytes, (uint32_t)it),
			   "RMA write %llu (%llu bytes) not in the region before its message",
			   (unsigned long long)it, (unsigned long long)m->rma_bytes);
		t.rma_bytes += m->rma_bytes;
		repost(&c, slot);
		fdt_fill(a.pad, sizeof(a.pad), ~(uint32_t)it);
		send_msg(&c, &a);
		stream_in(&c, chunk_of(it), 1);
		stream_out(&c, chunk_of(it + 1), 2);
		t.stream_bytes += chunk_of(it) + chunk_of(it + 1);
	}
	rss1 = rss_kb();
	printf("server: %llu iterations checked, nothing lost; RSS %ld -> %ld KiB\n",
	       (unsigned long long)it, rss0, rss1);
	FDT_ASSERT(rss1 - rss0 <= RSS_SLACK_KB, "server RSS grew by %ld KiB", rss1 - rss0);
	FDT_OK(fi_shutdown(c.msg.ep, 0));
	FDT_ASSERT(flt_reap(cli, LIMIT_MS) == 0, "client failed");
	FDT_OK(fi_close(&c.region_mr->fid));
	fdt_close_conn(&c.msg);
	flt_bufs_close(&c.b);
	fdt_close_side(&c.msg);
	fdt_close_side(&c.rst);
	free(c.region);
}

int main(int argc, char **argv)
{
	struct flt_child cli;
	struct flt_res before;
	long t0 = flt_now_ms();

	if (argc > 1)
		seconds = atoi(argv[1]);
	if (getenv("FD_SOAK_SECONDS"))
		seconds = atoi(getenv("FD_SOAK_SECONDS"));
	FDT_ASSERT(seconds > 0, "seconds must be positive");
	fdt_addr();
	setvbuf(stdout, NULL, _IOLBF, 0);
	msg_hints = fdt_hints();
	msg_hints->caps |= FI_RMA;
	rst_hints_ = rst_hints();
	flt_res_read(&before);
	flt_spawn(&cli, role_client, NULL);
	server(&cli);
	flt_res_expect(&before, 10000, "soak");
	fi_freeinfo(msg_hints);
	fi_freeinfo(rst_hints_);
	printf("soak: %d s of traffic, pass in %ld ms\n", seconds, flt_now_ms() - t0);
	return 0;
}
