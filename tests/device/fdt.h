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
	size_t cq_size;		/* 0: 512 entries */
	uint64_t tx_bind_flags;	/* extra flags for the tx CQ bind */
	uint64_t rx_bind_flags;
	int is_server;
	int client_index;	/* fdt_run_multi: which client this is, from 0 */
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

/* The same, in a fresh child process: for tests that run several pairs,
 * since a process that used verbs cannot fork a working client. */
int fdt_run_pair_fresh(struct fi_info *hints, fdt_fn server, fdt_fn client, void *arg);

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

/* ---- RMA and multi-connection helpers ---- */

/* A region one side exposes to its peer for RMA and atomics: virtual
 * address (FI_MR_VIRT_ADDR), key from fi_mr_key and length. On the wire
 * (CM private data, at most 55 bytes) it takes FDT_REGION_WIRE bytes, each
 * field big-endian, so two of them fit in one connect or accept. */
struct fdt_region {
	uint64_t addr;
	uint64_t key;
	uint64_t len;
};
#define FDT_REGION_WIRE 24

void fdt_region_pack(void *wire, const void *buf, size_t len, struct fid_mr *mr);
void fdt_region_unpack(struct fdt_region *r, const void *wire);

/* fdt_client_connect, keeping the server's accept data: up to reply_max
 * bytes land in reply; returns the full length the server sent. */
size_t fdt_client_connect_reply(struct fdt_side *side, const struct fdt_cm_data *data,
				void *reply, size_t reply_max, fdt_hook pre, void *arg);

/* Like fdt_run_pair with nclients forked clients (side->client_index tells
 * them apart), all connecting to the one listening server at once. Returns
 * 0 when all sides succeeded; when one fails the others are killed and the
 * process exits with the failing side's code at once. */
int fdt_run_multi(struct fi_info *hints, fdt_fn server, fdt_fn client,
		  int nclients, void *arg);

/* Accept n connections on base's passive endpoint, in whatever order the
 * requests and establishments come. conns[i] shares base's fabric, EQ and
 * domain (opened with the first request) and gets its own endpoint and
 * CQs; pre runs for each before its fi_accept, and may rewrite the memory
 * reply points to. */
void fdt_server_accept_many(struct fdt_side *base, struct fdt_side *conns, int n,
			    const struct fdt_cm_data *reply, fdt_hook pre, void *arg);

/* Close only the endpoint and the CQs of a side (one connection). */
void fdt_close_conn(struct fdt_side *side);

/* Client: close the endpoint, CQs and EQ and open a fresh EQ, so the next
 * fdt_client_connect* meets no event of the old connection. */
void fdt_client_reset(struct fdt_side *side);

/* fdt_wait_cq with an explicit limit in milliseconds. */
int fdt_wait_cq_ms(struct fid_cq *cq, void *entry, struct fi_cq_err_entry *err, int ms);

/* Poll cq for ms milliseconds; fails the test if anything (entry or error)
 * shows up. For operations that must not complete (injects). */
void fdt_cq_expect_quiet(struct fid_cq *cq, int ms, const char *what);

/* Run fn(arg) in a forked child and return its exit code: lets one test
 * run several fdt_run_pair rounds, each from a process that has not used
 * the device yet. */
int fdt_run_isolated(int (*fn)(void *arg), void *arg);

/* Wait for one FI_SHUTDOWN on side->eq; any other event fails the test. */
void fdt_wait_shutdown(struct fdt_side *side);

#endif
