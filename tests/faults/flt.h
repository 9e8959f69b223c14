/* Helpers for the fault and load tests (tests/faults, tests/load).
 *
 * A fault test has one surviving process (the test's main process) and
 * helper processes forked before it touches the device (a process that has
 * used verbs cannot hand a working device to a forked child). Each helper
 * waits on a pipe for a line of text (the port to connect to, usually), then
 * runs its role. After the fault, the survivor opens a new connection with
 * another helper, and at the end the device's QP/MR/CQ counts, read with
 * the iproute2 `rdma` tool, must be what they were before the test. */
#ifndef FLT_H
#define FLT_H

#include <sys/types.h>

#include "fdt.h"

/* ---- resource accounting (rdma res show) ---- */

struct flt_res {
	int qp, mr, cq, cm_id;
};

/* Counts every QP, MR, CQ and cm_id the kernel lists on all devices. */
void flt_res_read(struct flt_res *r);
/* Fails the test unless the counts come back to `before` within ms (a
 * killed process's objects are destroyed by the kernel as its files
 * close, which can trail its exit a little). */
void flt_res_expect(const struct flt_res *before, int ms, const char *when);

/* ---- helper processes ---- */

typedef int (*flt_role)(const char *msg, void *arg);

struct flt_child {
	pid_t pid;
	int go_fd;	/* write end: the message that starts the role */
	int back_fd;	/* read end: lines the helper sends with flt_tell */
	int done;
	int status;
};

/* Fork a helper; it blocks until flt_go, then runs role(msg, arg) and
 * exits with its return value. A helper whose go pipe closes without a
 * message exits 0 without doing anything. */
void flt_spawn(struct flt_child *c, flt_role role, void *arg);
void flt_go(struct flt_child *c, const char *msg);
/* In a helper: send one line to the parent. In the parent: wait up to ms
 * for the helper's next line (fails the test on timeout or EOF). */
void flt_tell(const char *msg);
void flt_hear(struct flt_child *c, char *buf, size_t len, int ms);
/* Wait up to ms for the helper to exit; returns its exit code (a signal
 * counts as 128 + signo). On timeout it is killed and the test fails. */
int flt_reap(struct flt_child *c, int ms);
/* SIGKILL the helper and reap it. */
void flt_kill(struct flt_child *c);

/* ---- connections: MSG (CQs, registered buffers) or rstream ---- */

enum flt_kind { FLT_MSG, FLT_RSTREAM };

struct fi_info *flt_hints(enum flt_kind kind);

/* A listening side: fabric, EQ, passive endpoint on the harness address;
 * the port, as text, lands in port. */
void flt_listen(struct fdt_side *s, struct fi_info *hints, char *port, size_t portlen);
struct flt_bufs;
/* Accept one connection on a listening side (s->pep). For MSG with b set,
 * b's buffers are registered and its receives posted before the accept. */
void flt_accept(struct fdt_side *s, enum flt_kind kind, struct flt_bufs *b);
/* A connecting side: getinfo toward node:port, fabric, EQ. Returns the
 * fi_getinfo result (0, or a negative error: the caller decides). */
int flt_client_init(struct fdt_side *s, struct fi_info *hints, const char *node,
		    const char *port);
/* Open the endpoint (and for MSG the CQs) and fi_connect; returns the
 * first error of fi_endpoint / fi_enable / fi_connect, or 0. */
int flt_client_start(struct fdt_side *s, enum flt_kind kind, struct flt_bufs *b);
/* Connect and wait for FI_CONNECTED (fails the test otherwise). */
void flt_client_connect(struct fdt_side *s, enum flt_kind kind, struct flt_bufs *b);

/* Read the EQ for up to ms: returns the event (FI_CONNECTED, FI_SHUTDOWN,
 * ...), or -err for an error entry (err filled in), or -FI_ETIMEDOUT. */
int flt_eq_next(struct fdt_side *s, int ms, struct fi_eq_err_entry *err);

/* MSG: buffers for the helpers' exchanges (registered per side). */
#define FLT_MSG_SIZE 4096
#define FLT_MSG_SLOTS 16
struct flt_bufs {
	uint8_t rx[FLT_MSG_SLOTS][FLT_MSG_SIZE];
	uint8_t tx[FLT_MSG_SLOTS][FLT_MSG_SIZE];
	struct fid_mr *rx_mr, *tx_mr;
};
/* Register b's buffers in s's domain and post all FLT_MSG_SLOTS receives
 * (context: the slot index + 1). */
void flt_bufs_open(struct fdt_side *s, struct flt_bufs *b, int post);
void flt_bufs_close(struct flt_bufs *b);

/* One checked round trip on a fresh connection: the client sends `rounds`
 * messages, the server checks each and sends it back changed, the client
 * checks the echo. Both sides call it (s->is_server tells them apart). For
 * rstream the same with 64 KiB of stream each way. */
void flt_exchange(struct fdt_side *s, enum flt_kind kind, struct flt_bufs *b,
		  int rounds, uint32_t seed);

long flt_now_ms(void);
const char *flt_kind_name(enum flt_kind kind);

#endif
