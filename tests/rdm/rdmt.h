/* Harness for the FI_EP_RDM device tests: the public libfabric API only, so
 * every test builds against this library (both builds) and against
 * Debian's libfabric 1.17 ("verbs;ofi_rxm"), which is how each test was
 * checked before this library's RDM layer existed.
 *
 * Most tests run several endpoints in one process. Progress is manual, so
 * a test that waits on one endpoint's CQ keeps reading all of them; entries
 * that belong to another CQ are kept for it (rdmt_wait). */
#ifndef RDMT_H
#define RDMT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "fdt.h"	/* FDT_OK / FDT_EXPECT / FDT_ASSERT, fdt_addr, fdt_fill */

/* Every wait gives up (and fails the test) after this long. */
#define RDMT_WAIT_MS 10000

struct rdmt_comp {
	struct fi_cq_tagged_entry e;
	fi_addr_t src;
	int err;			/* 0, or the positive fi error */
	struct fi_cq_err_entry errent;	/* when err */
};

struct rdmt_cq {
	struct fid_cq *cq;
	struct rdmt_comp *q;		/* kept entries, FIFO */
	size_t head, tail, cap;
};

struct rdmt_dom {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
};

struct rdmt_ep {
	struct rdmt_dom *dom;
	struct fid_ep *ep;
	struct rdmt_cq *cq;
	struct fid_av *av;
	int own_cq;		/* opened with the endpoint, closed with it */
	uint8_t name[256];
	size_t namelen;
};

/* FI_EP_RDM hints: caps as given, no FI_MR_LOCAL (sends need no
 * descriptor), virtual addresses and provider keys for RMA, the device of
 * the harness. */
struct fi_info *rdmt_hints(uint64_t caps);

/* fi_getinfo on FD_RXE_ADDR0 (FI_SOURCE) with hints, fabric and domain.
 * Exits 77 without a device. */
void rdmt_dom_open(struct rdmt_dom *d, struct fi_info *hints);
void rdmt_dom_close(struct rdmt_dom *d);

/* Endpoint with a CQ of its own (cq NULL) or a shared one, and an AV of
 * its own of type av_type (0: FI_AV_TABLE). Enabled; name filled in. */
void rdmt_ep_open(struct rdmt_dom *d, struct rdmt_ep *e, struct rdmt_cq *cq,
		  enum fi_av_type av_type);
/* The same from info (e.g. a copy of d->info with another src_addr). */
void rdmt_ep_open_info(struct rdmt_dom *d, struct rdmt_ep *e, struct rdmt_cq *cq,
		       enum fi_av_type av_type, struct fi_info *info);
/* Closes the endpoint, its AV and, if it has its own, its CQ. */
void rdmt_ep_close(struct rdmt_ep *e);
struct rdmt_cq *rdmt_cq_open(struct rdmt_dom *d);
void rdmt_cq_close(struct rdmt_cq *c);

/* Insert peer's name into e's AV; returns its fi_addr_t. */
fi_addr_t rdmt_insert(struct rdmt_ep *e, const struct rdmt_ep *peer);
fi_addr_t rdmt_insert_name(struct rdmt_ep *e, const void *name);

/* Read every CQ once, keeping what arrives. */
void rdmt_progress(void);
/* Next entry of c (its own or an error); 0 if none within ms. */
int rdmt_poll(struct rdmt_cq *c, struct rdmt_comp *out, int ms);
/* The same, failing the test on timeout. */
void rdmt_wait(struct rdmt_cq *c, struct rdmt_comp *out);
/* Next entry, which must be a success. */
void rdmt_wait_ok(struct rdmt_cq *c, struct rdmt_comp *out);
/* Fails the test if anything arrives on c within ms. */
void rdmt_quiet(struct rdmt_cq *c, int ms, const char *what);

/* Retry a post while it says -FI_EAGAIN, driving progress meanwhile. */
#define RDMT_POST(call)							\
	do {								\
		long rdmt_rc_, rdmt_end_ = 0;				\
		while ((rdmt_rc_ = (long)(call)) == -FI_EAGAIN) {	\
			rdmt_progress();				\
			if (!rdmt_end_)					\
				rdmt_end_ = rdmt_now_ms() + RDMT_WAIT_MS; \
			else if (rdmt_now_ms() > rdmt_end_)		\
				FDT_FAIL("%s: -FI_EAGAIN for %d ms", #call, RDMT_WAIT_MS); \
		}							\
		if (rdmt_rc_ < 0)					\
			FDT_FAIL("%s = %ld (%s)", #call, rdmt_rc_,	\
				 fi_strerror((int)-rdmt_rc_));		\
	} while (0)

/* Check a receive completion: flags contain want_flags, length, tag. */
void rdmt_check_recv_at(const char *file, int line, const struct rdmt_comp *c,
			void *ctx, uint64_t want_flags, size_t len, uint64_t tag);
#define rdmt_check_recv(c, ctx, flags, len, tag) \
	rdmt_check_recv_at(__FILE__, __LINE__, c, ctx, flags, len, tag)

/* One pass/fail line per test, so the upstream run is easy to tabulate. */
int rdmt_pass(const char *name);

long rdmt_now_ms(void);
/* pipe helpers for multi-process tests */
void rdmt_write_all(int fd, const void *buf, size_t len);
void rdmt_read_all(int fd, void *buf, size_t len);

#endif

/* ---- multi-process tests ----
 * rdmt_spawn forks before any verbs call (a child must not inherit device
 * contexts) and runs fn(to_parent, from_parent, arg) in the child, which
 * exits with its return value. The parent gets the child's pid and the
 * two pipe ends. */
#include <sys/types.h>
typedef int (*rdmt_child_fn)(int to_parent, int from_parent, void *arg);
pid_t rdmt_spawn(rdmt_child_fn fn, void *arg, int *to_child, int *from_child);
/* waitpid; returns the child's exit code (1 if a signal ended it). */
int rdmt_reap(pid_t pid);
/* An endpoint name over a pipe: fixed-size record. */
void rdmt_send_name(int fd, const struct rdmt_ep *e);
void rdmt_recv_name(int fd, uint8_t name[256]);

/* A peer process (rdmt_spawn(rdmt_peer_main, ...)) with one endpoint that
 * exchanges names with the parent, then on command sends one message of
 * RDMT_PEER_MSG bytes (fdt_fill(seed)) after delay_ms ('S'), receives and
 * checks one ('R'), or quits ('Q'); after each command it answers a token
 * (rdmt_peer_done waits for it). */
#define RDMT_PEER_MSG 64
int rdmt_peer_main(int to_parent, int from_parent, void *arg);
void rdmt_peer_tell(int to_peer, char op, uint32_t delay_ms, uint32_t seed);
void rdmt_peer_done(int from_peer);
/* This process's CPU time, and the check that a wait since (cpu0, wall0)
 * slept: CPU under a third of the wall time. */
long rdmt_cpu_ms(void);
void rdmt_check_cpu(long cpu0, long wall0, const char *what);
/* RNR NAKs the device dev sent and received so far (its hw_counters), or
 * -1 if it keeps no such counters (a driver that names them otherwise). */
long rdmt_rnr_count(const char *dev);
