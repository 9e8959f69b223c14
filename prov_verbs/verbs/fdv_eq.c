/* The verbs MSG event queue: the core EQ (src/fd_eq.c: the list, read,
 * readerr, write, sread, wait fd, sets) plus what is verbs' own. rdma_cm
 * events are taken from the EQ's event channel when the application reads
 * (the pump), translated (the connection state machine moves on here),
 * acknowledged at once and queued as ready-made entries; fi_connect calls
 * with a deadline fail here when their timer fires. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "fdv_internal.h"

/* ---- connect deadlines ---- */

/* The timer follows the earliest deadline (0 disarms it). Lock held. */
static void fdv_eq_arm_deadline(struct fdv_eq *eq)
{
	struct itimerspec its;
	struct fdv_msg_ep *ep;
	uint64_t first = 0;

	for (ep = eq->connecting; ep; ep = ep->connecting_next)
		if (!first || ep->connect_deadline_ns < first)
			first = ep->connect_deadline_ns;
	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = (time_t)(first / 1000000000u);
	its.it_value.tv_nsec = (long)(first % 1000000000u);
	if (timerfd_settime(eq->tfd, TFD_TIMER_ABSTIME, &its, NULL))
		FD_WARN(FD_LOG_EQ, "timerfd_settime: %s", strerror(errno));
}

void fdv_eq_watch_connect(struct fdv_eq *eq, struct fdv_msg_ep *ep,
			  unsigned int ms)
{
	pthread_mutex_lock(&eq->core.lock);
	ep->connect_deadline_ns = fd_now_ns() + (uint64_t)ms * 1000000u;
	ep->connecting_next = eq->connecting;
	eq->connecting = ep;
	fdv_eq_arm_deadline(eq);
	pthread_mutex_unlock(&eq->core.lock);
}

void fdv_eq_unwatch_connect_locked(struct fdv_eq *eq, struct fdv_msg_ep *ep)
{
	struct fdv_msg_ep **pp;

	if (!ep->connect_deadline_ns)
		return;
	for (pp = &eq->connecting; *pp; pp = &(*pp)->connecting_next) {
		if (*pp == ep) {
			*pp = ep->connecting_next;
			break;
		}
	}
	ep->connect_deadline_ns = 0;
	ep->connecting_next = NULL;
	fdv_eq_arm_deadline(eq);
}

void fdv_eq_unwatch_connect(struct fdv_eq *eq, struct fdv_msg_ep *ep)
{
	pthread_mutex_lock(&eq->core.lock);
	fdv_eq_unwatch_connect_locked(eq, ep);
	pthread_mutex_unlock(&eq->core.lock);
}

/* After the channel is drained (an answer that arrived in time wins),
 * connects past their deadline fail. Lock held. */
static void fdv_eq_expire_connects(struct fdv_eq *eq)
{
	struct fdv_msg_ep **pp, *ep;
	uint64_t now, ticks;
	ssize_t n;

	if (!eq->connecting)
		return;
	/* clears the fd's readiness; EAGAIN when it has not fired */
	n = read(eq->tfd, &ticks, sizeof(ticks));
	(void)n;
	now = fd_now_ns();
	for (pp = &eq->connecting; (ep = *pp);) {
		if (ep->connect_deadline_ns > now) {
			pp = &ep->connecting_next;
			continue;
		}
		*pp = ep->connecting_next;
		ep->connecting_next = NULL;
		ep->connect_deadline_ns = 0;
		fdv_cm_connect_expired(eq, ep);
	}
	fdv_eq_arm_deadline(eq);
}

/* Take every pending rdma_cm event off the channel (the core calls it
 * before each read). The lock covers the connection state the handlers
 * move on as well as the queue they push into. */
static void fdv_eq_pump(struct fd_eq *core)
{
	struct fdv_eq *eq = fd_container_of(core, struct fdv_eq, core);
	struct rdma_cm_event *ev;

	pthread_mutex_lock(&core->lock);
	while (!rdma_get_cm_event(eq->channel, &ev))
		fdv_cm_handle_event(eq, ev);
	fdv_eq_expire_connects(eq);
	pthread_mutex_unlock(&core->lock);
}

int fdv_eq_attach(struct fdv_eq *eq, struct rdma_cm_id *id)
{
	if (id->channel == eq->channel)
		return 0;
	if (rdma_migrate_id(id, eq->channel))
		return -fd_errno_to_fi(errno);
	return 0;
}

/* An unread connection request is refused, its id destroyed. */
static void fdv_eq_drop_entry(struct fd_eq_entry *e)
{
	struct fi_eq_cm_entry *cm = (struct fi_eq_cm_entry *)(void *)e->data;

	if (!e->is_error && e->event == FI_CONNREQ && cm->info) {
		struct fid *h = cm->info->handle;
		struct fdv_connreq *req = h ?
			FDV_OBJ(struct fdv_connreq, handle, h) : NULL;

		if (req) {
			rdma_reject(req->id, NULL, 0);
			rdma_destroy_id(req->id);
			free(req);
			cm->info->handle = NULL;
		}
		fi_freeinfo(cm->info);
	}
}

static void fdv_eq_close(struct fd_eq *core)
{
	struct fdv_eq *eq = fd_container_of(core, struct fdv_eq, core);

	rdma_destroy_event_channel(eq->channel);
	close(eq->tfd);
	free(eq);
}

static const struct fd_eq_class fdv_eq_class = {
	.pump = fdv_eq_pump,
	.drop = fdv_eq_drop_entry,
	.close = fdv_eq_close,
	.status_text = "rdma_cm event status (reject reason or errno)",
};

struct fdv_eq *fdv_eq_of_fid(struct fid *fid)
{
	struct fd_eq *core = fd_eq_of_class(fid, &fdv_eq_class);

	return core ? fd_container_of(core, struct fdv_eq, core) : NULL;
}

int fdv_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		struct fid_eq **eq_out, void *context)
{
	struct fdv_fabric *fab;
	struct fd_eq *core;
	struct fdv_eq *eq;
	int ret;

	if (!fabric || !eq_out)
		return -FI_EINVAL;
	fab = FDV_OBJ(struct fdv_fabric, fabric_fid, fabric);
	ret = fd_eq_new(sizeof(*eq), attr, fabric->api_version, &fab->refs, &fdv_eq_class,
			context, &core);
	if (ret)
		return ret;
	eq = fd_container_of(core, struct fdv_eq, core);
	eq->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	eq->channel = rdma_create_event_channel();
	if (eq->tfd < 0 || !eq->channel ||
	    fcntl(eq->channel->fd, F_SETFL, fcntl(eq->channel->fd, F_GETFL) | O_NONBLOCK)) {
		ret = -fd_errno_to_fi(errno);
		goto err;
	}
	ret = fd_eq_add_fd(&eq->core, eq->channel->fd);
	if (!ret)
		ret = fd_eq_add_fd(&eq->core, eq->tfd);
	if (ret)
		goto err;
	*eq_out = &eq->core.eq_fid;
	return 0;
err:
	fd_eq_fini(&eq->core);
	if (eq->channel)
		rdma_destroy_event_channel(eq->channel);
	if (eq->tfd >= 0)
		close(eq->tfd);
	free(eq);
	return ret ? ret : -FI_EOTHER;
}
