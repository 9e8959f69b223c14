/* RMA and atomics on RDM endpoints, addressed by fi_addr_t: not offered
 * yet (fi_getinfo leaves FI_RMA and FI_ATOMIC out), the tables answer
 * -FI_ENOSYS. */
#include "fd_core.h"
#include "fd_enosys.h"
#include "fdm.h"

ssize_t fdm_rma_post(struct fdm_conn *c, struct fdm_tx *tx)
{
	(void)c;
	(void)tx;
	return -FI_ENOSYS;
}

void fdm_handle_rma_done(struct fdm_ep *ep, struct fdm_tx *tx, int err)
{
	(void)err;
	fdm_tx_put(ep, tx);
}

struct fi_ops_rma fdm_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = fd_no_rma_read,
	.readv = fd_no_rma_readv,
	.readmsg = fd_no_rma_readmsg,
	.write = fd_no_rma_write,
	.writev = fd_no_rma_writev,
	.writemsg = fd_no_rma_writemsg,
	.inject = fd_no_rma_inject,
	.writedata = fd_no_rma_writedata,
	.injectdata = fd_no_rma_injectdata,
};

struct fi_ops_atomic fdm_atomic_ops = {
	.size = sizeof(struct fi_ops_atomic),
	.write = fd_no_atomic_write,
	.writev = fd_no_atomic_writev,
	.writemsg = fd_no_atomic_writemsg,
	.inject = fd_no_atomic_inject,
	.readwrite = fd_no_atomic_readwrite,
	.readwritev = fd_no_atomic_readwritev,
	.readwritemsg = fd_no_atomic_readwritemsg,
	.compwrite = fd_no_atomic_compwrite,
	.compwritev = fd_no_atomic_compwritev,
	.compwritemsg = fd_no_atomic_compwritemsg,
	.writevalid = fd_no_atomic_writevalid,
	.readwritevalid = fd_no_atomic_readwritevalid,
	.compwritevalid = fd_no_atomic_compwritevalid,
};
