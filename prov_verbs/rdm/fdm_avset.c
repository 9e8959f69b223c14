/* AV sets (fi_av_set(3)) of RDM address vectors: an ordered list of
 * fi_addr_t of one AV, changed only by local calls. A member's position is
 * its rank in the collectives of a group joined from the set
 * (fdm_coll.c), so the order is kept exactly as fi_av_set(3) defines it:
 * union appends, intersect / diff / remove keep the rest in order. */
#include <stdlib.h>
#include <string.h>

#include "fd_core.h"
#include "fd_enosys.h"
#include "fdm.h"

/* The collectives a set may be configured for (fi_av_set(3) flags). */
#define FDM_SET_SERVED	(FI_BARRIER_SET | FI_BROADCAST_SET | FI_ALLREDUCE_SET | \
			 FI_ALLGATHER_SET | FI_SCATTER_SET)
#define FDM_SET_ALL	(FDM_SET_SERVED | FI_ALLTOALL_SET | FI_REDUCE_SCATTER_SET | \
			 FI_REDUCE_SET | FI_GATHER_SET)

static struct fi_ops_av_set fdm_av_set_ops;

struct fdm_av_set *fdm_av_set_of(const struct fid_av_set *set)
{
	if (!set || set->fid.fclass != FI_CLASS_AV_SET || set->ops != &fdm_av_set_ops)
		return NULL;
	return fdv_container_of(set, struct fdm_av_set, set_fid);
}

static bool fdm_set_has(const struct fdm_av_set *s, fi_addr_t a)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->members[i] == a)
			return true;
	return false;
}

static int fdm_set_append(struct fdm_av_set *s, fi_addr_t a)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		fi_addr_t *m = realloc(s->members, cap * sizeof(*m));

		if (!m)
			return -FI_ENOMEM;
		s->members = m;
		s->cap = cap;
	}
	s->members[s->n++] = a;
	return 0;
}

/* Keep the members for which src membership equals keep_if_in. */
static void fdm_set_filter(struct fdm_av_set *d, const struct fdm_av_set *src,
			   bool keep_if_in)
{
	size_t k = 0;

	for (size_t i = 0; i < d->n; i++)
		if (fdm_set_has(src, d->members[i]) == keep_if_in)
			d->members[k++] = d->members[i];
	d->n = k;
}

/* Both sets ours, of one AV. */
static int fdm_set_pair(struct fid_av_set *dst, const struct fid_av_set *src,
			struct fdm_av_set **d, const struct fdm_av_set **s)
{
	*d = fdm_av_set_of(dst);
	*s = fdm_av_set_of(src);
	if (!*d || !*s || (*d)->av != (*s)->av)
		return -FI_EINVAL;
	return 0;
}

static int fdm_av_set_union(struct fid_av_set *dst, const struct fid_av_set *src)
{
	struct fdm_av_set *d;
	const struct fdm_av_set *s;
	int ret = fdm_set_pair(dst, src, &d, &s);
	size_t n;

	if (ret)
		return ret;
	n = s->n;	/* src may be dst */
	for (size_t i = 0; i < n && !ret; i++)
		if (!fdm_set_has(d, s->members[i]))
			ret = fdm_set_append(d, s->members[i]);
	return ret;
}

static int fdm_av_set_intersect(struct fid_av_set *dst, const struct fid_av_set *src)
{
	struct fdm_av_set *d;
	const struct fdm_av_set *s;
	int ret = fdm_set_pair(dst, src, &d, &s);

	if (!ret)
		fdm_set_filter(d, s, true);
	return ret;
}

static int fdm_av_set_diff(struct fid_av_set *dst, const struct fid_av_set *src)
{
	struct fdm_av_set *d;
	const struct fdm_av_set *s;
	int ret = fdm_set_pair(dst, src, &d, &s);

	if (ret)
		return ret;
	if (d == s) {
		d->n = 0;
		return 0;
	}
	fdm_set_filter(d, s, false);
	return 0;
}

static int fdm_av_set_insert(struct fid_av_set *set, fi_addr_t addr)
{
	struct fdm_av_set *s = fdm_av_set_of(set);
	bool valid;

	if (!s)
		return -FI_EINVAL;
	fdm_lock(s->av->domain);
	valid = fdm_av_name(s->av, addr) != NULL;
	fdm_unlock(s->av->domain);
	/* an address the AV does not hold, or one the set has already */
	if (!valid || fdm_set_has(s, addr))
		return -FI_EINVAL;
	return fdm_set_append(s, addr);
}

static int fdm_av_set_remove(struct fid_av_set *set, fi_addr_t addr)
{
	struct fdm_av_set *s = fdm_av_set_of(set);

	if (!s)
		return -FI_EINVAL;
	for (size_t i = 0; i < s->n; i++) {
		if (s->members[i] == addr) {
			memmove(&s->members[i], &s->members[i + 1],
				(s->n - i - 1) * sizeof(*s->members));
			s->n--;
			return 0;
		}
	}
	return -FI_EINVAL;
}

/* The set itself is the address fi_join_collective takes: its pointer,
 * which the join checks against the set it is given. */
static int fdm_av_set_addr(struct fid_av_set *set, fi_addr_t *coll_addr)
{
	struct fdm_av_set *s = fdm_av_set_of(set);

	if (!s || !coll_addr)
		return -FI_EINVAL;
	*coll_addr = (fi_addr_t)(uintptr_t)s;
	return 0;
}

static int fdm_av_set_close(struct fid *fid)
{
	struct fdm_av_set *s = fdv_container_of(fid, struct fdm_av_set, set_fid.fid);

	fdm_lock(s->av->domain);
	s->av->refs--;
	fdm_unlock(s->av->domain);
	free(s->members);
	free(s);
	return 0;
}

static struct fi_ops fdm_av_set_fi_ops =
	FD_FI_OPS(fdm_av_set_close, fd_no_fid_bind, fd_no_fid_control, fd_no_fid_tostr);

static struct fi_ops_av_set fdm_av_set_ops = {
	.size = sizeof(struct fi_ops_av_set),
	.set_union = fdm_av_set_union,
	.intersect = fdm_av_set_intersect,
	.diff = fdm_av_set_diff,
	.insert = fdm_av_set_insert,
	.remove = fdm_av_set_remove,
	.addr = fdm_av_set_addr,
};

/* The initial members: the AV's valid entries start + i * stride up to
 * end (FI_AV_TABLE only, fi_av_set(3)), or all of them (FI_UNIVERSE).
 * The domain lock is held. */
static int fdm_av_set_fill(struct fdm_av_set *s, const struct fi_av_set_attr *attr)
{
	struct fdm_av *av = s->av;
	int ret = 0;

	if (attr->flags & FI_UNIVERSE) {
		for (size_t i = 0; i < av->count && !ret; i++)
			if (av->tab[i].valid)
				ret = fdm_set_append(s, i);
		return ret;
	}
	if (attr->start_addr == FI_ADDR_NOTAVAIL)
		return 0;
	for (fi_addr_t a = attr->start_addr; a <= attr->end_addr && !ret; a += attr->stride) {
		if (fdm_av_name(av, a))
			ret = fdm_set_append(s, a);
		if (attr->end_addr - a < attr->stride)
			break;	/* the next step would pass end (or wrap) */
	}
	return ret;
}

int fdm_av_set_open(struct fid_av *av_fid, struct fi_av_set_attr *attr,
		    struct fid_av_set **set, void *context)
{
	struct fdm_av *av = fdv_container_of(av_fid, struct fdm_av, av_fid);
	struct fdm_av_set *s;
	bool range;
	int ret;

	if (!attr || !set)
		return -FI_EINVAL;
	if (attr->flags & ~(uint64_t)(FDM_SET_ALL | FI_UNIVERSE))
		return -FI_EBADFLAGS;
	/* a collective the layer does not do (fi_query_collective) */
	if (attr->flags & FDM_SET_ALL & ~(uint64_t)FDM_SET_SERVED)
		return -FI_ENOSYS;
	/* communication keys are for fabrics with a membership manager */
	if (attr->comm_key_size || attr->comm_key)
		return -FI_ENOSYS;
	range = attr->start_addr != FI_ADDR_NOTAVAIL || attr->end_addr != FI_ADDR_NOTAVAIL;
	if (range) {
		if (attr->start_addr == FI_ADDR_NOTAVAIL || attr->end_addr == FI_ADDR_NOTAVAIL ||
		    attr->end_addr < attr->start_addr || !attr->stride ||
		    av->type != FI_AV_TABLE || (attr->flags & FI_UNIVERSE))
			return -FI_EINVAL;
		if (attr->count &&
		    (attr->end_addr - attr->start_addr) / attr->stride + 1 > attr->count)
			return -FI_EINVAL;
	} else if (attr->stride) {
		return -FI_EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -FI_ENOMEM;
	s->av = av;
	s->flags = attr->flags;
	fdm_lock(av->domain);
	ret = fdm_av_set_fill(s, attr);
	if (!ret)
		av->refs++;	/* the AV stays while a set names its entries */
	fdm_unlock(av->domain);
	if (ret) {
		free(s->members);
		free(s);
		return ret;
	}
	fd_fid_init(&s->set_fid.fid, FI_CLASS_AV_SET, context, &fdm_av_set_fi_ops);
	s->set_fid.ops = &fdm_av_set_ops;
	*set = &s->set_fid;
	return 0;
}
