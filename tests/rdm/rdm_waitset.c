/* Wait sets and poll sets over RDM CQs and counters (issue 25), with a
 * peer in another process that sends or receives when told to:
 *
 *  - bad input: fi_wait_open with no attr, flags, FI_WAIT_NONE or
 *    FI_WAIT_SET; a CQ or counter with FI_WAIT_SET and no set; fi_poll_open
 *    with no attr; fi_poll_add of NULL, an AV, an endpoint, twice, of a
 *    closed counter; fi_poll_del of a stranger: each -FI_EINVAL (or
 *    -FI_EALREADY);
 *  - a CQ and a counter opened with FI_WAIT_SET into one wait set:
 *    fi_control(FI_GETWAIT) on the set gives an fd; idle, fi_trywait on
 *    the set answers 0, fi_wait(500) times out (-FI_ETIMEDOUT) without
 *    spinning; a message sent after 700 ms wakes fi_wait(5 s), and the
 *    completion and the counter's increment are there to read;
 *  - another thread's send wakes an fi_wait that was already asleep;
 *  - a poll set of the CQ and counter: fi_poll returns 0 when idle, both
 *    contexts after a message, only the CQ's while its entry stays unread
 *    (the counter has not moved again), only the CQ's after a send (the
 *    counter counts receives), 0 once read; fi_poll_del;
 *  - closing an object held by a poll set, a poll set with members or a
 *    wait set with members: -FI_EBUSY; each closes once emptied.
 * Before: fi_wait_open and fi_poll_open returned -FI_ENOSYS and
 * FI_WAIT_SET was refused. */
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#include "rdmt.h"

#define MSG RDMT_PEER_MSG

static struct rdmt_dom dom;
static struct fid_ep *ep;
static struct fid_av *av;
static struct fid_cq *cq;
static struct fid_cntr *rcntr;
static struct fid_wait *ws;
static struct fid_poll *ps;
static fi_addr_t peer;
static int to_peer, from_peer;

/* fi_trywait on the set until it says 0 (the connection's own traffic
 * may still be settling); nothing may be queued meanwhile. */
static void settle(const char *what)
{
	struct fid *fid = &ws->fid;
	long end = rdmt_now_ms() + 2000;
	int ret;

	while ((ret = fi_trywait(dom.fabric, &fid, 1)) == -FI_EAGAIN) {
		struct fi_cq_tagged_entry e;

		FDT_ASSERT(rdmt_now_ms() < end, "%s: fi_trywait still -FI_EAGAIN after 2 s", what);
		FDT_ASSERT(fi_cq_read(cq, &e, 1) == -FI_EAGAIN, "%s: an entry on an idle CQ", what);
		(void)fi_cntr_read(rcntr);
	}
	FDT_ASSERT(ret == 0, "%s: fi_trywait(wait set) = %d (%s)", what, ret, fi_strerror(-ret));
}

/* The one entry for ctx, sleeping in fi_wait(ws) between reads; fails
 * after limit_ms. Returns when it came, in ms from t0. */
static long wait_entry(void *ctx, uint64_t flag, long t0, long limit_ms, const char *what)
{
	struct fi_cq_tagged_entry e;
	ssize_t n;

	for (;;) {
		long left = t0 + limit_ms - rdmt_now_ms();
		int ret;

		n = fi_cq_read(cq, &e, 1);
		if (n != -FI_EAGAIN)
			break;
		FDT_ASSERT(left > 0, "%s: nothing within %ld ms", what, limit_ms);
		ret = fi_wait(ws, (int)left);
		FDT_ASSERT(ret == 0 || ret == -FI_ETIMEDOUT, "%s: fi_wait = %d (%s)", what, ret,
			   fi_strerror(-ret));
	}
	FDT_ASSERT(n == 1, "%s: fi_cq_read = %zd (%s)", what, n, fi_strerror((int)-n));
	FDT_ASSERT(e.op_context == ctx && (e.flags & flag), "%s: entry ctx %p flags %#llx",
		   what, e.op_context, (unsigned long long)e.flags);
	return rdmt_now_ms() - t0;
}

/* ---- the checks ---- */

static void bad_input(void)
{
	struct fi_wait_attr wa = { .wait_obj = FI_WAIT_UNSPEC };
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_TAGGED, .wait_obj = FI_WAIT_SET };
	struct fi_cntr_attr na = { .events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_SET };
	struct fi_poll_attr pa = { 0 };
	struct fid_wait *w = NULL;
	struct fid_cq *c = NULL;
	struct fid_cntr *n = NULL;
	struct fid_poll *p = NULL;

#ifdef FDT_UPSTREAM
	/* these codes are this library's; upstream's util sets are looser
	 * (see the notes in pollset() and main()) */
	return;
#endif
	FDT_EXPECT(fi_wait_open(dom.fabric, NULL, &w), -FI_EINVAL);
	wa.flags = 1;
	FDT_EXPECT(fi_wait_open(dom.fabric, &wa, &w), -FI_EINVAL);
	wa.flags = 0;
	wa.wait_obj = FI_WAIT_NONE;
	FDT_EXPECT(fi_wait_open(dom.fabric, &wa, &w), -FI_EINVAL);
	wa.wait_obj = FI_WAIT_SET;
	FDT_EXPECT(fi_wait_open(dom.fabric, &wa, &w), -FI_EINVAL);
	FDT_ASSERT(w == NULL, "a wait set from bad input");
	/* FI_WAIT_SET names a set: none, or something else, is no set */
	FDT_EXPECT(fi_cq_open(dom.domain, &ca, &c, NULL), -FI_EINVAL);
	FDT_EXPECT(fi_cntr_open(dom.domain, &na, &n, NULL), -FI_EINVAL);
	FDT_EXPECT(fi_poll_open(dom.domain, NULL, &p), -FI_EINVAL);
	pa.flags = 1;
	FDT_EXPECT(fi_poll_open(dom.domain, &pa, &p), -FI_EINVAL);
	FDT_OK(fi_poll_open(dom.domain, &(struct fi_poll_attr){ 0 }, &p));
	ca.wait_set = (struct fid_wait *)p;
	FDT_EXPECT(fi_cq_open(dom.domain, &ca, &c, NULL), -FI_EINVAL);
	FDT_ASSERT(c == NULL && n == NULL, "an object from bad input");
	FDT_EXPECT(fi_poll_add(p, NULL, 0), -FI_EINVAL);
	FDT_EXPECT(fi_poll_add(p, &av->fid, 0), -FI_EINVAL);
	FDT_EXPECT(fi_poll_add(p, &ep->fid, 0), -FI_EINVAL);
	FDT_EXPECT(fi_poll_add(p, &ws->fid, 0), -FI_EINVAL);
	FDT_EXPECT(fi_poll_del(p, &cq->fid, 0), -FI_EINVAL);
	FDT_OK(fi_poll_add(p, &cq->fid, 0));
	FDT_EXPECT(fi_poll_add(p, &cq->fid, 0), -FI_EALREADY);
	FDT_EXPECT(fi_poll(p, NULL, 1), -FI_EINVAL);
	FDT_EXPECT(fi_close(&p->fid), -FI_EBUSY);
	FDT_OK(fi_poll_del(p, &cq->fid, 0));
	FDT_EXPECT(fi_poll_del(p, &cq->fid, 0), -FI_EINVAL);
	FDT_OK(fi_close(&p->fid));
	printf("bad input: -FI_EINVAL / -FI_EALREADY / -FI_EBUSY as expected\n");
}

static void waits(void)
{
	static uint8_t buf[MSG];
	struct fi_context ctx;
	enum fi_wait_obj wo = FI_WAIT_NONE;
	uint64_t v;
	long t0, c0, took;
	int fd = -1, ret;

	FDT_OK(fi_control(&ws->fid, FI_GETWAIT, &fd));
	FDT_ASSERT(fd >= 0, "wait set FI_GETWAIT fd %d", fd);
	FDT_OK(fi_control(&ws->fid, FI_GETWAITOBJ, &wo));
	FDT_ASSERT(wo == FI_WAIT_FD, "wait set FI_GETWAITOBJ %d", (int)wo);

	settle("idle");
	{
		struct pollfd p = { .fd = fd, .events = POLLIN };

		FDT_ASSERT(poll(&p, 1, 300) == 0, "idle: the wait set's fd is readable");
	}
	t0 = rdmt_now_ms();
	c0 = rdmt_cpu_ms();
	ret = fi_wait(ws, 500);
	FDT_ASSERT(ret == -FI_ETIMEDOUT, "idle fi_wait(500) = %d (%s)", ret, fi_strerror(-ret));
	FDT_ASSERT(rdmt_now_ms() - t0 >= 400 && rdmt_now_ms() - t0 < 3000,
		   "idle fi_wait(500) returned after %ld ms", rdmt_now_ms() - t0);
	rdmt_check_cpu(c0, t0, "fi_wait(500) on an idle wait set");

	v = fi_cntr_read(rcntr);
	RDMT_POST(fi_recv(ep, buf, MSG, NULL, FI_ADDR_UNSPEC, &ctx));
	rdmt_peer_tell(to_peer, 'S', 700, 22);
	t0 = rdmt_now_ms();
	c0 = rdmt_cpu_ms();
	took = wait_entry(&ctx, FI_RECV, t0, 5000, "fi_wait for a message sent after 700 ms");
	FDT_ASSERT(took >= 600, "the message came after %ld ms, before it was sent", took);
	FDT_ASSERT(took < 3500, "the message sent at 700 ms woke fi_wait only after %ld ms", took);
	FDT_ASSERT(fdt_check(buf, MSG, 22), "payload");
	FDT_ASSERT(fi_cntr_read(rcntr) == v + 1, "counter %llu, expected %llu",
		   (unsigned long long)fi_cntr_read(rcntr), (unsigned long long)v + 1);
	rdmt_check_cpu(c0, t0, "fi_wait(5000) for a message sent after 700 ms");
	rdmt_peer_done(from_peer);
}

static uint8_t tbuf[MSG];
static struct fi_context tctx;

static void *send_later(void *arg)
{
	(void)arg;
	usleep(300000);
	fdt_fill(tbuf, MSG, 23);
	RDMT_POST(fi_send(ep, tbuf, MSG, NULL, peer, &tctx));
	return NULL;
}

static void wait_thread(void)
{
	pthread_t th;
	long t0, c0, took;

	rdmt_peer_tell(to_peer, 'R', 0, 23);
	/* no fi_trywait here: the fi_wait below must arm the set itself
	 * (the last wakeup spent the arming of the earlier one) */
	t0 = rdmt_now_ms();
	c0 = rdmt_cpu_ms();
	FDT_ASSERT(!pthread_create(&th, NULL, send_later, NULL), "pthread_create");
	/* asleep in fi_wait before the other thread posts (300 ms on) */
	took = wait_entry(&tctx, FI_SEND, t0, 5000, "another thread's send");
	pthread_join(th, NULL);
	FDT_ASSERT(took >= 250, "the send completed after %ld ms, before it was posted", took);
	FDT_ASSERT(took < 3000, "the send posted at 300 ms woke fi_wait only after %ld ms", took);
	/* looser: the set is not settled first (fi_wait must arm it), so
	 * it may call in a while on work no fd announces (the peer's
	 * credits); a fi_wait that never arms spins all the time (> 95%) */
	{
		long cpu = rdmt_cpu_ms() - c0, wall = rdmt_now_ms() - t0;

		printf("fi_wait woken by another thread's send: %ld ms wall, %ld ms CPU\n",
		       wall, cpu);
		FDT_ASSERT(cpu * 5 < wall * 4, "%ld ms of CPU in %ld ms: spinning", cpu, wall);
	}
	rdmt_peer_done(from_peer);
}

/* fi_poll until it reports something (or 5 s); returns the count. */
static int poll_some(void **ctxs, int count)
{
	long end = rdmt_now_ms() + 5000;
	int n;

	while ((n = fi_poll(ps, ctxs, count)) == 0 && rdmt_now_ms() < end)
		;
	FDT_ASSERT(n >= 0, "fi_poll = %d (%s)", n, fi_strerror(-n));
	return n;
}

static void pollset(void)
{
	static uint8_t buf[MSG];
	struct fi_cq_tagged_entry e;
	struct fi_context ctx;
	struct fid_cntr *spare;
	void *got[8];
	int n, seen_cq = 0, seen_cntr = 0;
	long end;

	FDT_OK(fi_poll_open(dom.domain, &(struct fi_poll_attr){ 0 }, &ps));
	FDT_OK(fi_poll_add(ps, &cq->fid, 0));
	FDT_OK(fi_poll_add(ps, &rcntr->fid, 0));
	settle("poll set");
	FDT_EXPECT(fi_poll(ps, got, 8), 0);

	/* a message: the CQ has an entry, the counter moved */
	RDMT_POST(fi_recv(ep, buf, MSG, NULL, FI_ADDR_UNSPEC, &ctx));
	rdmt_peer_tell(to_peer, 'S', 0, 41);
	end = rdmt_now_ms() + 5000;
	while (!(seen_cq && seen_cntr)) {
		FDT_ASSERT(rdmt_now_ms() < end, "fi_poll: CQ %d counter %d within 5 s", seen_cq,
			   seen_cntr);
		n = fi_poll(ps, got, 8);
		FDT_ASSERT(n >= 0, "fi_poll = %d (%s)", n, fi_strerror(-n));
		for (int i = 0; i < n; i++) {
			if (got[i] == &cq)
				seen_cq = 1;
			else if (got[i] == &rcntr)
				seen_cntr++;
			else
				FDT_FAIL("fi_poll: unknown context %p", got[i]);
		}
	}
	FDT_ASSERT(seen_cntr == 1, "counter reported %d times for one change", seen_cntr);
	/* unread, the CQ is still ready; the counter has not moved again */
	n = fi_poll(ps, got, 8);
	FDT_ASSERT(n == 1 && got[0] == &cq, "fi_poll with the entry unread = %d (%p)", n,
		   n > 0 ? got[0] : NULL);
	FDT_ASSERT(fi_cq_read(cq, &e, 1) == 1 && e.op_context == &ctx && (e.flags & FI_RECV) &&
		   fdt_check(buf, MSG, 41), "the polled message");
	FDT_EXPECT(fi_poll(ps, got, 8), 0);
	rdmt_peer_done(from_peer);

	/* a send: the CQ only (the counter counts receives) */
	rdmt_peer_tell(to_peer, 'R', 0, 42);
	fdt_fill(tbuf, MSG, 42);
	RDMT_POST(fi_send(ep, tbuf, MSG, NULL, peer, &tctx));
	n = poll_some(got, 8);
	FDT_ASSERT(n == 1 && got[0] == &cq, "fi_poll after a send = %d (%p)", n,
		   n > 0 ? got[0] : NULL);
	FDT_ASSERT(fi_cq_read(cq, &e, 1) == 1 && e.op_context == &tctx && (e.flags & FI_SEND),
		   "the polled send completion");
	rdmt_peer_done(from_peer);
	FDT_EXPECT(fi_poll(ps, got, 8), 0);

	/* fi_poll_del: the counter is no longer asked */
	FDT_OK(fi_poll_del(ps, &rcntr->fid, 0));
#ifndef FDT_UPSTREAM
	/* upstream 1.17 answers 0 for an object not in the set */
	FDT_EXPECT(fi_poll_del(ps, &rcntr->fid, 0), -FI_EINVAL);
#endif
	FDT_OK(fi_cntr_add(rcntr, 1));
	FDT_EXPECT(fi_poll(ps, got, 8), 0);

	/* members cannot close under the set, nor the set over them */
	FDT_OK(fi_cntr_open(dom.domain, &(struct fi_cntr_attr){ .events = FI_CNTR_EVENTS_COMP },
			    &spare, &spare));
	FDT_OK(fi_poll_add(ps, &spare->fid, 0));
	FDT_OK(fi_cntr_add(spare, 3));
	n = fi_poll(ps, got, 8);
	FDT_ASSERT(n == 1 && got[0] == &spare, "fi_poll after fi_cntr_add = %d", n);
#ifndef FDT_UPSTREAM
	/* upstream 1.17 closes both, leaving the set a freed member */
	FDT_EXPECT(fi_close(&spare->fid), -FI_EBUSY);
	FDT_EXPECT(fi_close(&ps->fid), -FI_EBUSY);
#endif
	FDT_OK(fi_poll_del(ps, &spare->fid, 0));
	FDT_OK(fi_close(&spare->fid));
#ifndef FDT_UPSTREAM
	/* a closed counter is known as closed by its address alone */
	FDT_EXPECT(fi_poll_add(ps, &spare->fid, 0), -FI_EINVAL);
#endif
	FDT_OK(fi_poll_del(ps, &cq->fid, 0));
	FDT_OK(fi_close(&ps->fid));
	printf("poll set: exactly the ready members, fi_poll_del, -FI_EBUSY\n");
}

int main(void)
{
	struct fi_info *hints;
	struct fi_wait_attr wait_attr = { .wait_obj = FI_WAIT_UNSPEC };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED, .wait_obj = FI_WAIT_SET };
	struct fi_cntr_attr cntr_attr = { .events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_SET };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	uint8_t name[256], pname[256];
	size_t namelen = sizeof(name);
	static uint8_t buf[MSG];
	struct fi_context ctx;
	pid_t pid;
	int ret;

	(void)fdt_addr();
	pid = rdmt_spawn(rdmt_peer_main, NULL, &to_peer, &from_peer);
	hints = rdmt_hints(FI_MSG);
	hints->domain_attr->threading = FI_THREAD_SAFE;
	rdmt_dom_open(&dom, hints);
	fi_freeinfo(hints);

	ret = fi_wait_open(dom.fabric, &wait_attr, &ws);
	FDT_ASSERT(ret == 0, "fi_wait_open(FI_WAIT_UNSPEC) = %d (%s)", ret, fi_strerror(-ret));
	cq_attr.wait_set = ws;
	cntr_attr.wait_set = ws;
	ret = fi_cq_open(dom.domain, &cq_attr, &cq, &cq);
	FDT_ASSERT(ret == 0, "fi_cq_open(FI_WAIT_SET) = %d (%s)", ret, fi_strerror(-ret));
	ret = fi_cntr_open(dom.domain, &cntr_attr, &rcntr, &rcntr);
	FDT_ASSERT(ret == 0, "fi_cntr_open(FI_WAIT_SET) = %d (%s)", ret, fi_strerror(-ret));
	FDT_OK(fi_av_open(dom.domain, &av_attr, &av, NULL));
	FDT_OK(fi_endpoint(dom.domain, dom.info, &ep, NULL));
	FDT_OK(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
	FDT_OK(fi_ep_bind(ep, &rcntr->fid, FI_RECV));
	FDT_OK(fi_ep_bind(ep, &av->fid, 0));
	FDT_OK(fi_enable(ep));
	FDT_OK(fi_getname(&ep->fid, name, &namelen));

	rdmt_recv_name(from_peer, pname);
	FDT_ASSERT(fi_av_insert(av, pname, 1, &peer, 0, NULL) == 1, "fi_av_insert");
	{
		struct rdmt_ep me = { .namelen = namelen };

		memcpy(me.name, name, namelen);
		rdmt_send_name(to_peer, &me);
	}

	/* the connection first */
	RDMT_POST(fi_recv(ep, buf, MSG, NULL, FI_ADDR_UNSPEC, &ctx));
	rdmt_peer_tell(to_peer, 'S', 0, 11);
	(void)wait_entry(&ctx, FI_RECV, rdmt_now_ms(), 10000, "first message");
	FDT_ASSERT(fdt_check(buf, MSG, 11), "first message: payload");
	rdmt_peer_done(from_peer);

	bad_input();
	waits();
	wait_thread();
	pollset();

	rdmt_peer_tell(to_peer, 'Q', 0, 0);
	FDT_ASSERT(rdmt_reap(pid) == 0, "peer failed");
#ifndef FDT_UPSTREAM
	/* upstream 1.17 closes a wait set that still has members */
	FDT_EXPECT(fi_close(&ws->fid), -FI_EBUSY);
#endif
	FDT_OK(fi_close(&ep->fid));
	FDT_OK(fi_close(&av->fid));
	FDT_OK(fi_close(&rcntr->fid));
#ifndef FDT_UPSTREAM
	FDT_EXPECT(fi_close(&ws->fid), -FI_EBUSY);	/* the CQ is still in it */
#endif
	FDT_OK(fi_close(&cq->fid));
	FDT_OK(fi_close(&ws->fid));
	rdmt_dom_close(&dom);
	return rdmt_pass("rdm_waitset");
}
