/* The RDM layer's counters without a device: fdm_cntr_open never touches
 * its domain, so a bare fid_domain stands in. Checks attribute validation,
 * read/add/set and their error twins, fi_cntr_wait (threshold reached,
 * timeout, -FI_EAVAIL on a new error, progress driven while waiting, a
 * sleeper woken by another thread), the eventfd's readiness and fi_close's
 * refusal while an endpoint is bound. */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include "fdm_cntr.h"
#include "fdt_check.h"

static struct fid_domain fake_domain = { .fid = { .fclass = FI_CLASS_DOMAIN } };

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

static int readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

static struct fid_cntr *open_cntr(enum fi_wait_obj wait)
{
	struct fi_cntr_attr attr = { .events = FI_CNTR_EVENTS_COMP, .wait_obj = wait };
	struct fid_cntr *c = NULL;

	CHECK_EQ(fdm_cntr_open(&fake_domain, &attr, &c, (void *)0x1234), 0);
	if (!c) {
		fprintf(stderr, "cannot open a counter\n");
		exit(1);
	}
	return c;
}

static void test_attrs(void)
{
	struct fi_cntr_attr attr = { .events = FI_CNTR_EVENTS_COMP };
	struct fid_cntr *c = NULL;

	CHECK_EQ(fdm_cntr_open(&fake_domain, &attr, NULL, NULL), -FI_EINVAL);
	CHECK_EQ(fdm_cntr_open(NULL, &attr, &c, NULL), -FI_EINVAL);
	attr.events = (enum fi_cntr_events)1;
	CHECK_EQ(fdm_cntr_open(&fake_domain, &attr, &c, NULL), -FI_ENOSYS);
	attr.events = FI_CNTR_EVENTS_COMP;
	attr.flags = 1;
	CHECK_EQ(fdm_cntr_open(&fake_domain, &attr, &c, NULL), -FI_EINVAL);
	attr.flags = 0;
	attr.wait_obj = FI_WAIT_SET;	/* with no wait set named */
	CHECK_EQ(fdm_cntr_open(&fake_domain, &attr, &c, NULL), -FI_EINVAL);
	attr.wait_obj = FI_WAIT_MUTEX_COND;
	CHECK_EQ(fdm_cntr_open(&fake_domain, &attr, &c, NULL), -FI_ENOSYS);
	CHECK(c == NULL);

	/* NULL attr: the defaults (completion events, FI_WAIT_UNSPEC) */
	CHECK_EQ(fdm_cntr_open(&fake_domain, NULL, &c, (void *)0x99), 0);
	if (c) {
		enum fi_wait_obj w = FI_WAIT_NONE;

		CHECK_EQ(c->fid.fclass, FI_CLASS_CNTR);
		CHECK(c->fid.context == (void *)0x99);
		CHECK_EQ(fi_control(&c->fid, FI_GETWAITOBJ, &w), 0);
		CHECK_EQ(w, FI_WAIT_FD);
		CHECK_EQ(fi_control(&c->fid, FI_GETWAIT, NULL), -FI_EINVAL);
		CHECK_EQ(fi_control(&c->fid, 12345, NULL), -FI_ENOSYS);
		CHECK_EQ(fi_close(&c->fid), 0);
	}
}

static void test_values(void)
{
	struct fid_cntr *c = open_cntr(FI_WAIT_NONE);
	int fd = -1;

	CHECK_EQ(fi_cntr_read(c), 0);
	CHECK_EQ(fi_cntr_readerr(c), 0);
	CHECK_EQ(fi_cntr_add(c, 5), 0);
	CHECK_EQ(fi_cntr_read(c), 5);
	fdm_cntr_inc(c);
	CHECK_EQ(fi_cntr_read(c), 6);
	CHECK_EQ(fi_cntr_set(c, 2), 0);
	CHECK_EQ(fi_cntr_read(c), 2);
	CHECK_EQ(fi_cntr_set(c, UINT64_MAX - 1), 0);
	fdm_cntr_inc(c);
	CHECK(fi_cntr_read(c) == UINT64_MAX);

	CHECK_EQ(fi_cntr_adderr(c, 3), 0);
	fdm_cntr_inc_err(c);
	CHECK_EQ(fi_cntr_readerr(c), 4);
	CHECK_EQ(fi_cntr_seterr(c, 1), 0);
	CHECK_EQ(fi_cntr_readerr(c), 1);
	CHECK(fi_cntr_read(c) == UINT64_MAX);	/* errors leave the value alone */

	/* FI_WAIT_NONE: the user promised never to wait */
	CHECK_EQ(fi_cntr_wait(c, 1, 0), -FI_ENOSYS);
	CHECK_EQ(fi_control(&c->fid, FI_GETWAIT, &fd), -FI_ENODATA);
	CHECK_EQ(fi_close(&c->fid), 0);
}

struct prog_state {
	struct fid_cntr *cntr;
	int calls;
	int inc_at;	/* count a success on this call */
	int err_at;	/* count an error on this call */
};

static void prog_fn(void *arg)
{
	struct prog_state *s = arg;

	s->calls++;
	if (s->calls == s->inc_at)
		fdm_cntr_inc(s->cntr);
	if (s->calls == s->err_at)
		fdm_cntr_inc_err(s->cntr);
}

static void test_wait_progress(void)
{
	struct fid_cntr *c = open_cntr(FI_WAIT_UNSPEC);
	struct prog_state s = { .cntr = c, .inc_at = 50, .err_at = -1 };
	long t0;

	CHECK_EQ(fi_cntr_wait(c, 0, 0), 0);	/* already there */
	t0 = now_ms();
	CHECK_EQ(fi_cntr_wait(c, 1, 30), -FI_ETIMEDOUT);
	CHECK(now_ms() - t0 >= 29);

	CHECK_EQ(fdm_cntr_add_progress(c, prog_fn, &s), 0);
	CHECK_EQ(fdm_cntr_add_progress(NULL, prog_fn, &s), -FI_EINVAL);
	CHECK_EQ(fdm_cntr_add_progress(c, NULL, &s), -FI_EINVAL);
	/* the wait itself drives the endpoint until its 50th call counts */
	CHECK_EQ(fi_cntr_wait(c, 1, 5000), 0);
	CHECK_EQ(s.calls, 50);
	CHECK_EQ(fi_cntr_read(c), 1);
	CHECK_EQ(s.calls, 51);			/* fi_cntr_read progresses too */
	(void)fi_cntr_readerr(c);
	CHECK_EQ(s.calls, 52);

	/* a new error ends the wait with -FI_EAVAIL */
	s.err_at = s.calls + 10;
	CHECK_EQ(fi_cntr_wait(c, 100, 5000), -FI_EAVAIL);
	CHECK_EQ(fi_cntr_readerr(c), 1);
	CHECK_EQ(fi_cntr_read(c), 1);
	/* errors from before the wait do not end it */
	t0 = now_ms();
	CHECK_EQ(fi_cntr_wait(c, 100, 20), -FI_ETIMEDOUT);
	CHECK(now_ms() - t0 >= 19);

	/* bound: close refuses, as many times as it was bound */
	CHECK_EQ(fdm_cntr_add_progress(c, prog_fn, &s), 0);
	CHECK_EQ(fi_close(&c->fid), -FI_EBUSY);
	fdm_cntr_del_progress(c, &s);
	CHECK_EQ(fi_close(&c->fid), -FI_EBUSY);
	s.calls = 0;
	CHECK_EQ(fi_cntr_read(c), 1);
	CHECK_EQ(s.calls, 1);			/* still bound once */
	fdm_cntr_del_progress(c, &s);
	fdm_cntr_del_progress(c, &s);		/* unknown: ignored */
	s.calls = 0;
	CHECK_EQ(fi_cntr_read(c), 1);
	CHECK_EQ(s.calls, 0);
	CHECK_EQ(fi_close(&c->fid), 0);
}

static void test_many_bindings(void)
{
	struct fid_cntr *c = open_cntr(FI_WAIT_UNSPEC);
	struct prog_state s[9];
	int i;

	memset(s, 0, sizeof(s));
	for (i = 0; i < 9; i++) {
		s[i].cntr = c;
		s[i].inc_at = s[i].err_at = -1;
		CHECK_EQ(fdm_cntr_add_progress(c, prog_fn, &s[i]), 0);
	}
	(void)fi_cntr_read(c);
	for (i = 0; i < 9; i++)
		CHECK_EQ(s[i].calls, 1);
	fdm_cntr_del_progress(c, &s[4]);
	(void)fi_cntr_read(c);
	for (i = 0; i < 9; i++)
		CHECK_EQ(s[i].calls, i == 4 ? 1 : 2);
	for (i = 0; i < 9; i++)
		if (i != 4)
			fdm_cntr_del_progress(c, &s[i]);
	CHECK_EQ(fi_close(&c->fid), 0);
}

static void test_fd(void)
{
	struct fid_cntr *c = open_cntr(FI_WAIT_FD);
	enum fi_wait_obj w = FI_WAIT_NONE;
	int fd = -1;

	CHECK_EQ(fi_control(&c->fid, FI_GETWAITOBJ, &w), 0);
	CHECK_EQ(w, FI_WAIT_FD);
	CHECK_EQ(fi_control(&c->fid, FI_GETWAIT, &fd), 0);
	CHECK(fd >= 0);
	CHECK(!readable(fd));
	fdm_cntr_inc(c);
	CHECK(readable(fd));
	fdm_cntr_inc(c);			/* one pending signal is enough */
	CHECK(readable(fd));
	CHECK_EQ(fi_cntr_read(c), 2);
	CHECK(!readable(fd));			/* reading drains it */
	fdm_cntr_inc_err(c);
	CHECK(readable(fd));
	CHECK_EQ(fi_cntr_readerr(c), 1);
	CHECK(!readable(fd));
	CHECK_EQ(fi_cntr_add(c, 3), 0);
	CHECK(readable(fd));
	CHECK_EQ(fi_cntr_read(c), 5);
	CHECK_EQ(fi_cntr_set(c, 0), 0);
	CHECK(readable(fd));
	CHECK_EQ(fi_cntr_read(c), 0);
	CHECK_EQ(fi_cntr_seterr(c, 0), 0);
	CHECK(readable(fd));
	CHECK_EQ(fi_cntr_readerr(c), 0);
	CHECK_EQ(fi_cntr_adderr(c, 1), 0);
	CHECK(readable(fd));
	CHECK_EQ(fi_close(&c->fid), 0);

	/* FI_WAIT_UNSPEC hands out the same kind of fd, which from then on
	 * hears every change */
	c = open_cntr(FI_WAIT_UNSPEC);
	fdm_cntr_inc(c);
	CHECK_EQ(fi_control(&c->fid, FI_GETWAIT, &fd), 0);
	CHECK(!readable(fd));
	fdm_cntr_inc(c);
	CHECK(readable(fd));
	CHECK_EQ(fi_cntr_read(c), 2);
	CHECK(!readable(fd));
	CHECK_EQ(fi_close(&c->fid), 0);
}

struct adder {
	struct fid_cntr *cntr;
	int delay_ms;
	int error;
};

static void *adder_thread(void *arg)
{
	struct adder *a = arg;

	usleep((useconds_t)a->delay_ms * 1000);
	if (a->error)
		fi_cntr_adderr(a->cntr, 1);
	else
		fi_cntr_add(a->cntr, 10);
	return NULL;
}

/* With no endpoint bound the waiter sleeps on the eventfd; another
 * thread's fi_cntr_add / adderr must wake it. */
static void test_sleeper_woken(void)
{
	struct fid_cntr *c = open_cntr(FI_WAIT_UNSPEC);
	struct adder a = { .cntr = c, .delay_ms = 30 };
	pthread_t t;

	CHECK_EQ(pthread_create(&t, NULL, adder_thread, &a), 0);
	CHECK_EQ(fi_cntr_wait(c, 10, 10000), 0);
	pthread_join(t, NULL);
	CHECK_EQ(fi_cntr_read(c), 10);

	a.error = 1;
	CHECK_EQ(pthread_create(&t, NULL, adder_thread, &a), 0);
	CHECK_EQ(fi_cntr_wait(c, 11, 10000), -FI_EAVAIL);
	pthread_join(t, NULL);
	CHECK_EQ(fi_cntr_readerr(c), 1);
	CHECK_EQ(fi_close(&c->fid), 0);
}

int main(void)
{
	test_attrs();
	test_values();
	test_wait_progress();
	test_many_bindings();
	test_fd();
	test_sleeper_woken();
	if (fdt_check_failures) {
		fprintf(stderr, "test_cntr: %d failure(s)\n", fdt_check_failures);
		return 1;
	}
	printf("test_cntr: all checks passed\n");
	return 0;
}
