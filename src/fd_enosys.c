/* Generated from gen/api.spec and include/rdma by gen/gen.py: do not
 * edit; regenerate with `python3 gen/gen.py`. */


#include "fd_enosys.h"

int fd_no_fid_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	(void)fid; (void)bfid; (void)flags;
	return -FI_ENOSYS;
}

int fd_no_fid_control(struct fid *fid, int command, void *arg)
{
	(void)fid; (void)command; (void)arg;
	return -FI_ENOSYS;
}

int fd_no_fid_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops, void *context)
{
	(void)fid; (void)name; (void)flags; (void)ops; (void)context;
	return -FI_ENOSYS;
}

int fd_no_fid_tostr(const struct fid *fid, char *buf, size_t len)
{
	(void)fid; (void)buf; (void)len;
	return -FI_ENOSYS;
}

int fd_no_fid_ops_set(struct fid *fid, const char *name, uint64_t flags, void *ops, void *context)
{
	(void)fid; (void)name; (void)flags; (void)ops; (void)context;
	return -FI_ENOSYS;
}

int fd_no_fabric_domain(struct fid_fabric *fabric, struct fi_info *info, struct fid_domain **dom, void *context)
{
	(void)fabric; (void)info; (void)dom; (void)context;
	return -FI_ENOSYS;
}

int fd_no_fabric_passive_ep(struct fid_fabric *fabric, struct fi_info *info, struct fid_pep **pep, void *context)
{
	(void)fabric; (void)info; (void)pep; (void)context;
	return -FI_ENOSYS;
}

int fd_no_fabric_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr, struct fid_eq **eq, void *context)
{
	(void)fabric; (void)attr; (void)eq; (void)context;
	return -FI_ENOSYS;
}

int fd_no_fabric_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr, struct fid_wait **waitset)
{
	(void)fabric; (void)attr; (void)waitset;
	return -FI_ENOSYS;
}

int fd_no_fabric_trywait(struct fid_fabric *fabric, struct fid **fids, int count)
{
	(void)fabric; (void)fids; (void)count;
	return -FI_ENOSYS;
}

int fd_no_fabric_domain2(struct fid_fabric *fabric, struct fi_info *info, struct fid_domain **dom, uint64_t flags, void *context)
{
	(void)fabric; (void)info; (void)dom; (void)flags; (void)context;
	return -FI_ENOSYS;
}

int fd_no_av_insert(struct fid_av *av, const void *addr, size_t count, fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	(void)av; (void)addr; (void)count; (void)fi_addr; (void)flags; (void)context;
	return -FI_ENOSYS;
}

int fd_no_av_insertsvc(struct fid_av *av, const char *node, const char *service, fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	(void)av; (void)node; (void)service; (void)fi_addr; (void)flags; (void)context;
	return -FI_ENOSYS;
}

int fd_no_av_insertsym(struct fid_av *av, const char *node, size_t nodecnt, const char *service, size_t svccnt, fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	(void)av; (void)node; (void)nodecnt; (void)service; (void)svccnt; (void)fi_addr; (void)flags; (void)context;
	return -FI_ENOSYS;
}

int fd_no_av_remove(struct fid_av *av, fi_addr_t *fi_addr, size_t count, uint64_t flags)
{
	(void)av; (void)fi_addr; (void)count; (void)flags;
	return -FI_ENOSYS;
}

int fd_no_av_lookup(struct fid_av *av, fi_addr_t fi_addr, void *addr, size_t *addrlen)
{
	(void)av; (void)fi_addr; (void)addr; (void)addrlen;
	return -FI_ENOSYS;
}

int fd_no_av_av_set(struct fid_av *av, struct fi_av_set_attr *attr, struct fid_av_set **av_set, void *context)
{
	(void)av; (void)attr; (void)av_set; (void)context;
	return -FI_ENOSYS;
}

int fd_no_domain_av_open(struct fid_domain *domain, struct fi_av_attr *attr, struct fid_av **av, void *context)
{
	(void)domain; (void)attr; (void)av; (void)context;
	return -FI_ENOSYS;
}

int fd_no_domain_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr, struct fid_cq **cq, void *context)
{
	(void)domain; (void)attr; (void)cq; (void)context;
	return -FI_ENOSYS;
}

int fd_no_domain_endpoint(struct fid_domain *domain, struct fi_info *info, struct fid_ep **ep, void *context)
{
	(void)domain; (void)info; (void)ep; (void)context;
	return -FI_ENOSYS;
}

int fd_no_domain_scalable_ep(struct fid_domain *domain, struct fi_info *info, struct fid_ep **sep, void *context)
{
	(void)domain; (void)info; (void)sep; (void)context;
	return -FI_ENOSYS;
}

int fd_no_domain_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr, struct fid_cntr **cntr, void *context)
{
	(void)domain; (void)attr; (void)cntr; (void)context;
	return -FI_ENOSYS;
}

int fd_no_domain_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr, struct fid_poll **pollset)
{
	(void)domain; (void)attr; (void)pollset;
	return -FI_ENOSYS;
}

int fd_no_domain_stx_ctx(struct fid_domain *domain, struct fi_tx_attr *attr, struct fid_stx **stx, void *context)
{
	(void)domain; (void)attr; (void)stx; (void)context;
	return -FI_ENOSYS;
}

int fd_no_domain_srx_ctx(struct fid_domain *domain, struct fi_rx_attr *attr, struct fid_ep **rx_ep, void *context)
{
	(void)domain; (void)attr; (void)rx_ep; (void)context;
	return -FI_ENOSYS;
}

int fd_no_domain_query_atomic(struct fid_domain *domain, enum fi_datatype datatype, enum fi_op op, struct fi_atomic_attr *attr, uint64_t flags)
{
	(void)domain; (void)datatype; (void)op; (void)attr; (void)flags;
	return -FI_ENOSYS;
}

int fd_no_domain_query_collective(struct fid_domain *domain, enum fi_collective_op coll, struct fi_collective_attr *attr, uint64_t flags)
{
	(void)domain; (void)coll; (void)attr; (void)flags;
	return -FI_ENOSYS;
}

int fd_no_domain_endpoint2(struct fid_domain *domain, struct fi_info *info, struct fid_ep **ep, uint64_t flags, void *context)
{
	(void)domain; (void)info; (void)ep; (void)flags; (void)context;
	return -FI_ENOSYS;
}

int fd_no_mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access, uint64_t offset, uint64_t requested_key, uint64_t flags, struct fid_mr **mr, void *context)
{
	(void)fid; (void)buf; (void)len; (void)access; (void)offset; (void)requested_key; (void)flags; (void)mr; (void)context;
	return -FI_ENOSYS;
}

int fd_no_mr_regv(struct fid *fid, const struct iovec *iov, size_t count, uint64_t access, uint64_t offset, uint64_t requested_key, uint64_t flags, struct fid_mr **mr, void *context)
{
	(void)fid; (void)iov; (void)count; (void)access; (void)offset; (void)requested_key; (void)flags; (void)mr; (void)context;
	return -FI_ENOSYS;
}

int fd_no_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr, uint64_t flags, struct fid_mr **mr)
{
	(void)fid; (void)attr; (void)flags; (void)mr;
	return -FI_ENOSYS;
}

int fd_no_cm_setname(fid_t fid, void *addr, size_t addrlen)
{
	(void)fid; (void)addr; (void)addrlen;
	return -FI_ENOSYS;
}

int fd_no_cm_getname(fid_t fid, void *addr, size_t *addrlen)
{
	(void)fid; (void)addr; (void)addrlen;
	return -FI_ENOSYS;
}

int fd_no_cm_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen)
{
	(void)ep; (void)addr; (void)addrlen;
	return -FI_ENOSYS;
}

int fd_no_cm_connect(struct fid_ep *ep, const void *addr, const void *param, size_t paramlen)
{
	(void)ep; (void)addr; (void)param; (void)paramlen;
	return -FI_ENOSYS;
}

int fd_no_cm_listen(struct fid_pep *pep)
{
	(void)pep;
	return -FI_ENOSYS;
}

int fd_no_cm_accept(struct fid_ep *ep, const void *param, size_t paramlen)
{
	(void)ep; (void)param; (void)paramlen;
	return -FI_ENOSYS;
}

int fd_no_cm_reject(struct fid_pep *pep, fid_t handle, const void *param, size_t paramlen)
{
	(void)pep; (void)handle; (void)param; (void)paramlen;
	return -FI_ENOSYS;
}

int fd_no_cm_shutdown(struct fid_ep *ep, uint64_t flags)
{
	(void)ep; (void)flags;
	return -FI_ENOSYS;
}

int fd_no_cm_join(struct fid_ep *ep, const void *addr, uint64_t flags, struct fid_mc **mc, void *context)
{
	(void)ep; (void)addr; (void)flags; (void)mc; (void)context;
	return -FI_ENOSYS;
}

ssize_t fd_no_ep_cancel(fid_t fid, void *context)
{
	(void)fid; (void)context;
	return -FI_ENOSYS;
}

int fd_no_ep_getopt(fid_t fid, int level, int optname, void *optval, size_t *optlen)
{
	(void)fid; (void)level; (void)optname; (void)optval; (void)optlen;
	return -FI_ENOSYS;
}

int fd_no_ep_setopt(fid_t fid, int level, int optname, const void *optval, size_t optlen)
{
	(void)fid; (void)level; (void)optname; (void)optval; (void)optlen;
	return -FI_ENOSYS;
}

int fd_no_ep_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr, struct fid_ep **tx_ep, void *context)
{
	(void)sep; (void)index; (void)attr; (void)tx_ep; (void)context;
	return -FI_ENOSYS;
}

int fd_no_ep_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr, struct fid_ep **rx_ep, void *context)
{
	(void)sep; (void)index; (void)attr; (void)rx_ep; (void)context;
	return -FI_ENOSYS;
}

ssize_t fd_no_ep_rx_size_left(struct fid_ep *ep)
{
	(void)ep;
	return -FI_ENOSYS;
}

ssize_t fd_no_ep_tx_size_left(struct fid_ep *ep)
{
	(void)ep;
	return -FI_ENOSYS;
}

ssize_t fd_no_msg_recv(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src_addr, void *context)
{
	(void)ep; (void)buf; (void)len; (void)desc; (void)src_addr; (void)context;
	return -FI_ENOSYS;
}

ssize_t fd_no_msg_recvv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t src_addr, void *context)
{
	(void)ep; (void)iov; (void)desc; (void)count; (void)src_addr; (void)context;
	return -FI_ENOSYS;
}

ssize_t fd_no_msg_recvmsg(struct fid_ep *ep, const struct fi_msg *msg, uint64_t flags)
{
	(void)ep; (void)msg; (void)flags;
	return -FI_ENOSYS;
}

ssize_t fd_no_msg_send(struct fid_ep *ep, const void *buf, size_t len, void *desc, fi_addr_t dest_addr, void *context)
{
	(void)ep; (void)buf; (void)len; (void)desc; (void)dest_addr; (void)context;
	return -FI_ENOSYS;
}

ssize_t fd_no_msg_sendv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t dest_addr, void *context)
{
	(void)ep; (void)iov; (void)desc; (void)count; (void)dest_addr; (void)context;
	return -FI_ENOSYS;
}

ssize_t fd_no_msg_sendmsg(struct fid_ep *ep, const struct fi_msg *msg, uint64_t flags)
{
	(void)ep; (void)msg; (void)flags;
	return -FI_ENOSYS;
}

ssize_t fd_no_msg_inject(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest_addr)
{
	(void)ep; (void)buf; (void)len; (void)dest_addr;
	return -FI_ENOSYS;
}

ssize_t fd_no_msg_senddata(struct fid_ep *ep, const void *buf, size_t len, void *desc, uint64_t data, fi_addr_t dest_addr, void *context)
{
	(void)ep; (void)buf; (void)len; (void)desc; (void)data; (void)dest_addr; (void)context;
	return -FI_ENOSYS;
}

ssize_t fd_no_msg_injectdata(struct fid_ep *ep, const void *buf, size_t len, uint64_t data, fi_addr_t dest_addr)
{
	(void)ep; (void)buf; (void)len; (void)data; (void)dest_addr;
	return -FI_ENOSYS;
}

int fd_no_wait_wait(struct fid_wait *waitset, int timeout)
{
	(void)waitset; (void)timeout;
	return -FI_ENOSYS;
}

int fd_no_poll_poll(struct fid_poll *pollset, void **context, int count)
{
	(void)pollset; (void)context; (void)count;
	return -FI_ENOSYS;
}

int fd_no_poll_poll_add(struct fid_poll *pollset, struct fid *event_fid, uint64_t flags)
{
	(void)pollset; (void)event_fid; (void)flags;
	return -FI_ENOSYS;
}

int fd_no_poll_poll_del(struct fid_poll *pollset, struct fid *event_fid, uint64_t flags)
{
	(void)pollset; (void)event_fid; (void)flags;
	return -FI_ENOSYS;
}

ssize_t fd_no_eq_read(struct fid_eq *eq, uint32_t *event, void *buf, size_t len, uint64_t flags)
{
	(void)eq; (void)event; (void)buf; (void)len; (void)flags;
	return -FI_ENOSYS;
}

ssize_t fd_no_eq_readerr(struct fid_eq *eq, struct fi_eq_err_entry *buf, uint64_t flags)
{
	(void)eq; (void)buf; (void)flags;
	return -FI_ENOSYS;
}

ssize_t fd_no_eq_write(struct fid_eq *eq, uint32_t event, const void *buf, size_t len, uint64_t flags)
{
	(void)eq; (void)event; (void)buf; (void)len; (void)flags;
	return -FI_ENOSYS;
}

ssize_t fd_no_eq_sread(struct fid_eq *eq, uint32_t *event, void *buf, size_t len, int timeout, uint64_t flags)
{
	(void)eq; (void)event; (void)buf; (void)len; (void)timeout; (void)flags;
	return -FI_ENOSYS;
}

ssize_t fd_no_cq_read(struct fid_cq *cq, void *buf, size_t count)
{
	(void)cq; (void)buf; (void)count;
	return -FI_ENOSYS;
}

ssize_t fd_no_cq_readfrom(struct fid_cq *cq, void *buf, size_t count, fi_addr_t *src_addr)
{
	(void)cq; (void)buf; (void)count; (void)src_addr;
	return -FI_ENOSYS;
}

ssize_t fd_no_cq_readerr(struct fid_cq *cq, struct fi_cq_err_entry *buf, uint64_t flags)
{
	(void)cq; (void)buf; (void)flags;
	return -FI_ENOSYS;
}

ssize_t fd_no_cq_sread(struct fid_cq *cq, void *buf, size_t count, const void *cond, int timeout)
{
	(void)cq; (void)buf; (void)count; (void)cond; (void)timeout;
	return -FI_ENOSYS;
}

ssize_t fd_no_cq_sreadfrom(struct fid_cq *cq, void *buf, size_t count, fi_addr_t *src_addr, const void *cond, int timeout)
{
	(void)cq; (void)buf; (void)count; (void)src_addr; (void)cond; (void)timeout;
	return -FI_ENOSYS;
}

int fd_no_cq_signal(struct fid_cq *cq)
{
	(void)cq;
	return -FI_ENOSYS;
}

int fd_no_cntr_add(struct fid_cntr *cntr, uint64_t value)
{
	(void)cntr; (void)value;
	return -FI_ENOSYS;
}

int fd_no_cntr_set(struct fid_cntr *cntr, uint64_t value)
{
	(void)cntr; (void)value;
	return -FI_ENOSYS;
}

int fd_no_cntr_wait(struct fid_cntr *cntr, uint64_t threshold, int timeout)
{
	(void)cntr; (void)threshold; (void)timeout;
	return -FI_ENOSYS;
}

int fd_no_cntr_adderr(struct fid_cntr *cntr, uint64_t value)
{
	(void)cntr; (void)value;
	return -FI_ENOSYS;
}

int fd_no_cntr_seterr(struct fid_cntr *cntr, uint64_t value)
{
	(void)cntr; (void)value;
	return -FI_ENOSYS;
}

ssize_t fd_no_rma_read(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src_addr, uint64_t addr, uint64_t key, void *context)
{
	(void)ep; (void)buf; (void)len; (void)desc; (void)src_addr; (void)addr; (void)key; (void)context;
	return -FI_ENOSYS;
}

ssize_t fd_no_rma_readv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t src_addr, uint64_t addr, uint64_t key, void *context)
{
	(void)ep; (void)iov; (void)desc; (void)count; (void)src_addr; (void)addr; (void)key; (void)context;
	return -FI_ENOSYS;
}

ssize_t fd_no_rma_readmsg(struct fid_ep *ep, const struct fi_msg_rma *msg, uint64_t flags)
{
	(void)ep; (void)msg; (void)flags;
	return -FI_ENOSYS;
}

ssize_t fd_no_rma_write(struct fid_ep *ep, const void *buf, size_t len, void *desc, fi_addr_t dest_addr, uint64_t addr, uint64_t key, void *context)
{
	(void)ep; (void)buf; (void)len; (void)desc; (void)dest_addr; (void)addr; (void)key; (void)context;
	return -FI_ENOSYS;
}

ssize_t fd_no_rma_writev(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t dest_addr, uint64_t addr, uint64_t key, void *context)
{
	(void)ep; (void)iov; (void)desc; (void)count; (void)dest_addr; (void)addr; (void)key; (void)context;
	return -FI_ENOSYS;
}

ssize_t fd_no_rma_writemsg(struct fid_ep *ep, const struct fi_msg_rma *msg, uint64_t flags)
{
	(void)ep; (void)msg; (void)flags;
	return -FI_ENOSYS;
}

ssize_t fd_no_rma_inject(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest_addr, uint64_t addr, uint64_t key)
{
	(void)ep; (void)buf; (void)len; (void)dest_addr; (void)addr; (void)key;
	return -FI_ENOSYS;
}

ssize_t fd_no_rma_writedata(struct fid_ep *ep, const void *buf, size_t len, void *desc, uint64_t data, fi_addr_t dest_addr, uint64_t addr, uint64_t key, void *context)
{
	(void)ep; (void)buf; (void)len; (void)desc; (void)data; (void)dest_addr; (void)addr; (void)key; (void)context;
	return -FI_ENOSYS;
}

ssize_t fd_no_rma_injectdata(struct fid_ep *ep, const void *buf, size_t len, uint64_t data, fi_addr_t dest_addr, uint64_t addr, uint64_t key)
{
	(void)ep; (void)buf; (void)len; (void)data; (void)dest_addr; (void)addr; (void)key;
	return -FI_ENOSYS;
}

ssize_t fd_no_tagged_recv(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src_addr, uint64_t tag, uint64_t ignore, void *context)
{
	(void)ep; (void)buf; (void)len; (void)desc; (void)src_addr; (void)tag; (void)ignore; (void)context;
	return -FI_ENOSYS;
}

ssize_t fd_no_tagged_recvv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t src_addr, uint64_t tag, uint64_t ignore, void *context)
{
	(void)ep; (void)iov; (void)desc; (void)count; (void)src_addr; (void)tag; (void)ignore; (void)context;
	return -FI_ENOSYS;
}

ssize_t fd_no_tagged_recvmsg(struct fid_ep *ep, const struct fi_msg_tagged *msg, uint64_t flags)
{
	(void)ep; (void)msg; (void)flags;
	return -FI_ENOSYS;
}

ssize_t fd_no_tagged_send(struct fid_ep *ep, const void *buf, size_t len, void *desc, fi_addr_t dest_addr, uint64_t tag, void *context)
{
	(void)ep; (void)buf; (void)len; (void)desc; (void)dest_addr; (void)tag; (void)context;
	return -FI_ENOSYS;
}

ssize_t fd_no_tagged_sendv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t dest_addr, uint64_t tag, void *context)
{
	(void)ep; (void)iov; (void)desc; (void)count; (void)dest_addr; (void)tag; (void)context;
	return -FI_ENOSYS;
}

ssize_t fd_no_tagged_sendmsg(struct fid_ep *ep, const struct fi_msg_tagged *msg, uint64_t flags)
{
	(void)ep; (void)msg; (void)flags;
	return -FI_ENOSYS;
}

ssize_t fd_no_tagged_inject(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest_addr, uint64_t tag)
{
	(void)ep; (void)buf; (void)len; (void)dest_addr; (void)tag;
	return -FI_ENOSYS;
}

ssize_t fd_no_tagged_senddata(struct fid_ep *ep, const void *buf, size_t len, void *desc, uint64_t data, fi_addr_t dest_addr, uint64_t tag, void *context)
{
	(void)ep; (void)buf; (void)len; (void)desc; (void)data; (void)dest_addr; (void)tag; (void)context;
	return -FI_ENOSYS;
}

ssize_t fd_no_tagged_injectdata(struct fid_ep *ep, const void *buf, size_t len, uint64_t data, fi_addr_t dest_addr, uint64_t tag)
{
	(void)ep; (void)buf; (void)len; (void)data; (void)dest_addr; (void)tag;
	return -FI_ENOSYS;
}

ssize_t fd_no_atomic_write(struct fid_ep *ep, const void *buf, size_t count, void *desc, fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)dest_addr; (void)addr; (void)key; (void)datatype; (void)op; (void)context;
	return -FI_ENOSYS;
}

ssize_t fd_no_atomic_writev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count, fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context)
{
	(void)ep; (void)iov; (void)desc; (void)count; (void)dest_addr; (void)addr; (void)key; (void)datatype; (void)op; (void)context;
	return -FI_ENOSYS;
}

ssize_t fd_no_atomic_writemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg, uint64_t flags)
{
	(void)ep; (void)msg; (void)flags;
	return -FI_ENOSYS;
}

ssize_t fd_no_atomic_inject(struct fid_ep *ep, const void *buf, size_t count, fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op)
{
	(void)ep; (void)buf; (void)count; (void)dest_addr; (void)addr; (void)key; (void)datatype; (void)op;
	return -FI_ENOSYS;
}

ssize_t fd_no_atomic_readwrite(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)result; (void)result_desc; (void)dest_addr; (void)addr; (void)key; (void)datatype; (void)op; (void)context;
	return -FI_ENOSYS;
}

ssize_t fd_no_atomic_readwritev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count, struct fi_ioc *resultv, void **result_desc, size_t result_count, fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context)
{
	(void)ep; (void)iov; (void)desc; (void)count; (void)resultv; (void)result_desc; (void)result_count; (void)dest_addr; (void)addr; (void)key; (void)datatype; (void)op; (void)context;
	return -FI_ENOSYS;
}

ssize_t fd_no_atomic_readwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg, struct fi_ioc *resultv, void **result_desc, size_t result_count, uint64_t flags)
{
	(void)ep; (void)msg; (void)resultv; (void)result_desc; (void)result_count; (void)flags;
	return -FI_ENOSYS;
}

ssize_t fd_no_atomic_compwrite(struct fid_ep *ep, const void *buf, size_t count, void *desc, const void *compare, void *compare_desc, void *result, void *result_desc, fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)compare; (void)compare_desc; (void)result; (void)result_desc; (void)dest_addr; (void)addr; (void)key; (void)datatype; (void)op; (void)context;
	return -FI_ENOSYS;
}

ssize_t fd_no_atomic_compwritev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count, const struct fi_ioc *comparev, void **compare_desc, size_t compare_count, struct fi_ioc *resultv, void **result_desc, size_t result_count, fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context)
{
	(void)ep; (void)iov; (void)desc; (void)count; (void)comparev; (void)compare_desc; (void)compare_count; (void)resultv; (void)result_desc; (void)result_count; (void)dest_addr; (void)addr; (void)key; (void)datatype; (void)op; (void)context;
	return -FI_ENOSYS;
}

ssize_t fd_no_atomic_compwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg, const struct fi_ioc *comparev, void **compare_desc, size_t compare_count, struct fi_ioc *resultv, void **result_desc, size_t result_count, uint64_t flags)
{
	(void)ep; (void)msg; (void)comparev; (void)compare_desc; (void)compare_count; (void)resultv; (void)result_desc; (void)result_count; (void)flags;
	return -FI_ENOSYS;
}

int fd_no_atomic_writevalid(struct fid_ep *ep, enum fi_datatype datatype, enum fi_op op, size_t *count)
{
	(void)ep; (void)datatype; (void)op; (void)count;
	return -FI_ENOSYS;
}

int fd_no_atomic_readwritevalid(struct fid_ep *ep, enum fi_datatype datatype, enum fi_op op, size_t *count)
{
	(void)ep; (void)datatype; (void)op; (void)count;
	return -FI_ENOSYS;
}

int fd_no_atomic_compwritevalid(struct fid_ep *ep, enum fi_datatype datatype, enum fi_op op, size_t *count)
{
	(void)ep; (void)datatype; (void)op; (void)count;
	return -FI_ENOSYS;
}

int fd_no_av_set_set_union(struct fid_av_set *dst, const struct fid_av_set *src)
{
	(void)dst; (void)src;
	return -FI_ENOSYS;
}

int fd_no_av_set_intersect(struct fid_av_set *dst, const struct fid_av_set *src)
{
	(void)dst; (void)src;
	return -FI_ENOSYS;
}

int fd_no_av_set_diff(struct fid_av_set *dst, const struct fid_av_set *src)
{
	(void)dst; (void)src;
	return -FI_ENOSYS;
}

int fd_no_av_set_insert(struct fid_av_set *set, fi_addr_t addr)
{
	(void)set; (void)addr;
	return -FI_ENOSYS;
}

int fd_no_av_set_remove(struct fid_av_set *set, fi_addr_t addr)
{
	(void)set; (void)addr;
	return -FI_ENOSYS;
}

int fd_no_av_set_addr(struct fid_av_set *set, fi_addr_t *coll_addr)
{
	(void)set; (void)coll_addr;
	return -FI_ENOSYS;
}

ssize_t fd_no_collective_barrier(struct fid_ep *ep, fi_addr_t coll_addr, void *context)
{
	(void)ep; (void)coll_addr; (void)context;
	return -FI_ENOSYS;
}

ssize_t fd_no_collective_broadcast(struct fid_ep *ep, void *buf, size_t count, void *desc, fi_addr_t coll_addr, fi_addr_t root_addr, enum fi_datatype datatype, uint64_t flags, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)coll_addr; (void)root_addr; (void)datatype; (void)flags; (void)context;
	return -FI_ENOSYS;
}

ssize_t fd_no_collective_alltoall(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t coll_addr, enum fi_datatype datatype, uint64_t flags, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)result; (void)result_desc; (void)coll_addr; (void)datatype; (void)flags; (void)context;
	return -FI_ENOSYS;
}

ssize_t fd_no_collective_allreduce(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t coll_addr, enum fi_datatype datatype, enum fi_op op, uint64_t flags, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)result; (void)result_desc; (void)coll_addr; (void)datatype; (void)op; (void)flags; (void)context;
	return -FI_ENOSYS;
}

ssize_t fd_no_collective_allgather(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t coll_addr, enum fi_datatype datatype, uint64_t flags, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)result; (void)result_desc; (void)coll_addr; (void)datatype; (void)flags; (void)context;
	return -FI_ENOSYS;
}

ssize_t fd_no_collective_reduce_scatter(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t coll_addr, enum fi_datatype datatype, enum fi_op op, uint64_t flags, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)result; (void)result_desc; (void)coll_addr; (void)datatype; (void)op; (void)flags; (void)context;
	return -FI_ENOSYS;
}

ssize_t fd_no_collective_reduce(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t coll_addr, fi_addr_t root_addr, enum fi_datatype datatype, enum fi_op op, uint64_t flags, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)result; (void)result_desc; (void)coll_addr; (void)root_addr; (void)datatype; (void)op; (void)flags; (void)context;
	return -FI_ENOSYS;
}

ssize_t fd_no_collective_scatter(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t coll_addr, fi_addr_t root_addr, enum fi_datatype datatype, uint64_t flags, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)result; (void)result_desc; (void)coll_addr; (void)root_addr; (void)datatype; (void)flags; (void)context;
	return -FI_ENOSYS;
}

ssize_t fd_no_collective_gather(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t coll_addr, fi_addr_t root_addr, enum fi_datatype datatype, uint64_t flags, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)result; (void)result_desc; (void)coll_addr; (void)root_addr; (void)datatype; (void)flags; (void)context;
	return -FI_ENOSYS;
}

ssize_t fd_no_collective_msg(struct fid_ep *ep, const struct fi_msg_collective *msg, struct fi_ioc *resultv, void **result_desc, size_t result_count, uint64_t flags)
{
	(void)ep; (void)msg; (void)resultv; (void)result_desc; (void)result_count; (void)flags;
	return -FI_ENOSYS;
}

ssize_t fd_no_collective_barrier2(struct fid_ep *ep, fi_addr_t coll_addr, uint64_t flags, void *context)
{
	(void)ep; (void)coll_addr; (void)flags; (void)context;
	return -FI_ENOSYS;
}

int fd_eopnotsupp_cm_setname(fid_t fid, void *addr, size_t addrlen)
{
	(void)fid; (void)addr; (void)addrlen;
	return -FI_EOPNOTSUPP;
}

int fd_eopnotsupp_cm_getname(fid_t fid, void *addr, size_t *addrlen)
{
	(void)fid; (void)addr; (void)addrlen;
	return -FI_EOPNOTSUPP;
}

int fd_eopnotsupp_cm_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen)
{
	(void)ep; (void)addr; (void)addrlen;
	return -FI_EOPNOTSUPP;
}

int fd_eopnotsupp_cm_connect(struct fid_ep *ep, const void *addr, const void *param, size_t paramlen)
{
	(void)ep; (void)addr; (void)param; (void)paramlen;
	return -FI_EOPNOTSUPP;
}

int fd_eopnotsupp_cm_listen(struct fid_pep *pep)
{
	(void)pep;
	return -FI_EOPNOTSUPP;
}

int fd_eopnotsupp_cm_accept(struct fid_ep *ep, const void *param, size_t paramlen)
{
	(void)ep; (void)param; (void)paramlen;
	return -FI_EOPNOTSUPP;
}

int fd_eopnotsupp_cm_reject(struct fid_pep *pep, fid_t handle, const void *param, size_t paramlen)
{
	(void)pep; (void)handle; (void)param; (void)paramlen;
	return -FI_EOPNOTSUPP;
}

int fd_eopnotsupp_cm_shutdown(struct fid_ep *ep, uint64_t flags)
{
	(void)ep; (void)flags;
	return -FI_EOPNOTSUPP;
}

int fd_eopnotsupp_cm_join(struct fid_ep *ep, const void *addr, uint64_t flags, struct fid_mc **mc, void *context)
{
	(void)ep; (void)addr; (void)flags; (void)mc; (void)context;
	return -FI_EOPNOTSUPP;
}

struct fi_ops_msg fd_no_ops_msg = {
	.size = sizeof(struct fi_ops_msg),
	.recv = fd_no_msg_recv,
	.recvv = fd_no_msg_recvv,
	.recvmsg = fd_no_msg_recvmsg,
	.send = fd_no_msg_send,
	.sendv = fd_no_msg_sendv,
	.sendmsg = fd_no_msg_sendmsg,
	.inject = fd_no_msg_inject,
	.senddata = fd_no_msg_senddata,
	.injectdata = fd_no_msg_injectdata,
};

struct fi_ops_rma fd_no_ops_rma = {
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

struct fi_ops_tagged fd_no_ops_tagged = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = fd_no_tagged_recv,
	.recvv = fd_no_tagged_recvv,
	.recvmsg = fd_no_tagged_recvmsg,
	.send = fd_no_tagged_send,
	.sendv = fd_no_tagged_sendv,
	.sendmsg = fd_no_tagged_sendmsg,
	.inject = fd_no_tagged_inject,
	.senddata = fd_no_tagged_senddata,
	.injectdata = fd_no_tagged_injectdata,
};

struct fi_ops_atomic fd_no_ops_atomic = {
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

struct fi_ops_collective fd_no_ops_collective = {
	.size = sizeof(struct fi_ops_collective),
	.barrier = fd_no_collective_barrier,
	.broadcast = fd_no_collective_broadcast,
	.alltoall = fd_no_collective_alltoall,
	.allreduce = fd_no_collective_allreduce,
	.allgather = fd_no_collective_allgather,
	.reduce_scatter = fd_no_collective_reduce_scatter,
	.reduce = fd_no_collective_reduce,
	.scatter = fd_no_collective_scatter,
	.gather = fd_no_collective_gather,
	.msg = fd_no_collective_msg,
	.barrier2 = fd_no_collective_barrier2,
};

struct fi_ops_ep fd_no_ops_ep = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = fd_no_ep_cancel,
	.getopt = fd_no_ep_getopt,
	.setopt = fd_no_ep_setopt,
	.tx_ctx = fd_no_ep_tx_ctx,
	.rx_ctx = fd_no_ep_rx_ctx,
	.rx_size_left = fd_no_ep_rx_size_left,
	.tx_size_left = fd_no_ep_tx_size_left,
};

struct fi_ops_cm fd_no_ops_cm = {
	.size = sizeof(struct fi_ops_cm),
	.setname = fd_no_cm_setname,
	.getname = fd_no_cm_getname,
	.getpeer = fd_no_cm_getpeer,
	.connect = fd_no_cm_connect,
	.listen = fd_no_cm_listen,
	.accept = fd_no_cm_accept,
	.reject = fd_no_cm_reject,
	.shutdown = fd_no_cm_shutdown,
	.join = fd_no_cm_join,
};

struct fi_ops_mr fd_no_ops_mr = {
	.size = sizeof(struct fi_ops_mr),
	.reg = fd_no_mr_reg,
	.regv = fd_no_mr_regv,
	.regattr = fd_no_mr_regattr,
};

struct fi_ops_cm fd_eopnotsupp_ops_cm = {
	.size = sizeof(struct fi_ops_cm),
	.setname = fd_eopnotsupp_cm_setname,
	.getname = fd_eopnotsupp_cm_getname,
	.getpeer = fd_eopnotsupp_cm_getpeer,
	.connect = fd_eopnotsupp_cm_connect,
	.listen = fd_eopnotsupp_cm_listen,
	.accept = fd_eopnotsupp_cm_accept,
	.reject = fd_eopnotsupp_cm_reject,
	.shutdown = fd_eopnotsupp_cm_shutdown,
	.join = fd_eopnotsupp_cm_join,
};
