/* Wait sets and poll sets over MSG CQs (issue 25). The server opens its
 * transmit and receive CQs with wait_obj FI_WAIT_SET into one wait set:
 *
 *  - bad input: fi_wait_open with no attr, flags, FI_WAIT_NONE or
 *    FI_WAIT_SET; fi_cq_open with FI_WAIT_SET and no set or a poll set in
 *    its place or a closed one; fi_poll_open with no attr or flags;
 *    fi_poll_add of NULL, the endpoint, the EQ, a closed CQ: -FI_EINVAL;
 *  - the set's FI_GETWAIT fd; idle, fi_trywait on the set answers 0 and
 *    fi_wait(300) times out with -FI_ETIMEDOUT;
 *  - the client's reply, sent 700 ms after our message, wakes the fi_wait
 *    that was asleep, and is on the receive CQ (the wakeup from another
 *    thread's post is in tests/rdm/rdm_waitset.c, FI_THREAD_SAFE);
 *  - a poll set of both CQs: 0 when idle; the client's reply makes
 *    exactly the receive CQ's context come back (twice while unread, then
 *    0); fi_poll_del;
 *  - closing a CQ held by a poll set, the poll set with members, the wait
 *    set with members: -FI_EBUSY; each closes once emptied;
 *  - EQs (issue 25, later): an EQ opened with FI_WAIT_SET joins the set,
 *    and another thread's fi_eq_write wakes the fi_wait asleep on it; the
 *    connection's EQ in a poll set: 0 while idle, then the client's
 *    FI_SHUTDOWN makes it come back (twice while unread, 0 once read).
 * Before: fi_wait_open and fi_poll_open returned -FI_ENOSYS, and the CQ
 * refused FI_WAIT_SET; later, fi_eq_open refused FI_WAIT_SET (-FI_ENOSYS)
 * and fi_poll_add of an EQ said -FI_EINVAL. */
#include <poll.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "fdt.h"

static uint8_t rbuf[64], sbuf[64];
static struct fid_mr *rmr, *smr;
static struct fid_wait *ws;

static long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000L + t.tv_nsec / 1000000;
}

static void pre(struct fdt_side *s, void *arg)
{
	(void)arg;
	rmr = fdt_reg(s, rbuf, sizeof(rbuf), FI_RECV);
	smr = fdt_reg(s, sbuf, sizeof(sbuf), FI_SEND);
	FDT_OK(fi_recv(s->ep, rbuf, sizeof(rbuf), fi_mr_desc(rmr), 0, rbuf));
}

/* fdt_server_accept, with both CQs in a wait set (contexts: the
 * addresses of the side's CQ pointers, as fabtests uses them). */
static void accept_into_set(struct fdt_side *s)
{
	uint8_t buf[sizeof(struct fi_eq_cm_entry) + 256];
	struct fi_eq_cm_entry *entry = (struct fi_eq_cm_entry *)buf;
	struct fi_wait_attr wa = { .wait_obj = FI_WAIT_FD };
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_SET };
	int ret;

	fdt_wait_event(s, FI_CONNREQ, buf, sizeof(buf));
	FDT_ASSERT(entry->info, "CONNREQ without info");
	FDT_OK(fi_domain(s->fabric, entry->info, &s->domain, NULL));
	ret = fi_wait_open(s->fabric, &wa, &ws);
	FDT_ASSERT(ret == 0, "fi_wait_open(FI_WAIT_FD) = %d (%s)", ret, fi_strerror(-ret));
	ca.wait_set = ws;
	ret = fi_cq_open(s->domain, &ca, &s->txcq, &s->txcq);
	FDT_ASSERT(ret == 0, "fi_cq_open(FI_WAIT_SET) = %d (%s)", ret, fi_strerror(-ret));
	FDT_OK(fi_cq_open(s->domain, &ca, &s->rxcq, &s->rxcq));
	FDT_OK(fi_endpoint(s->domain, entry->info, &s->ep, NULL));
	fi_freeinfo(entry->info);
	FDT_OK(fi_ep_bind(s->ep, &s->eq->fid, 0));
	FDT_OK(fi_ep_bind(s->ep, &s->txcq->fid, FI_TRANSMIT));
	FDT_OK(fi_ep_bind(s->ep, &s->rxcq->fid, FI_RECV));
	FDT_OK(fi_enable(s->ep));
	pre(s, NULL);
	FDT_OK(fi_accept(s->ep, NULL, 0));
	fdt_wait_event(s, FI_CONNECTED, buf, sizeof(buf));
}

static void bad_input(struct fdt_side *s)
{
	struct fi_wait_attr wa = { .wait_obj = FI_WAIT_UNSPEC };
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_SET };
	struct fi_poll_attr pa = { .flags = 1 };
	struct fid_wait *w = NULL;
	struct fid_poll *p = NULL;
	struct fid_cq *c = NULL;

	FDT_EXPECT(fi_wait_open(s->fabric, NULL, &w), -FI_EINVAL);
	wa.flags = 1;
	FDT_EXPECT(fi_wait_open(s->fabric, &wa, &w), -FI_EINVAL);
	wa.flags = 0;
	wa.wait_obj = FI_WAIT_NONE;
	FDT_EXPECT(fi_wait_open(s->fabric, &wa, &w), -FI_EINVAL);
	wa.wait_obj = FI_WAIT_SET;
	FDT_EXPECT(fi_wait_open(s->fabric, &wa, &w), -FI_EINVAL);
	FDT_EXPECT(fi_cq_open(s->domain, &ca, &c, NULL), -FI_EINVAL);
	FDT_EXPECT(fi_poll_open(s->domain, NULL, &p), -FI_EINVAL);
	FDT_EXPECT(fi_poll_open(s->domain, &pa, &p), -FI_EINVAL);
	pa.flags = 0;
	FDT_OK(fi_poll_open(s->domain, &pa, &p));
	ca.wait_set = (struct fid_wait *)p;	/* not a wait set */
	FDT_EXPECT(fi_cq_open(s->domain, &ca, &c, NULL), -FI_EINVAL);
	FDT_ASSERT(w == NULL && c == NULL, "an object from bad input");
	FDT_EXPECT(fi_poll_add(p, NULL, 0), -FI_EINVAL);
	FDT_EXPECT(fi_poll_add(p, &s->ep->fid, 0), -FI_EINVAL);
	FDT_OK(fi_poll_add(p, &s->eq->fid, 0));		/* EQs are members too */
	FDT_OK(fi_poll_del(p, &s->eq->fid, 0));
	FDT_EXPECT(fi_poll_add(p, &s->txcq->fid, 1), -FI_EBADFLAGS);
	/* a closed wait set is no set */
	wa.wait_obj = FI_WAIT_UNSPEC;
	FDT_OK(fi_wait_open(s->fabric, &wa, &w));
	FDT_OK(fi_close(&w->fid));
	ca.wait_set = w;
	FDT_EXPECT(fi_cq_open(s->domain, &ca, &c, NULL), -FI_EINVAL);
	FDT_ASSERT(c == NULL, "a CQ in a closed wait set");
	FDT_EXPECT(fi_poll_del(p, &s->txcq->fid, 0), -FI_EINVAL);
	FDT_OK(fi_close(&p->fid));
	printf("bad input: -FI_EINVAL as expected\n");
}

static struct fid_eq *set_eq;

static void *write_later(void *arg)
{
	uint32_t v = 0xe0e0e0e0u;

	(void)arg;
	usleep(300 * 1000);
	FDT_ASSERT(fi_eq_write(set_eq, FI_NOTIFY, &v, sizeof(v), 0) == sizeof(v),
		   "fi_eq_write");
	return NULL;
}

/* An EQ in the wait set: another thread's event wakes the sleeper. */
static void eq_in_set(struct fdt_side *s)
{
	struct fi_eq_attr ea = { .wait_obj = FI_WAIT_SET, .wait_set = ws };
	uint32_t event = 0, v = 0;
	pthread_t t;
	long t0, waited;
	int ret;

	ret = fi_eq_open(s->fabric, &ea, &set_eq, NULL);
	FDT_ASSERT(ret == 0, "fi_eq_open(FI_WAIT_SET) = %d (%s)", ret, fi_strerror(-ret));
	FDT_ASSERT(pthread_create(&t, NULL, write_later, NULL) == 0, "pthread_create");
	t0 = now_ms();
	ret = fi_wait(ws, 5000);
	waited = now_ms() - t0;
	pthread_join(t, NULL);
	FDT_ASSERT(ret == 0, "fi_wait = %d (%s)", ret, fi_strerror(-ret));
	FDT_ASSERT(waited >= 200 && waited < 4000, "woken after %ld ms", waited);
	FDT_ASSERT(fi_eq_read(set_eq, &event, &v, sizeof(v), 0) == sizeof(v) &&
		   event == FI_NOTIFY && v == 0xe0e0e0e0u, "the EQ's event");
	FDT_EXPECT(fi_close(&ws->fid), -FI_EBUSY);
	FDT_OK(fi_close(&set_eq->fid));
	printf("EQ in the wait set: fi_wait woken after %ld ms\n", waited);
}

/* Post a message of seed and wait for its send completion. */
static void send_one(struct fdt_side *s, uint32_t seed)
{
	struct fi_cq_entry e;

	fdt_fill(sbuf, 64, seed);
	FDT_OK(fi_send(s->ep, sbuf, 64, fi_mr_desc(smr), 0, sbuf));
	FDT_ASSERT(fdt_wait_cq(s->txcq, &e, NULL) == 1 && e.op_context == sbuf,
		   "send completion");
}

static int server(struct fdt_side *s, void *arg)
{
	struct fi_cq_entry e;
	struct fid *fid;
	struct fid_poll *ps;
	struct fid_cq *spare;
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_SET };
	enum fi_wait_obj wo = FI_WAIT_NONE;
	void *got[4];
	long t0, end;
	ssize_t n;
	int fd = -1, ret;

	(void)arg;
	accept_into_set(s);
	bad_input(s);

	FDT_OK(fi_control(&ws->fid, FI_GETWAIT, &fd));
	FDT_ASSERT(fd >= 0, "wait set FI_GETWAIT fd %d", fd);
	FDT_OK(fi_control(&ws->fid, FI_GETWAITOBJ, &wo));
	FDT_ASSERT(wo == FI_WAIT_FD, "wait set FI_GETWAITOBJ %d", (int)wo);

	/* idle: fi_wait arms the set itself and times out */
	t0 = now_ms();
	FDT_EXPECT(fi_wait(ws, 300), -FI_ETIMEDOUT);
	FDT_ASSERT(now_ms() - t0 >= 250 && now_ms() - t0 < 3000,
		   "idle fi_wait(300) returned after %ld ms", now_ms() - t0);

	/* the client replies 700 ms after our message: fi_wait sleeps until */
	send_one(s, 7);
	t0 = now_ms();
	end = t0 + 5000;
	while ((n = fi_cq_read(s->rxcq, &e, 1)) == -FI_EAGAIN) {
		FDT_ASSERT(now_ms() < end, "no reply within 5 s");
		ret = fi_wait(ws, (int)(end - now_ms()));
		FDT_ASSERT(ret == 0 || ret == -FI_ETIMEDOUT, "fi_wait = %d (%s)", ret,
			   fi_strerror(-ret));
	}
	FDT_ASSERT(n == 1 && e.op_context == rbuf && fdt_check(rbuf, 64, 8), "reply: %zd", n);
	FDT_ASSERT(now_ms() - t0 >= 600, "reply after %ld ms, before it was sent",
		   now_ms() - t0);
	FDT_ASSERT(now_ms() - t0 < 3500, "the reply sent at 700 ms woke fi_wait after %ld ms",
		   now_ms() - t0);
	printf("fi_wait woken by the reply after %ld ms\n", now_ms() - t0);
	FDT_OK(fi_recv(s->ep, rbuf, sizeof(rbuf), fi_mr_desc(rmr), 0, rbuf));

	/* idle again: fi_trywait on the set arms it (0), its fd stays quiet */
	fid = &ws->fid;
	FDT_OK(fi_trywait(s->fabric, &fid, 1));
	{
		struct pollfd p = { .fd = fd, .events = POLLIN };

		FDT_ASSERT(poll(&p, 1, 200) == 0, "idle: the wait set's fd is readable");
	}
	eq_in_set(s);

	/* poll set: the client replies 700 ms after our message */
	FDT_OK(fi_poll_open(s->domain, &(struct fi_poll_attr){ 0 }, &ps));
	FDT_OK(fi_poll_add(ps, &s->txcq->fid, 0));
	FDT_OK(fi_poll_add(ps, &s->rxcq->fid, 0));
	FDT_EXPECT(fi_poll(ps, got, 4), 0);
	send_one(s, 10);
	FDT_EXPECT(fi_poll(ps, got, 4), 0);	/* the send completion is read */
	end = now_ms() + 5000;
	while ((ret = fi_poll(ps, got, 4)) == 0)
		FDT_ASSERT(now_ms() < end, "fi_poll: nothing within 5 s of the reply");
	FDT_ASSERT(ret == 1 && got[0] == &s->rxcq, "fi_poll on the reply = %d (%p, rxcq %p)",
		   ret, ret > 0 ? got[0] : NULL, (void *)&s->rxcq);
	ret = fi_poll(ps, got, 4);
	FDT_ASSERT(ret == 1 && got[0] == &s->rxcq, "fi_poll with the reply unread = %d", ret);
	FDT_ASSERT(fi_cq_read(s->rxcq, &e, 1) == 1 && e.op_context == rbuf &&
		   fdt_check(rbuf, 64, 11), "the second reply");
	FDT_EXPECT(fi_poll(ps, got, 4), 0);
	FDT_OK(fi_poll_del(ps, &s->rxcq->fid, 0));
	FDT_EXPECT(fi_poll_del(ps, &s->rxcq->fid, 0), -FI_EINVAL);

	/* -FI_EBUSY while held */
	ca.wait_set = ws;
	FDT_OK(fi_cq_open(s->domain, &ca, &spare, &spare));
	FDT_OK(fi_poll_add(ps, &spare->fid, 0));
	FDT_EXPECT(fi_close(&spare->fid), -FI_EBUSY);
	FDT_EXPECT(fi_close(&ps->fid), -FI_EBUSY);
	FDT_OK(fi_poll_del(ps, &spare->fid, 0));
	FDT_OK(fi_close(&spare->fid));
	/* a closed CQ is known as closed by its address alone */
	FDT_EXPECT(fi_poll_add(ps, &spare->fid, 0), -FI_EINVAL);
	FDT_OK(fi_poll_del(ps, &s->txcq->fid, 0));
	FDT_OK(fi_close(&ps->fid));
	FDT_EXPECT(fi_close(&ws->fid), -FI_EBUSY);
	printf("poll set: exactly the receive CQ; fi_poll_del; -FI_EBUSY while held\n");

	/* the client's last receive, then down: its FI_SHUTDOWN on our EQ
	 * shows in a poll set */
	FDT_OK(fi_poll_open(s->domain, &(struct fi_poll_attr){ 0 }, &ps));
	FDT_OK(fi_poll_add(ps, &s->eq->fid, 0));
	FDT_EXPECT(fi_poll(ps, got, 4), 0);
	send_one(s, 13);
	end = now_ms() + 10000;
	while ((ret = fi_poll(ps, got, 4)) == 0)
		FDT_ASSERT(now_ms() < end, "fi_poll: no FI_SHUTDOWN within 10 s");
	FDT_ASSERT(ret == 1 && got[0] == s->eq->fid.context, "fi_poll on the EQ = %d", ret);
	FDT_EXPECT(fi_poll(ps, got, 4), 1);	/* unread */
	{
		uint8_t ev[sizeof(struct fi_eq_cm_entry) + 64];

		fdt_wait_event(s, FI_SHUTDOWN, ev, sizeof(ev));
	}
	FDT_EXPECT(fi_poll(ps, got, 4), 0);
	FDT_OK(fi_poll_del(ps, &s->eq->fid, 0));
	FDT_OK(fi_close(&ps->fid));
	printf("poll set: the EQ's FI_SHUTDOWN\n");
	FDT_OK(fi_close(&s->ep->fid));
	s->ep = NULL;
	FDT_OK(fi_close(&s->txcq->fid));
	s->txcq = NULL;
	FDT_EXPECT(fi_close(&ws->fid), -FI_EBUSY);	/* the receive CQ */
	FDT_OK(fi_close(&s->rxcq->fid));
	s->rxcq = NULL;
	FDT_OK(fi_close(&ws->fid));
	FDT_OK(fi_close(&rmr->fid));
	FDT_OK(fi_close(&smr->fid));
	fdt_close_side(s);
	return 0;
}

static void client_pre(struct fdt_side *s, void *arg)
{
	(void)arg;
	pre(s, NULL);
}

static int client(struct fdt_side *s, void *arg)
{
	struct fi_cq_data_entry e;	/* fdt_open_ep's CQs: FI_CQ_FORMAT_DATA */

	(void)arg;
	fdt_client_connect(s, NULL, NULL, client_pre, NULL);
	for (uint32_t k = 7; k <= 10; k += 3) {
		FDT_ASSERT(fdt_wait_cq_ms(s->rxcq, &e, NULL, 30000) == 1, "server's message");
		FDT_ASSERT(fdt_check(rbuf, 64, k), "server's message %u payload", k);
		FDT_OK(fi_recv(s->ep, rbuf, sizeof(rbuf), fi_mr_desc(rmr), 0, rbuf));
		usleep(700 * 1000);
		fdt_fill(sbuf, 64, k + 1);
		FDT_OK(fi_send(s->ep, sbuf, 64, fi_mr_desc(smr), 0, sbuf));
		FDT_ASSERT(fdt_wait_cq(s->txcq, &e, NULL) == 1, "reply completion");
	}
	FDT_ASSERT(fdt_wait_cq_ms(s->rxcq, &e, NULL, 30000) == 1, "server's last message");
	FDT_ASSERT(fdt_check(rbuf, 64, 13), "server's last message payload");
	FDT_OK(fi_shutdown(s->ep, 0));
	FDT_OK(fi_close(&rmr->fid));
	FDT_OK(fi_close(&smr->fid));
	fdt_close_side(s);
	return 0;
}

int main(void)
{
	struct fi_info *hints = fdt_hints();
	int rc;

	rc = fdt_run_pair(hints, server, client, NULL);
	fi_freeinfo(hints);
	printf("test_waitset: %s\n", rc ? "FAILED" : "ok");
	return rc;
}
