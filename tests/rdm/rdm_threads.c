/* FI_THREAD_SAFE on RDM endpoints, as an MPI library with
 * MPI_THREAD_MULTIPLE uses them: one domain opened FI_THREAD_SAFE, two
 * endpoints A and B in one process, NTHREADS threads sharing both. Each
 * thread posts NMSG tagged receives on B with its own tag, then sends
 * NMSG tagged messages with that tag from A to B (every LARGE_EVERY-th
 * one past the eager limit, so rendezvous reads run beside eager copies),
 * while every thread reads both CQs and hands each completion to the
 * operation it names. At the end every message must have landed in its
 * own thread's receive buffer, in that thread's posting order, every byte
 * checked, and every send must have completed once. Under TSan (label
 * tsan) this is the RDM layer's data race check. */
#include <pthread.h>
#include <stdatomic.h>

#include "rdmt.h"

#define NTHREADS 4
#define NMSG 120
#define SMALL 1000
#define LARGE (64 * 1024)
#define LARGE_EVERY 20

struct op {
	int thread, index, is_send;
	atomic_int done;	/* completions seen for it */
	atomic_int err;
	size_t len;		/* a receive's completion length */
	uint64_t tag;
};

static struct rdmt_dom dom;
static struct rdmt_ep ep_a, ep_b;
static fi_addr_t b_addr;
static struct op sends[NTHREADS][NMSG], recvs[NTHREADS][NMSG];
static uint8_t *sbuf[NTHREADS][NMSG], *rbuf[NTHREADS][NMSG];
static atomic_int completed;
static pthread_barrier_t start;

static size_t msg_len(int i)
{
	return i % LARGE_EVERY == LARGE_EVERY - 1 ? LARGE : SMALL + (size_t)i;
}

static uint32_t seed_of(int t, int i)
{
	return (uint32_t)(t * 100000 + i);
}

static void take(struct op *o, int err, size_t len, uint64_t tag)
{
	if (err)
		atomic_store(&o->err, err);
	o->len = len;
	o->tag = tag;
	atomic_fetch_add(&o->done, 1);
	atomic_fetch_add(&completed, 1);
}

/* One read of one CQ; every entry goes to its operation, whoever's. */
static void drain(struct fid_cq *cq)
{
	struct fi_cq_tagged_entry e[16];
	ssize_t n = fi_cq_read(cq, e, 16);

	if (n == -FI_EAVAIL) {
		struct fi_cq_err_entry err = { 0 };

		if (fi_cq_readerr(cq, &err, 0) == 1 && err.op_context)
			take(err.op_context, err.err ? err.err : FI_EOTHER, err.len, err.tag);
		else
			atomic_fetch_add(&completed, 1 << 20);	/* fails the count */
		return;
	}
	FDT_ASSERT(n >= 0 || n == -FI_EAGAIN, "fi_cq_read: %zd", n);
	for (ssize_t k = 0; k < n; k++)
		take(e[k].op_context, 0, e[k].len, e[k].tag);
}

static void progress_all(void)
{
	drain(ep_a.cq->cq);
	drain(ep_b.cq->cq);
}

#define POST(call)							\
	do {								\
		long rc_, end_ = rdmt_now_ms() + RDMT_WAIT_MS;		\
		while ((rc_ = (long)(call)) == -FI_EAGAIN) {		\
			progress_all();					\
			FDT_ASSERT(rdmt_now_ms() < end_, "%s: -FI_EAGAIN for %d ms", \
				   #call, RDMT_WAIT_MS);		\
		}							\
		FDT_ASSERT(rc_ == 0, "%s = %ld (%s)", #call, rc_,	\
			   fi_strerror((int)-rc_));			\
	} while (0)

static void *worker(void *arg)
{
	int t = (int)(intptr_t)arg;
	uint64_t tag = 0x5a00 + (uint64_t)t;
	long end;

	for (int i = 0; i < NMSG; i++) {
		struct op *r = &recvs[t][i];

		r->thread = t;
		r->index = i;
		POST(fi_trecv(ep_b.ep, rbuf[t][i], msg_len(i), NULL, FI_ADDR_UNSPEC,
			      tag, 0, r));
	}
	pthread_barrier_wait(&start);
	for (int i = 0; i < NMSG; i++) {
		struct op *s = &sends[t][i];

		s->thread = t;
		s->index = i;
		s->is_send = 1;
		POST(fi_tsend(ep_a.ep, sbuf[t][i], msg_len(i), NULL, b_addr, tag, s));
		progress_all();
	}
	end = rdmt_now_ms() + 4 * RDMT_WAIT_MS;
	while (atomic_load(&completed) < 2 * NTHREADS * NMSG) {
		progress_all();
		FDT_ASSERT(rdmt_now_ms() < end, "thread %d: %d of %d completions",
			   t, atomic_load(&completed), 2 * NTHREADS * NMSG);
	}
	return NULL;
}

int main(void)
{
	struct fi_info *hints = rdmt_hints(FI_MSG | FI_TAGGED);
	pthread_t th[NTHREADS];

	hints->domain_attr->threading = FI_THREAD_SAFE;
	rdmt_dom_open(&dom, hints);
	fi_freeinfo(hints);
	FDT_ASSERT(dom.info->domain_attr->threading == FI_THREAD_SAFE,
		   "threading %d", dom.info->domain_attr->threading);
	rdmt_ep_open(&dom, &ep_a, NULL, FI_AV_TABLE);
	rdmt_ep_open(&dom, &ep_b, NULL, FI_AV_TABLE);
	b_addr = rdmt_insert(&ep_a, &ep_b);
	(void)rdmt_insert(&ep_b, &ep_a);
	for (int t = 0; t < NTHREADS; t++)
		for (int i = 0; i < NMSG; i++) {
			sbuf[t][i] = malloc(msg_len(i));
			rbuf[t][i] = calloc(1, msg_len(i));
			FDT_ASSERT(sbuf[t][i] && rbuf[t][i], "buffers");
			fdt_fill(sbuf[t][i], msg_len(i), seed_of(t, i));
		}
	FDT_ASSERT(!pthread_barrier_init(&start, NULL, NTHREADS), "barrier");
	for (int t = 0; t < NTHREADS; t++)
		FDT_ASSERT(!pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t),
			   "thread %d", t);
	for (int t = 0; t < NTHREADS; t++)
		pthread_join(th[t], NULL);

	FDT_ASSERT(atomic_load(&completed) == 2 * NTHREADS * NMSG,
		   "%d completions for %d operations (an error without a context "
		   "counts 1 << 20)", atomic_load(&completed), 2 * NTHREADS * NMSG);
	for (int t = 0; t < NTHREADS; t++)
		for (int i = 0; i < NMSG; i++) {
			struct op *s = &sends[t][i], *r = &recvs[t][i];

			FDT_ASSERT(atomic_load(&s->done) == 1 && !atomic_load(&s->err),
				   "send %d/%d: %d completions, error %d", t, i,
				   atomic_load(&s->done), atomic_load(&s->err));
			FDT_ASSERT(atomic_load(&r->done) == 1 && !atomic_load(&r->err),
				   "receive %d/%d: %d completions, error %d", t, i,
				   atomic_load(&r->done), atomic_load(&r->err));
			FDT_ASSERT(r->len == msg_len(i) && r->tag == 0x5a00 + (uint64_t)t,
				   "receive %d/%d: length %zu tag %#llx", t, i, r->len,
				   (unsigned long long)r->tag);
			FDT_ASSERT(fdt_check(rbuf[t][i], msg_len(i), seed_of(t, i)),
				   "thread %d receive %d holds the wrong bytes", t, i);
			free(sbuf[t][i]);
			free(rbuf[t][i]);
		}
	pthread_barrier_destroy(&start);
	rdmt_ep_close(&ep_a);
	rdmt_ep_close(&ep_b);
	rdmt_dom_close(&dom);
	return rdmt_pass("rdm_threads");
}
