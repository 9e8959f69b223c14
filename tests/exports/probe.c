/* The export contract's link probe (tests/exports/check_exports.py).
 *
 * Compiled the way an application compiles (in the direct build with
 * FABRIC_DIRECT, so every data path call below is the inline code of the
 * installed headers), linked against one shared library of the build and
 * run. It makes every data path call - a zero-length send, write and
 * receive, a receive that finds no receive queue (an endpoint bound to a
 * shared receive context), RMA, atomics, tagged calls, the CQ calls - and
 * calls every public function, so its link needs each out-of-line entry
 * point that inline code reaches. None of it runs: the calls sit behind a
 * condition the test never meets (more than 1000 arguments), and their
 * operands come from argv, so the compiler can neither evaluate nor drop
 * any branch. What does run checks that the weak references of the ABI
 * guard (fdv_abi.h) found the library's definitions. */
#include <stdint.h>
#include <stdio.h>
#include <sys/uio.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

#ifdef FABRIC_DIRECT
#include <fdv/fdv_abi.h>
#endif

static ssize_t msg_calls(struct fid_ep *ep, char *buf, size_t len, void *desc,
			 uint64_t u, void *ctx)
{
	struct iovec iov = { buf, len };
	struct fi_msg msg = { .msg_iov = &iov, .desc = &desc, .iov_count = 1,
			      .addr = u, .context = ctx, .data = u };
	ssize_t r = 0;

	r += fi_send(ep, buf, 0, desc, u, ctx);		/* fdv_ep_post_empty */
	r += fi_send(ep, buf, len, desc, u, ctx);
	r += fi_sendv(ep, &iov, &desc, 1, u, ctx);
	r += fi_sendmsg(ep, &msg, u);
	r += fi_senddata(ep, buf, len, desc, u, u, ctx);
	r += fi_inject(ep, buf, 0, u);
	r += fi_inject(ep, buf, len, u);
	r += fi_injectdata(ep, buf, len, u, u);
	r += fi_recv(ep, buf, 0, desc, u, ctx);		/* fdv_ep_recv_empty */
	/* on an SRX-bound endpoint (no receive queue of its own):
	 * fdv_ep_recv_one_no_qp / fdv_ep_recv_no_qp */
	r += fi_recv(ep, buf, len, desc, u, ctx);
	r += fi_recvv(ep, &iov, &desc, 1, u, ctx);
	r += fi_recvmsg(ep, &msg, u);
	return r;
}

static ssize_t rma_calls(struct fid_ep *ep, char *buf, size_t len, void *desc,
			 uint64_t u, void *ctx)
{
	struct iovec iov = { buf, len };
	struct fi_rma_iov riov = { u, len, u };
	struct fi_msg_rma msg = { .msg_iov = &iov, .desc = &desc, .iov_count = 1,
				  .addr = u, .rma_iov = &riov, .rma_iov_count = 1,
				  .context = ctx, .data = u };
	ssize_t r = 0;

	r += fi_write(ep, buf, 0, desc, u, u, u, ctx);
	r += fi_write(ep, buf, len, desc, u, u, u, ctx);
	r += fi_writev(ep, &iov, &desc, 1, u, u, u, ctx);
	r += fi_writemsg(ep, &msg, u);
	r += fi_writedata(ep, buf, len, desc, u, u, u, u, ctx);
	r += fi_inject_write(ep, buf, len, u, u, u);
	r += fi_inject_writedata(ep, buf, len, u, u, u, u);
	r += fi_read(ep, buf, len, desc, u, u, u, ctx);
	r += fi_readv(ep, &iov, &desc, 1, u, u, u, ctx);
	r += fi_readmsg(ep, &msg, u);
	return r;
}

static ssize_t atomic_calls(struct fid_ep *ep, char *buf, size_t len,
			    void *desc, uint64_t u, void *ctx)
{
	struct fi_ioc ioc = { buf, len }, res = { buf + 8, len };
	struct fi_rma_ioc rioc = { u, len, u };
	struct fi_msg_atomic msg = { .msg_iov = &ioc, .desc = &desc, .iov_count = 1,
				     .addr = u, .rma_iov = &rioc, .rma_iov_count = 1,
				     .datatype = (enum fi_datatype)u,
				     .op = (enum fi_op)u, .context = ctx, .data = u };
	enum fi_datatype dt = (enum fi_datatype)u;
	enum fi_op op = (enum fi_op)(u >> 8);
	size_t count = len;
	ssize_t r = 0;

	r += fi_atomic(ep, buf, len, desc, u, u, u, dt, op, ctx);
	r += fi_atomicv(ep, &ioc, &desc, 1, u, u, u, dt, op, ctx);
	r += fi_atomicmsg(ep, &msg, u);
	r += fi_inject_atomic(ep, buf, len, u, u, u, dt, op);
	r += fi_fetch_atomic(ep, buf, len, desc, buf + 8, desc, u, u, u, dt, op, ctx);
	r += fi_fetch_atomicv(ep, &ioc, &desc, 1, &res, &desc, 1, u, u, u, dt, op, ctx);
	r += fi_fetch_atomicmsg(ep, &msg, &res, &desc, 1, u);
	r += fi_compare_atomic(ep, buf, len, desc, buf + 16, desc, buf + 8, desc,
			       u, u, u, dt, op, ctx);
	r += fi_compare_atomicv(ep, &ioc, &desc, 1, &ioc, &desc, 1, &res, &desc, 1,
				u, u, u, dt, op, ctx);
	r += fi_compare_atomicmsg(ep, &msg, &ioc, &desc, 1, &res, &desc, 1, u);
	r += fi_atomicvalid(ep, dt, op, &count);
	r += fi_fetch_atomicvalid(ep, dt, op, &count);
	r += fi_compare_atomicvalid(ep, dt, op, &count);
	return r;
}

static ssize_t tagged_calls(struct fid_ep *ep, char *buf, size_t len,
			    void *desc, uint64_t u, void *ctx)
{
	struct iovec iov = { buf, len };
	struct fi_msg_tagged msg = { .msg_iov = &iov, .desc = &desc, .iov_count = 1,
				     .addr = u, .tag = u, .ignore = u,
				     .context = ctx, .data = u };
	ssize_t r = 0;

	r += fi_tsend(ep, buf, len, desc, u, u, ctx);
	r += fi_tsendv(ep, &iov, &desc, 1, u, u, ctx);
	r += fi_tsendmsg(ep, &msg, u);
	r += fi_tsenddata(ep, buf, len, desc, u, u, u, ctx);
	r += fi_tinject(ep, buf, len, u, u);
	r += fi_tinjectdata(ep, buf, len, u, u, u);
	r += fi_trecv(ep, buf, len, desc, u, u, u, ctx);
	r += fi_trecvv(ep, &iov, &desc, 1, u, u, u, ctx);
	r += fi_trecvmsg(ep, &msg, u);
	return r;
}

static ssize_t cq_calls(struct fid_cq *cq, char *buf, size_t len, uint64_t u)
{
	struct fi_cq_err_entry err = { 0 };
	fi_addr_t src;
	ssize_t r = 0;

	r += fi_cq_read(cq, buf, len);
	r += fi_cq_readfrom(cq, buf, len, &src);
	r += fi_cq_readerr(cq, &err, u);
	r += fi_cq_sread(cq, buf, len, NULL, (int)u);
	r += fi_cq_sreadfrom(cq, buf, len, &src, NULL, (int)u);
	r += fi_cq_signal(cq);
	r += fi_cq_strerror(cq, (int)u, buf, buf, len) != NULL;
	return r;
}

static ssize_t public_calls(char *buf, size_t len, uint64_t u)
{
	struct fi_info *info = NULL, *dup;
	struct fid_fabric *fabric;
	struct fid *fid;
	struct fi_param *params;
	struct fi_provider *prov = (struct fi_provider *)(void *)buf;
	int count;
	ssize_t r = 0;

	r += fi_getinfo(fi_version(), buf, buf, u, NULL, &info);
	dup = fi_dupinfo(info);
	fi_freeinfo(dup);
	r += fi_fabric(info->fabric_attr, &fabric, buf);
	r += fi_open(FI_VERSION(1, 17), buf, buf, len, u, &fid, buf);
	r += fi_getparams(&params, &count);
	fi_freeparams(params);
	r += fi_param_define(prov, buf, FI_PARAM_INT, "%s", buf);
	r += fi_param_get(prov, buf, buf);
	r += fi_log_enabled(prov, FI_LOG_WARN, FI_LOG_CORE);
	r += fi_log_ready(prov, FI_LOG_WARN, FI_LOG_CORE, &u);
	fi_log(prov, FI_LOG_WARN, FI_LOG_CORE, __func__, __LINE__, "%s", buf);
	r += fi_strerror((int)u)[0];
	r += fi_tostr(info, FI_TYPE_INFO)[0];
	r += fi_tostr_r(buf, len, info, FI_TYPE_INFO)[0];
	return r;
}

int main(int argc, char **argv)
{
	if (argc > 1000) {	/* never: see the top of the file */
		struct fid_ep *ep = (struct fid_ep *)(void *)argv[1];
		struct fid_cq *cq = (struct fid_cq *)(void *)argv[2];
		char *buf = argv[3];
		void *desc = argv[4], *ctx = argv[5];
		size_t len = (size_t)argc - 1000;
		uint64_t u = (uintptr_t)argv[6];

		return (int)(msg_calls(ep, buf, len, desc, u, ctx) +
			     rma_calls(ep, buf, len, desc, u, ctx) +
			     atomic_calls(ep, buf, len, desc, u, ctx) +
			     tagged_calls(ep, buf, len, desc, u, ctx) +
			     cq_calls(cq, buf, len, u) + public_calls(buf, len, u));
	}
#ifdef FABRIC_DIRECT
	/* Weak references: a library that does not export them leaves them
	 * NULL, and the ABI guard silently reports nothing. */
	if (!fdv_abi_announce || !fdv_abi_announce_layer) {
		fprintf(stderr, "FAIL: fdv_abi_announce%s did not resolve\n",
			fdv_abi_announce ? "_layer" : "");
		return 1;
	}
#endif
	printf("probe: linked and started (fi_version %u.%u, %s)\n",
	       FI_MAJOR(fi_version()), FI_MINOR(fi_version()),
#ifdef FABRIC_DIRECT
	       "FABRIC_DIRECT"
#else
	       "ops tables"
#endif
	       );
	return 0;
}
