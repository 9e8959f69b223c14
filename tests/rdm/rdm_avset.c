/* AV sets of an RDM AV (issue 25; before, fi_av_set said -FI_ENOSYS).
 * Six addresses in an FI_AV_TABLE AV, entry 3 removed:
 * - a range start 0, end 5, stride 2 holds 0, 2, 4; FI_UNIVERSE holds the
 *   valid entries 0, 1, 2, 4, 5 (not the removed 3); an empty set nothing;
 * - union appends what is missing, intersect keeps what both hold, diff
 *   drops what the other holds, insert appends (a member again, an
 *   address not in the AV: -FI_EINVAL), remove (a non-member: -FI_EINVAL);
 *   membership is read back through fi_av_set_remove on a copy;
 * - fi_av_set_addr gives one address per set;
 * - bad input: a range on an FI_AV_MAP AV, end before start, stride 0,
 *   count below the range, a stride without a range: -FI_EINVAL; a
 *   communication key, a collective the layer does not do
 *   (FI_ALLTOALL_SET): -FI_ENOSYS; unknown flags: -FI_EBADFLAGS; sets of
 *   two AVs combined: -FI_EINVAL; the AV cannot close while a set of it is
 *   open (-FI_EBUSY), and can after.
 * The order of a set (a member's rank) is checked by rdm_coll's
 * allgather over a set built with union. */
#include <arpa/inet.h>
#include <netinet/in.h>

#include <rdma/fi_collective.h>

#include "rdmt.h"

static struct rdmt_dom dom;

/* The members of set among 0..7, as a bit mask. */
static unsigned members(struct fid_av *av, struct fid_av_set *set)
{
	struct fi_av_set_attr attr = {
		.start_addr = FI_ADDR_NOTAVAIL, .end_addr = FI_ADDR_NOTAVAIL,
	};
	struct fid_av_set *copy;
	unsigned mask = 0;

	FDT_OK(fi_av_set(av, &attr, &copy, NULL));
	FDT_OK(fi_av_set_union(copy, set));
	for (fi_addr_t a = 0; a < 8; a++)
		if (fi_av_set_remove(copy, a) == 0)
			mask |= 1u << a;
	FDT_OK(fi_close(&copy->fid));
	return mask;
}

static struct fid_av_set *open_set(struct fid_av *av, fi_addr_t start, fi_addr_t end,
				   uint64_t stride, uint64_t flags)
{
	struct fi_av_set_attr attr = {
		.start_addr = start, .end_addr = end, .stride = stride, .flags = flags,
	};
	struct fid_av_set *s;
	int ret = fi_av_set(av, &attr, &s, NULL);

	FDT_ASSERT(ret == 0, "fi_av_set = %d (%s)", ret, fi_strerror(-ret));
	return s;
}

static int try_set(struct fid_av *av, fi_addr_t start, fi_addr_t end, uint64_t stride,
		   size_t count, uint64_t flags, size_t keylen)
{
	uint8_t key[4] = { 0 };
	struct fi_av_set_attr attr = {
		.count = count, .start_addr = start, .end_addr = end, .stride = stride,
		.flags = flags, .comm_key_size = keylen, .comm_key = keylen ? key : NULL,
	};
	struct fid_av_set *s;
	int ret = fi_av_set(av, &attr, &s, NULL);

	if (!ret)
		fi_close(&s->fid);
	return ret;
}

#define NA FI_ADDR_NOTAVAIL

int main(void)
{
	struct fi_info *hints = rdmt_hints(FI_MSG | FI_TAGGED);
	struct fi_av_attr tattr = { .type = FI_AV_TABLE }, mattr = { .type = FI_AV_MAP };
	struct fid_av *av, *mav;
	struct fid_av_set *even, *uni, *empty, *s, *other;
	struct sockaddr_in sin[6];
	fi_addr_t fa[6], rm = 3, ca1, ca2;
	int ret;

	rdmt_dom_open(&dom, hints);
	fi_freeinfo(hints);
	FDT_OK(fi_av_open(dom.domain, &tattr, &av, NULL));
	FDT_OK(fi_av_open(dom.domain, &mattr, &mav, NULL));
	for (int i = 0; i < 6; i++) {
		memset(&sin[i], 0, sizeof(sin[i]));
		sin[i].sin_family = AF_INET;
		sin[i].sin_addr.s_addr = htonl(0x0a000001u + (uint32_t)i);
		sin[i].sin_port = htons(5000);
	}
	ret = fi_av_insert(av, sin, 6, fa, 0, NULL);
	FDT_ASSERT(ret == 6 && fa[5] == 5, "insert = %d", ret);
	FDT_ASSERT(fi_av_insert(mav, sin, 2, fa, 0, NULL) == 2, "map insert");
	FDT_OK(fi_av_remove(av, &rm, 1, 0));

	even = open_set(av, 0, 5, 2, 0);
	FDT_ASSERT(members(av, even) == 0x15, "range: %#x", members(av, even));
	uni = open_set(av, NA, NA, 0, FI_UNIVERSE);
	FDT_ASSERT(members(av, uni) == 0x37, "universe: %#x", members(av, uni));
	empty = open_set(av, NA, NA, 0, FI_BARRIER_SET | FI_ALLREDUCE_SET);
	FDT_ASSERT(members(av, empty) == 0, "empty: %#x", members(av, empty));
	s = open_set(av, 1, 2, 1, 0);			/* 1, 2 */
	FDT_ASSERT(members(av, s) == 0x6, "range 1..2: %#x", members(av, s));

	FDT_OK(fi_av_set_union(s, even));		/* 1, 2, 0, 4 */
	FDT_ASSERT(members(av, s) == 0x17, "union: %#x", members(av, s));
	FDT_OK(fi_av_set_intersect(s, even));		/* 2, 0, 4 */
	FDT_ASSERT(members(av, s) == 0x15, "intersect: %#x", members(av, s));
	FDT_OK(fi_av_set_diff(s, empty));
	FDT_ASSERT(members(av, s) == 0x15, "diff with nothing: %#x", members(av, s));
	FDT_OK(fi_av_set_remove(s, 2));
	FDT_ASSERT(members(av, s) == 0x11, "remove: %#x", members(av, s));
	ret = fi_av_set_remove(s, 2);
	FDT_ASSERT(ret == -FI_EINVAL, "remove a non-member = %d", ret);
	FDT_OK(fi_av_set_insert(s, 5));
	FDT_ASSERT(members(av, s) == 0x31, "insert: %#x", members(av, s));
	ret = fi_av_set_insert(s, 5);
	FDT_ASSERT(ret == -FI_EINVAL, "insert a member again = %d", ret);
	ret = fi_av_set_insert(s, 3);
	FDT_ASSERT(ret == -FI_EINVAL, "insert a removed address = %d", ret);
	ret = fi_av_set_insert(s, 77);
	FDT_ASSERT(ret == -FI_EINVAL, "insert an address past the AV = %d", ret);
	FDT_OK(fi_av_set_diff(s, even));		/* 5 */
	FDT_ASSERT(members(av, s) == 0x20, "diff: %#x", members(av, s));
	FDT_OK(fi_av_set_diff(s, s));
	FDT_ASSERT(members(av, s) == 0, "diff with itself: %#x", members(av, s));

	FDT_OK(fi_av_set_addr(even, &ca1));
	FDT_OK(fi_av_set_addr(uni, &ca2));
	FDT_ASSERT(ca1 != ca2 && ca1 != FI_ADDR_NOTAVAIL, "set addresses %#llx %#llx",
		   (unsigned long long)ca1, (unsigned long long)ca2);

	/* ---- bad input ---- */
	ret = try_set(mav, 0, 1, 1, 0, 0, 0);
	FDT_ASSERT(ret == -FI_EINVAL, "range on FI_AV_MAP = %d", ret);
	ret = try_set(av, 4, 1, 1, 0, 0, 0);
	FDT_ASSERT(ret == -FI_EINVAL, "end before start = %d", ret);
	ret = try_set(av, 0, 4, 0, 0, 0, 0);
	FDT_ASSERT(ret == -FI_EINVAL, "stride 0 = %d", ret);
	ret = try_set(av, 0, 4, 1, 2, 0, 0);
	FDT_ASSERT(ret == -FI_EINVAL, "count below the range = %d", ret);
	ret = try_set(av, NA, NA, 1, 0, 0, 0);
	FDT_ASSERT(ret == -FI_EINVAL, "stride without a range = %d", ret);
	ret = try_set(av, NA, NA, 0, 0, 0, 4);
	FDT_ASSERT(ret == -FI_ENOSYS, "communication key = %d", ret);
	ret = try_set(av, NA, NA, 0, 0, FI_ALLTOALL_SET, 0);
	FDT_ASSERT(ret == -FI_ENOSYS, "FI_ALLTOALL_SET = %d", ret);
	ret = try_set(av, NA, NA, 0, 0, 1ULL << 20, 0);
	FDT_ASSERT(ret == -FI_EBADFLAGS, "unknown flag = %d", ret);
	ret = try_set(av, 0, 4, 1, 5, FI_UNIVERSE, 0);
	FDT_ASSERT(ret == -FI_EINVAL, "FI_UNIVERSE with a range = %d", ret);
	other = open_set(mav, NA, NA, 0, FI_UNIVERSE);
	ret = fi_av_set_union(even, other);
	FDT_ASSERT(ret == -FI_EINVAL, "union across AVs = %d", ret);
	ret = fi_av_set_intersect(even, other);
	FDT_ASSERT(ret == -FI_EINVAL, "intersect across AVs = %d", ret);
	FDT_OK(fi_close(&other->fid));

	ret = fi_close(&av->fid);
	FDT_ASSERT(ret == -FI_EBUSY, "closing the AV under its sets = %d", ret);
	FDT_OK(fi_close(&even->fid));
	FDT_OK(fi_close(&uni->fid));
	FDT_OK(fi_close(&empty->fid));
	FDT_OK(fi_close(&s->fid));
	FDT_OK(fi_close(&av->fid));
	FDT_OK(fi_close(&mav->fid));
	rdmt_dom_close(&dom);
	return rdmt_pass("rdm_avset");
}
