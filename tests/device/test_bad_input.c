/* Bad input, table driven: every public call of the library with NULL
 * objects and out pointers, wrong object classes, bad flags, zero and huge
 * lengths and counts, and calls in the wrong state, each row checking the
 * exact error code (the fi_*(3) man pages' where they name one, else the
 * library's convention: -FI_EINVAL for a bad argument, -FI_EBADFLAGS for
 * unknown flag bits, -FI_EOPBADSTATE for a call the object's state does not
 * allow yet, -FI_ENOTCONN for data transfer without a connection,
 * -FI_EOPNOTSUPP for an atomic the device does not do).
 *
 * Closed objects: a closed fid is freed memory, and libfabric defines no
 * call through one (fi_close(3): "the fid ... should not be accessed after
 * closing"; fi_close itself dispatches through the object's ops, so even
 * a second fi_close reads freed memory). What is defined, and is covered:
 * closing an object something still uses fails with -FI_EBUSY and leaves it
 * working (rows "close_*_busy" and the "*_still_usable" rows after them),
 * binding twice, and calls after fi_shutdown.
 *
 * The rows run in phases, each on objects in one state. A failing row
 * prints itself and the test goes on, so one run lists every mismatch; a
 * crash prints the row it happened in. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rdma/fi_atomic.h>
#include <rdma/providers/fi_prov.h>

#include "fdt.h"

/* What the rows work on. */
struct bi {
	struct fdt_side *s;
	struct fid_cq *cq;		/* the endpoint's CQ (both directions) */
	struct fid_cq *cq_spare;	/* bound to nothing */
	struct fid_eq *eq_spare;
	struct fid_ep *ep;		/* the endpoint under test */
	struct fid_mr *mr;
	struct fi_info *info;		/* a private copy to spoil */
	uint8_t *buf;			/* BUF_LEN bytes, registered as mr */
	size_t inject;			/* the endpoint's inject_size */
	size_t tx_iov_limit, rx_iov_limit;
};

#define BUF_LEN 65536
/* A length no device takes in one message (max_msg_size is at most 2 GiB
 * with verbs: the length field of a work request is 32 bits). */
#define HUGE_LEN ((size_t)1 << 40)
#define BAD_FLAG (1ULL << 50)	/* no operation flag of libfabric 1.17 */

typedef long (*bi_fn)(struct bi *c);

struct row {
	const char *name;
	bi_fn call;
	long expect;
};

static volatile const char *current_row = "(setup)";
static int failures;

static void on_crash(int sig)
{
	char msg[256];
	int n = snprintf(msg, sizeof(msg), "CRASH (signal %d) in row %s\n", sig,
			 (const char *)current_row);

	if (n > 0 && write(2, msg, (size_t)n) < 0)
		_exit(3);
	_exit(2);
}

static void run_rows(const char *phase, const struct row *rows, size_t n,
		     struct bi *c)
{
	int bad = 0;

	for (size_t i = 0; i < n; i++) {
		long rc;

		current_row = rows[i].name;
		rc = rows[i].call(c);
		if (rc != rows[i].expect) {
			fprintf(stderr, "FAIL %s/%s: got %ld (%s), expected %ld (%s)\n",
				phase, rows[i].name, rc, fi_strerror((int)-rc),
				rows[i].expect, fi_strerror((int)-rows[i].expect));
			bad++;
		}
	}
	current_row = "(between phases)";
	printf("%s: %zu rows, %d failed\n", phase, n, bad);
	failures += bad;
}

/* A row whose call is one expression. */
#define ROW_FN(name, expr)						\
	static long row_##name(struct bi *c)				\
	{								\
		(void)c;						\
		return (long)(expr);					\
	}
#define ROW_ENT(name, expr, expect) { #name, row_##name, expect },
#define ROW_DEF(name, expr, expect) ROW_FN(name, expr)

/* 0 when cond holds, -FI_EOTHER otherwise: for calls that return a pointer
 * or nothing, whose rows then expect 0. */
static long holds(int cond)
{
	return cond ? 0 : -FI_EOTHER;
}

/* ------------------------------------------------------------------------
 * Phase "global": calls that need no object (run in the client, after the
 * fork: fi_getinfo looks at the devices).
 * ---------------------------------------------------------------------- */

static struct fi_info *hints_with(void (*spoil)(struct fi_info *))
{
	struct fi_info *h = fdt_hints();

	spoil(h);
	return h;
}

static long getinfo_with(void (*spoil)(struct fi_info *), const char *node,
			 uint64_t flags)
{
	struct fi_info *h = hints_with(spoil), *out = (struct fi_info *)8;
	long rc = fi_getinfo(FI_VERSION(1, 17), node, NULL, flags, h, &out);

	if (rc == 0)
		fi_freeinfo(out);
	else if (out != NULL)
		rc = -FI_EOTHER;	/* *info must be NULL on failure */
	fi_freeinfo(h);
	return rc;
}

static void spoil_nothing(struct fi_info *h) { (void)h; }
static void spoil_addrlen(struct fi_info *h)
{
	h->src_addrlen = sizeof(struct sockaddr_in);	/* but no src_addr */
}
static void spoil_dest_addr(struct fi_info *h)
{
	h->dest_addr = calloc(1, sizeof(struct sockaddr_in));	/* len 0 */
	h->dest_addrlen = 0;
}
static void spoil_ep_type(struct fi_info *h) { h->ep_attr->type = FI_EP_DGRAM; }
static void spoil_prov(struct fi_info *h)
{
	free(h->fabric_attr->prov_name);
	h->fabric_attr->prov_name = strdup("no-such-provider");
}
static void spoil_caps(struct fi_info *h) { h->caps |= FI_TAGGED; }
static void spoil_tx_size(struct fi_info *h) { h->tx_attr->size = (size_t)1 << 40; }
static void spoil_iov(struct fi_info *h) { h->tx_attr->iov_limit = (size_t)1 << 20; }
static void spoil_inject(struct fi_info *h) { h->tx_attr->inject_size = (size_t)1 << 30; }
static void spoil_msg_size(struct fi_info *h) { h->ep_attr->max_msg_size = (size_t)1 << 60; }
static void spoil_domain(struct fi_info *h)
{
	free(h->domain_attr->name);
	h->domain_attr->name = strdup("no-such-device");
}
static void spoil_format(struct fi_info *h) { h->addr_format = FI_ADDR_PSMX2; }

static long version_row(void)
{
	struct fi_info *out = (struct fi_info *)8;
	long rc = fi_getinfo(FI_VERSION(2, 0), NULL, NULL, 0, NULL, &out);

	return out == NULL ? rc : -FI_EOTHER;
}

static long future_minor_row(void)
{
	struct fi_info *out = (struct fi_info *)8;
	long rc = fi_getinfo(FI_VERSION(1, 99), NULL, NULL, 0, NULL, &out);

	return out == NULL ? rc : -FI_EOTHER;
}

static long dupinfo_null_row(void)
{
	/* fi_dupinfo(3): NULL gives a fresh, empty fi_info. */
	struct fi_info *d = fi_dupinfo(NULL);
	long rc = holds(d && d->ep_attr && d->domain_attr && !d->caps);

	fi_freeinfo(d);
	return rc;
}

static long param_rows(int which)
{
	struct fi_param *p = NULL;
	int count = 0, iv = 0;
	char *sv = NULL;

	switch (which) {
	case 0: return fi_getparams(NULL, &count);
	case 1: return fi_getparams(&p, NULL);
	case 2: return fi_param_get_str(NULL, "no_such_variable", &sv);
	case 3: return fi_param_get_int(NULL, NULL, &iv);
	case 4: return fi_param_get_str(NULL, "provider", NULL);
	case 5: return fi_param_get(NULL, "log_level", NULL);
	default: return -FI_EOTHER;
	}
}

static long tostr_r_zero(struct bi *c)
{
	char b[4] = "abc";
	char *r = fi_tostr_r(b, 0, c->s->info, FI_TYPE_INFO);

	/* Nothing may be written into a buffer of length 0. */
	return holds((r == NULL || r == b) && !strcmp(b, "abc"));
}

/* A fabric keeps the API version it was opened for (the library's for
 * none); fi_domain2 opens a domain with flags 0 and refuses others. */
static long fabric_row(struct bi *c, uint32_t version, uint64_t flags)
{
	struct fi_fabric_attr attr = *c->s->info->fabric_attr;
	struct fid_fabric *fab;
	struct fid_domain *dom;
	long rc;

	attr.api_version = version;
	rc = fi_fabric(&attr, &fab, NULL);
	if (rc)
		return rc;
	if (fab->api_version != (version ? version : fi_version())) {
		rc = -FI_EOTHER;
	} else {
		rc = fi_domain2(fab, c->s->info, &dom, flags, NULL);
		if (!rc)
			rc = fi_close(&dom->fid);
	}
	fi_close(&fab->fid);
	return rc;
}

#define GLOBAL_ROWS(R)							\
	R(getinfo_null_out, fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, NULL, NULL), -FI_EINVAL) \
	R(getinfo_version_2_0, version_row(), -FI_ENOSYS)		\
	R(getinfo_version_1_99, future_minor_row(), -FI_ENOSYS)		\
	R(getinfo_baseline, getinfo_with(spoil_nothing, NULL, 0), 0)	\
	R(getinfo_addrlen_no_addr, getinfo_with(spoil_addrlen, NULL, 0), -FI_EINVAL) \
	R(getinfo_addr_no_addrlen, getinfo_with(spoil_dest_addr, NULL, 0), -FI_EINVAL) \
	R(getinfo_ep_dgram, getinfo_with(spoil_ep_type, NULL, 0), -FI_ENODATA) \
	R(getinfo_prov_unknown, getinfo_with(spoil_prov, NULL, 0), -FI_ENODATA) \
	R(getinfo_caps_tagged, getinfo_with(spoil_caps, NULL, 0), -FI_ENODATA) \
	R(getinfo_tx_size_huge, getinfo_with(spoil_tx_size, NULL, 0), -FI_ENODATA) \
	R(getinfo_iov_limit_huge, getinfo_with(spoil_iov, NULL, 0), -FI_ENODATA) \
	R(getinfo_inject_huge, getinfo_with(spoil_inject, NULL, 0), -FI_ENODATA) \
	R(getinfo_msg_size_huge, getinfo_with(spoil_msg_size, NULL, 0), -FI_ENODATA) \
	R(getinfo_domain_unknown, getinfo_with(spoil_domain, NULL, 0), -FI_ENODATA) \
	R(getinfo_addr_format_psmx2, getinfo_with(spoil_format, NULL, 0), -FI_ENODATA) \
	R(getinfo_node_bad_str, getinfo_with(spoil_nothing, "fi_sockaddr_in://999.1.2.3:1", FI_SOURCE), -FI_ENODATA) \
	R(dupinfo_null, dupinfo_null_row(), 0)				\
	R(freeinfo_null, (fi_freeinfo(NULL), 0), 0)			\
	R(fabric_null_attr, fi_fabric(NULL, &(struct fid_fabric *){ NULL }, NULL), -FI_EINVAL) \
	R(fabric_null_out, fi_fabric(c->s->info->fabric_attr, NULL, NULL), -FI_EINVAL) \
	R(fabric_version_none, fabric_row(c, 0, 0), 0)			\
	R(fabric_version_1_4, fabric_row(c, FI_VERSION(1, 4), 0), 0)	\
	R(domain2_bad_flags, fabric_row(c, 0, BAD_FLAG), -FI_EBADFLAGS)	\
	R(strerror_unknown, holds(fi_strerror(123456) != NULL), 0)	\
	R(strerror_negative, holds(fi_strerror(-5) != NULL), 0)		\
	R(tostr_null_data, holds(fi_tostr(NULL, FI_TYPE_INFO) != NULL), 0) \
	R(tostr_bad_type, holds(fi_tostr(&(uint64_t){ 0 }, (enum fi_type)9999) != NULL), 0) \
	R(tostr_r_zero_len, tostr_r_zero(c), 0) \
	R(getparams_null_out, param_rows(0), -FI_EINVAL)		\
	R(getparams_null_count, param_rows(1), -FI_EINVAL)		\
	R(param_get_undefined, param_rows(2), -FI_ENOENT)		\
	R(param_get_null_name, param_rows(3), -FI_EINVAL)		\
	R(param_get_null_out, param_rows(4), -FI_EINVAL)		\
	R(param_get_generic_null_out, param_rows(5), -FI_EINVAL)	\
	R(version_is_1_17, holds(fi_version() == FI_VERSION(1, 17)), 0) \
	R(freeparams_null, (fi_freeparams(NULL), 0), 0)

GLOBAL_ROWS(ROW_DEF)
static const struct row global_rows[] = { GLOBAL_ROWS(ROW_ENT) };

/* ------------------------------------------------------------------------
 * Phase "open": creating objects with bad arguments, then an endpoint that
 * is neither bound nor enabled.
 * ---------------------------------------------------------------------- */

static long domain_named(struct bi *c, const char *name)
{
	struct fi_info *i = fi_dupinfo(c->s->info);
	struct fid_domain *d = NULL;
	long rc;

	free(i->domain_attr->name);
	i->domain_attr->name = strdup(name);
	rc = fi_domain(c->s->fabric, i, &d, NULL);
	if (!rc)
		fi_close(&d->fid);
	fi_freeinfo(i);
	return rc;
}

static long endpoint_typed(struct bi *c, enum fi_ep_type type)
{
	struct fi_info *i = fi_dupinfo(c->s->info);
	struct fid_ep *ep = NULL;
	long rc;

	i->ep_attr->type = type;
	rc = fi_endpoint(c->s->domain, i, &ep, NULL);
	if (!rc)
		fi_close(&ep->fid);
	fi_freeinfo(i);
	return rc;
}

static long endpoint_sized(struct bi *c, size_t tx_size, size_t iov, size_t inject)
{
	struct fi_info *i = fi_dupinfo(c->s->info);
	struct fid_ep *ep = NULL;
	long rc;

	if (tx_size)
		i->tx_attr->size = tx_size;
	if (iov)
		i->tx_attr->iov_limit = iov;
	if (inject)
		i->tx_attr->inject_size = inject;
	rc = fi_endpoint(c->s->domain, i, &ep, NULL);
	if (!rc) {
		/* Creation may defer the check to fi_enable. */
		FDT_OK(fi_ep_bind(ep, &c->s->eq->fid, 0));
		FDT_OK(fi_ep_bind(ep, &c->cq_spare->fid, FI_TRANSMIT | FI_RECV));
		rc = fi_enable(ep);
		FDT_OK(fi_close(&ep->fid));
	}
	fi_freeinfo(i);
	return rc;
}

static long eq_open_with(struct bi *c, enum fi_wait_obj w, uint64_t flags, size_t size)
{
	struct fi_eq_attr a = { .wait_obj = w, .flags = flags, .size = size };
	struct fid_eq *eq = NULL;
	long rc = fi_eq_open(c->s->fabric, &a, &eq, NULL);

	if (!rc)
		fi_close(&eq->fid);
	return rc;
}

static long cq_open_with(struct bi *c, enum fi_cq_format f, enum fi_wait_obj w,
			 size_t size, uint64_t flags)
{
	struct fi_cq_attr a = { .format = f, .wait_obj = w, .size = size, .flags = flags };
	struct fid_cq *cq = NULL;
	long rc = fi_cq_open(c->s->domain, &a, &cq, NULL);

	if (!rc)
		fi_close(&cq->fid);
	return rc;
}

static long cq_open_cond(struct bi *c, enum fi_cq_wait_cond cond)
{
	struct fi_cq_attr a = { .format = FI_CQ_FORMAT_DATA, .wait_obj = FI_WAIT_FD,
				.wait_cond = cond };
	struct fid_cq *cq = NULL;
	long rc = fi_cq_open(c->s->domain, &a, &cq, NULL);

	if (!rc)
		fi_close(&cq->fid);
	return rc;
}

/* fi_setname with a spoiled address: 0 NULL, 1 a length that does not
 * match the family, 2 an unknown family, 3 an address no device has. */
static long setname_bad(struct fid *fid, int which)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };

	switch (which) {
	case 0: return fi_setname(fid, NULL, sizeof(sin));
	case 1: return fi_setname(fid, &sin, sizeof(sin) - 1);
	case 2: sin.sin_family = AF_UNIX; return fi_setname(fid, &sin, sizeof(sin));
	default:
		/* TEST-NET-1 (RFC 5737): assigned to no host */
		sin.sin_addr.s_addr = htonl(0xc0000201);
		return fi_setname(fid, &sin, sizeof(sin));
	}
}

/* fi_setname with the object's own current address. */
static long setname_own(struct fid *fid)
{
	struct sockaddr_storage ss;
	size_t len = sizeof(ss);
	long rc = fi_getname(fid, &ss, &len);

	return rc ? rc : fi_setname(fid, &ss, len);
}

static long mr_reg_with(struct bi *c, void *buf, size_t len, uint64_t access,
			uint64_t flags, int null_out)
{
	struct fid_mr *mr = NULL;
	long rc = fi_mr_reg(c->s->domain, buf, len, access, 0, 0, flags,
			    null_out ? NULL : &mr, NULL);

	if (!rc && mr)
		fi_close(&mr->fid);
	return rc;
}

static long mr_regv_with(struct bi *c, size_t count, int null_iov)
{
	struct iovec iov[4];
	struct fid_mr *mr = NULL;
	long rc;

	for (int i = 0; i < 4; i++) {
		iov[i].iov_base = c->buf + 4096 * i;
		iov[i].iov_len = 4096;
	}
	rc = fi_mr_regv(c->s->domain, null_iov ? NULL : iov, count, FI_SEND, 0,
			0, 0, &mr, NULL);
	if (!rc)
		fi_close(&mr->fid);
	return rc;
}

static long mr_regattr_with(struct bi *c, int null_attr, uint64_t flags)
{
	struct iovec iov = { c->buf, 4096 };
	struct fi_mr_attr a = { .mr_iov = &iov, .iov_count = 1, .access = FI_SEND };
	struct fid_mr *mr = NULL;
	long rc = fi_mr_regattr(c->s->domain, null_attr ? NULL : &a, flags, &mr);

	if (!rc)
		fi_close(&mr->fid);
	return rc;
}

static long passive_ep_with(struct bi *c, int null_info, int null_out)
{
	struct fid_pep *pep = NULL;
	long rc = fi_passive_ep(c->s->fabric, null_info ? NULL : c->s->info,
				null_out ? NULL : &pep, NULL);

	if (!rc && pep)
		fi_close(&pep->fid);
	return rc;
}

static long getname_small(struct bi *c)
{
	char addr[2];
	size_t len = sizeof(addr);
	long rc = fi_getname(&c->ep->fid, addr, &len);

	/* fi_cm(3): -FI_ETOOSMALL, with addrlen set to the size needed. */
	if (rc == -FI_ETOOSMALL && len < sizeof(struct sockaddr_in))
		return -FI_EOTHER;
	return rc;
}

static long getopt_small(struct bi *c)
{
	size_t v = 0, len = 1;

	return fi_getopt(&c->ep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &v, &len);
}

/* fi_eq(3): a buffer too small for the next entry gets -FI_ETOOSMALL and
 * leaves the entry queued. */
static long eq_read_small(struct bi *c)
{
	struct fi_eq_entry in = { .fid = &c->eq_spare->fid, .data = 7 }, out;
	uint8_t b[4];
	uint32_t ev;
	long rc;

	FDT_EXPECT(fi_eq_write(c->eq_spare, FI_NOTIFY, &in, sizeof(in), 0), (long)sizeof(in));
	rc = fi_eq_read(c->eq_spare, &ev, b, sizeof(b), 0);
	if (fi_eq_read(c->eq_spare, &ev, &out, sizeof(out), 0) != (long)sizeof(out) ||
	    out.data != 7)
		return -FI_EOTHER;	/* the entry was lost */
	return rc;
}

static long eq_open_null_attr(struct bi *c)
{
	struct fid_eq *eq = NULL;
	long rc = fi_eq_open(c->s->fabric, NULL, &eq, NULL);

	if (!rc)
		FDT_OK(fi_close(&eq->fid));
	return rc;
}

/* An endpoint that only sends needs no receive CQ. */
static long enable_tx_only(struct bi *c)
{
	struct fid_ep *ep = NULL;
	long rc;

	FDT_OK(fi_endpoint(c->s->domain, c->s->info, &ep, NULL));
	FDT_OK(fi_ep_bind(ep, &c->s->eq->fid, 0));
	FDT_OK(fi_ep_bind(ep, &c->cq_spare->fid, FI_TRANSMIT));
	rc = fi_enable(ep);
	FDT_OK(fi_close(&ep->fid));
	return rc;
}

static long eq_write_read_back(struct bi *c)
{
	struct fi_eq_entry in = { .fid = &c->eq_spare->fid, .context = c, .data = 42 };
	struct fi_eq_entry out;
	uint32_t ev = 0;
	long rc = fi_eq_write(c->eq_spare, FI_NOTIFY, &in, sizeof(in), 0);

	if (rc != (long)sizeof(in))
		return rc < 0 ? rc : -FI_EOTHER;
	rc = fi_eq_read(c->eq_spare, &ev, &out, sizeof(out), 0);
	if (rc != (long)sizeof(out) || ev != FI_NOTIFY || out.data != 42 ||
	    out.context != c)
		return rc < 0 ? rc : -FI_EOTHER;
	return 0;
}

static long cq_strerror_row(struct bi *c, int null_buf)
{
	char b[64];
	const char *r = fi_cq_strerror(c->cq, 0, NULL, null_buf ? NULL : b,
				       null_buf ? 0 : sizeof(b));

	return holds(r != NULL);
}

static long bind_twice_eq(struct bi *c)
{
	/* The endpoint's EQ is bound in this phase already. */
	return fi_ep_bind(c->ep, &c->eq_spare->fid, 0);
}

static long cq_readerr_null(struct bi *c)
{
	return fi_cq_readerr(c->cq, NULL, 0);
}

static long cq_still_usable(struct bi *c)
{
	struct fi_cq_data_entry e;

	return fi_cq_read(c->cq, &e, 1);
}

static long eq_still_usable(struct bi *c)
{
	struct fi_eq_cm_entry e;
	uint32_t ev;

	return fi_eq_read(c->s->eq, &ev, &e, sizeof(e), 0);
}

static long atomic_valid_with(struct bi *c, int kind, enum fi_datatype dt,
			      enum fi_op op)
{
	size_t count = 0;

	switch (kind) {
	case 0: return fi_atomicvalid(c->ep, dt, op, &count);
	case 1: return fi_fetch_atomicvalid(c->ep, dt, op, &count);
	default: return fi_compare_atomicvalid(c->ep, dt, op, &count);
	}
}

static long pep_bind_cq(struct bi *c)
{
	struct fid_pep *pep = NULL;
	long rc;

	FDT_OK(fi_passive_ep(c->s->fabric, c->s->info, &pep, NULL));
	rc = fi_pep_bind(pep, &c->cq_spare->fid, FI_RECV);
	FDT_OK(fi_close(&pep->fid));
	return rc;
}

static long pep_listen_no_eq(struct bi *c)
{
	struct fid_pep *pep = NULL;
	long rc;

	FDT_OK(fi_passive_ep(c->s->fabric, c->s->info, &pep, NULL));
	rc = fi_listen(pep);
	FDT_OK(fi_close(&pep->fid));
	return rc;
}

/* The data-transfer calls of one endpoint, all well formed, so that the
 * rows below test the endpoint's state and nothing else. */
#define XFER_ROWS(R, P, EXPECT, EXPECT_RX)				\
	R(P##send, fi_send(c->ep, c->buf, 8, fi_mr_desc(c->mr), 0, NULL), EXPECT) \
	R(P##senddata, fi_senddata(c->ep, c->buf, 8, fi_mr_desc(c->mr), 1, 0, NULL), EXPECT) \
	R(P##inject, fi_inject(c->ep, c->buf, 8, 0), EXPECT)		\
	R(P##injectdata, fi_injectdata(c->ep, c->buf, 8, 1, 0), EXPECT) \
	R(P##sendv, fi_sendv(c->ep, &(struct iovec){ c->buf, 8 }, &(void *){ fi_mr_desc(c->mr) }, 1, 0, NULL), EXPECT) \
	R(P##write, fi_write(c->ep, c->buf, 8, fi_mr_desc(c->mr), 0, (uint64_t)(uintptr_t)c->buf, fi_mr_key(c->mr), NULL), EXPECT) \
	R(P##writedata, fi_writedata(c->ep, c->buf, 8, fi_mr_desc(c->mr), 1, 0, (uint64_t)(uintptr_t)c->buf, fi_mr_key(c->mr), NULL), EXPECT) \
	R(P##inject_write, fi_inject_write(c->ep, c->buf, 8, 0, (uint64_t)(uintptr_t)c->buf, fi_mr_key(c->mr)), EXPECT) \
	R(P##read, fi_read(c->ep, c->buf, 8, fi_mr_desc(c->mr), 0, (uint64_t)(uintptr_t)c->buf, fi_mr_key(c->mr), NULL), EXPECT) \
	R(P##atomic, fi_atomic(c->ep, c->buf, 1, fi_mr_desc(c->mr), 0, (uint64_t)(uintptr_t)c->buf, fi_mr_key(c->mr), FI_UINT64, FI_SUM, NULL), EXPECT) \
	R(P##fetch_atomic, fi_fetch_atomic(c->ep, c->buf, 1, fi_mr_desc(c->mr), c->buf + 64, fi_mr_desc(c->mr), 0, (uint64_t)(uintptr_t)c->buf, fi_mr_key(c->mr), FI_UINT64, FI_SUM, NULL), EXPECT) \
	R(P##compare_atomic, fi_compare_atomic(c->ep, c->buf, 1, fi_mr_desc(c->mr), c->buf + 8, fi_mr_desc(c->mr), c->buf + 64, fi_mr_desc(c->mr), 0, (uint64_t)(uintptr_t)c->buf, fi_mr_key(c->mr), FI_UINT64, FI_CSWAP, NULL), EXPECT) \
	R(P##recv, fi_recv(c->ep, c->buf + 1024, 8, fi_mr_desc(c->mr), 0, NULL), EXPECT_RX)

#define OPEN_ROWS(R)							\
	R(domain_null_info, fi_domain(c->s->fabric, NULL, &(struct fid_domain *){ NULL }, NULL), -FI_EINVAL) \
	R(domain_null_out, fi_domain(c->s->fabric, c->s->info, NULL, NULL), -FI_EINVAL) \
	R(domain_unknown_device, domain_named(c, "no-such-device"), -FI_ENODEV) \
	R(endpoint_null_info, fi_endpoint(c->s->domain, NULL, &(struct fid_ep *){ NULL }, NULL), -FI_EINVAL) \
	R(endpoint_null_out, fi_endpoint(c->s->domain, c->s->info, NULL, NULL), -FI_EINVAL) \
	R(endpoint_type_rdm, endpoint_typed(c, FI_EP_RDM), -FI_EINVAL) \
	R(endpoint_tx_size_huge, endpoint_sized(c, (size_t)1 << 40, 0, 0), -FI_EINVAL) \
	R(endpoint_iov_limit_huge, endpoint_sized(c, 0, (size_t)1 << 20, 0), -FI_EINVAL) \
	R(endpoint_inject_huge, endpoint_sized(c, 0, 0, (size_t)1 << 30), -FI_EINVAL) \
	R(passive_ep_null_info, passive_ep_with(c, 1, 0), -FI_EINVAL)	\
	R(passive_ep_null_out, passive_ep_with(c, 0, 1), -FI_EINVAL)	\
	R(pep_bind_cq, pep_bind_cq(c), -FI_EINVAL)			\
	R(pep_listen_no_eq, pep_listen_no_eq(c), -FI_ENOEQ)		\
	R(eq_open_null_attr_defaults, eq_open_null_attr(c), 0) \
	R(eq_open_null_out, fi_eq_open(c->s->fabric, &(struct fi_eq_attr){ .wait_obj = FI_WAIT_NONE }, NULL, NULL), -FI_EINVAL) \
	R(eq_open_bad_wait, eq_open_with(c, (enum fi_wait_obj)99, 0, 0), -FI_ENOSYS) \
	R(eq_open_bad_flags, eq_open_with(c, FI_WAIT_NONE, BAD_FLAG, 0), -FI_EBADFLAGS) \
	R(cq_open_null_out, fi_cq_open(c->s->domain, &(struct fi_cq_attr){ .format = FI_CQ_FORMAT_DATA }, NULL, NULL), -FI_EINVAL) \
	R(cq_open_bad_format, cq_open_with(c, (enum fi_cq_format)99, FI_WAIT_NONE, 0, 0), -FI_ENOSYS) \
	R(cq_open_bad_wait, cq_open_with(c, FI_CQ_FORMAT_DATA, (enum fi_wait_obj)99, 0, 0), -FI_ENOSYS) \
	R(cq_open_bad_wait_cond, cq_open_cond(c, (enum fi_cq_wait_cond)99), -FI_ENOSYS) \
	R(cq_open_threshold, cq_open_cond(c, FI_CQ_COND_THRESHOLD), 0) \
	R(cq_open_huge_size, cq_open_with(c, FI_CQ_FORMAT_DATA, FI_WAIT_NONE, (size_t)1 << 40, 0), -FI_EINVAL) \
	R(cq_open_bad_flags, cq_open_with(c, FI_CQ_FORMAT_DATA, FI_WAIT_NONE, 0, BAD_FLAG), -FI_EBADFLAGS) \
	R(mr_reg_null_out, mr_reg_with(c, c->buf, 4096, FI_SEND, 0, 1), -FI_EINVAL) \
	R(mr_reg_bad_access, mr_reg_with(c, c->buf, 4096, 1ULL << 60, 0, 0), -FI_EINVAL) \
	R(mr_reg_bad_flags, mr_reg_with(c, c->buf, 4096, FI_SEND, BAD_FLAG, 0), -FI_EBADFLAGS) \
	R(mr_reg_null_buf, mr_reg_with(c, NULL, 4096, FI_SEND, 0, 0), -FI_EINVAL) \
	R(mr_regv_zero_count, mr_regv_with(c, 0, 0), -FI_EINVAL)	\
	R(mr_regv_two_ranges, mr_regv_with(c, 2, 0), -FI_ENOSYS)	\
	R(mr_regv_null_iov, mr_regv_with(c, 1, 1), -FI_EINVAL)		\
	R(mr_regattr_null_attr, mr_regattr_with(c, 1, 0), -FI_EINVAL)	\
	R(mr_regattr_bad_flags, mr_regattr_with(c, 0, BAD_FLAG), -FI_EBADFLAGS) \
	XFER_ROWS(R, not_enabled_, -FI_EOPBADSTATE, -FI_EOPBADSTATE)	\
	R(not_enabled_connect, fi_connect(c->ep, c->s->info->dest_addr, NULL, 0), -FI_EOPBADSTATE) \
	R(not_enabled_shutdown, fi_shutdown(c->ep, 0), -FI_ENOTCONN) \
	R(enable_no_eq, fi_enable(c->ep), -FI_ENOEQ)			\
	R(bind_null_fid, fi_ep_bind(c->ep, NULL, 0), -FI_EINVAL)	\
	R(bind_domain_as_cq, fi_ep_bind(c->ep, &c->s->domain->fid, FI_TRANSMIT), -FI_EINVAL) \
	R(bind_mr, fi_ep_bind(c->ep, &c->mr->fid, FI_SEND), -FI_EINVAL) \
	R(bind_ep_to_itself, fi_ep_bind(c->ep, &c->ep->fid, 0), -FI_EINVAL) \
	R(bind_fabric, fi_ep_bind(c->ep, &c->s->fabric->fid, 0), -FI_EINVAL) \
	R(bind_eq_as_cq, fi_ep_bind(c->ep, &c->eq_spare->fid, FI_TRANSMIT | FI_RECV), -FI_EBADFLAGS) \
	R(bind_cq_no_direction, fi_ep_bind(c->ep, &c->cq->fid, 0), -FI_EINVAL) \
	R(bind_cq_bad_flags, fi_ep_bind(c->ep, &c->cq->fid, FI_TRANSMIT | BAD_FLAG), -FI_EBADFLAGS) \
	R(bind_eq, fi_ep_bind(c->ep, &c->s->eq->fid, 0), 0)		\
	R(bind_eq_twice, bind_twice_eq(c), -FI_EINVAL)			\
	R(enable_no_cq, fi_enable(c->ep), -FI_ENOCQ)			\
	R(bind_cq_tx, fi_ep_bind(c->ep, &c->cq->fid, FI_TRANSMIT), 0)	\
	R(bind_cq_tx_twice, fi_ep_bind(c->ep, &c->cq_spare->fid, FI_TRANSMIT), -FI_EINVAL) \
	R(enable_tx_cq_only, enable_tx_only(c), 0)			\
	R(bind_cq_rx, fi_ep_bind(c->ep, &c->cq->fid, FI_RECV), 0)	\
	R(close_cq_busy, fi_close(&c->cq->fid), -FI_EBUSY)		\
	R(close_eq_busy, fi_close(&c->s->eq->fid), -FI_EBUSY)		\
	R(close_mr_domain_busy, fi_close(&c->s->domain->fid), -FI_EBUSY) \
	R(close_fabric_busy, fi_close(&c->s->fabric->fid), -FI_EBUSY)	\
	R(cq_still_usable, cq_still_usable(c), -FI_EAGAIN)		\
	R(eq_still_usable, eq_still_usable(c), -FI_EAGAIN)		\
	R(getname_null_len, fi_getname(&c->ep->fid, NULL, NULL), -FI_EINVAL) \
	R(getname_too_small, getname_small(c), -FI_ETOOSMALL)		\
	R(setname_null, setname_bad(&c->ep->fid, 0), -FI_EINVAL)	\
	R(setname_short, setname_bad(&c->ep->fid, 1), -FI_EINVAL)	\
	R(setname_family, setname_bad(&c->ep->fid, 2), -FI_EINVAL)	\
	R(setname_not_local, setname_bad(&c->ep->fid, 3), -FI_EADDRNOTAVAIL) \
	R(getpeer_not_connected, fi_getpeer(c->ep, &(struct sockaddr_in){ 0 }, &(size_t){ sizeof(struct sockaddr_in) }), -FI_ENOTCONN) \
	R(setopt_bad_level, fi_setopt(&c->ep->fid, 12345, FI_OPT_CM_DATA_SIZE, &(size_t){ 8 }, sizeof(size_t)), -FI_ENOPROTOOPT) \
	R(setopt_bad_name, fi_setopt(&c->ep->fid, FI_OPT_ENDPOINT, 12345, &(size_t){ 8 }, sizeof(size_t)), -FI_ENOPROTOOPT) \
	R(setopt_read_only, fi_setopt(&c->ep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &(size_t){ 8 }, sizeof(size_t)), -FI_ENOSYS) \
	R(getopt_null_len, fi_getopt(&c->ep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &(size_t){ 0 }, NULL), -FI_EINVAL) \
	R(getopt_too_small, getopt_small(c), -FI_ETOOSMALL)		\
	R(getopt_bad_name, fi_getopt(&c->ep->fid, FI_OPT_ENDPOINT, 12345, &(size_t){ 0 }, &(size_t){ sizeof(size_t) }), -FI_ENOPROTOOPT) \
	R(control_bad_command, fi_control(&c->ep->fid, 12345, NULL), -FI_ENOSYS) \
	R(control_cq_getwait_none, fi_control(&c->cq->fid, FI_GETWAIT, &(int){ 0 }), -FI_ENODATA) \
	R(control_cq_getwait_null, fi_control(&c->cq->fid, FI_GETWAIT, NULL), -FI_EINVAL) \
	R(control_cq_getwaitobj_null, fi_control(&c->cq->fid, FI_GETWAITOBJ, NULL), -FI_EINVAL) \
	R(control_eq_getwait_null, fi_control(&c->eq_spare->fid, FI_GETWAIT, NULL), -FI_EINVAL) \
	R(control_eq_bad_command, fi_control(&c->eq_spare->fid, 12345, NULL), -FI_ENOSYS) \
	R(cq_read_null_buf, fi_cq_read(c->cq, NULL, 1), -FI_EINVAL)	\
	R(cq_readfrom_null_buf, fi_cq_readfrom(c->cq, NULL, 1, NULL), -FI_EINVAL) \
	R(cq_readerr_null_buf, cq_readerr_null(c), -FI_EINVAL)		\
	R(cq_readerr_bad_flags, fi_cq_readerr(c->cq, &(struct fi_cq_err_entry){ 0 }, BAD_FLAG), -FI_EBADFLAGS) \
	R(cq_sread_wait_none, fi_cq_sread(c->cq, &(struct fi_cq_data_entry){ 0 }, 1, NULL, 0), -FI_ENOSYS) \
	R(cq_signal_wait_none, fi_cq_signal(c->cq), -FI_ENOSYS)		\
	R(cq_strerror_buf, cq_strerror_row(c, 0), 0)			\
	R(cq_strerror_null_buf, cq_strerror_row(c, 1), 0)		\
	R(eq_read_null_buf, fi_eq_read(c->eq_spare, &(uint32_t){ 0 }, NULL, 64, 0), -FI_EINVAL) \
	R(eq_read_null_event, fi_eq_read(c->eq_spare, NULL, c->buf, 64, 0), -FI_EINVAL) \
	R(eq_read_bad_flags, fi_eq_read(c->eq_spare, &(uint32_t){ 0 }, &(struct fi_eq_entry){ 0 }, sizeof(struct fi_eq_entry), BAD_FLAG), -FI_EBADFLAGS) \
	R(eq_readerr_null_buf, fi_eq_readerr(c->eq_spare, NULL, 0), -FI_EINVAL) \
	R(eq_readerr_empty, fi_eq_readerr(c->eq_spare, &(struct fi_eq_err_entry){ 0 }, 0), -FI_EAGAIN) \
	R(eq_write_null_buf, fi_eq_write(c->eq_spare, FI_NOTIFY, NULL, 16, 0), -FI_EINVAL) \
	R(eq_write_zero_len, fi_eq_write(c->eq_spare, FI_NOTIFY, c->buf, 0, 0), -FI_EINVAL) \
	R(eq_write_huge_len, fi_eq_write(c->eq_spare, FI_NOTIFY, c->buf, HUGE_LEN, 0), -FI_EINVAL) \
	R(eq_read_too_small, eq_read_small(c), -FI_ETOOSMALL) \
	R(eq_write_read_back, eq_write_read_back(c), 0)			\
	R(eq_sread_wait_none, fi_eq_sread(c->eq_spare, &(uint32_t){ 0 }, &(struct fi_eq_entry){ 0 }, sizeof(struct fi_eq_entry), 0, 0), -FI_EINVAL) \
	R(atomicvalid_bad_op, atomic_valid_with(c, 0, FI_UINT64, FI_ATOMIC_OP_LAST), -FI_EOPNOTSUPP) \
	R(atomicvalid_bad_type, atomic_valid_with(c, 0, FI_DATATYPE_LAST, FI_SUM), -FI_EOPNOTSUPP) \
	R(atomicvalid_float, atomic_valid_with(c, 0, FI_DOUBLE, FI_SUM), -FI_EOPNOTSUPP) \
	R(fetch_atomicvalid_min, atomic_valid_with(c, 1, FI_UINT64, FI_MIN), -FI_EOPNOTSUPP) \
	R(compare_atomicvalid_sum, atomic_valid_with(c, 2, FI_UINT64, FI_SUM), -FI_EOPNOTSUPP) \
	R(atomicvalid_null_count, fi_atomicvalid(c->ep, FI_UINT64, FI_SUM, NULL), 0) \
	R(enable, fi_enable(c->ep), 0)					\
	R(enable_twice, fi_enable(c->ep), -FI_EOPBADSTATE)		\
	R(setname_after_enable, setname_own(&c->ep->fid), -FI_EOPBADSTATE) \
	R(bind_after_enable, fi_ep_bind(c->ep, &c->cq_spare->fid, FI_RECV), -FI_EOPBADSTATE) \
	XFER_ROWS(R, not_connected_, -FI_ENOTCONN, 0)			\
	R(not_connected_shutdown, fi_shutdown(c->ep, 0), -FI_ENOTCONN)	\
	R(accept_on_active_ep, fi_accept(c->ep, NULL, 0), -FI_EOPBADSTATE)

OPEN_ROWS(ROW_DEF)
static const struct row open_rows[] = { OPEN_ROWS(ROW_ENT) };

/* ------------------------------------------------------------------------
 * Phase "connected": malformed transfers on a live connection (none of
 * them reaches the wire), then fi_shutdown and what follows it.
 * ---------------------------------------------------------------------- */

static long sendv_over(struct bi *c, int rx)
{
	struct iovec iov[64];
	void *desc[64];
	size_t n = (rx ? c->rx_iov_limit : c->tx_iov_limit) + 1;

	FDT_ASSERT(n <= 64, "iov limit %zu", n);
	for (size_t i = 0; i < n; i++) {
		iov[i].iov_base = c->buf + i;
		iov[i].iov_len = 1;
		desc[i] = fi_mr_desc(c->mr);
	}
	return rx ? fi_recvv(c->ep, iov, desc, n, 0, NULL) :
		    fi_sendv(c->ep, iov, desc, n, 0, NULL);
}

static long writev_over(struct bi *c, int read)
{
	struct iovec iov[64];
	void *desc[64];
	size_t n = c->tx_iov_limit + 1;
	uint64_t addr = (uint64_t)(uintptr_t)c->buf;

	for (size_t i = 0; i < n; i++) {
		iov[i].iov_base = c->buf + i;
		iov[i].iov_len = 1;
		desc[i] = fi_mr_desc(c->mr);
	}
	return read ? fi_readv(c->ep, iov, desc, n, 0, addr, fi_mr_key(c->mr), NULL) :
		      fi_writev(c->ep, iov, desc, n, 0, addr, fi_mr_key(c->mr), NULL);
}

static long rma_msg_two_remote(struct bi *c, int read)
{
	struct iovec iov = { c->buf, 8 };
	void *desc = fi_mr_desc(c->mr);
	struct fi_rma_iov rma[2] = {
		{ (uint64_t)(uintptr_t)c->buf, 4, fi_mr_key(c->mr) },
		{ (uint64_t)(uintptr_t)c->buf + 4, 4, fi_mr_key(c->mr) },
	};
	struct fi_msg_rma m = { .msg_iov = &iov, .desc = &desc, .iov_count = 1,
				.rma_iov = rma, .rma_iov_count = 2 };

	return read ? fi_readmsg(c->ep, &m, 0) : fi_writemsg(c->ep, &m, 0);
}

static long msg_with(struct bi *c, int kind, uint64_t flags)
{
	struct iovec iov = { c->buf, 8 };
	void *desc = fi_mr_desc(c->mr);
	struct fi_msg m = { .msg_iov = &iov, .desc = &desc, .iov_count = 1 };

	return kind ? fi_recvmsg(c->ep, &m, flags) : fi_sendmsg(c->ep, &m, flags);
}

static long inject_over(struct bi *c, int kind)
{
	size_t len = c->inject + 1;
	uint64_t addr = (uint64_t)(uintptr_t)c->buf;

	switch (kind) {
	case 0: return fi_inject(c->ep, c->buf, len, 0);
	case 1: return fi_injectdata(c->ep, c->buf, len, 1, 0);
	case 2: return fi_inject_write(c->ep, c->buf, len, 0, addr, fi_mr_key(c->mr));
	default: return fi_inject_writedata(c->ep, c->buf, len, 1, 0, addr, fi_mr_key(c->mr));
	}
}

static long atomicmsg_count(struct bi *c, size_t count)
{
	struct fi_ioc ioc = { c->buf, count };
	void *desc = fi_mr_desc(c->mr);
	struct fi_rma_ioc rioc = { (uint64_t)(uintptr_t)c->buf, count, fi_mr_key(c->mr) };
	struct fi_msg_atomic m = { .msg_iov = &ioc, .desc = &desc, .iov_count = 1,
				   .rma_iov = &rioc, .rma_iov_count = 1,
				   .datatype = FI_UINT64, .op = FI_SUM };

	return fi_atomicmsg(c->ep, &m, 0);
}

static long getpeer_small(struct bi *c)
{
	char a[2];
	size_t len = sizeof(a);
	long rc = fi_getpeer(c->ep, a, &len);

	if (rc == -FI_ETOOSMALL && len < sizeof(struct sockaddr_in))
		return -FI_EOTHER;
	return rc;
}

#define ADDR(c) ((uint64_t)(uintptr_t)(c)->buf)
#define KEY(c) fi_mr_key((c)->mr)
#define DESC(c) fi_mr_desc((c)->mr)

#define CONN_ROWS(R)							\
	R(send_null_buf, fi_send(c->ep, NULL, 4096, DESC(c), 0, NULL), -FI_EINVAL) \
	R(send_null_buf_inline, fi_send(c->ep, NULL, 8, NULL, 0, NULL), -FI_EINVAL) \
	R(send_no_desc, fi_send(c->ep, c->buf, 4096, NULL, 0, NULL), -FI_EINVAL) \
	R(send_huge_len, fi_send(c->ep, c->buf, HUGE_LEN, DESC(c), 0, NULL), -FI_EINVAL) \
	R(senddata_huge_len, fi_senddata(c->ep, c->buf, HUGE_LEN, DESC(c), 1, 0, NULL), -FI_EINVAL) \
	R(sendv_over_iov_limit, sendv_over(c, 0), -FI_EINVAL)		\
	R(sendv_null_iov, fi_sendv(c->ep, NULL, NULL, 1, 0, NULL), -FI_EINVAL) \
	R(sendmsg_null_msg, fi_sendmsg(c->ep, NULL, 0), -FI_EINVAL)	\
	R(inject_over_inject_size, inject_over(c, 0), -FI_EINVAL)	\
	R(injectdata_over_inject_size, inject_over(c, 1), -FI_EINVAL)	\
	R(inject_null_buf, fi_inject(c->ep, NULL, 8, 0), -FI_EINVAL)	\
	R(recv_null_buf, fi_recv(c->ep, NULL, 64, DESC(c), 0, NULL), -FI_EINVAL) \
	R(recv_no_desc, fi_recv(c->ep, c->buf, 64, NULL, 0, NULL), -FI_EINVAL) \
	R(recv_huge_len, fi_recv(c->ep, c->buf, HUGE_LEN, DESC(c), 0, NULL), -FI_EINVAL) \
	R(recvv_over_iov_limit, sendv_over(c, 1), -FI_EINVAL)		\
	R(recvv_null_iov, fi_recvv(c->ep, NULL, NULL, 1, 0, NULL), -FI_EINVAL) \
	R(recvmsg_null_msg, fi_recvmsg(c->ep, NULL, 0), -FI_EINVAL)	\
	R(recvmsg_peek, msg_with(c, 1, FI_PEEK), -FI_EBADFLAGS)		\
	R(recvmsg_claim, msg_with(c, 1, FI_CLAIM), -FI_EBADFLAGS)	\
	R(recvmsg_multi_recv, msg_with(c, 1, FI_MULTI_RECV), -FI_EBADFLAGS)	\
	R(write_null_buf, fi_write(c->ep, NULL, 4096, DESC(c), 0, ADDR(c), KEY(c), NULL), -FI_EINVAL) \
	R(write_no_desc, fi_write(c->ep, c->buf, 4096, NULL, 0, ADDR(c), KEY(c), NULL), -FI_EINVAL) \
	R(write_huge_len, fi_write(c->ep, c->buf, HUGE_LEN, DESC(c), 0, ADDR(c), KEY(c), NULL), -FI_EINVAL) \
	R(write_key_over_32_bits, fi_write(c->ep, c->buf, 8, DESC(c), 0, ADDR(c), 1ULL << 40, NULL), -FI_EINVAL) \
	R(writedata_huge_len, fi_writedata(c->ep, c->buf, HUGE_LEN, DESC(c), 1, 0, ADDR(c), KEY(c), NULL), -FI_EINVAL) \
	R(writev_over_iov_limit, writev_over(c, 0), -FI_EINVAL)		\
	R(writemsg_null_msg, fi_writemsg(c->ep, NULL, 0), -FI_EINVAL)	\
	R(writemsg_two_remote_iovs, rma_msg_two_remote(c, 0), -FI_EINVAL) \
	R(inject_write_over_inject_size, inject_over(c, 2), -FI_EINVAL) \
	R(inject_writedata_over_inject_size, inject_over(c, 3), -FI_EINVAL) \
	R(read_no_desc, fi_read(c->ep, c->buf, 64, NULL, 0, ADDR(c), KEY(c), NULL), -FI_EINVAL) \
	R(read_huge_len, fi_read(c->ep, c->buf, HUGE_LEN, DESC(c), 0, ADDR(c), KEY(c), NULL), -FI_EINVAL) \
	R(readv_over_iov_limit, writev_over(c, 1), -FI_EINVAL)		\
	R(readmsg_null_msg, fi_readmsg(c->ep, NULL, 0), -FI_EINVAL)	\
	R(readmsg_two_remote_iovs, rma_msg_two_remote(c, 1), -FI_EINVAL) \
	R(atomic_count_zero, fi_atomic(c->ep, c->buf, 0, DESC(c), 0, ADDR(c), KEY(c), FI_UINT64, FI_SUM, NULL), -FI_EINVAL) \
	R(atomic_count_two, fi_atomic(c->ep, c->buf, 2, DESC(c), 0, ADDR(c), KEY(c), FI_UINT64, FI_SUM, NULL), -FI_EINVAL) \
	R(atomic_null_buf, fi_atomic(c->ep, NULL, 1, DESC(c), 0, ADDR(c), KEY(c), FI_UINT64, FI_SUM, NULL), -FI_EINVAL) \
	R(atomic_bad_op, fi_atomic(c->ep, c->buf, 1, DESC(c), 0, ADDR(c), KEY(c), FI_UINT64, FI_ATOMIC_OP_LAST, NULL), -FI_EOPNOTSUPP) \
	R(atomic_bad_type, fi_atomic(c->ep, c->buf, 1, DESC(c), 0, ADDR(c), KEY(c), FI_DATATYPE_LAST, FI_SUM, NULL), -FI_EOPNOTSUPP) \
	R(atomic_misaligned, fi_atomic(c->ep, c->buf, 1, DESC(c), 0, ADDR(c) + 1, KEY(c), FI_UINT64, FI_SUM, NULL), -FI_EINVAL) \
	R(inject_atomic_count_two, fi_inject_atomic(c->ep, c->buf, 2, 0, ADDR(c), KEY(c), FI_UINT64, FI_SUM), -FI_EINVAL) \
	R(atomicv_count_two, fi_atomicv(c->ep, &(struct fi_ioc){ c->buf, 2 }, &(void *){ DESC(c) }, 1, 0, ADDR(c), KEY(c), FI_UINT64, FI_SUM, NULL), -FI_EINVAL) \
	R(atomicmsg_null_msg, fi_atomicmsg(c->ep, NULL, 0), -FI_EINVAL) \
	R(atomicmsg_count_two, atomicmsg_count(c, 2), -FI_EINVAL)	\
	R(fetch_atomic_null_result, fi_fetch_atomic(c->ep, c->buf, 1, DESC(c), NULL, DESC(c), 0, ADDR(c), KEY(c), FI_UINT64, FI_SUM, NULL), -FI_EINVAL) \
	R(fetch_atomic_bad_op, fi_fetch_atomic(c->ep, c->buf, 1, DESC(c), c->buf + 64, DESC(c), 0, ADDR(c), KEY(c), FI_UINT64, FI_MAX, NULL), -FI_EOPNOTSUPP) \
	R(fetch_atomicmsg_null_msg, fi_fetch_atomicmsg(c->ep, NULL, &(struct fi_ioc){ c->buf, 1 }, &(void *){ DESC(c) }, 1, 0), -FI_EINVAL) \
	R(compare_atomic_null_compare, fi_compare_atomic(c->ep, c->buf, 1, DESC(c), NULL, DESC(c), c->buf + 64, DESC(c), 0, ADDR(c), KEY(c), FI_UINT64, FI_CSWAP, NULL), -FI_EINVAL) \
	R(compare_atomic_bad_op, fi_compare_atomic(c->ep, c->buf, 1, DESC(c), c->buf + 8, DESC(c), c->buf + 64, DESC(c), 0, ADDR(c), KEY(c), FI_UINT64, FI_SUM, NULL), -FI_EOPNOTSUPP) \
	R(compare_atomicmsg_null_msg, fi_compare_atomicmsg(c->ep, NULL, &(struct fi_ioc){ c->buf, 1 }, &(void *){ DESC(c) }, 1, &(struct fi_ioc){ c->buf, 1 }, &(void *){ DESC(c) }, 1, 0), -FI_EINVAL) \
	R(connect_when_connected, fi_connect(c->ep, c->s->info->dest_addr, NULL, 0), -FI_EOPBADSTATE) \
	R(accept_when_connected, fi_accept(c->ep, NULL, 0), -FI_EOPBADSTATE) \
	R(getpeer_null_len, fi_getpeer(c->ep, c->buf, NULL), -FI_EINVAL) \
	R(getpeer_too_small, getpeer_small(c), -FI_ETOOSMALL)		\
	R(getpeer_ok, fi_getpeer(c->ep, c->buf, &(size_t){ 128 }), 0)	\
	R(close_cq_busy_connected, fi_close(&c->cq->fid), -FI_EBUSY)	\
	R(close_domain_busy_connected, fi_close(&c->s->domain->fid), -FI_EBUSY) \
	R(shutdown_bad_flags, fi_shutdown(c->ep, BAD_FLAG), -FI_EBADFLAGS) \
	R(shutdown, fi_shutdown(c->ep, 0), 0)				\
	R(shutdown_twice_harmless, fi_shutdown(c->ep, 0), 0)		\
	XFER_ROWS(R, after_shutdown_, -FI_ENOTCONN, RECV_AFTER_SHUTDOWN) \
	R(connect_after_shutdown, fi_connect(c->ep, c->s->info->dest_addr, NULL, 0), -FI_EOPBADSTATE)

/* A receive posted after fi_shutdown still reaches the QP (receives may be
 * posted before a connection exists, and the QP lives until fi_close); it
 * completes as flushed. */
#define RECV_AFTER_SHUTDOWN 0

CONN_ROWS(ROW_DEF)
static const struct row conn_rows[] = { CONN_ROWS(ROW_ENT) };

/* ------------------------------------------------------------------------
 * Server side: the passive endpoint's calls and a connection request
 * handled badly before the good accept.
 * ---------------------------------------------------------------------- */

struct srv_ctx {
	struct fdt_side *s;
};

static long reject_handle(struct bi *c, int which)
{
	switch (which) {
	case 0: return fi_reject(c->s->pep, NULL, NULL, 0);
	case 1: return fi_reject(c->s->pep, &c->s->pep->fid, NULL, 0);
	default: return fi_reject(c->s->pep, &c->s->eq->fid, NULL, 0);
	}
}

#define PEP_ROWS(R)							\
	R(listen_twice_harmless, fi_listen(c->s->pep), 0)		\
	R(reject_null_handle, reject_handle(c, 0), -FI_EINVAL)		\
	R(reject_pep_as_handle, reject_handle(c, 1), -FI_EINVAL)	\
	R(reject_eq_as_handle, reject_handle(c, 2), -FI_EINVAL)		\
	R(pep_bind_twice, fi_pep_bind(c->s->pep, &c->s->eq->fid, 0), -FI_EINVAL) \
	R(pep_connect, fi_connect((struct fid_ep *)c->s->pep, c->s->info->src_addr, NULL, 0), -FI_ENOSYS) \
	R(pep_setname_listening, setname_own(&c->s->pep->fid), -FI_EOPBADSTATE) \
	R(pep_setname_null, setname_bad(&c->s->pep->fid, 0), -FI_EINVAL) \
	R(pep_backlog_listening, fi_control(&c->s->pep->fid, FI_BACKLOG, &(int){ 4 }), -FI_EOPBADSTATE) \
	R(pep_backlog_zero, fi_control(&c->s->pep->fid, FI_BACKLOG, &(int){ 0 }), -FI_EINVAL) \
	R(pep_backlog_null, fi_control(&c->s->pep->fid, FI_BACKLOG, NULL), -FI_EINVAL) \
	R(pep_control_bad_command, fi_control(&c->s->pep->fid, 12345, NULL), -FI_ENOSYS) \
	R(pep_getname_small, fi_getname(&c->s->pep->fid, c->buf, &(size_t){ 1 }), -FI_ETOOSMALL) \
	R(pep_close_eq_busy, fi_close(&c->s->eq->fid), -FI_EBUSY)	\
	R(pep_setopt_bad_name, fi_setopt(&c->s->pep->fid, FI_OPT_ENDPOINT, 12345, &(size_t){ 1 }, sizeof(size_t)), -FI_ENOPROTOOPT)

PEP_ROWS(ROW_DEF)
static const struct row pep_rows[] = { PEP_ROWS(ROW_ENT) };

#define NROWS(t) (sizeof(t) / sizeof((t)[0]))

static int server(struct fdt_side *s, void *arg)
{
	struct bi c = { .s = s };
	static uint8_t buf[256];

	(void)arg;
	c.buf = buf;
	run_rows("server-pep", pep_rows, NROWS(pep_rows), &c);
	fdt_server_accept(s, NULL, NULL, NULL, NULL);
	/* The client shuts the connection down when it is done. */
	fdt_wait_shutdown(s);
	fdt_close_side(s);
	return failures ? 1 : 0;
}

static int client(struct fdt_side *s, void *arg)
{
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_DATA, .size = 64 };
	struct fi_eq_attr ea = { .wait_obj = FI_WAIT_NONE };
	struct bi c = { .s = s };

	(void)arg;
	run_rows("global", global_rows, NROWS(global_rows), &c);

	c.buf = aligned_alloc(4096, BUF_LEN);
	FDT_ASSERT(c.buf, "out of memory");
	memset(c.buf, 0, BUF_LEN);
	FDT_OK(fi_domain(s->fabric, s->info, &s->domain, NULL));
	FDT_OK(fi_cq_open(s->domain, &ca, &c.cq, NULL));
	FDT_OK(fi_cq_open(s->domain, &ca, &c.cq_spare, NULL));
	FDT_OK(fi_eq_open(s->fabric, &ea, &c.eq_spare, NULL));
	FDT_OK(fi_mr_reg(s->domain, c.buf, BUF_LEN,
			 FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ |
			 FI_REMOTE_WRITE, 0, 0, 0, &c.mr, NULL));
	FDT_OK(fi_endpoint(s->domain, s->info, &c.ep, NULL));
	run_rows("open", open_rows, NROWS(open_rows), &c);

	/* Connect the endpoint the rows enabled. */
	s->ep = c.ep;
	s->txcq = c.cq;
	c.inject = s->info->tx_attr->inject_size;
	c.tx_iov_limit = s->info->tx_attr->iov_limit;
	c.rx_iov_limit = s->info->rx_attr->iov_limit;
	FDT_OK(fi_connect(c.ep, s->info->dest_addr, NULL, 0));
	{
		uint8_t ev[sizeof(struct fi_eq_cm_entry) + 64];

		fdt_wait_event(s, FI_CONNECTED, ev, sizeof(ev));
	}
	run_rows("connected", conn_rows, NROWS(conn_rows), &c);

	/* Close order: the endpoint first, then what it used. */
	FDT_OK(fi_close(&c.ep->fid));
	s->ep = NULL;
	s->txcq = NULL;
	FDT_EXPECT(fi_close(&s->domain->fid), -FI_EBUSY);	/* CQs, MR left */
	FDT_OK(fi_close(&c.mr->fid));
	FDT_OK(fi_close(&c.cq->fid));
	FDT_OK(fi_close(&c.cq_spare->fid));
	FDT_OK(fi_close(&c.eq_spare->fid));
	fdt_close_side(s);
	free(c.buf);
	printf("client: %d failed rows in all\n", failures);
	return failures ? 1 : 0;
}

int main(void)
{
	struct fi_info *hints;
	int rc;

	signal(SIGSEGV, on_crash);
	signal(SIGBUS, on_crash);
	signal(SIGABRT, on_crash);
	signal(SIGFPE, on_crash);
	(void)fdt_addr();	/* exits 77 without a device */
	hints = fdt_hints();
	hints->caps |= FI_RMA | FI_ATOMIC;
	rc = fdt_run_pair(hints, server, client, NULL);
	fi_freeinfo(hints);
	if (!rc)
		printf("bad input: every row as documented\n");
	return rc;
}
