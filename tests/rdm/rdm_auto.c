/* FI_PROGRESS_AUTO on RDM domains: a domain opened with data_progress =
 * control_progress = FI_PROGRESS_AUTO moves data and makes connections
 * while the application makes no libfabric call at all.
 *
 * Two processes: this one opens its domains with AUTO and then sleeps
 * (no libfabric call) while the peer, a MANUAL domain in a child process,
 * drives its own side.
 *  1. receiver AUTO: a 1 MiB tagged receive (rendezvous: the receiver
 *     accepts the connection, reads the data with RDMA reads and answers
 *     "done") is posted, then 2 s of sleep. The peer's send must complete
 *     within those 2 s: only the receiver's progress thread can have done
 *     the reads and sent the done. After the sleep the first fi_cq_read
 *     returns the receive, bytes checked.
 *  2. sender AUTO (a new domain, so a new connection): a 1 MiB tagged send
 *     is posted, then 2 s of sleep. The peer's receive must complete
 *     within them (the sender's thread must read the connection's
 *     established event and post the request), and the first fi_cq_read
 *     after the sleep returns the send completion (the thread took the
 *     peer's done).
 *  3. fi_getinfo: AUTO hints give an entry saying AUTO, no progress hints
 *     or MANUAL ones an entry saying MANUAL.
 *  4. shutdown: after fi_close of an AUTO domain no thread of it is left
 *     (the process's thread count is back where it was); open/close with
 *     an enabled endpoint, repeatedly.
 *  5. counters: the progress thread counts receives into a counter while
 *     this thread calls fi_cntr_add on it; no update may be lost (the
 *     counter once did a plain read-modify-write outside FI_THREAD_SAFE
 *     builds; the TSan subset runs this test).
 * On a build without AUTO, fi_getinfo refuses the hints: exit 1 saying so. */
#include <errno.h>
#include <unistd.h>

#include "rdmt.h"

#define BIG		(1u << 20)
#define SLEEP_MS	2000
#define TAG		0x5eedULL

/* what the peer reports over the pipe */
struct report {
	int ok;			/* the operation completed successfully */
	long ms;		/* after how long (from the "go") */
	int bytes_ok;		/* receive: the bytes matched */
};

static struct fi_info *auto_hints(enum fi_progress data, enum fi_progress control)
{
	struct fi_info *h = rdmt_hints(FI_TAGGED);

	h->domain_attr->data_progress = data;
	h->domain_attr->control_progress = control;
	return h;
}

static int threads_now(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	int n = -1;

	FDT_ASSERT(f, "/proc/self/status: %s", strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	fclose(f);
	return n;
}

/* The count after a fi_close: pthread_join returns once the thread has
 * run its last instruction, but the kernel drops it from the process's
 * thread count a little later, so wait up to 2 s for the expected count
 * (a thread that is really left behind keeps the count up). */
static int threads_after_close(int want)
{
	int n = threads_now();

	for (int i = 0; n != want && i < 200; i++) {
		usleep(10000);
		n = threads_now();
	}
	return n;
}

static void xchg_names(int to, int from, struct rdmt_ep *e, fi_addr_t *peer)
{
	uint8_t name[256];

	rdmt_send_name(to, e);
	rdmt_recv_name(from, name);
	*peer = rdmt_insert_name(e, name);
}

/* ---- the peer (MANUAL, its own process) ---- */

static int peer_main(int to_parent, int from_parent, void *arg)
{
	struct rdmt_dom dom;
	struct rdmt_ep e;
	struct rdmt_comp c;
	struct report r;
	fi_addr_t parent;
	uint8_t *buf = malloc(BIG);
	struct fi_context ctx;
	char go;
	long t0;

	(void)arg;
	FDT_ASSERT(buf, "out of memory");

	/* 1: send to the AUTO receiver, which sleeps */
	struct fi_info *h = rdmt_hints(FI_TAGGED);

	rdmt_dom_open(&dom, h);
	fi_freeinfo(h);
	rdmt_ep_open(&dom, &e, NULL, FI_AV_TABLE);
	xchg_names(to_parent, from_parent, &e, &parent);
	fdt_fill(buf, BIG, 1);
	rdmt_read_all(from_parent, &go, 1);
	t0 = rdmt_now_ms();
	RDMT_POST(fi_tsend(e.ep, buf, BIG, NULL, parent, TAG, &ctx));
	memset(&r, 0, sizeof(r));
	if (rdmt_poll(e.cq, &c, SLEEP_MS - 200 - (int)(rdmt_now_ms() - t0)))
		r.ok = !c.err && c.e.op_context == &ctx && (c.e.flags & FI_SEND);
	r.ms = rdmt_now_ms() - t0;
	rdmt_write_all(to_parent, &r, sizeof(r));
	/* the parent checks and closes; then we do */
	rdmt_read_all(from_parent, &go, 1);
	rdmt_ep_close(&e);
	rdmt_dom_close(&dom);

	/* 2: receive from the AUTO sender, which sleeps */
	h = rdmt_hints(FI_TAGGED);
	rdmt_dom_open(&dom, h);
	fi_freeinfo(h);
	rdmt_ep_open(&dom, &e, NULL, FI_AV_TABLE);
	xchg_names(to_parent, from_parent, &e, &parent);
	memset(buf, 0, BIG);
	RDMT_POST(fi_trecv(e.ep, buf, BIG, NULL, FI_ADDR_UNSPEC, TAG + 1, 0, &ctx));
	rdmt_write_all(to_parent, "r", 1);
	rdmt_read_all(from_parent, &go, 1);
	t0 = rdmt_now_ms();
	memset(&r, 0, sizeof(r));
	if (rdmt_poll(e.cq, &c, SLEEP_MS - 200)) {
		r.ok = !c.err && c.e.op_context == &ctx && (c.e.flags & FI_RECV) &&
			c.e.len == BIG && c.e.tag == TAG + 1;
		r.bytes_ok = fdt_check(buf, BIG, 2);
	}
	r.ms = rdmt_now_ms() - t0;
	rdmt_write_all(to_parent, &r, sizeof(r));
	rdmt_read_all(from_parent, &go, 1);
	rdmt_ep_close(&e);
	rdmt_dom_close(&dom);
	free(buf);
	return 0;
}

/* ---- this process: the AUTO side ---- */

static struct rdmt_dom auto_open(void)
{
	struct fi_info *h = auto_hints(FI_PROGRESS_AUTO, FI_PROGRESS_AUTO);
	struct rdmt_dom dom;

	rdmt_dom_open(&dom, h);
	fi_freeinfo(h);
	FDT_ASSERT(dom.info->domain_attr->data_progress == FI_PROGRESS_AUTO &&
		   dom.info->domain_attr->control_progress == FI_PROGRESS_AUTO,
		   "entry says data %d control %d", dom.info->domain_attr->data_progress,
		   dom.info->domain_attr->control_progress);
	return dom;
}

/* One fi_cq_read: the entry must already be there. */
static void read_now(struct rdmt_ep *e, struct fi_cq_tagged_entry *out, const char *what)
{
	ssize_t n = fi_cq_read(e->cq->cq, out, 1);

	if (n == -FI_EAVAIL) {
		struct fi_cq_err_entry err;

		memset(&err, 0, sizeof(err));
		fi_cq_readerr(e->cq->cq, &err, 0);
		FDT_FAIL("%s: error completion %d (%s)", what, err.err, fi_strerror(err.err));
	}
	FDT_ASSERT(n == 1, "%s: the first fi_cq_read after the sleep = %zd (%s): nothing "
		   "progressed while we slept", what, n, fi_strerror((int)-n));
}

static void receiver_auto(int to_child, int from_child)
{
	struct rdmt_dom dom = auto_open();
	struct rdmt_ep e;
	struct fi_cq_tagged_entry ce;
	struct fi_context ctx;
	struct report r;
	uint8_t *buf = calloc(1, BIG);
	fi_addr_t peer;

	FDT_ASSERT(buf, "out of memory");
	rdmt_ep_open(&dom, &e, NULL, FI_AV_TABLE);
	xchg_names(to_child, from_child, &e, &peer);
	FDT_OK(fi_trecv(e.ep, buf, BIG, NULL, FI_ADDR_UNSPEC, TAG, 0, &ctx));
	rdmt_write_all(to_child, "g", 1);
	/* no libfabric call from here until the sleep ends */
	usleep(SLEEP_MS * 1000);
	rdmt_read_all(from_child, &r, sizeof(r));
	printf("receiver AUTO: the peer's 1 MiB send %s after %ld ms (we slept %d)\n",
	       r.ok ? "completed" : "did NOT complete", r.ms, SLEEP_MS);
	FDT_ASSERT(r.ok, "the sender's rendezvous send did not complete while the AUTO "
		   "receiver slept (%ld ms): no progress without calls", r.ms);
	memset(&ce, 0, sizeof(ce));
	read_now(&e, &ce, "receiver AUTO");
	FDT_ASSERT(ce.op_context == &ctx && (ce.flags & (FI_TAGGED | FI_RECV)) ==
		   (FI_TAGGED | FI_RECV) && ce.len == BIG && ce.tag == TAG,
		   "receive entry: ctx %p flags %#llx len %zu tag %#llx", ce.op_context,
		   (unsigned long long)ce.flags, ce.len, (unsigned long long)ce.tag);
	FDT_ASSERT(fdt_check(buf, BIG, 1), "received bytes differ");
	rdmt_ep_close(&e);
	rdmt_dom_close(&dom);
	rdmt_write_all(to_child, "c", 1);
	free(buf);
}

static void sender_auto(int to_child, int from_child)
{
	struct rdmt_dom dom = auto_open();
	struct rdmt_ep e;
	struct fi_cq_tagged_entry ce;
	struct fi_context ctx;
	struct report r;
	uint8_t *buf = malloc(BIG);
	fi_addr_t peer;
	char ready;

	FDT_ASSERT(buf, "out of memory");
	fdt_fill(buf, BIG, 2);
	rdmt_ep_open(&dom, &e, NULL, FI_AV_TABLE);
	xchg_names(to_child, from_child, &e, &peer);
	rdmt_read_all(from_child, &ready, 1);	/* its receive is posted */
	FDT_OK(fi_tsend(e.ep, buf, BIG, NULL, peer, TAG + 1, &ctx));
	rdmt_write_all(to_child, "g", 1);
	/* no libfabric call from here until the sleep ends */
	usleep(SLEEP_MS * 1000);
	rdmt_read_all(from_child, &r, sizeof(r));
	printf("sender AUTO: the peer's 1 MiB receive %s after %ld ms, bytes %s\n",
	       r.ok ? "completed" : "did NOT complete", r.ms, r.bytes_ok ? "right" : "wrong");
	FDT_ASSERT(r.ok && r.bytes_ok, "the peer's receive did not complete right while "
		   "the AUTO sender slept (ok %d bytes %d)", r.ok, r.bytes_ok);
	memset(&ce, 0, sizeof(ce));
	read_now(&e, &ce, "sender AUTO");
	FDT_ASSERT(ce.op_context == &ctx && (ce.flags & FI_SEND),
		   "send entry: ctx %p flags %#llx", ce.op_context,
		   (unsigned long long)ce.flags);
	rdmt_ep_close(&e);
	rdmt_dom_close(&dom);
	rdmt_write_all(to_child, "c", 1);
	free(buf);
}

static void getinfo_progress(enum fi_progress data, enum fi_progress control,
			     enum fi_progress want_data, enum fi_progress want_control)
{
	struct fi_info *h = auto_hints(data, control), *info = NULL;
	int ret = fi_getinfo(FI_VERSION(1, 17), fdt_addr(), NULL, FI_SOURCE, h, &info);

	if (ret)
		FDT_FAIL("fi_getinfo with data_progress %s, control_progress %s hints = %d (%s): "
			 "the RDM provider refuses them",
			 fi_tostr(&data, FI_TYPE_PROGRESS), fi_tostr(&control, FI_TYPE_PROGRESS),
			 ret, fi_strerror(-ret));
	for (struct fi_info *i = info; i; i = i->next)
		FDT_ASSERT(i->domain_attr->data_progress == want_data &&
			   i->domain_attr->control_progress == want_control,
			   "entry says data %d control %d, want %d %d",
			   i->domain_attr->data_progress, i->domain_attr->control_progress,
			   want_data, want_control);
	fi_freeinfo(info);
	fi_freeinfo(h);
}

/* A thread while an AUTO domain is open, none after; none for MANUAL.
 * Then open and close AUTO domains with an enabled endpoint, repeatedly,
 * while the thread may be inside progress. */
static void shutdown_clean(void)
{
	struct fi_info *h = rdmt_hints(FI_TAGGED);
	struct rdmt_dom dom;
	struct rdmt_ep e;
	int base, n;

	/* whatever the library starts once per process is started now */
	rdmt_dom_open(&dom, h);
	rdmt_ep_open(&dom, &e, NULL, FI_AV_TABLE);
	rdmt_ep_close(&e);
	rdmt_dom_close(&dom);
	base = threads_now();
	rdmt_dom_open(&dom, h);
	FDT_ASSERT(threads_now() == base, "a MANUAL domain started a thread (%d, %d before)",
		   threads_now(), base);
	rdmt_dom_close(&dom);
	fi_freeinfo(h);
	dom = auto_open();
	rdmt_ep_open(&dom, &e, NULL, FI_AV_TABLE);
	FDT_ASSERT(threads_now() == base + 1, "%d threads with an AUTO domain open, %d before",
		   threads_now(), base);
	rdmt_ep_close(&e);
	rdmt_dom_close(&dom);
	n = threads_after_close(base);
	FDT_ASSERT(n == base, "%d threads after closing the AUTO domain, %d before", n, base);
	for (int i = 0; i < 20; i++) {
		dom = auto_open();
		rdmt_ep_open(&dom, &e, NULL, FI_AV_TABLE);
		if (i & 1)
			usleep(1000);
		rdmt_ep_close(&e);
		rdmt_dom_close(&dom);
	}
	n = threads_after_close(base);
	FDT_ASSERT(n == base, "%d threads after 20 AUTO domains, %d before", n, base);
	printf("shutdown: one thread per open AUTO domain, none left after fi_close "
	       "(21 domains), none for MANUAL\n");
}

#define RACE_ROUNDS	10
#define RACE_MSGS	100	/* per round */

static void counter_race(void)
{
	static uint8_t rbuf[RACE_MSGS][8];
	static struct fi_context rctx[RACE_MSGS];
	struct rdmt_dom dom = auto_open();
	struct fi_cntr_attr cattr = { .events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_NONE };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct rdmt_ep A, B, *e[2] = { &A, &B };
	struct fid_cntr *recv_c;
	struct rdmt_comp c;
	uint8_t sbuf[8] = { 0 };
	uint64_t adds = 0, want;
	fi_addr_t a2b;

	FDT_OK(fi_cntr_open(dom.domain, &cattr, &recv_c, NULL));
	/* the counter binds before fi_enable: the endpoints by hand */
	for (int i = 0; i < 2; i++) {
		memset(e[i], 0, sizeof(*e[i]));
		e[i]->dom = &dom;
		e[i]->own_cq = 1;
		e[i]->cq = rdmt_cq_open(&dom);
		FDT_OK(fi_av_open(dom.domain, &av_attr, &e[i]->av, NULL));
		FDT_OK(fi_endpoint(dom.domain, dom.info, &e[i]->ep, NULL));
		FDT_OK(fi_ep_bind(e[i]->ep, &e[i]->cq->cq->fid, FI_TRANSMIT | FI_RECV));
		FDT_OK(fi_ep_bind(e[i]->ep, &e[i]->av->fid, 0));
	}
	FDT_OK(fi_ep_bind(B.ep, &recv_c->fid, FI_RECV));
	for (int i = 0; i < 2; i++) {
		FDT_OK(fi_enable(e[i]->ep));
		e[i]->namelen = sizeof(e[i]->name);
		FDT_OK(fi_getname(&e[i]->ep->fid, e[i]->name, &e[i]->namelen));
	}
	a2b = rdmt_insert(&A, &B);
	(void)rdmt_insert(&B, &A);
	for (int r = 0; r < RACE_ROUNDS; r++) {
		long end;

		for (int i = 0; i < RACE_MSGS; i++)
			FDT_OK(fi_trecv(B.ep, rbuf[i], sizeof(rbuf[i]), NULL, FI_ADDR_UNSPEC,
					TAG, 0, &rctx[i]));
		for (int i = 0; i < RACE_MSGS; i++)
			RDMT_POST(fi_tinject(A.ep, sbuf, sizeof(sbuf), a2b, TAG));
		/* the progress thread takes the receives meanwhile */
		end = rdmt_now_ms() + 30;
		while (rdmt_now_ms() < end) {
			FDT_OK(fi_cntr_add(recv_c, 1));
			adds++;
		}
		for (int i = 0; i < RACE_MSGS; i++) {
			rdmt_wait_ok(B.cq, &c);
			FDT_ASSERT(c.e.op_context == &rctx[i], "round %d: receive %d", r, i);
		}
	}
	want = adds + (uint64_t)RACE_ROUNDS * RACE_MSGS;
	FDT_ASSERT(fi_cntr_read(recv_c) == want, "counter %llu after %llu fi_cntr_add calls "
		   "and %d receives counted by the progress thread: %lld updates lost",
		   (unsigned long long)fi_cntr_read(recv_c), (unsigned long long)adds,
		   RACE_ROUNDS * RACE_MSGS, (long long)(want - fi_cntr_read(recv_c)));
	printf("counter: %llu fi_cntr_add calls beside %d receives counted by the "
	       "progress thread, none lost\n", (unsigned long long)adds,
	       RACE_ROUNDS * RACE_MSGS);
	rdmt_ep_close(&A);
	rdmt_ep_close(&B);
	FDT_OK(fi_close(&recv_c->fid));
	rdmt_dom_close(&dom);
}

int main(void)
{
	int to_child, from_child, rc;
	pid_t pid;

	(void)fdt_addr();	/* skip before forking */
	pid = rdmt_spawn(peer_main, NULL, &to_child, &from_child);

	getinfo_progress(FI_PROGRESS_AUTO, FI_PROGRESS_AUTO, FI_PROGRESS_AUTO, FI_PROGRESS_AUTO);
	getinfo_progress(FI_PROGRESS_AUTO, FI_PROGRESS_MANUAL, FI_PROGRESS_AUTO,
			 FI_PROGRESS_MANUAL);
	getinfo_progress(FI_PROGRESS_UNSPEC, FI_PROGRESS_UNSPEC, FI_PROGRESS_MANUAL,
			 FI_PROGRESS_MANUAL);
	getinfo_progress(FI_PROGRESS_MANUAL, FI_PROGRESS_MANUAL, FI_PROGRESS_MANUAL,
			 FI_PROGRESS_MANUAL);
	printf("fi_getinfo: AUTO hints give AUTO entries, none or MANUAL give MANUAL\n");

	receiver_auto(to_child, from_child);
	sender_auto(to_child, from_child);
	rc = rdmt_reap(pid);
	FDT_ASSERT(rc == 0, "the peer failed (%d)", rc);

	shutdown_clean();
	counter_race();
	return rdmt_pass("rdm_auto");
}
