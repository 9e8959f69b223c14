/* Generated from gen/api.spec and include/rdma by gen/gen.py: do not
 * edit; regenerate with `python3 gen/gen.py`. */


/* "Not supported" for every ops-table field that can say so: a provider
 * or layer points a field it does not implement at fd_no_<table>_<field>
 * instead of writing its own stub. Every stub answers -FI_ENOSYS and
 * touches nothing; the tables of EOPNOTSUPP_STRUCTS (gen/gen.py) also
 * get fd_eopnotsupp_<table>_<field>, answering -FI_EOPNOTSUPP. Not
 * installed: the core's interface to providers. */
#ifndef FD_ENOSYS_H
#define FD_ENOSYS_H

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_collective.h>

#ifdef __cplusplus
extern "C" {
#endif

/* struct fi_ops */
int fd_no_fid_bind(struct fid *fid, struct fid *bfid, uint64_t flags);
int fd_no_fid_control(struct fid *fid, int command, void *arg);
int fd_no_fid_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops, void *context);
int fd_no_fid_tostr(const struct fid *fid, char *buf, size_t len);
int fd_no_fid_ops_set(struct fid *fid, const char *name, uint64_t flags, void *ops, void *context);

/* struct fi_ops_fabric */
int fd_no_fabric_domain(struct fid_fabric *fabric, struct fi_info *info, struct fid_domain **dom, void *context);
int fd_no_fabric_passive_ep(struct fid_fabric *fabric, struct fi_info *info, struct fid_pep **pep, void *context);
int fd_no_fabric_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr, struct fid_eq **eq, void *context);
int fd_no_fabric_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr, struct fid_wait **waitset);
int fd_no_fabric_trywait(struct fid_fabric *fabric, struct fid **fids, int count);
int fd_no_fabric_domain2(struct fid_fabric *fabric, struct fi_info *info, struct fid_domain **dom, uint64_t flags, void *context);

/* struct fi_ops_av */
int fd_no_av_insert(struct fid_av *av, const void *addr, size_t count, fi_addr_t *fi_addr, uint64_t flags, void *context);
int fd_no_av_insertsvc(struct fid_av *av, const char *node, const char *service, fi_addr_t *fi_addr, uint64_t flags, void *context);
int fd_no_av_insertsym(struct fid_av *av, const char *node, size_t nodecnt, const char *service, size_t svccnt, fi_addr_t *fi_addr, uint64_t flags, void *context);
int fd_no_av_remove(struct fid_av *av, fi_addr_t *fi_addr, size_t count, uint64_t flags);
int fd_no_av_lookup(struct fid_av *av, fi_addr_t fi_addr, void *addr, size_t *addrlen);
int fd_no_av_av_set(struct fid_av *av, struct fi_av_set_attr *attr, struct fid_av_set **av_set, void *context);

/* struct fi_ops_domain */
int fd_no_domain_av_open(struct fid_domain *domain, struct fi_av_attr *attr, struct fid_av **av, void *context);
int fd_no_domain_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr, struct fid_cq **cq, void *context);
int fd_no_domain_endpoint(struct fid_domain *domain, struct fi_info *info, struct fid_ep **ep, void *context);
int fd_no_domain_scalable_ep(struct fid_domain *domain, struct fi_info *info, struct fid_ep **sep, void *context);
int fd_no_domain_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr, struct fid_cntr **cntr, void *context);
int fd_no_domain_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr, struct fid_poll **pollset);
int fd_no_domain_stx_ctx(struct fid_domain *domain, struct fi_tx_attr *attr, struct fid_stx **stx, void *context);
int fd_no_domain_srx_ctx(struct fid_domain *domain, struct fi_rx_attr *attr, struct fid_ep **rx_ep, void *context);
int fd_no_domain_query_atomic(struct fid_domain *domain, enum fi_datatype datatype, enum fi_op op, struct fi_atomic_attr *attr, uint64_t flags);
int fd_no_domain_query_collective(struct fid_domain *domain, enum fi_collective_op coll, struct fi_collective_attr *attr, uint64_t flags);
int fd_no_domain_endpoint2(struct fid_domain *domain, struct fi_info *info, struct fid_ep **ep, uint64_t flags, void *context);

/* struct fi_ops_mr */
int fd_no_mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access, uint64_t offset, uint64_t requested_key, uint64_t flags, struct fid_mr **mr, void *context);
int fd_no_mr_regv(struct fid *fid, const struct iovec *iov, size_t count, uint64_t access, uint64_t offset, uint64_t requested_key, uint64_t flags, struct fid_mr **mr, void *context);
int fd_no_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr, uint64_t flags, struct fid_mr **mr);

/* struct fi_ops_cm */
int fd_no_cm_setname(fid_t fid, void *addr, size_t addrlen);
int fd_no_cm_getname(fid_t fid, void *addr, size_t *addrlen);
int fd_no_cm_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen);
int fd_no_cm_connect(struct fid_ep *ep, const void *addr, const void *param, size_t paramlen);
int fd_no_cm_listen(struct fid_pep *pep);
int fd_no_cm_accept(struct fid_ep *ep, const void *param, size_t paramlen);
int fd_no_cm_reject(struct fid_pep *pep, fid_t handle, const void *param, size_t paramlen);
int fd_no_cm_shutdown(struct fid_ep *ep, uint64_t flags);
int fd_no_cm_join(struct fid_ep *ep, const void *addr, uint64_t flags, struct fid_mc **mc, void *context);

/* struct fi_ops_ep */
ssize_t fd_no_ep_cancel(fid_t fid, void *context);
int fd_no_ep_getopt(fid_t fid, int level, int optname, void *optval, size_t *optlen);
int fd_no_ep_setopt(fid_t fid, int level, int optname, const void *optval, size_t optlen);
int fd_no_ep_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr, struct fid_ep **tx_ep, void *context);
int fd_no_ep_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr, struct fid_ep **rx_ep, void *context);
ssize_t fd_no_ep_rx_size_left(struct fid_ep *ep);
ssize_t fd_no_ep_tx_size_left(struct fid_ep *ep);

/* struct fi_ops_msg */
ssize_t fd_no_msg_recv(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src_addr, void *context);
ssize_t fd_no_msg_recvv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t src_addr, void *context);
ssize_t fd_no_msg_recvmsg(struct fid_ep *ep, const struct fi_msg *msg, uint64_t flags);
ssize_t fd_no_msg_send(struct fid_ep *ep, const void *buf, size_t len, void *desc, fi_addr_t dest_addr, void *context);
ssize_t fd_no_msg_sendv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t dest_addr, void *context);
ssize_t fd_no_msg_sendmsg(struct fid_ep *ep, const struct fi_msg *msg, uint64_t flags);
ssize_t fd_no_msg_inject(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest_addr);
ssize_t fd_no_msg_senddata(struct fid_ep *ep, const void *buf, size_t len, void *desc, uint64_t data, fi_addr_t dest_addr, void *context);
ssize_t fd_no_msg_injectdata(struct fid_ep *ep, const void *buf, size_t len, uint64_t data, fi_addr_t dest_addr);

/* struct fi_ops_wait */
int fd_no_wait_wait(struct fid_wait *waitset, int timeout);

/* struct fi_ops_poll */
int fd_no_poll_poll(struct fid_poll *pollset, void **context, int count);
int fd_no_poll_poll_add(struct fid_poll *pollset, struct fid *event_fid, uint64_t flags);
int fd_no_poll_poll_del(struct fid_poll *pollset, struct fid *event_fid, uint64_t flags);

/* struct fi_ops_eq */
ssize_t fd_no_eq_read(struct fid_eq *eq, uint32_t *event, void *buf, size_t len, uint64_t flags);
ssize_t fd_no_eq_readerr(struct fid_eq *eq, struct fi_eq_err_entry *buf, uint64_t flags);
ssize_t fd_no_eq_write(struct fid_eq *eq, uint32_t event, const void *buf, size_t len, uint64_t flags);
ssize_t fd_no_eq_sread(struct fid_eq *eq, uint32_t *event, void *buf, size_t len, int timeout, uint64_t flags);

/* struct fi_ops_cq */
ssize_t fd_no_cq_read(struct fid_cq *cq, void *buf, size_t count);
ssize_t fd_no_cq_readfrom(struct fid_cq *cq, void *buf, size_t count, fi_addr_t *src_addr);
ssize_t fd_no_cq_readerr(struct fid_cq *cq, struct fi_cq_err_entry *buf, uint64_t flags);
ssize_t fd_no_cq_sread(struct fid_cq *cq, void *buf, size_t count, const void *cond, int timeout);
ssize_t fd_no_cq_sreadfrom(struct fid_cq *cq, void *buf, size_t count, fi_addr_t *src_addr, const void *cond, int timeout);
int fd_no_cq_signal(struct fid_cq *cq);

/* struct fi_ops_cntr */
int fd_no_cntr_add(struct fid_cntr *cntr, uint64_t value);
int fd_no_cntr_set(struct fid_cntr *cntr, uint64_t value);
int fd_no_cntr_wait(struct fid_cntr *cntr, uint64_t threshold, int timeout);
int fd_no_cntr_adderr(struct fid_cntr *cntr, uint64_t value);
int fd_no_cntr_seterr(struct fid_cntr *cntr, uint64_t value);

/* struct fi_ops_rma */
ssize_t fd_no_rma_read(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src_addr, uint64_t addr, uint64_t key, void *context);
ssize_t fd_no_rma_readv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t src_addr, uint64_t addr, uint64_t key, void *context);
ssize_t fd_no_rma_readmsg(struct fid_ep *ep, const struct fi_msg_rma *msg, uint64_t flags);
ssize_t fd_no_rma_write(struct fid_ep *ep, const void *buf, size_t len, void *desc, fi_addr_t dest_addr, uint64_t addr, uint64_t key, void *context);
ssize_t fd_no_rma_writev(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t dest_addr, uint64_t addr, uint64_t key, void *context);
ssize_t fd_no_rma_writemsg(struct fid_ep *ep, const struct fi_msg_rma *msg, uint64_t flags);
ssize_t fd_no_rma_inject(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest_addr, uint64_t addr, uint64_t key);
ssize_t fd_no_rma_writedata(struct fid_ep *ep, const void *buf, size_t len, void *desc, uint64_t data, fi_addr_t dest_addr, uint64_t addr, uint64_t key, void *context);
ssize_t fd_no_rma_injectdata(struct fid_ep *ep, const void *buf, size_t len, uint64_t data, fi_addr_t dest_addr, uint64_t addr, uint64_t key);

/* struct fi_ops_tagged */
ssize_t fd_no_tagged_recv(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src_addr, uint64_t tag, uint64_t ignore, void *context);
ssize_t fd_no_tagged_recvv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t src_addr, uint64_t tag, uint64_t ignore, void *context);
ssize_t fd_no_tagged_recvmsg(struct fid_ep *ep, const struct fi_msg_tagged *msg, uint64_t flags);
ssize_t fd_no_tagged_send(struct fid_ep *ep, const void *buf, size_t len, void *desc, fi_addr_t dest_addr, uint64_t tag, void *context);
ssize_t fd_no_tagged_sendv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t dest_addr, uint64_t tag, void *context);
ssize_t fd_no_tagged_sendmsg(struct fid_ep *ep, const struct fi_msg_tagged *msg, uint64_t flags);
ssize_t fd_no_tagged_inject(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest_addr, uint64_t tag);
ssize_t fd_no_tagged_senddata(struct fid_ep *ep, const void *buf, size_t len, void *desc, uint64_t data, fi_addr_t dest_addr, uint64_t tag, void *context);
ssize_t fd_no_tagged_injectdata(struct fid_ep *ep, const void *buf, size_t len, uint64_t data, fi_addr_t dest_addr, uint64_t tag);

/* struct fi_ops_atomic */
ssize_t fd_no_atomic_write(struct fid_ep *ep, const void *buf, size_t count, void *desc, fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context);
ssize_t fd_no_atomic_writev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count, fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context);
ssize_t fd_no_atomic_writemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg, uint64_t flags);
ssize_t fd_no_atomic_inject(struct fid_ep *ep, const void *buf, size_t count, fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op);
ssize_t fd_no_atomic_readwrite(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context);
ssize_t fd_no_atomic_readwritev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count, struct fi_ioc *resultv, void **result_desc, size_t result_count, fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context);
ssize_t fd_no_atomic_readwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg, struct fi_ioc *resultv, void **result_desc, size_t result_count, uint64_t flags);
ssize_t fd_no_atomic_compwrite(struct fid_ep *ep, const void *buf, size_t count, void *desc, const void *compare, void *compare_desc, void *result, void *result_desc, fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context);
ssize_t fd_no_atomic_compwritev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count, const struct fi_ioc *comparev, void **compare_desc, size_t compare_count, struct fi_ioc *resultv, void **result_desc, size_t result_count, fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context);
ssize_t fd_no_atomic_compwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg, const struct fi_ioc *comparev, void **compare_desc, size_t compare_count, struct fi_ioc *resultv, void **result_desc, size_t result_count, uint64_t flags);
int fd_no_atomic_writevalid(struct fid_ep *ep, enum fi_datatype datatype, enum fi_op op, size_t *count);
int fd_no_atomic_readwritevalid(struct fid_ep *ep, enum fi_datatype datatype, enum fi_op op, size_t *count);
int fd_no_atomic_compwritevalid(struct fid_ep *ep, enum fi_datatype datatype, enum fi_op op, size_t *count);

/* struct fi_ops_av_set */
int fd_no_av_set_set_union(struct fid_av_set *dst, const struct fid_av_set *src);
int fd_no_av_set_intersect(struct fid_av_set *dst, const struct fid_av_set *src);
int fd_no_av_set_diff(struct fid_av_set *dst, const struct fid_av_set *src);
int fd_no_av_set_insert(struct fid_av_set *set, fi_addr_t addr);
int fd_no_av_set_remove(struct fid_av_set *set, fi_addr_t addr);
int fd_no_av_set_addr(struct fid_av_set *set, fi_addr_t *coll_addr);

/* struct fi_ops_collective */
ssize_t fd_no_collective_barrier(struct fid_ep *ep, fi_addr_t coll_addr, void *context);
ssize_t fd_no_collective_broadcast(struct fid_ep *ep, void *buf, size_t count, void *desc, fi_addr_t coll_addr, fi_addr_t root_addr, enum fi_datatype datatype, uint64_t flags, void *context);
ssize_t fd_no_collective_alltoall(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t coll_addr, enum fi_datatype datatype, uint64_t flags, void *context);
ssize_t fd_no_collective_allreduce(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t coll_addr, enum fi_datatype datatype, enum fi_op op, uint64_t flags, void *context);
ssize_t fd_no_collective_allgather(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t coll_addr, enum fi_datatype datatype, uint64_t flags, void *context);
ssize_t fd_no_collective_reduce_scatter(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t coll_addr, enum fi_datatype datatype, enum fi_op op, uint64_t flags, void *context);
ssize_t fd_no_collective_reduce(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t coll_addr, fi_addr_t root_addr, enum fi_datatype datatype, enum fi_op op, uint64_t flags, void *context);
ssize_t fd_no_collective_scatter(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t coll_addr, fi_addr_t root_addr, enum fi_datatype datatype, uint64_t flags, void *context);
ssize_t fd_no_collective_gather(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t coll_addr, fi_addr_t root_addr, enum fi_datatype datatype, uint64_t flags, void *context);
ssize_t fd_no_collective_msg(struct fid_ep *ep, const struct fi_msg_collective *msg, struct fi_ioc *resultv, void **result_desc, size_t result_count, uint64_t flags);
ssize_t fd_no_collective_barrier2(struct fid_ep *ep, fi_addr_t coll_addr, uint64_t flags, void *context);

/* struct fi_ops_cm, -FI_EOPNOTSUPP */
int fd_eopnotsupp_cm_setname(fid_t fid, void *addr, size_t addrlen);
int fd_eopnotsupp_cm_getname(fid_t fid, void *addr, size_t *addrlen);
int fd_eopnotsupp_cm_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen);
int fd_eopnotsupp_cm_connect(struct fid_ep *ep, const void *addr, const void *param, size_t paramlen);
int fd_eopnotsupp_cm_listen(struct fid_pep *pep);
int fd_eopnotsupp_cm_accept(struct fid_ep *ep, const void *param, size_t paramlen);
int fd_eopnotsupp_cm_reject(struct fid_pep *pep, fid_t handle, const void *param, size_t paramlen);
int fd_eopnotsupp_cm_shutdown(struct fid_ep *ep, uint64_t flags);
int fd_eopnotsupp_cm_join(struct fid_ep *ep, const void *addr, uint64_t flags, struct fid_mc **mc, void *context);

/* Whole tables answering -FI_ENOSYS for every call, for an object's
 * ops it does not serve at all; fd_eopnotsupp_ops_<table> answer
 * -FI_EOPNOTSUPP. */
extern struct fi_ops_msg fd_no_ops_msg;
extern struct fi_ops_rma fd_no_ops_rma;
extern struct fi_ops_tagged fd_no_ops_tagged;
extern struct fi_ops_atomic fd_no_ops_atomic;
extern struct fi_ops_collective fd_no_ops_collective;
extern struct fi_ops_ep fd_no_ops_ep;
extern struct fi_ops_cm fd_no_ops_cm;
extern struct fi_ops_mr fd_no_ops_mr;
extern struct fi_ops_cm fd_eopnotsupp_ops_cm;

#ifdef __cplusplus
}
#endif

#endif /* FD_ENOSYS_H */
