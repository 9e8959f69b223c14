/* Address vectors bound to an EQ, and fi_av_insertsym (issue 25; before,
 * fi_av_open refused FI_EVENT with -FI_ENOSYS, fi_av_bind said -FI_ENOSYS
 * and fi_av_insertsym -FI_ENOSYS):
 * - an FI_EVENT AV: inserting before an EQ is bound fails with -FI_ENOEQ;
 *   FI_SYNC_ERR is refused; bind flags and a second EQ are refused;
 * - an insert of three addresses with a garbage one in the middle
 *   returns 0, fills fi_addr (FI_ADDR_NOTAVAIL for the bad one), and the
 *   EQ holds one error entry (err FI_EINVAL, data 1: the bad one's index,
 *   the call's context, the AV's fid) before one FI_AV_COMPLETE (data 2,
 *   the call's context); a message to an inserted address arrives;
 * - insertsvc on it: FI_AV_COMPLETE with data 1; the EQ cannot close while
 *   the AV is bound (-FI_EBUSY);
 * - insertsym (synchronous AV): node = the peer's IP, service = its port,
 *   svccnt 3 gives port, port + 1, port + 2 in order (fi_av_lookup), the
 *   first reaches the peer; nodecnt 2 counts the IPv4 address up; a
 *   name without a numeric suffix and nodecnt 2, a service that is not a
 *   number with svccnt 2, a port range past 65535, counts of 0: -FI_EINVAL;
 *   FI_SYNC_ERR fills its array; on the FI_EVENT AV one FI_AV_COMPLETE
 *   with data nodecnt x svccnt. */
#include <arpa/inet.h>
#include <netinet/in.h>

#include "rdmt.h"

static struct rdmt_dom dom;
static struct rdmt_ep A, B;

static void eq_expect_event(struct fid_eq *eq, uint32_t want, void *ctx, uint64_t data,
			    struct fid *fid, const char *what)
{
	struct fi_eq_entry e;
	uint32_t event = 0;
	ssize_t n = fi_eq_sread(eq, &event, &e, sizeof(e), 2000, 0);

	FDT_ASSERT(n == (ssize_t)sizeof(e), "%s: fi_eq_sread = %zd (%s)", what, n,
		   n < 0 ? fi_strerror((int)-n) : "bytes");
	FDT_ASSERT(event == want, "%s: event %u, expected %u", what, event, want);
	FDT_ASSERT(e.context == ctx && e.data == data && e.fid == fid,
		   "%s: context %p data %llu fid %p, expected %p %llu %p", what, e.context,
		   (unsigned long long)e.data, (void *)e.fid, ctx, (unsigned long long)data,
		   (void *)fid);
}

static void eq_expect_err(struct fid_eq *eq, void *ctx, uint64_t data, int err,
			  struct fid *fid, const char *what)
{
	struct fi_eq_err_entry ee;
	struct fi_eq_entry e;
	uint32_t event;
	ssize_t n = fi_eq_read(eq, &event, &e, sizeof(e), 0);

	FDT_ASSERT(n == -FI_EAVAIL, "%s: fi_eq_read = %zd, expected -FI_EAVAIL", what, n);
	memset(&ee, 0, sizeof(ee));
	n = fi_eq_readerr(eq, &ee, 0);
	FDT_ASSERT(n == (ssize_t)sizeof(ee), "%s: fi_eq_readerr = %zd", what, n);
	FDT_ASSERT(ee.context == ctx && ee.data == data && ee.err == err && ee.fid == fid,
		   "%s: context %p data %llu err %d fid %p", what, ee.context,
		   (unsigned long long)ee.data, ee.err, (void *)ee.fid);
}

static void send_and_check(fi_addr_t to, uint32_t seed)
{
	static struct fi_context sc, rc;
	uint8_t sbuf[64], rbuf[64];
	struct rdmt_comp c;

	fdt_fill(sbuf, sizeof(sbuf), seed);
	RDMT_POST(fi_trecv(B.ep, rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC, 7, 0, &rc));
	RDMT_POST(fi_tsend(A.ep, sbuf, sizeof(sbuf), NULL, to, 7, &sc));
	rdmt_wait_ok(B.cq, &c);
	rdmt_check_recv(&c, &rc, FI_TAGGED | FI_RECV, sizeof(rbuf), 7);
	FDT_ASSERT(fdt_check(rbuf, sizeof(rbuf), seed), "message bytes");
	rdmt_wait_ok(A.cq, &c);
	FDT_ASSERT(c.e.op_context == &sc, "send completion");
}

static uint16_t port_of(struct fid_av *av, fi_addr_t a, struct in_addr *ip)
{
	struct sockaddr_in sin;
	size_t len = sizeof(sin);

	FDT_OK(fi_av_lookup(av, a, &sin, &len));
	FDT_ASSERT(len == sizeof(sin) && sin.sin_family == AF_INET, "lookup of %llu",
		   (unsigned long long)a);
	if (ip)
		*ip = sin.sin_addr;
	return ntohs(sin.sin_port);
}

int main(void)
{
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE, .flags = FI_EVENT };
	struct fi_info *hints = rdmt_hints(FI_MSG | FI_TAGGED);
	struct fid_eq *eq, *eq2;
	struct fid_av *av, *sav;
	struct sockaddr_in bsin, bad, addrs[3];
	fi_addr_t fa[8];
	int errs[8], ctx_token, ret;
	char ip[INET_ADDRSTRLEN], port[16], svc[16];
	struct in_addr got;
	uint16_t bport;

	rdmt_dom_open(&dom, hints);
	fi_freeinfo(hints);
	rdmt_ep_open(&dom, &A, NULL, FI_AV_TABLE);
	rdmt_ep_open(&dom, &B, NULL, FI_AV_TABLE);
	FDT_ASSERT(B.namelen == sizeof(bsin), "an IPv4 name");
	memcpy(&bsin, B.name, sizeof(bsin));
	bport = ntohs(bsin.sin_port);
	inet_ntop(AF_INET, &bsin.sin_addr, ip, sizeof(ip));
	snprintf(port, sizeof(port), "%u", bport);

	FDT_OK(fi_eq_open(dom.fabric, &eq_attr, &eq, NULL));
	FDT_OK(fi_eq_open(dom.fabric, &eq_attr, &eq2, NULL));
	FDT_OK(fi_av_open(dom.domain, &av_attr, &av, NULL));

	/* ---- FI_EVENT before and at the bind ---- */
	ret = fi_av_insert(av, &bsin, 1, fa, 0, &ctx_token);
	FDT_ASSERT(ret == -FI_ENOEQ, "insert before the bind = %d", ret);
	ret = fi_av_bind(av, &eq->fid, 1);
#ifdef FDT_UPSTREAM
	/* upstream 1.17 says -FI_EINVAL for the reserved flags */
	FDT_ASSERT(ret == -FI_EBADFLAGS || ret == -FI_EINVAL, "bind flags = %d", ret);
#else
	FDT_ASSERT(ret == -FI_EBADFLAGS, "bind flags = %d", ret);
#endif
	FDT_OK(fi_av_bind(av, &eq->fid, 0));
	ret = fi_av_bind(av, &eq2->fid, 0);
#ifndef FDT_UPSTREAM
	/* upstream 1.17 takes a second EQ (and reports to the last one) */
	FDT_ASSERT(ret == -FI_EINVAL, "a second EQ = %d", ret);
#endif
	ret = fi_av_insert(av, &bsin, 1, fa, FI_SYNC_ERR, errs);
	FDT_ASSERT(ret == -FI_EBADFLAGS, "FI_SYNC_ERR on an FI_EVENT AV = %d", ret);
	ret = fi_close(&eq->fid);
	FDT_ASSERT(ret == -FI_EBUSY, "closing the bound EQ = %d", ret);

	/* ---- asynchronous insert: errors first, then the count ---- */
	memset(&bad, 0, sizeof(bad));
	bad.sin_family = 0x7777;	/* no family at all */
	addrs[0] = bsin;
	addrs[1] = bad;
	addrs[2] = bsin;
	addrs[2].sin_port = htons((uint16_t)(bport + 1));
	for (int i = 0; i < 3; i++)
		fa[i] = 12345;
	ret = fi_av_insert(av, addrs, 3, fa, 0, &ctx_token);
	FDT_ASSERT(ret == 0, "asynchronous insert = %d, expected 0", ret);
	FDT_ASSERT(fa[0] == 0 && fa[1] == FI_ADDR_NOTAVAIL && fa[2] == 1,
		   "fi_addr %llu %llu %llu", (unsigned long long)fa[0],
		   (unsigned long long)fa[1], (unsigned long long)fa[2]);
	eq_expect_err(eq, &ctx_token, 1, FI_EINVAL, &av->fid, "failed address");
	eq_expect_event(eq, FI_AV_COMPLETE, &ctx_token, 2, &av->fid, "insert");
	{
		struct fi_eq_entry e;
		uint32_t ev;
		ssize_t n = fi_eq_read(eq, &ev, &e, sizeof(e), 0);

		FDT_ASSERT(n == -FI_EAGAIN, "one event per insert: %zd", n);
	}
	/* the inserted address works: A's own AV is a plain one, use this
	 * AV's entry by its name */
	{
		struct sockaddr_in look;
		size_t len = sizeof(look);

		FDT_OK(fi_av_lookup(av, fa[0], &look, &len));
		FDT_ASSERT(!memcmp(&look, &bsin, sizeof(bsin)), "entry 0 is B");
		send_and_check(rdmt_insert_name(&A, &look), 11);
	}
	ret = fi_av_insertsvc(av, ip, port, fa, 0, &fa[7]);
	FDT_ASSERT(ret == 0, "asynchronous insertsvc = %d", ret);
	eq_expect_event(eq, FI_AV_COMPLETE, &fa[7], 1, &av->fid, "insertsvc");
	FDT_ASSERT(port_of(av, fa[0], NULL) == bport, "insertsvc's entry");

	/* ---- insertsym ---- */
	ret = fi_av_insertsym(av, ip, 2, port, 2, fa, 0, &errs[0]);
	FDT_ASSERT(ret == 0, "asynchronous insertsym = %d", ret);
	eq_expect_event(eq, FI_AV_COMPLETE, &errs[0], 4, &av->fid, "insertsym");

	sav = A.av;	/* synchronous */
	ret = fi_av_insertsym(sav, ip, 1, port, 3, fa, 0, NULL);
	FDT_ASSERT(ret == 3, "insertsym of 3 = %d", ret);
	for (int j = 0; j < 3; j++) {
		FDT_ASSERT(port_of(sav, fa[j], &got) == bport + j, "service %d", j);
		FDT_ASSERT(got.s_addr == bsin.sin_addr.s_addr, "node of service %d", j);
	}
	send_and_check(fa[0], 12);
	ret = fi_av_insertsym(sav, ip, 2, port, 1, fa, FI_SYNC_ERR, errs);
	FDT_ASSERT(ret == 2, "insertsym of 2 nodes = %d", ret);
	FDT_ASSERT(errs[0] == 0 && errs[1] == 0, "FI_SYNC_ERR array %d %d", errs[0], errs[1]);
	FDT_ASSERT(port_of(sav, fa[0], &got) == bport && got.s_addr == bsin.sin_addr.s_addr,
		   "first node");
	FDT_ASSERT(port_of(sav, fa[1], &got) == bport &&
		   ntohl(got.s_addr) == ntohl(bsin.sin_addr.s_addr) + 1, "second node counts up");
	ret = fi_av_insertsym(sav, "localhost", 2, port, 1, fa, 0, NULL);
	FDT_ASSERT(ret == -FI_EINVAL, "a name without a numeric suffix = %d", ret);
	ret = fi_av_insertsym(sav, ip, 1, "http", 2, fa, 0, NULL);
	FDT_ASSERT(ret == -FI_EINVAL, "a named service range = %d", ret);
	ret = fi_av_insertsym(sav, ip, 1, "65535", 2, fa, 0, NULL);
	FDT_ASSERT(ret == -FI_EINVAL, "ports past 65535 = %d", ret);
	ret = fi_av_insertsym(sav, ip, 0, port, 1, fa, 0, NULL);
	FDT_ASSERT(ret == -FI_EINVAL, "nodecnt 0 = %d", ret);
	ret = fi_av_insertsym(sav, NULL, 1, port, 1, fa, 0, NULL);
	FDT_ASSERT(ret == -FI_EINVAL, "no node = %d", ret);
	snprintf(svc, sizeof(svc), "%u", bport);
	ret = fi_av_insertsym(sav, ip, 1, svc, 1, fa, 0x1000, NULL);
	FDT_ASSERT(ret == -FI_EBADFLAGS, "unknown flag = %d", ret);

	FDT_OK(fi_close(&av->fid));
	FDT_OK(fi_close(&eq->fid));
	FDT_OK(fi_close(&eq2->fid));
	rdmt_ep_close(&A);
	rdmt_ep_close(&B);
	rdmt_dom_close(&dom);
	return rdmt_pass("rdm_avev");
}
