/*
 * fi_info lifetime: fi_dupinfo (and through it fi_allocinfo), fi_freeinfo,
 * plus fi_version.
 *
 * Every fi_info this library hands out owns all it points to except
 * 'handle' (an object the application or provider owns) and the domain and
 * fabric object pointers inside the attributes.  The same rule lets
 * fi_freeinfo release an fi_info the application built itself with
 * malloc'ed pieces, which applications do.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fd_attr.h"
#include "fd_core.h"
#include "fd_util.h"

uint32_t fi_version(void)
{
	return FD_API_VERSION;
}

/* ------------------------------------------------------------------------
 * NIC descriptions.  A copied fid_nic is a small object of our own whose
 * close frees it, so fi_freeinfo can release any nic through fi_close.
 * ---------------------------------------------------------------------- */
static void fd_nic_free(struct fid_nic *nic)
{
	if (nic->device_attr) {
		free(nic->device_attr->name);
		free(nic->device_attr->device_id);
		free(nic->device_attr->device_version);
		free(nic->device_attr->vendor_id);
		free(nic->device_attr->driver);
		free(nic->device_attr->firmware);
		free(nic->device_attr);
	}
	free(nic->bus_attr);
	if (nic->link_attr) {
		free(nic->link_attr->address);
		free(nic->link_attr->network_type);
		free(nic->link_attr);
	}
	free(nic);
}

static int fd_nic_close(struct fid *fid)
{
	fd_nic_free((struct fid_nic *)fid);
	return 0;
}

static const char *fd_str_or_null(const char *s)
{
	return s ? s : "(null)";
}

static int fd_nic_tostr(const struct fid *fid, char *buf, size_t len)
{
	const struct fid_nic *nic = (const struct fid_nic *)fid;
	const struct fi_device_attr *d = nic->device_attr;
	const struct fi_bus_attr *b = nic->bus_attr;
	const struct fi_link_attr *l = nic->link_attr;
	size_t pos = 0;
	int n;

#define NIC_PRINT(...)							\
	do {								\
		n = snprintf(buf + pos, len - pos, __VA_ARGS__);	\
		if (n < 0 || (size_t)n >= len - pos)			\
			return 0;					\
		pos += (size_t)n;					\
	} while (0)

	if (!buf || !len)
		return 0;
	buf[0] = '\0';
	/* Follows a "nic:" title: the attributes go on the next lines. */
	NIC_PRINT("\n");
	if (d) {
		NIC_PRINT("        fi_device_attr:\n");
		NIC_PRINT("            name: %s\n", fd_str_or_null(d->name));
		NIC_PRINT("            device_id: %s\n",
			  fd_str_or_null(d->device_id));
		NIC_PRINT("            device_version: %s\n",
			  fd_str_or_null(d->device_version));
		NIC_PRINT("            vendor_id: %s\n",
			  fd_str_or_null(d->vendor_id));
		NIC_PRINT("            driver: %s\n", fd_str_or_null(d->driver));
		NIC_PRINT("            firmware: %s\n",
			  fd_str_or_null(d->firmware));
	}
	if (b) {
		NIC_PRINT("        fi_bus_attr:\n");
		if (b->bus_type == FI_BUS_PCI) {
			NIC_PRINT("            bus_type: FI_BUS_PCI\n");
			NIC_PRINT("            fi_pci_attr:\n");
			NIC_PRINT("                domain_id: %u\n",
				  (unsigned int)b->attr.pci.domain_id);
			NIC_PRINT("                bus_id: %u\n",
				  (unsigned int)b->attr.pci.bus_id);
			NIC_PRINT("                device_id: %u\n",
				  (unsigned int)b->attr.pci.device_id);
			NIC_PRINT("                function_id: %u\n",
				  (unsigned int)b->attr.pci.function_id);
		} else {
			NIC_PRINT("            bus_type: FI_BUS_UNKNOWN\n");
		}
	}
	if (l) {
		NIC_PRINT("        fi_link_attr:\n");
		NIC_PRINT("            address: %s\n", fd_str_or_null(l->address));
		NIC_PRINT("            mtu: %zu\n", l->mtu);
		NIC_PRINT("            speed: %zu\n", l->speed);
		NIC_PRINT("            state: %s\n",
			  l->state == FI_LINK_UP ? "FI_LINK_UP" :
			  l->state == FI_LINK_DOWN ? "FI_LINK_DOWN" :
			  "FI_LINK_UNKNOWN");
		NIC_PRINT("            network_type: %s\n",
			  fd_str_or_null(l->network_type));
	}
#undef NIC_PRINT
	return 0;
}

static struct fi_ops fd_nic_ops = {
	.size = sizeof(struct fi_ops),
	.close = fd_nic_close,
	.tostr = fd_nic_tostr,
};

struct fid_nic *fd_nic_alloc(void)
{
	struct fid_nic *nic = calloc(1, sizeof(*nic));

	if (!nic)
		return NULL;
	nic->fid.fclass = FI_CLASS_NIC;
	nic->fid.ops = &fd_nic_ops;
	nic->device_attr = calloc(1, sizeof(*nic->device_attr));
	nic->bus_attr = calloc(1, sizeof(*nic->bus_attr));
	nic->link_attr = calloc(1, sizeof(*nic->link_attr));
	if (!nic->device_attr || !nic->bus_attr || !nic->link_attr) {
		fd_nic_free(nic);
		return NULL;
	}
	return nic;
}

/* strdup that passes NULL through; *fail is set when memory runs out. */
static char *fd_dupstr(const char *s, int *fail)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*fail = 1;
	return d;
}

static void *fd_dupmem(const void *p, size_t len, int *fail)
{
	void *d;

	if (!p || !len)
		return NULL;
	d = malloc(len);
	if (!d) {
		*fail = 1;
		return NULL;
	}
	memcpy(d, p, len);
	return d;
}

static struct fid_nic *fd_nic_dup(const struct fid_nic *src)
{
	struct fid_nic *nic;
	int fail = 0;

	nic = calloc(1, sizeof(*nic));
	if (!nic)
		return NULL;
	nic->fid.fclass = FI_CLASS_NIC;
	nic->fid.ops = &fd_nic_ops;

	if (src->device_attr) {
		const struct fi_device_attr *s = src->device_attr;
		struct fi_device_attr *d = calloc(1, sizeof(*d));

		nic->device_attr = d;
		if (!d) {
			fail = 1;
		} else {
			d->name = fd_dupstr(s->name, &fail);
			d->device_id = fd_dupstr(s->device_id, &fail);
			d->device_version = fd_dupstr(s->device_version, &fail);
			d->vendor_id = fd_dupstr(s->vendor_id, &fail);
			d->driver = fd_dupstr(s->driver, &fail);
			d->firmware = fd_dupstr(s->firmware, &fail);
		}
	}
	if (src->bus_attr)
		nic->bus_attr = fd_dupmem(src->bus_attr, sizeof(*src->bus_attr),
					  &fail);
	if (src->link_attr) {
		const struct fi_link_attr *s = src->link_attr;
		struct fi_link_attr *l = fd_dupmem(s, sizeof(*s), &fail);

		nic->link_attr = l;
		if (l) {
			l->address = fd_dupstr(s->address, &fail);
			l->network_type = fd_dupstr(s->network_type, &fail);
		}
	}
	/* prov_attr is provider private and cannot be copied blindly. */
	if (fail) {
		fd_nic_free(nic);
		return NULL;
	}
	return nic;
}

/* ------------------------------------------------------------------------
 * fi_info
 * ---------------------------------------------------------------------- */
static void fd_freeinfo_one(struct fi_info *info)
{
	free(info->src_addr);
	free(info->dest_addr);
	free(info->tx_attr);
	free(info->rx_attr);
	if (info->ep_attr) {
		free(info->ep_attr->auth_key);
		free(info->ep_attr);
	}
	if (info->domain_attr) {
		free(info->domain_attr->name);
		free(info->domain_attr->auth_key);
		free(info->domain_attr);
	}
	if (info->fabric_attr) {
		free(info->fabric_attr->name);
		free(info->fabric_attr->prov_name);
		free(info->fabric_attr);
	}
	if (info->nic && info->nic->fid.ops &&
	    FI_CHECK_OP(info->nic->fid.ops, struct fi_ops, close))
		info->nic->fid.ops->close(&info->nic->fid);
	free(info);
}

void fi_freeinfo(struct fi_info *info)
{
	while (info) {
		struct fi_info *next = info->next;

		fd_freeinfo_one(info);
		info = next;
	}
}

static struct fi_info *fd_allocinfo(void)
{
	struct fi_info *info = calloc(1, sizeof(*info));

	if (!info)
		return NULL;
	info->tx_attr = calloc(1, sizeof(*info->tx_attr));
	info->rx_attr = calloc(1, sizeof(*info->rx_attr));
	info->ep_attr = calloc(1, sizeof(*info->ep_attr));
	info->domain_attr = calloc(1, sizeof(*info->domain_attr));
	info->fabric_attr = calloc(1, sizeof(*info->fabric_attr));
	if (!info->tx_attr || !info->rx_attr || !info->ep_attr ||
	    !info->domain_attr || !info->fabric_attr) {
		fd_freeinfo_one(info);
		return NULL;
	}
	return info;
}

/*
 * A single entry is copied ('next' is not followed).  An attribute the
 * source lacks stays NULL in the copy, so a copy always says the same as
 * its source.
 */
struct fi_info *fi_dupinfo(const struct fi_info *info)
{
	struct fi_info *dup;
	int fail = 0;

	if (!info)
		return fd_allocinfo();

	dup = calloc(1, sizeof(*dup));
	if (!dup)
		return NULL;

	dup->caps = info->caps;
	dup->mode = info->mode;
	dup->addr_format = info->addr_format;
	dup->handle = info->handle;
	if (info->src_addr && info->src_addrlen) {
		dup->src_addr = fd_dupmem(info->src_addr, info->src_addrlen,
					  &fail);
		dup->src_addrlen = info->src_addrlen;
	}
	if (info->dest_addr && info->dest_addrlen) {
		dup->dest_addr = fd_dupmem(info->dest_addr, info->dest_addrlen,
					   &fail);
		dup->dest_addrlen = info->dest_addrlen;
	}

	if (info->tx_attr)
		dup->tx_attr = fd_dupmem(info->tx_attr, sizeof(*info->tx_attr),
					 &fail);
	if (info->rx_attr)
		dup->rx_attr = fd_dupmem(info->rx_attr, sizeof(*info->rx_attr),
					 &fail);

	if (info->ep_attr) {
		dup->ep_attr = fd_dupmem(info->ep_attr, sizeof(*info->ep_attr),
					 &fail);
		if (dup->ep_attr) {
			/* Clear before copying so a failed copy never
			 * leaves a pointer into the source behind. */
			dup->ep_attr->auth_key = NULL;
			dup->ep_attr->auth_key =
				fd_dupmem(info->ep_attr->auth_key,
					  info->ep_attr->auth_key_size, &fail);
		}
	}

	if (info->domain_attr) {
		dup->domain_attr = fd_dupmem(info->domain_attr,
					     sizeof(*info->domain_attr), &fail);
		if (dup->domain_attr) {
			dup->domain_attr->name = NULL;
			dup->domain_attr->auth_key = NULL;
			dup->domain_attr->name =
				fd_dupstr(info->domain_attr->name, &fail);
			dup->domain_attr->auth_key =
				fd_dupmem(info->domain_attr->auth_key,
					  info->domain_attr->auth_key_size,
					  &fail);
		}
	}

	if (info->fabric_attr) {
		dup->fabric_attr = fd_dupmem(info->fabric_attr,
					     sizeof(*info->fabric_attr), &fail);
		if (dup->fabric_attr) {
			dup->fabric_attr->name = NULL;
			dup->fabric_attr->prov_name = NULL;
			dup->fabric_attr->name =
				fd_dupstr(info->fabric_attr->name, &fail);
			dup->fabric_attr->prov_name =
				fd_dupstr(info->fabric_attr->prov_name, &fail);
		}
	}

	if (info->nic && !fail) {
		dup->nic = fd_nic_dup(info->nic);
		if (!dup->nic)
			fail = 1;
	}

	if (fail) {
		fd_freeinfo_one(dup);
		return NULL;
	}
	return dup;
}

/* ---- a layer's entries over a core provider's (fd_util.h) ---- */

int fd_info_copy_addr(void **dst, size_t *dstlen, const void *src, size_t len)
{
	int fail = 0;

	free(*dst);
	*dst = fd_dupmem(src, len, &fail);
	*dstlen = *dst ? len : 0;
	return fail ? -FI_ENOMEM : 0;
}

void *fd_calloc_info(size_t size, size_t info_off, const struct fi_info *info)
{
	char *obj = calloc(1, size);
	struct fi_info *copy;

	if (!obj)
		return NULL;
	copy = fi_dupinfo(info);
	if (!copy) {
		free(obj);
		return NULL;
	}
	memcpy(obj + info_off, &copy, sizeof(copy));
	return obj;
}

/* The replaced strings are freed; a name src lacks leaves dst's. */
static int fd_info_dup_name(char **dst, const char *src)
{
	if (!src)
		return 0;
	free(*dst);
	*dst = strdup(src);
	return *dst ? 0 : -FI_ENOMEM;
}

int fd_info_copy_place(struct fi_info *dst, const struct fi_info *src,
		       bool fabric_name)
{
	dst->addr_format = src->addr_format;
	if (fd_info_copy_addr(&dst->src_addr, &dst->src_addrlen, src->src_addr,
			      src->src_addrlen) ||
	    fd_info_copy_addr(&dst->dest_addr, &dst->dest_addrlen, src->dest_addr,
			      src->dest_addrlen))
		return -FI_ENOMEM;
	if (src->domain_attr &&
	    fd_info_dup_name(&dst->domain_attr->name, src->domain_attr->name))
		return -FI_ENOMEM;
	if (fabric_name && src->fabric_attr &&
	    fd_info_dup_name(&dst->fabric_attr->name, src->fabric_attr->name))
		return -FI_ENOMEM;
	return 0;
}

struct fi_info *fd_layer_core_hints(const struct fi_info *hints,
				    const struct fd_attrs *want)
{
	struct fi_info *core = fi_allocinfo();

	if (!core)
		return NULL;
	if (fd_attrs_apply(core, want) ||
	    (hints && fd_info_copy_place(core, hints, true))) {
		fi_freeinfo(core);
		return NULL;
	}
	return core;
}

int fd_info_hand_out(struct fi_info *head, int ret, struct fi_info **info)
{
	if (ret) {
		fi_freeinfo(head);
		return ret;
	}
	if (!head)
		return -FI_ENODATA;
	*info = head;
	return 0;
}

int fd_layer_lower_getinfo(const struct fd_provider *lower, uint32_t version,
			   const char *node, const char *service, uint64_t flags,
			   struct fi_info *lower_hints, struct fi_info **entries)
{
	int ret;

	*entries = NULL;
	if (!lower_hints)
		return -FI_ENOMEM;
	ret = lower->getinfo(version, node, service, flags, lower_hints, entries);
	fi_freeinfo(lower_hints);
	return ret;
}

int fd_layer_wrap(uint32_t version, struct fi_info *core, const struct fi_info *hints,
		  const struct fd_layer_wrap_ops *ops, void *arg, struct fi_info **info)
{
	struct fi_info *head = NULL, **tail = &head;
	struct fi_fabric_attr fabric;
	struct fi_info view;
	const struct fi_info *match = hints;
	int ret = 0;

	/* The hints minus the provider name: the front end already decided
	 * this provider answers to it, and the matcher would only accept the
	 * layer's full name. */
	if (hints && hints->fabric_attr && hints->fabric_attr->prov_name) {
		view = *hints;
		fabric = *hints->fabric_attr;
		fabric.prov_name = NULL;
		view.fabric_attr = &fabric;
		match = &view;
	}
	for (struct fi_info *c = core; c; c = c->next) {
		struct fi_info *t, *fi;

		t = fi_dupinfo(c);
		if (!t) {
			ret = -FI_ENOMEM;
			break;
		}
		t->next = NULL;
		ret = ops->make(t, c, arg);
		if (ret || fd_info_check(version, t, match)) {
			fi_freeinfo(t);
			if (ret < 0)
				break;
			ret = 0;
			continue;
		}
		fi = fd_info_narrow(version, t, match);
		fi_freeinfo(t);
		if (!fi) {
			ret = -FI_ENOMEM;
			break;
		}
		/* a generic FI_SOCKADDR hint gets the entry's own family */
		fi->addr_format = c->addr_format;
		ret = ops->finish ? ops->finish(fi, hints, arg) : 0;
		if (ret) {
			fi_freeinfo(fi);
			if (ret < 0)
				break;
			ret = 0;
			continue;
		}
		*tail = fi;
		tail = &fi->next;
	}
	fi_freeinfo(core);
	return fd_info_hand_out(head, ret, info);
}

static void fd_size_default(size_t *field, size_t hint, size_t def)
{
	if (!hint && def != FD_SIZE_KEEP)
		*field = def;
}

void fd_info_size_defaults(struct fi_info *fi, const struct fi_info *hints,
			   const struct fd_size_defaults *d)
{
	const struct fi_tx_attr *htx = hints ? hints->tx_attr : NULL;
	const struct fi_rx_attr *hrx = hints ? hints->rx_attr : NULL;

	fd_size_default(&fi->tx_attr->size, htx ? htx->size : 0, d->tx_size);
	fd_size_default(&fi->tx_attr->iov_limit, htx ? htx->iov_limit : 0,
			d->tx_iov_limit);
	fd_size_default(&fi->tx_attr->inject_size, htx ? htx->inject_size : 0,
			d->inject_size);
	fd_size_default(&fi->rx_attr->size, hrx ? hrx->size : 0, d->rx_size);
	fd_size_default(&fi->rx_attr->iov_limit, hrx ? hrx->iov_limit : 0,
			d->rx_iov_limit);
}
