/* fi_getinfo with the hints MPICH 4.0's ch4:ofi netmod builds
 * (MPIDI_OFI_init_hints, "verbs;ofi_rxm" capability set): an RDM entry
 * comes back, says what was asked (tag format, op_flags, ordering, modes),
 * and fabric, domain, endpoint and enable work with it; a tagged message
 * using the format's high bits goes through. Then the attributes one at a
 * time: tag formats (MPICH's, all ones, zero, FI_TAG_GENERIC), and the
 * legacy mr_mode values of API 1.4 and of 1.5+ (FI_MR_BASIC served as
 * what it means, FI_MR_SCALABLE refused). */
#include "rdmt.h"

#define MPICH_TAG_FORMAT 0x00e000007fffffffULL	/* protocol 53-55, tag 0-30 */
#define MPICH_CAPS (FI_RMA | FI_WRITE | FI_READ | FI_REMOTE_WRITE | FI_REMOTE_READ | \
		    FI_ATOMICS | FI_TAGGED | FI_DIRECTED_RECV | FI_MSG | FI_MULTI_RECV)
#define MPICH_ORDER (FI_ORDER_SAS | FI_ORDER_RAR | FI_ORDER_RAW | FI_ORDER_WAR | \
		     FI_ORDER_WAW)

static struct fi_info *mpich_hints(void)
{
	struct fi_info *h = rdmt_hints(MPICH_CAPS);

	h->mode = FI_CONTEXT | FI_CONTEXT2 | FI_ASYNC_IOV | FI_RX_CQ_DATA;
	h->addr_format = FI_FORMAT_UNSPEC;
	h->domain_attr->threading = FI_THREAD_DOMAIN;
	h->domain_attr->data_progress = FI_PROGRESS_MANUAL;
	h->domain_attr->control_progress = FI_PROGRESS_MANUAL;
	h->domain_attr->resource_mgmt = FI_RM_ENABLED;
	h->domain_attr->av_type = FI_AV_MAP;
	h->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	h->domain_attr->mode = FI_RESTRICTED_COMP;
	h->tx_attr->op_flags = FI_COMPLETION | FI_DELIVERY_COMPLETE;
	h->tx_attr->msg_order = MPICH_ORDER;
	h->tx_attr->comp_order = FI_ORDER_NONE;
	h->rx_attr->op_flags = FI_COMPLETION;
	h->rx_attr->total_buffered_recv = 0;
	h->ep_attr->type = FI_EP_RDM;
	h->ep_attr->mem_tag_format = MPICH_TAG_FORMAT;
	return h;
}

static int getinfo(uint32_t version, struct fi_info *hints, struct fi_info **info)
{
	return fi_getinfo(version, fdt_addr(), NULL, FI_SOURCE, hints, info);
}

/* The full MPICH set: entry, objects, one message. */
static void full_set(void)
{
	struct fi_info *h = mpich_hints(), *info = NULL;
	struct rdmt_dom d;
	struct rdmt_ep e1, e2;
	struct rdmt_comp c;
	uint8_t sbuf[256], rbuf[256];
	struct fi_context2 sctx, rctx;
	fi_addr_t to2;
	uint64_t tag = 0x00c0000000000000ULL | 0x7fff0001ULL;	/* bits 54, 55, 30 */

	FDT_OK(getinfo(FI_VERSION(1, 17), h, &info));
	FDT_ASSERT(info->ep_attr->type == FI_EP_RDM, "not RDM");
	FDT_ASSERT(!strcmp(info->fabric_attr->prov_name, "verbs;ofi_rxm"), "provider %s",
		   info->fabric_attr->prov_name);
	FDT_ASSERT(info->ep_attr->mem_tag_format == MPICH_TAG_FORMAT,
		   "mem_tag_format 0x%llx, asked 0x%llx",
		   (unsigned long long)info->ep_attr->mem_tag_format, MPICH_TAG_FORMAT);
	FDT_ASSERT(info->tx_attr->op_flags == (FI_COMPLETION | FI_DELIVERY_COMPLETE),
		   "tx op_flags 0x%llx", (unsigned long long)info->tx_attr->op_flags);
	FDT_ASSERT((info->tx_attr->msg_order & MPICH_ORDER) == MPICH_ORDER,
		   "msg_order 0x%llx", (unsigned long long)info->tx_attr->msg_order);
	FDT_ASSERT((info->caps & MPICH_CAPS) == MPICH_CAPS, "caps 0x%llx",
		   (unsigned long long)info->caps);
	FDT_ASSERT(!(info->mode & ~h->mode), "mode 0x%llx not offered",
		   (unsigned long long)info->mode);
	FDT_ASSERT(info->domain_attr->resource_mgmt == FI_RM_ENABLED &&
		   info->domain_attr->av_type == FI_AV_MAP &&
		   info->domain_attr->threading == FI_THREAD_DOMAIN, "domain attrs");
	FDT_ASSERT(!(info->domain_attr->mr_mode & ~h->domain_attr->mr_mode),
		   "mr_mode 0x%x", info->domain_attr->mr_mode);
	FDT_ASSERT(info->domain_attr->cq_data_size >= 4, "cq_data_size");

	memset(&d, 0, sizeof(d));
	d.info = info;
	FDT_OK(fi_fabric(info->fabric_attr, &d.fabric, NULL));
	FDT_OK(fi_domain(d.fabric, info, &d.domain, NULL));
	rdmt_ep_open(&d, &e1, NULL, FI_AV_MAP);
	rdmt_ep_open(&d, &e2, NULL, FI_AV_MAP);
	to2 = rdmt_insert(&e1, &e2);
	(void)rdmt_insert(&e2, &e1);

	/* the format's high bits, the endpoint's default
	 * FI_DELIVERY_COMPLETE (completes once the receive has it) */
	for (size_t i = 0; i < sizeof(sbuf); i++)
		sbuf[i] = (uint8_t)(i * 13 + 5);
	memset(rbuf, 0, sizeof(rbuf));
	FDT_OK(fi_trecv(e2.ep, rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC, tag, 0, &rctx));
	RDMT_POST(fi_tsend(e1.ep, sbuf, sizeof(sbuf), NULL, to2, tag, &sctx));
	rdmt_wait_ok(e2.cq, &c);
	rdmt_check_recv(&c, &rctx, FI_TAGGED | FI_RECV, sizeof(rbuf), tag);
	FDT_ASSERT(!memcmp(sbuf, rbuf, sizeof(sbuf)), "bytes differ");
	rdmt_wait_ok(e1.cq, &c);
	FDT_ASSERT(c.e.op_context == &sctx, "send context");

	/* the AV as MPICH 4.0's verbs;ofi_rxm set opens it: a table that
	 * reserves 8 bits for receive contexts (no scalable endpoint: context
	 * 0, fi_rx_addr leaves the address as it is) */
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE, .rx_ctx_bits = 8, .count = 4 };
	struct fid_av *av;
	fi_addr_t a = FI_ADDR_NOTAVAIL;
	uint8_t name[256];
	size_t namelen = sizeof(name);

	FDT_OK(fi_av_open(d.domain, &av_attr, &av, NULL));
	FDT_ASSERT(fi_av_insert(av, e2.name, 1, &a, 0, NULL) == 1, "insert into the rx_ctx_bits AV");
	FDT_ASSERT(fi_rx_addr(a, 0, 8) == a, "fi_rx_addr(addr, 0, 8) changed the address");
	FDT_OK(fi_av_lookup(av, fi_rx_addr(a, 0, 8), name, &namelen));
	FDT_ASSERT(namelen == e2.namelen && !memcmp(name, e2.name, namelen), "lookup");
	FDT_OK(fi_close(&av->fid));

	rdmt_ep_close(&e1);
	rdmt_ep_close(&e2);
	rdmt_dom_close(&d);	/* frees info */
	fi_freeinfo(h);
}

static void tag_formats(void)
{
	static const uint64_t fmts[] = {
		MPICH_TAG_FORMAT, ~0ULL, 0, 0xaaaaaaaaaaaaaaaaULL, 0x0000ffff0000ffffULL,
	};

	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		struct fi_info *h = rdmt_hints(FI_TAGGED | FI_MSG), *info = NULL;

		h->ep_attr->mem_tag_format = fmts[i];
		FDT_OK(getinfo(FI_VERSION(1, 17), h, &info));
		FDT_ASSERT(info->ep_attr->mem_tag_format ==
			   (fmts[i] ? fmts[i] : 0xaaaaaaaaaaaaaaaaULL),
			   "format 0x%llx reported as 0x%llx", (unsigned long long)fmts[i],
			   (unsigned long long)info->ep_attr->mem_tag_format);
		fi_freeinfo(info);
		fi_freeinfo(h);
	}
}

/* Open a domain and an enabled endpoint on info: the entry is usable. */
static void usable(struct fi_info *info)
{
	struct rdmt_dom d = { .info = info };
	struct rdmt_ep e;

	FDT_OK(fi_fabric(info->fabric_attr, &d.fabric, NULL));
	FDT_OK(fi_domain(d.fabric, info, &d.domain, NULL));
	rdmt_ep_open(&d, &e, NULL, 0);
	rdmt_ep_close(&e);
	FDT_OK(fi_close(&d.domain->fid));
	FDT_OK(fi_close(&d.fabric->fid));
}

static void legacy_mr(void)
{
	static const struct {
		uint32_t version;
		int asked, want;	/* want -1: refused */
	} cases[] = {
		{ FI_VERSION(1, 4), FI_MR_UNSPEC, FI_MR_BASIC },
		{ FI_VERSION(1, 4), FI_MR_BASIC, FI_MR_BASIC },
		{ FI_VERSION(1, 4), FI_MR_SCALABLE, -1 },
		{ FI_VERSION(1, 17), FI_MR_BASIC, FI_MR_BASIC },
		{ FI_VERSION(1, 17), FI_MR_SCALABLE, -1 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fi_info *h = rdmt_hints(FI_TAGGED | FI_MSG | FI_RMA), *info = NULL;
		int ret;

		h->domain_attr->mr_mode = cases[i].asked;
		ret = getinfo(cases[i].version, h, &info);
		if (cases[i].want < 0) {
			FDT_ASSERT(ret == -FI_ENODATA, "case %zu: mr_mode %d at 1.%u: %d, "
				   "want -FI_ENODATA", i, cases[i].asked,
				   FI_MINOR(cases[i].version), ret);
		} else {
			FDT_ASSERT(ret == 0, "case %zu: mr_mode %d at 1.%u: %d (%s)", i,
				   cases[i].asked, FI_MINOR(cases[i].version), ret,
				   fi_strerror(-ret));
			FDT_ASSERT(info->ep_attr->type == FI_EP_RDM, "case %zu: not RDM", i);
			FDT_ASSERT(info->domain_attr->mr_mode == cases[i].want,
				   "case %zu: mr_mode 0x%x, want 0x%x", i,
				   info->domain_attr->mr_mode, cases[i].want);
			usable(info);
		}
		fi_freeinfo(info);
		fi_freeinfo(h);
	}
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	full_set();
	tag_formats();
	legacy_mr();
	return rdmt_pass("rdm_mpich");
}
