/* A million messages in a loop, every one checked: sequence number and a
 * payload derived from it, in order. The sender injects as fast as the send
 * queue allows (-FI_EAGAIN: reap and retry); the receiver keeps a ring of
 * receives posted and reads completions in batches. FDT_MSG_COUNT overrides
 * the count. */
#include "fdt.h"

#define MSG 16
#define SLOTS 1024
#define BATCH 16

static uint64_t count(void)
{
	const char *s = getenv("FDT_MSG_COUNT");

	return s ? strtoull(s, NULL, 0) : 1000000;
}

static void make(uint8_t *p, uint64_t seq)
{
	uint64_t x = seq * 0x9e3779b97f4a7c15ull;

	memcpy(p, &seq, 8);
	memcpy(p + 8, &x, 8);
}

static int server(struct fdt_side *s, void *arg)
{
	uint8_t *buf = calloc(SLOTS, MSG);
	struct fid_mr *mr;
	struct fi_cq_msg_entry e[BATCH];
	uint64_t n = count(), next = 0;
	uint8_t ev[sizeof(struct fi_eq_cm_entry) + 64];

	(void)arg;
	s->cq_format = FI_CQ_FORMAT_MSG;
	s->cq_size = 2 * SLOTS;	/* every posted receive can complete unread */
	fdt_server_accept(s, NULL, NULL, NULL, NULL);
	mr = fdt_reg(s, buf, SLOTS * MSG, FI_RECV);
	for (int i = 0; i < SLOTS; i++)
		FDT_OK(fi_recv(s->ep, buf + i * MSG, MSG, fi_mr_desc(mr), 0, buf + i * MSG));
	while (next < n) {
		ssize_t got = fi_cq_read(s->rxcq, e, BATCH);

		if (got == -FI_EAGAIN)
			continue;
		FDT_ASSERT(got > 0, "fi_cq_read = %zd after %llu messages", got,
			   (unsigned long long)next);
		for (ssize_t i = 0; i < got; i++) {
			uint8_t *p = e[i].op_context, want[MSG];

			make(want, next);
			FDT_ASSERT(e[i].len == MSG && !memcmp(p, want, MSG),
				   "message %llu wrong or out of order", (unsigned long long)next);
			next++;
			FDT_OK(fi_recv(s->ep, p, MSG, fi_mr_desc(mr), 0, p));
		}
	}
	fdt_wait_event(s, FI_SHUTDOWN, ev, sizeof(ev));
	FDT_OK(fi_close(&mr->fid));
	free(buf);
	fdt_close_side(s);
	printf("server: %llu messages received in order, contents checked\n",
	       (unsigned long long)next);
	return 0;
}

static int client(struct fdt_side *s, void *arg)
{
	uint8_t msg[MSG];
	struct fi_cq_msg_entry e[BATCH];
	uint64_t n = count(), eagain = 0;

	(void)arg;
	s->cq_format = FI_CQ_FORMAT_MSG;
	fdt_client_connect(s, NULL, NULL, NULL, NULL);
	for (uint64_t seq = 0; seq < n; ) {
		ssize_t rc;

		make(msg, seq);
		rc = fi_inject(s->ep, msg, MSG, 0);
		if (rc == -FI_EAGAIN) {
			eagain++;
			rc = fi_cq_read(s->txcq, e, BATCH);
			FDT_ASSERT(rc == -FI_EAGAIN, "unexpected tx completion %zd", rc);
			continue;
		}
		FDT_OK(rc);
		seq++;
	}
	/* a last signaled send: once it completes, everything before it has */
	make(msg, n);
	FDT_OK(fi_shutdown(s->ep, 0));
	fdt_close_side(s);
	printf("client: %llu injected (%llu EAGAINs)\n", (unsigned long long)n,
	       (unsigned long long)eagain);
	return 0;
}

int main(void)
{
	struct fi_info *hints = fdt_hints();
	int rc;

	/* a deep receive queue keeps the sender out of RNR back-off */
	hints->rx_attr->size = SLOTS;
	rc = fdt_run_pair(hints, server, client, NULL);

	fi_freeinfo(hints);
	return rc;
}
