/* Helpers for device tests: written only against the public libfabric API,
 * so the same source builds against this project (both builds) and against
 * Debian's libfabric. A test forks into a server (parent) and a client
 * (child) that connect over the verbs device named by the harness. */
#ifndef FDT_H
#define FDT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#define FDT_SKIP 77

#define FDT_FAIL(...)							\
	do {								\
		fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);		\
		fprintf(stderr, __VA_ARGS__);				\
		fprintf(stderr, "\n");					\
		exit(1);						\
	} while (0)

/* A call that must return 0 (or a non-negative count). */
#define FDT_OK(call)							\
	do {								\
		long fdt_rc_ = (long)(call);				\
		if (fdt_rc_ < 0)					\
			FDT_FAIL("%s = %ld (%s)", #call, fdt_rc_,	\
				 fi_strerror((int)-fdt_rc_));		\
	} while (0)

/* A call that must fail with exactly `expect` (a negative fi error). */
#define FDT_EXPECT(call, expect)					\
	do {								\
		long fdt_rc_ = (long)(call);				\
		if (fdt_rc_ != (long)(expect))				\
			FDT_FAIL("%s = %ld (%s), expected %ld (%s)",	\
				 #call, fdt_rc_, fi_strerror((int)-fdt_rc_),	\
				 (long)(expect), fi_strerror((int)-(expect))); \
	} while (0)

#define FDT_ASSERT(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: assertion failed: %s: ", \
				__FILE__, __LINE__, #cond);		\
			fprintf(stderr, __VA_ARGS__);			\
			fprintf(stderr, "\n");				\
			exit(1);					\
		}							\
	} while (0)

struct fdt_side {
	struct fi_info *hints;
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_eq *eq;
	struct fid_cq *txcq;
	struct fid_cq *rxcq;
	struct fid_pep *pep;
	struct fid_ep *ep;
	enum fi_cq_format cq_format;
	uint64_t tx_bind_flags;	/* extra flags for the tx CQ bind */
	uint64_t rx_bind_flags;
	int is_server;
};

struct fdt_cm_data {
	const void *data;
	size_t len;
};

/* The device address from the Soft-RoCE harness; exits 77 without one. */
const char *fdt_addr(void);

/* Hints every test starts from: MSG endpoints of the verbs provider. */
struct fi_info *fdt_hints(void);

/* Run server(side) in this process and client(side) in a forked child;
 * the server's listening port reaches the client through a pipe. Returns
 * the exit code to use (0 only if both sides returned 0). */
typedef int (*fdt_fn)(struct fdt_side *side, void *arg);
int fdt_run_pair(struct fi_info *hints, fdt_fn server, fdt_fn client, void *arg);

/* Connection set-up for the two sides. Each leaves side->ep connected.
 * pre_connect (may be NULL) runs after fi_enable, before the handshake:
 * the place to post receives. */
typedef void (*fdt_hook)(struct fdt_side *side, void *arg);
void fdt_server_accept(struct fdt_side *side, const struct fdt_cm_data *in_expect,
		       const struct fdt_cm_data *reply, fdt_hook pre, void *arg);
void fdt_client_connect(struct fdt_side *side, const struct fdt_cm_data *data,
			const struct fdt_cm_data *reply_expect, fdt_hook pre, void *arg);

/* Open domain, CQs and endpoint for `info` (server: from the CONNREQ). */
void fdt_open_ep(struct fdt_side *side, struct fi_info *info);

/* Wait for one CM event of `event` on side->eq; returns the entry's length. */
ssize_t fdt_wait_event(struct fdt_side *side, uint32_t event, void *buf, size_t len);

/* Poll `cq` until one completion or an error arrives (bounded: fails the
 * test after ~10 s). Returns 1, or the negative error of fi_cq_read
 * (-FI_EAVAIL: *err filled from fi_cq_readerr). */
int fdt_wait_cq(struct fid_cq *cq, void *entry, struct fi_cq_err_entry *err);

/* Register a buffer for local send/recv. */
struct fid_mr *fdt_reg(struct fdt_side *side, void *buf, size_t len, uint64_t access);

void fdt_close_side(struct fdt_side *side);

/* Deterministic pattern so the receiver can check every byte. */
void fdt_fill(void *buf, size_t len, uint32_t seed);
int fdt_check(const void *buf, size_t len, uint32_t seed);

#endif
