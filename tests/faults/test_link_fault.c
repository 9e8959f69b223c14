/* Link faults over a real wire: two VMs (tests/rxe/run2), VM0 the server,
 * VM1 the client, MSG endpoints on each VM's rxe0.
 *
 *   tests/rxe/run2 -- test_link_fault ::: test_link_fault
 *
 * Phase A, a short outage: the client ping-pongs checked messages; after
 * a few, the server has the host cut the cable (qemu `set_link n0 off` on
 * both ends, through run2's link control in FD_RXE_RDV) for SHORT_MS, less
 * than the QP's retry window (retry count 7 x the local ACK timeout rdma_cm
 * sets), then restores it. Asserted: the connection survives, every
 * message arrives once, in order and intact.
 * Phase B, a long outage: the cable stays cut, with a send outstanding on
 * both sides, until both have failed. Asserted: each side gets an error
 * completion (retries exhausted) within ERR_MS of posting it (more than
 * 20 s under two TCG guests, measured); then the cable is restored and the
 * two make a NEW connection and exchange checked messages over it. */
#define _GNU_SOURCE
#include <sys/stat.h>
#include <unistd.h>

#include "flt.h"

#define SHORT_MS 2000
#define ERR_MS 45000
#define LIMIT_MS 90000
#define PHASE_A_AT 10	/* round trips before the short cut */
#define PHASE_A_END 30

static const char *rdv;

static void rdv_path(char *p, size_t len, const char *name)
{
	snprintf(p, len, "%s/%s", rdv, name);
}

static void rdv_put(const char *name, const char *val)
{
	char p[512], tmp[520];
	FILE *f;

	rdv_path(p, sizeof(p), name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", p);
	f = fopen(tmp, "w");
	FDT_ASSERT(f, "cannot write %s", tmp);
	fprintf(f, "%s\n", val);
	fclose(f);
	FDT_ASSERT(rename(tmp, p) == 0, "rename %s", p);
}

/* Waits until the rendezvous file holds val (or any value, val NULL). */
static void rdv_wait(const char *name, const char *val, char *out, size_t outlen, int ms)
{
	char p[512], buf[128];
	long t0 = flt_now_ms();

	rdv_path(p, sizeof(p), name);
	for (;;) {
		FILE *f = fopen(p, "r");

		if (f) {
			if (fgets(buf, sizeof(buf), f)) {
				buf[strcspn(buf, "\n")] = 0;
				if (!val || !strcmp(buf, val)) {
					fclose(f);
					if (out)
						snprintf(out, outlen, "%.15s", buf);
					return;
				}
			}
			fclose(f);
		}
		FDT_ASSERT(flt_now_ms() - t0 < ms, "no %s=%s in %s after %d ms", name,
			   val ? val : "*", rdv, ms);
		usleep(50 * 1000);
	}
}

/* Ask the host to cut or restore the cable; returns once it is done. */
static void link_set(const char *state)
{
	rdv_put("link-request", state);
	rdv_wait("link-done", state, NULL, 0, 30000);
	printf("link %s\n", state);
}

static void send_wait(struct fdt_side *s, struct flt_bufs *b, size_t len, uint32_t seed)
{
	struct fi_cq_data_entry ce;
	struct fi_cq_err_entry err = { 0 };

	fdt_fill(b->tx[0], len, seed);
	FDT_OK(fi_send(s->ep, b->tx[0], len, fi_mr_desc(b->tx_mr), 0, NULL));
	FDT_ASSERT(fdt_wait_cq_ms(s->txcq, &ce, &err, LIMIT_MS) == 1, "send %u: %s", seed,
		   fi_strerror(err.err));
}

static void recv_check(struct fdt_side *s, struct flt_bufs *b, size_t len, uint32_t seed)
{
	struct fi_cq_data_entry ce;
	struct fi_cq_err_entry err = { 0 };
	int slot;

	FDT_ASSERT(fdt_wait_cq_ms(s->rxcq, &ce, &err, LIMIT_MS) == 1, "receive %u: %s", seed,
		   fi_strerror(err.err));
	slot = (int)(uintptr_t)ce.op_context - 1;
	FDT_ASSERT(ce.len == len && fdt_check(b->rx[slot], len, seed),
		   "message %u: %zu bytes, wrong contents (lost, duplicated or reordered)",
		   seed, ce.len);
	FDT_OK(fi_recv(s->ep, b->rx[slot], FLT_MSG_SIZE, fi_mr_desc(b->rx_mr), 0,
		       ce.op_context));
}

/* Phase B on one side: post a send while the cable is cut; it must fail. */
static void expect_send_error(struct fdt_side *s, struct flt_bufs *b, const char *who)
{
	struct fi_cq_data_entry ce;
	struct fi_cq_err_entry err = { 0 };
	long t0 = flt_now_ms();
	ssize_t rc;

	fdt_fill(b->tx[1], FLT_MSG_SIZE, 4242);
	FDT_OK(fi_send(s->ep, b->tx[1], FLT_MSG_SIZE, fi_mr_desc(b->tx_mr), 0, NULL));
	rc = fdt_wait_cq_ms(s->txcq, &ce, &err, ERR_MS);
	FDT_ASSERT(rc == -FI_EAVAIL, "%s: a send across a cut cable completed", who);
	printf("%s: send across the cut cable fails after %ld ms: %s (prov_errno %d)\n", who,
	       flt_now_ms() - t0, fi_strerror(err.err), err.prov_errno);
}

static void phase_new_connection_server(struct fdt_side *s)
{
	static struct flt_bufs b;

	flt_accept(s, FLT_MSG, &b);
	for (uint32_t i = 0; i < 5; i++) {
		recv_check(s, &b, FLT_MSG_SIZE, 7000 + i);
		send_wait(s, &b, FLT_MSG_SIZE, 8000 + i);
	}
	printf("server: new connection after the outage carries checked data\n");
	fdt_close_conn(s);
	flt_bufs_close(&b);
}

static void phase_new_connection_client(struct fi_info *hints, const char *peer,
					const char *port)
{
	static struct flt_bufs b;
	struct fdt_side s;

	FDT_OK(flt_client_init(&s, hints, peer, port));
	flt_client_connect(&s, FLT_MSG, &b);
	for (uint32_t i = 0; i < 5; i++) {
		send_wait(&s, &b, FLT_MSG_SIZE, 7000 + i);
		recv_check(&s, &b, FLT_MSG_SIZE, 8000 + i);
	}
	printf("client: new connection after the outage carries checked data\n");
	fdt_close_conn(&s);
	flt_bufs_close(&b);
	fdt_close_side(&s);
}

static int server(struct fi_info *hints)
{
	static struct flt_bufs b;
	struct fdt_side s;
	char port[16];
	long t0;

	flt_listen(&s, hints, port, sizeof(port));
	rdv_put("port", port);
	flt_accept(&s, FLT_MSG, &b);
	for (uint32_t i = 0; i < PHASE_A_END; i++) {
		recv_check(&s, &b, FLT_MSG_SIZE, i);
		if (i == PHASE_A_AT) {
			/* the echo is posted into the outage */
			link_set("off");
			t0 = flt_now_ms();
			fdt_fill(b.tx[2], 64, 3333);
			FDT_OK(fi_send(s.ep, b.tx[2], 64, fi_mr_desc(b.tx_mr), 0, NULL));
			usleep(SHORT_MS * 1000);
			link_set("on");
			{
				struct fi_cq_data_entry ce;
				struct fi_cq_err_entry err = { 0 };

				FDT_ASSERT(fdt_wait_cq_ms(s.txcq, &ce, &err, LIMIT_MS) == 1,
					   "a send over a %d ms outage failed: %s", SHORT_MS,
					   fi_strerror(err.err));
			}
			printf("server: a send posted into a %d ms outage completed after %ld ms\n",
			       SHORT_MS, flt_now_ms() - t0);
		}
		send_wait(&s, &b, FLT_MSG_SIZE, ~i);
	}
	printf("server: phase A: %d round trips, outage included, all intact\n", PHASE_A_END);
	/* phase B */
	recv_check(&s, &b, 64, 5555);	/* the client is ready */
	link_set("off");
	rdv_put("phase", "B");
	expect_send_error(&s, &b, "server");
	usleep(1000 * 1000);
	rdv_wait("client-failed", "yes", NULL, 0, LIMIT_MS);
	link_set("on");
	fdt_close_conn(&s);
	flt_bufs_close(&b);
	rdv_put("phase", "C");
	phase_new_connection_server(&s);
	fdt_close_side(&s);
	return 0;
}

static int client(struct fi_info *hints, const char *peer)
{
	static struct flt_bufs b;
	struct fdt_side s;
	char port[16];

	rdv_wait("port", NULL, port, sizeof(port), LIMIT_MS);
	FDT_OK(flt_client_init(&s, hints, peer, port));
	flt_client_connect(&s, FLT_MSG, &b);
	for (uint32_t i = 0; i < PHASE_A_END; i++) {
		send_wait(&s, &b, FLT_MSG_SIZE, i);
		if (i == PHASE_A_AT) {
			/* the message the server sent into the outage */
			recv_check(&s, &b, 64, 3333);
		}
		recv_check(&s, &b, FLT_MSG_SIZE, ~i);
	}
	printf("client: phase A: %d round trips, outage included, all intact\n", PHASE_A_END);
	send_wait(&s, &b, 64, 5555);
	rdv_wait("phase", "B", NULL, 0, LIMIT_MS);
	expect_send_error(&s, &b, "client");
	rdv_put("client-failed", "yes");
	fdt_close_conn(&s);
	flt_bufs_close(&b);
	fdt_close_side(&s);
	rdv_wait("phase", "C", NULL, 0, LIMIT_MS);
	phase_new_connection_client(hints, peer, port);
	return 0;
}

int main(void)
{
	struct fi_info *hints;
	const char *vm = getenv("FD_RXE_VM");
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	rdv = getenv("FD_RXE_RDV");
	if (!vm || !rdv || !getenv("FD_RXE_PEER")) {
		printf("SKIP: needs two VMs (tests/rxe/run2)\n");
		return FDT_SKIP;
	}
	fdt_addr();
	hints = fdt_hints();
	rc = !strcmp(vm, "0") ? server(hints) : client(hints, getenv("FD_RXE_PEER"));
	fi_freeinfo(hints);
	printf("link fault (VM%s): pass\n", vm);
	return rc;
}
