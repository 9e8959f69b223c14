/* The core event queue (src/fd_eq.c) without a device: a layer class of
 * the test's own pushes the entries a provider would. Checks the order and
 * shape of what fi_eq_read / fi_eq_readerr hand out, FI_PEEK, the length
 * checks, fi_eq_write's user entries, the wait fd's readiness, and above
 * all fd_eq_forget: every kind of entry that names a closing object (a
 * 16-byte FI_SHUTDOWN of a bare fi_eq_cm_entry included) is dropped, with
 * the layer's drop hook run for it, and nothing else is. */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include "fd_eq.h"
#include "fdt_check.h"

static int drops;	/* the class's drop hook calls */
static int closes;	/* the class's close hook calls */

static void test_drop(struct fd_eq_entry *e)
{
	(void)e;
	drops++;
}

static void test_close(struct fd_eq *eq)
{
	closes++;
	free(eq);
}

static const struct fd_eq_class test_class = {
	.drop = test_drop,
	.close = test_close,
};

/* Two objects the entries speak of (only their addresses matter). */
static struct fid ep_a = { .fclass = FI_CLASS_EP };
static struct fid ep_b = { .fclass = FI_CLASS_EP };

static int readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

static struct fd_eq *open_eq(void)
{
	struct fi_eq_attr attr = { .size = 16, .wait_obj = FI_WAIT_FD };
	struct fd_eq *eq = NULL;

	CHECK_EQ(fd_eq_new(sizeof(*eq), &attr, FI_VERSION(1, 17), NULL, &test_class,
			   NULL, &eq), 0);
	if (!eq) {
		fprintf(stderr, "cannot open an EQ\n");
		exit(1);
	}
	return eq;
}

static int wait_fd(struct fd_eq *eq)
{
	int fd = -1;

	CHECK_EQ(fi_control(&eq->eq_fid.fid, FI_GETWAIT, &fd), 0);
	return fd;
}

static void push_cm(struct fd_eq *eq, uint32_t event, struct fid *fid,
		    const void *data, size_t len)
{
	pthread_mutex_lock(&eq->lock);
	CHECK_EQ(fd_eq_push_cm_locked(eq, event, fid, NULL, data, len), 0);
	pthread_mutex_unlock(&eq->lock);
}

static void push_entry(struct fd_eq *eq, uint32_t event, struct fid *fid,
		       uint64_t data)
{
	struct fi_eq_entry ent = { .fid = fid, .context = fid, .data = data };

	CHECK_EQ(fd_eq_push_event(eq, event, &ent, sizeof(ent)), 0);
}

/* Reads one event: its number and the fid at the head of its body. */
static ssize_t read_one(struct fd_eq *eq, uint32_t *event, struct fid **fid)
{
	union {
		struct fi_eq_entry ent;
		struct fi_eq_cm_entry cm;
		uint8_t raw[256];
	} buf;
	ssize_t n;

	memset(&buf, 0, sizeof(buf));
	n = fi_eq_read(&eq->eq_fid, event, &buf, sizeof(buf), 0);
	if (n >= (ssize_t)sizeof(struct fid *))
		*fid = buf.cm.fid;
	return n;
}

static void test_read_shapes(void)
{
	struct fd_eq *eq = open_eq();
	struct fi_eq_err_entry err;
	struct fid *fid = NULL;
	uint32_t event = 0;
	char small[8];
	const char priv[5] = "abcd";
	int fd = wait_fd(eq);

	CHECK(fd >= 0);
	CHECK(!readable(fd), "an empty EQ's wait fd is readable");
	CHECK_EQ(fi_eq_read(&eq->eq_fid, &event, small, sizeof(small), 0), -FI_EAGAIN);
	CHECK_EQ(fi_eq_read(&eq->eq_fid, &event, small, sizeof(small), FI_SEND),
		 -FI_EBADFLAGS);

	/* a CONNECTED with private data: cm entry + the bytes */
	push_cm(eq, FI_CONNECTED, &ep_a, priv, sizeof(priv));
	CHECK(readable(fd), "the wait fd is not readable with an entry queued");
	CHECK_EQ(fi_eq_read(&eq->eq_fid, &event, small, sizeof(small), 0),
		 -FI_ETOOSMALL);
	CHECK_EQ(read_one(eq, &event, &fid),
		 (ssize_t)(sizeof(struct fi_eq_cm_entry) + sizeof(priv)));
	CHECK_EQ(event, FI_CONNECTED);
	CHECK(fid == &ep_a);
	CHECK(!readable(fd), "the wait fd stays readable after the last read");

	/* FI_PEEK leaves the entry; an error at the head is -FI_EAVAIL */
	push_cm(eq, FI_SHUTDOWN, &ep_b, NULL, 0);
	CHECK_EQ(fi_eq_read(&eq->eq_fid, &event, &err, sizeof(err), FI_PEEK),
		 (ssize_t)sizeof(struct fi_eq_cm_entry));
	CHECK_EQ(read_one(eq, &event, &fid), (ssize_t)sizeof(struct fi_eq_cm_entry));
	CHECK_EQ(event, FI_SHUTDOWN);
	CHECK_EQ(fd_eq_push_error(eq, &ep_a, (void *)0x77, 0, FI_ECONNREFUSED, 3,
				  NULL, 0), 0);
	CHECK_EQ(fi_eq_read(&eq->eq_fid, &event, &err, sizeof(err), 0), -FI_EAVAIL);
	memset(&err, 0, sizeof(err));
	CHECK_EQ(fi_eq_readerr(&eq->eq_fid, &err, 0), (ssize_t)sizeof(err));
	CHECK(err.fid == &ep_a);
	CHECK(err.context == (void *)0x77);
	CHECK_EQ(err.err, FI_ECONNREFUSED);
	CHECK_EQ(err.prov_errno, 3);
	CHECK_EQ(fi_eq_readerr(&eq->eq_fid, &err, 0), -FI_EAGAIN);

	CHECK_EQ(fi_close(&eq->eq_fid.fid), 0);
}

/* The defect this test was written for: fd_eq_forget measured every entry
 * against struct fi_eq_entry (24 bytes), so a CM event without private
 * data (16 bytes, as every FI_SHUTDOWN is) was never matched, stayed
 * queued after its endpoint was closed, and handed the application a
 * dangling fid. */
static void test_forget(void)
{
	struct fd_eq *eq = open_eq();
	struct fi_eq_entry user = { .fid = &ep_a, .data = 42 };
	struct fid *fid = NULL;
	uint32_t event = 0;
	const char priv[3] = "hi";
	int fd = wait_fd(eq);
	ssize_t n;

	drops = 0;
	push_cm(eq, FI_CONNECTED, &ep_a, NULL, 0);	/* 16 bytes: forgotten */
	push_cm(eq, FI_CONNECTED, &ep_b, NULL, 0);	/* kept */
	push_cm(eq, FI_CONNREQ, &ep_a, priv, sizeof(priv));	/* forgotten */
	push_entry(eq, FI_MR_COMPLETE, &ep_a, 1);	/* forgotten */
	/* the user's own entry names ep_a too, but its bytes are not ours */
	CHECK_EQ(fi_eq_write(&eq->eq_fid, FI_MR_COMPLETE, &user, sizeof(user), 0),
		 (ssize_t)sizeof(user));
	CHECK_EQ(fd_eq_push_error(eq, &ep_a, NULL, 0, FI_EIO, 0, NULL, 0), 0);
	push_entry(eq, FI_AV_COMPLETE, &ep_b, 2);	/* kept */
	push_cm(eq, FI_SHUTDOWN, &ep_a, NULL, 0);	/* 16 bytes: forgotten */

	fd_eq_forget(eq, &ep_a);
	CHECK_EQ(drops, 5);

	n = read_one(eq, &event, &fid);
	CHECK_EQ(n, (ssize_t)sizeof(struct fi_eq_cm_entry));
	CHECK_EQ(event, FI_CONNECTED);
	CHECK(fid == &ep_b, "first entry after forget names %p", (void *)fid);
	n = read_one(eq, &event, &fid);
	CHECK_EQ(n, (ssize_t)sizeof(user));
	CHECK_EQ(event, FI_MR_COMPLETE);
	CHECK(fid == &ep_a, "the user's entry was not kept");
	n = read_one(eq, &event, &fid);
	CHECK_EQ(n, (ssize_t)sizeof(struct fi_eq_entry));
	CHECK_EQ(event, FI_AV_COMPLETE);
	CHECK(fid == &ep_b);
	n = read_one(eq, &event, &fid);
	CHECK_EQ(n, -FI_EAGAIN);
	CHECK(!readable(fd), "the wait fd is readable on an empty EQ");

	/* forgetting everything that is queued leaves an empty, idle EQ that
	 * takes new entries at the tail as before */
	push_cm(eq, FI_SHUTDOWN, &ep_b, NULL, 0);
	push_cm(eq, FI_SHUTDOWN, &ep_b, NULL, 0);
	fd_eq_forget(eq, &ep_b);
	CHECK(!readable(fd), "the wait fd is readable after everything was forgotten");
	CHECK_EQ(read_one(eq, &event, &fid), -FI_EAGAIN);
	push_cm(eq, FI_CONNECTED, &ep_a, NULL, 0);
	push_cm(eq, FI_SHUTDOWN, &ep_a, NULL, 0);
	CHECK(readable(fd));
	CHECK_EQ(read_one(eq, &event, &fid), (ssize_t)sizeof(struct fi_eq_cm_entry));
	CHECK_EQ(event, FI_CONNECTED);
	CHECK_EQ(read_one(eq, &event, &fid), (ssize_t)sizeof(struct fi_eq_cm_entry));
	CHECK_EQ(event, FI_SHUTDOWN);

	/* what is still queued at fi_close goes through the drop hook */
	drops = 0;
	push_cm(eq, FI_CONNREQ, &ep_b, NULL, 0);
	closes = 0;
	CHECK_EQ(fi_close(&eq->eq_fid.fid), 0);
	CHECK_EQ(drops, 1);
	CHECK_EQ(closes, 1);
}

static void test_busy(void)
{
	struct fd_eq *eq = open_eq();

	fd_eq_ref(eq, 1);
	CHECK_EQ(fi_close(&eq->eq_fid.fid), -FI_EBUSY);
	fd_eq_ref(eq, -1);
	CHECK_EQ(fi_close(&eq->eq_fid.fid), 0);
}

/* The opening fabric's count is held from open to close, and an open
 * that fails leaves it as it was; a class without a close hook has the
 * core free the object. */
static const struct fd_eq_class bare_class = { .status_text = NULL };

static void test_owner_refs(void)
{
	struct fi_eq_attr attr = { .size = 16, .wait_obj = FI_WAIT_FD };
	struct fi_eq_attr bad = { .size = 16, .wait_obj = FI_WAIT_MUTEX_COND };
	atomic_int owner;
	struct fd_eq *eq = NULL, *eq2 = NULL;

	atomic_init(&owner, 0);
	CHECK_EQ(fd_eq_new(sizeof(*eq), &attr, FI_VERSION(1, 17), &owner, &bare_class,
			   NULL, &eq), 0);
	CHECK_EQ(atomic_load(&owner), 1);
	CHECK_EQ(fd_eq_new(sizeof(*eq2), &attr, FI_VERSION(1, 17), &owner, &bare_class,
			   NULL, &eq2), 0);
	CHECK_EQ(atomic_load(&owner), 2);
	CHECK(fd_eq_new(sizeof(*eq), &bad, FI_VERSION(1, 17), &owner, &bare_class,
			NULL, &eq) < 0, "an EQ with an unsupported wait object opened");
	CHECK_EQ(atomic_load(&owner), 2);
	if (eq2)
		CHECK_EQ(fi_close(&eq2->eq_fid.fid), 0);
	CHECK_EQ(atomic_load(&owner), 1);
	if (eq)
		CHECK_EQ(fi_close(&eq->eq_fid.fid), 0);
	CHECK_EQ(atomic_load(&owner), 0);
}

int main(void)
{
	test_read_shapes();
	test_forget();
	test_busy();
	test_owner_refs();
	if (fdt_check_failures) {
		fprintf(stderr, "test_eq_core: %d checks failed\n", fdt_check_failures);
		return 1;
	}
	printf("test_eq_core: ok\n");
	return 0;
}
