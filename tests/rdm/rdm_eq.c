/* Event queues of the RDM fabric, waited on the way fabtests' fi_eq_test
 * does it (issue 21: fi_trywait on the RDM fabric always said -FI_EAGAIN,
 * so a waiter could never block on the EQ's fd). For FI_WAIT_UNSPEC and
 * FI_WAIT_FD:
 * - empty EQ: fi_eq_read -FI_EAGAIN, fi_trywait 0, the FI_GETWAIT fd does
 *   not turn readable, fi_eq_sread with a timeout returns -FI_EAGAIN after
 *   about that long;
 * - a written event: the fd readable, fi_trywait -FI_EAGAIN, read back
 *   whole (peek first), then empty again: fi_trywait 0, fd quiet;
 * - a thread writes while this one sleeps in poll() on the fd, and again
 *   while it sleeps in fi_eq_sread: both wake with the event, well before
 *   their timeouts;
 * - fi_trywait with no objects, a NULL list, a NULL entry;
 * - the fabric keeps the API version it was opened for (the library's
 *   when none is named; the layer's EQs read errors by it), and
 *   fi_domain2 opens a domain without flags and refuses any. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "rdmt.h"

static struct rdmt_dom dom;

struct writer {
	struct fid_eq *eq;
	int delay_ms;
	uint64_t data;
	long rc;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	struct fi_eq_entry e = { .context = &dom, .data = w->data };

	usleep((useconds_t)w->delay_ms * 1000);
	w->rc = fi_eq_write(w->eq, FI_NOTIFY, &e, sizeof(e), 0);
	return NULL;
}

static int fd_ready(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n;

	do
		n = poll(&p, 1, ms);
	while (n < 0 && errno == EINTR);
	FDT_ASSERT(n >= 0, "poll: %s", strerror(errno));
	return n > 0 && (p.revents & POLLIN);
}

static void check_entry(const struct fi_eq_entry *e, uint32_t event, ssize_t n,
			uint64_t data, const char *what)
{
	FDT_ASSERT(n == (ssize_t)sizeof(*e), "%s: %zd (%s)", what, n,
		   n < 0 ? fi_strerror((int)-n) : "bytes");
	FDT_ASSERT(event == FI_NOTIFY, "%s: event %u", what, event);
	FDT_ASSERT(e->context == &dom && e->data == data,
		   "%s: context %p data %#llx, expected %p %#llx", what, e->context,
		   (unsigned long long)e->data, (void *)&dom, (unsigned long long)data);
}

static void one_eq(enum fi_wait_obj wait_obj)
{
	struct fi_eq_attr attr = { .size = 64, .wait_obj = wait_obj };
	struct fi_eq_entry e = { .context = &dom, .data = 0x2101 };
	struct fid_eq *eq;
	struct fid *fid;
	struct writer w;
	pthread_t th;
	uint32_t event;
	long t0, dt;
	ssize_t n;
	int fd = -1;

	FDT_OK(fi_eq_open(dom.fabric, &attr, &eq, NULL));
	fid = &eq->fid;
	FDT_OK(fi_control(fid, FI_GETWAIT, &fd));
	FDT_ASSERT(fd >= 0, "FI_GETWAIT fd %d", fd);

	/* empty: nothing to read, safe to wait, and the fd stays quiet */
	FDT_EXPECT(fi_eq_read(eq, &event, &e, sizeof(e), 0), -FI_EAGAIN);
	FDT_EXPECT(fi_trywait(dom.fabric, &fid, 1), 0);
	FDT_ASSERT(!fd_ready(fd, 200), "empty EQ: its fd turned readable");
	t0 = rdmt_now_ms();
	n = fi_eq_sread(eq, &event, &e, sizeof(e), 300, 0);
	dt = rdmt_now_ms() - t0;
	FDT_ASSERT(n == -FI_EAGAIN, "fi_eq_sread of an empty EQ: %zd (%s)", n,
		   n < 0 ? fi_strerror((int)-n) : "bytes");
	FDT_ASSERT(dt >= 250 && dt < 5000, "fi_eq_sread(300 ms) took %ld ms", dt);

	/* one event: the fd says so, it is not safe to wait, it reads back
	 * whole. (The fd first: after a -FI_EAGAIN the caller must read, and
	 * upstream's trywait clears the fd before it looks.) */
	e.data = 0x2102;
	FDT_EXPECT(fi_eq_write(eq, FI_NOTIFY, &e, sizeof(e), 0), (long)sizeof(e));
	FDT_ASSERT(fd_ready(fd, 1000), "EQ with an event: fd not readable");
	FDT_EXPECT(fi_trywait(dom.fabric, &fid, 1), -FI_EAGAIN);
	memset(&e, 0, sizeof(e));
	event = 0;
	n = fi_eq_read(eq, &event, &e, sizeof(e), FI_PEEK);
	check_entry(&e, event, n, 0x2102, "fi_eq_read(FI_PEEK)");
	FDT_EXPECT(fi_trywait(dom.fabric, &fid, 1), -FI_EAGAIN);
	memset(&e, 0, sizeof(e));
	event = 0;
	n = fi_eq_read(eq, &event, &e, sizeof(e), 0);
	check_entry(&e, event, n, 0x2102, "fi_eq_read");
	FDT_EXPECT(fi_eq_read(eq, &event, &e, sizeof(e), 0), -FI_EAGAIN);
	FDT_EXPECT(fi_trywait(dom.fabric, &fid, 1), 0);
	FDT_ASSERT(!fd_ready(fd, 100), "drained EQ: fd still readable");

	/* a sleeper in poll() on the fd wakes when another thread writes */
	w = (struct writer){ .eq = eq, .delay_ms = 200, .data = 0x2103 };
	FDT_EXPECT(fi_trywait(dom.fabric, &fid, 1), 0);
	FDT_ASSERT(!pthread_create(&th, NULL, writer_main, &w), "pthread_create");
	t0 = rdmt_now_ms();
	FDT_ASSERT(fd_ready(fd, 5000), "poll on the EQ's fd: no wake-up in 5 s");
	dt = rdmt_now_ms() - t0;
	pthread_join(th, NULL);
	FDT_ASSERT(w.rc == (long)sizeof(e), "fi_eq_write from a thread: %ld", w.rc);
	FDT_ASSERT(dt < 4000, "poll woke after %ld ms", dt);
	n = fi_eq_read(eq, &event, &e, sizeof(e), 0);
	check_entry(&e, event, n, 0x2103, "fi_eq_read after poll");

	/* and a sleeper in fi_eq_sread */
	w = (struct writer){ .eq = eq, .delay_ms = 200, .data = 0x2104 };
	FDT_ASSERT(!pthread_create(&th, NULL, writer_main, &w), "pthread_create");
	t0 = rdmt_now_ms();
	memset(&e, 0, sizeof(e));
	event = 0;
	n = fi_eq_sread(eq, &event, &e, sizeof(e), 5000, 0);
	dt = rdmt_now_ms() - t0;
	pthread_join(th, NULL);
	check_entry(&e, event, n, 0x2104, "fi_eq_sread woken by a write");
	FDT_ASSERT(dt < 4000, "fi_eq_sread woke after %ld ms", dt);
	FDT_EXPECT(fi_trywait(dom.fabric, &fid, 1), 0);

	FDT_OK(fi_close(fid));
}

#ifndef FDT_UPSTREAM
static void check_fabric(uint32_t version)
{
	struct fi_fabric_attr attr = *dom.info->fabric_attr;
	struct fid_fabric *fab;
	struct fid_domain *d;
	struct fid_eq *eq;
	struct fi_eq_attr eq_attr = { .size = 8, .wait_obj = FI_WAIT_NONE };

	attr.api_version = version;
	FDT_OK(fi_fabric(&attr, &fab, NULL));
	FDT_ASSERT(fab->api_version == (version ? version : fi_version()),
		  "fabric opened for %#x reports API version %#x", version,
		  fab->api_version);
	FDT_EXPECT(fi_domain2(fab, dom.info, &d, 1ULL << 50, NULL), -FI_EBADFLAGS);
	FDT_OK(fi_domain2(fab, dom.info, &d, 0, NULL));
	FDT_OK(fi_eq_open(fab, &eq_attr, &eq, NULL));
	/* the fabric stays while anything opened on it is open */
	FDT_EXPECT(fi_close(&fab->fid), -FI_EBUSY);
	FDT_OK(fi_close(&d->fid));
	FDT_EXPECT(fi_close(&fab->fid), -FI_EBUSY);
	FDT_OK(fi_close(&eq->fid));
	FDT_OK(fi_close(&fab->fid));
}
#endif

int main(void)
{
	struct fi_info *hints = rdmt_hints(FI_MSG | FI_TAGGED);

	rdmt_dom_open(&dom, hints);
	fi_freeinfo(hints);
	one_eq(FI_WAIT_UNSPEC);
	one_eq(FI_WAIT_FD);
	/* nothing to wait for is no reason not to */
	FDT_EXPECT(fi_trywait(dom.fabric, NULL, 0), 0);
#ifndef FDT_UPSTREAM
	/* upstream 1.17 reads the list without a check */
	{
		struct fid *none = NULL;

		FDT_EXPECT(fi_trywait(dom.fabric, NULL, 1), -FI_EINVAL);
		FDT_EXPECT(fi_trywait(dom.fabric, &none, 1), -FI_EINVAL);
	}
	check_fabric(0);
	check_fabric(FI_VERSION(1, 4));
	check_fabric(FI_VERSION(1, 17));
#endif
	rdmt_dom_close(&dom);
	return rdmt_pass("rdm_eq");
}
