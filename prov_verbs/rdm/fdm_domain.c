/* The RDM fabric and domain: wrappers of a verbs fabric and domain whose
 * ops open the layer's objects (AV, CQ, counters, RDM endpoints, memory
 * registrations: fdm_mr.c wraps verbs ones so that the target of an
 * atomic knows its regions). */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

#include "fd_core.h"
#include "fd_enosys.h"
#include "fdm.h"
#include "fdm_cntr.h"
#include "fdv_layer.h"

/* ---- fabric ---- */

/* The fabric is the layer kit's (fd_layer_fabric, src/include/fd_util.h):
 * the verbs fabric underneath, counting the domains and EQs opened on it.
 * Wait sets: the core's (fd_sets.h). fi_trywait takes the layer's CQs,
 * counters and EQs through their fd_waitable (fdm_cq_trywait: every
 * endpoint of the domain idle and armed, nothing queued). */
static struct fi_ops_fabric fdm_fabric_ops =
	FD_FABRIC_OPS(fdm_domain_open, fd_no_fabric_passive_ep, fdm_eq_open, fd_wait_open);

int fdm_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		    void *context)
{
	return fd_layer_fabric_open(FDM_CORE_PROV_NAME, attr, context, &fdm_fabric_ops,
				    fabric);
}

/* ---- domain ---- */

int fdm_wildcard(const void *addr)
{
	const struct sockaddr *sa = addr;

	if (!sa)
		return 1;
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)addr)->sin_addr.s_addr == htonl(INADDR_ANY);
	if (sa->sa_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)addr)->sin6_addr, &in6addr_any,
			       sizeof(in6addr_any));
	return 0;
}

/* ---- FI_PROGRESS_AUTO: the domain's progress thread ----
 *
 * It sleeps on the domain's epoll set of verbs CQ channel and EQ fds (the
 * wait objects' set) and, when one turns readable, runs under the domain
 * lock what an fi_cq_read would run for every endpoint of the domain.
 * Completions go to the software CQs (and wake an armed CQ's fd there).
 * Sleeping follows the wait objects' rule: arm (fdm_domain_trywait), and
 * only if that says nothing is pending wait on the fds. */

/* Idle: every fd armed. The timeout is only a safety net for work no fd
 * announces and that fdm_domain_trywait does not see either; it costs
 * five wake-ups a second. */
#define FDM_AUTO_IDLE_MS	200
/* Busy (trywait said -FI_EAGAIN: sends waiting for the peer's credit
 * writes, a connection being made, a rendezvous to pump): a few passes at
 * once, then one a millisecond, so that a peer slow to free credits does
 * not keep a core spinning. */
#define FDM_AUTO_BUSY_MS	1
#define FDM_AUTO_SPINS		16

static void *fdm_progress_thread(void *arg)
{
	struct fdm_domain *d = arg;
	struct epoll_event ev[2];
	unsigned spins = 0;

	while (!__atomic_load_n(&d->prog_stop, __ATOMIC_ACQUIRE)) {
		int ret, timeout;

		fd_mutex_lock(&d->mutex);
		/* every endpoint first: trywait stops at the first busy one */
		for (struct fdm_node *n = d->eps.next; n != &d->eps; n = n->next)
			fdm_ep_progress(fdm_entry(n, struct fdm_ep, dom_node));
		ret = fdm_domain_trywait(d);
		fd_mutex_unlock(&d->mutex);
		if (!ret) {
			spins = 0;
			timeout = FDM_AUTO_IDLE_MS;
		} else if (ret == -FI_EAGAIN) {
			timeout = ++spins < FDM_AUTO_SPINS ? 0 : FDM_AUTO_BUSY_MS;
		} else {
			/* a verbs error arming: do not spin on it */
			FD_WARN(FD_LOG_DOMAIN, "RDM progress thread: trywait: %s",
				fi_strerror(-ret));
			timeout = FDM_AUTO_IDLE_MS;
		}
		if (epoll_wait(d->prog_epfd, ev, 2, timeout) < 0 && errno != EINTR) {
			FD_WARN(FD_LOG_DOMAIN, "RDM progress thread: epoll_wait: %s",
				strerror(errno));
			usleep(FDM_AUTO_IDLE_MS * 1000);
		}
	}
	return NULL;
}

static int fdm_progress_start(struct fdm_domain *d)
{
	struct epoll_event ev = { .events = EPOLLIN };
	sigset_t all, old;
	int ret;

	d->prog_epfd = epoll_create1(EPOLL_CLOEXEC);
	d->prog_stopfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (d->prog_epfd < 0 || d->prog_stopfd < 0)
		goto err_fd;
	/* the stop fd is the thread's own: not in wait_epfd, which the
	 * CQs' and counters' fds hold */
	if (epoll_ctl(d->prog_epfd, EPOLL_CTL_ADD, d->wait_epfd, &ev) ||
	    epoll_ctl(d->prog_epfd, EPOLL_CTL_ADD, d->prog_stopfd, &ev))
		goto err_fd;
	/* the application's signals are for its own threads: the progress
	 * thread starts with all of them blocked */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&d->prog_thread, NULL, fdm_progress_thread, d);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		FD_WARN(FD_LOG_DOMAIN, "RDM progress thread: %s", strerror(ret));
		ret = ret == EAGAIN ? -FI_EAGAIN : -FI_ENOMEM;
		goto err;
	}
	d->prog_running = true;
	return 0;
err_fd:
	ret = -FI_EMFILE;
err:
	if (d->prog_epfd >= 0)
		close(d->prog_epfd);
	if (d->prog_stopfd >= 0)
		close(d->prog_stopfd);
	d->prog_epfd = d->prog_stopfd = -1;
	return ret;
}

/* Before anything the thread reads is freed: it is joined here. */
static void fdm_progress_stop(struct fdm_domain *d)
{
	uint64_t one = 1;

	if (!d->prog_running)
		return;
	__atomic_store_n(&d->prog_stop, 1, __ATOMIC_RELEASE);
	if (write(d->prog_stopfd, &one, sizeof(one)) < 0)
		FD_WARN(FD_LOG_DOMAIN, "RDM progress thread stop: %s", strerror(errno));
	pthread_join(d->prog_thread, NULL);
	d->prog_running = false;
	close(d->prog_epfd);
	close(d->prog_stopfd);
	d->prog_epfd = d->prog_stopfd = -1;
}

static int fdm_domain_close(struct fid *fid)
{
	struct fdm_domain *d = fdv_container_of(fid, struct fdm_domain, domain_fid.fid);
	int ret;

	if (d->refs)
		return -FI_EBUSY;
	/* no endpoint is left (refs), but the thread still reads d */
	fdm_progress_stop(d);
	ret = fi_close(&d->vdomain->fid);
	if (ret)
		return ret;
	atomic_fetch_sub(&d->fabric->refs, 1);
	fi_freeinfo(d->info);
	fi_freeinfo(d->core);
	fdm_mr_table_free(d);
	if (d->wait_epfd >= 0)
		close(d->wait_epfd);
	fd_mutex_destroy(&d->mutex);
	free(d);
	return 0;
}

/* The domain's side of a counter wait: arm every endpoint (the counter
 * module knows only callbacks). */
static int fdm_domain_cntr_trywait(void *arg)
{
	struct fdm_domain *d = arg;
	int ret;

	fdm_lock(d);
	ret = fdm_domain_trywait(d);
	fdm_unlock(d);
	return ret;
}

static int fdm_domain_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
				struct fid_cntr **cntr, void *context)
{
	struct fdm_domain *d = fdv_container_of(domain, struct fdm_domain, domain_fid);
	int ret = fdm_cntr_open(domain, attr, cntr, context);

	if (ret)
		return ret;
	ret = fdm_cntr_set_waiter(*cntr, d->wait_epfd, fdm_domain_cntr_trywait, d);
	if (!ret && attr && attr->wait_obj == FI_WAIT_SET)
		ret = fdm_cntr_join(*cntr, attr->wait_set);
	if (ret) {
		fi_close(&(*cntr)->fid);
		*cntr = NULL;
	}
	return ret;
}

static struct fi_ops fdm_domain_fi_ops =
	FD_FI_OPS(fdm_domain_close, fd_no_fid_bind, fd_no_fid_control, fd_no_fid_tostr);

static struct fi_ops_domain fdm_domain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = fdm_av_open,
	.cq_open = fdm_cq_open,
	.endpoint = fdm_ep_open,
	.scalable_ep = fdm_sep_open,
	.cntr_open = fdm_domain_cntr_open,
	.poll_open = fd_poll_open,	/* the core's poll sets (fd_sets.h) */
	.stx_ctx = fd_no_domain_stx_ctx,
	.srx_ctx = fd_no_domain_srx_ctx,
	.query_atomic = fdm_atomic_query,
	.query_collective = fdm_coll_query,
	.endpoint2 = fd_domain_endpoint2,
};

int fdm_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **domain, void *context)
{
	struct fd_layer_fabric *f = fd_layer_fabric_of(fabric);
	struct fi_info *hints = NULL, *core = NULL;
	struct fdm_domain *d;
	int ret;

	if (!info || !domain || !info->ep_attr || info->ep_attr->type != FI_EP_RDM ||
	    !info->fabric_attr || !info->fabric_attr->prov_name ||
	    strcasecmp(info->fabric_attr->prov_name, FDM_PROV_NAME))
		return -FI_EINVAL;
	/* a program built against other inline verbs headers */
	ret = fdv_abi_check();
	if (ret)
		return ret;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -FI_ENOMEM;
	d->prog_epfd = d->prog_stopfd = -1;
	/* every enabled endpoint's verbs CQ and EQ fds: what the wait
	 * objects of this domain's CQs and counters sleep on */
	d->wait_epfd = epoll_create1(EPOLL_CLOEXEC);
	if (d->wait_epfd < 0) {
		free(d);
		return -FI_EMFILE;
	}
	/* The verbs entry of the same device and address family. */
	hints = fdm_core_hints(info);
	if (!hints) {
		ret = -FI_ENOMEM;
		goto err;
	}
	free(hints->dest_addr);
	hints->dest_addr = NULL;
	hints->dest_addrlen = 0;
	/* the listening port is the endpoint's business */
	if (hints->src_addr) {
		struct sockaddr *sa = hints->src_addr;

		if (sa->sa_family == AF_INET)
			((struct sockaddr_in *)hints->src_addr)->sin_port = 0;
		else if (sa->sa_family == AF_INET6)
			((struct sockaddr_in6 *)hints->src_addr)->sin6_port = 0;
	}
	ret = fdv_getinfo(fdm_core_version(info->fabric_attr->api_version), NULL, NULL, 0, hints, &core);
	if (!ret && fdm_wildcard(core->src_addr)) {
		/* a wildcard source (a server given only a port): the
		 * device's own address is what peers must be told */
		struct fi_info *named = NULL;

		free(hints->src_addr);
		hints->src_addr = NULL;
		hints->src_addrlen = 0;
		if (!fdv_getinfo(fdm_core_version(info->fabric_attr->api_version), NULL, NULL, 0, hints, &named)) {
			fi_freeinfo(core);
			core = named;
		}
	}
	fi_freeinfo(hints);
	if (ret)
		goto err;
	fi_freeinfo(core->next);
	core->next = NULL;
	d->core = core;
	d->info = fi_dupinfo(info);
	if (!d->info) {
		ret = -FI_ENOMEM;
		goto err;
	}
	ret = fi_domain(f->lower, core, &d->vdomain, NULL);
	if (ret)
		goto err;
	fd_mutex_init(&d->mutex);
	d->auto_progress = info->domain_attr &&
		(info->domain_attr->data_progress == FI_PROGRESS_AUTO ||
		 info->domain_attr->control_progress == FI_PROGRESS_AUTO);
	/* the progress thread is a second caller: every call locks (and the
	 * endpoints' inline paths stay off, fdm_ep_fast_update) */
	d->locked = d->auto_progress || (info->domain_attr &&
		(info->domain_attr->threading == FI_THREAD_SAFE ||
		 info->domain_attr->threading == FI_THREAD_UNSPEC));
	d->fabric = f;
	fdm_list_init(&d->eps);
	d->pool_size = core->rx_attr->size < FDM_POOL_MAX ?
		(uint32_t)core->rx_attr->size : FDM_POOL_MAX;
	if (d->pool_size < 16)
		d->pool_size = 16;
	d->core_max_msg = core->ep_attr->max_msg_size ? core->ep_attr->max_msg_size :
		((size_t)1 << 30);
	fd_fid_init(&d->domain_fid.fid, FI_CLASS_DOMAIN, context, &fdm_domain_fi_ops);
	d->domain_fid.ops = &fdm_domain_ops;
	d->domain_fid.mr = &fdm_mr_ops;
	if (d->auto_progress) {
		ret = fdm_progress_start(d);
		if (ret) {
			fi_close(&d->vdomain->fid);
			fd_mutex_destroy(&d->mutex);
			goto err;
		}
	}
	atomic_fetch_add(&f->refs, 1);
	*domain = &d->domain_fid;
	return 0;
err:
	fi_freeinfo(d->core);
	fi_freeinfo(d->info);
	close(d->wait_epfd);
	free(d);
	return ret;
}
