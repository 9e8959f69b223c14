/* EQs in wait sets and poll sets (issue 25), on the RDM fabric, with an
 * AV bound to the EQ (FI_EVENT) as the source of real events:
 *
 *  - bad input: fi_eq_open with FI_WAIT_SET and no set, or a poll set in
 *    the set's place: -FI_EINVAL;
 *  - an EQ opened with FI_WAIT_SET into a wait set: FI_GETWAIT gives an
 *    fd, FI_GETWAITOBJ FI_WAIT_FD; idle, fi_trywait on the set answers 0
 *    and fi_wait(300) times out (-FI_ETIMEDOUT);
 *  - another thread's fi_av_insert 500 ms later wakes the fi_wait(5 s) that
 *    was asleep; the FI_AV_COMPLETE is there to read;
 *  - a poll set holding the EQ: fi_poll 0 when idle, the EQ's context
 *    while the FI_AV_COMPLETE is unread (twice), 0 once it is read;
 *  - closing the EQ while a poll set holds it, and the wait set while the
 *    EQ is in it: -FI_EBUSY; each closes once emptied.
 * Before: fi_eq_open refused FI_WAIT_SET (-FI_ENOSYS) and fi_poll_add of
 * an EQ said -FI_EINVAL. */
#include <pthread.h>
#include <unistd.h>

#include "rdmt.h"

static struct rdmt_dom dom;
static struct rdmt_ep A;
static struct fid_av *av;
static int insert_token;
static fi_addr_t inserted;

static void *insert_later(void *arg)
{
	int ret;

	(void)arg;
	usleep(500 * 1000);
	ret = fi_av_insert(av, A.name, 1, &inserted, 0, &insert_token);
	FDT_ASSERT(ret == 0, "asynchronous insert = %d", ret);
	return NULL;
}

static void bad_input(struct fid_poll *ps)
{
	struct fi_eq_attr ea = { .wait_obj = FI_WAIT_SET };
	struct fid_eq *eq = NULL;

	FDT_EXPECT(fi_eq_open(dom.fabric, &ea, &eq, NULL), -FI_EINVAL);
	ea.wait_set = (struct fid_wait *)ps;	/* not a wait set */
	FDT_EXPECT(fi_eq_open(dom.fabric, &ea, &eq, NULL), -FI_EINVAL);
	FDT_ASSERT(eq == NULL, "an EQ from bad input");
}

int main(void)
{
	struct fi_info *hints = rdmt_hints(FI_MSG | FI_TAGGED);
	struct fi_wait_attr wa = { .wait_obj = FI_WAIT_FD };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE, .flags = FI_EVENT };
	struct fi_poll_attr pa = { 0 };
	struct fi_eq_attr ea = { .wait_obj = FI_WAIT_SET };
	struct fi_eq_entry entry;
	struct fid_wait *ws;
	struct fid_poll *ps;
	struct fid_eq *eq;
	struct fid *fid;
	enum fi_wait_obj obj = FI_WAIT_NONE;
	int eq_ctx, fd = -1, ret;
	void *ctx[4];
	uint32_t event = 0;
	pthread_t t;
	long t0, waited;
	ssize_t n;

	rdmt_dom_open(&dom, hints);
	fi_freeinfo(hints);
	rdmt_ep_open(&dom, &A, NULL, FI_AV_TABLE);
	FDT_OK(fi_wait_open(dom.fabric, &wa, &ws));
	FDT_OK(fi_poll_open(dom.domain, &pa, &ps));
	bad_input(ps);

	ea.wait_set = ws;
	ret = fi_eq_open(dom.fabric, &ea, &eq, &eq_ctx);
	FDT_ASSERT(ret == 0, "fi_eq_open(FI_WAIT_SET) = %d (%s)", ret, fi_strerror(-ret));
	FDT_OK(fi_control(&eq->fid, FI_GETWAIT, &fd));
	FDT_ASSERT(fd >= 0, "the EQ's wait fd: %d", fd);
	FDT_OK(fi_control(&eq->fid, FI_GETWAITOBJ, &obj));
	FDT_ASSERT(obj == FI_WAIT_FD, "FI_GETWAITOBJ = %d", (int)obj);
	FDT_OK(fi_av_open(dom.domain, &av_attr, &av, NULL));
	FDT_OK(fi_av_bind(av, &eq->fid, 0));

	/* idle: nothing to read, the set may be slept on */
	fid = &ws->fid;
	FDT_OK(fi_trywait(dom.fabric, &fid, 1));
	t0 = rdmt_now_ms();
	FDT_EXPECT(fi_wait(ws, 300), -FI_ETIMEDOUT);
	FDT_ASSERT(rdmt_now_ms() - t0 >= 250, "fi_wait(300) came back early");
	FDT_OK(fi_poll_add(ps, &eq->fid, 0));
	FDT_EXPECT(fi_poll_add(ps, &eq->fid, 0), -FI_EALREADY);
	FDT_EXPECT(fi_poll(ps, ctx, 4), 0);

	/* the insert's FI_AV_COMPLETE wakes the sleeper */
	FDT_ASSERT(pthread_create(&t, NULL, insert_later, NULL) == 0, "pthread_create");
	t0 = rdmt_now_ms();
	ret = fi_wait(ws, 5000);
	waited = rdmt_now_ms() - t0;
	FDT_ASSERT(ret == 0, "fi_wait = %d (%s)", ret, fi_strerror(-ret));
	FDT_ASSERT(waited >= 400 && waited < 4000, "woken after %ld ms", waited);
	pthread_join(t, NULL);
	printf("fi_wait woken by FI_AV_COMPLETE after %ld ms\n", waited);

	/* the poll set reports the EQ until its entry is read */
	for (int round = 0; round < 2; round++) {
		ctx[0] = NULL;
		n = fi_poll(ps, ctx, 4);
		FDT_ASSERT(n == 1 && ctx[0] == &eq_ctx, "fi_poll = %zd, context %p (EQ %p)",
			   n, ctx[0], (void *)&eq_ctx);
	}
	FDT_EXPECT(fi_trywait(dom.fabric, &fid, 1), -FI_EAGAIN);
	n = fi_eq_read(eq, &event, &entry, sizeof(entry), 0);
	FDT_ASSERT(n == (ssize_t)sizeof(entry) && event == FI_AV_COMPLETE &&
		   entry.data == 1 && entry.context == &insert_token,
		   "fi_eq_read = %zd, event %u, data %llu", n, event,
		   (unsigned long long)entry.data);
	FDT_ASSERT(inserted == 0, "fi_addr %llu", (unsigned long long)inserted);
	FDT_EXPECT(fi_poll(ps, ctx, 4), 0);
	FDT_OK(fi_trywait(dom.fabric, &fid, 1));

	/* closes */
	FDT_OK(fi_close(&av->fid));
	FDT_EXPECT(fi_close(&eq->fid), -FI_EBUSY);	/* in the poll set */
	FDT_EXPECT(fi_close(&ps->fid), -FI_EBUSY);
	FDT_OK(fi_poll_del(ps, &eq->fid, 0));
	FDT_OK(fi_close(&ps->fid));
	FDT_EXPECT(fi_close(&ws->fid), -FI_EBUSY);	/* the EQ is in it */
	FDT_OK(fi_close(&eq->fid));
	FDT_OK(fi_close(&ws->fid));
	rdmt_ep_close(&A);
	rdmt_dom_close(&dom);
	return rdmt_pass("rdm_eqset");
}
