/*
 * Version negotiation: fi_getinfo answers a caller in the API version it
 * asked for, so nothing in a returned fi_info is newer than that version.
 *
 * A program written for API 1.4 never looks at fields 1.5 added, and a
 * program compiled against 1.4's headers cannot even see them (see the
 * ABI table in src/dropin/fd_abi_compat.c).  Leaving values there is
 * still wrong: fi_dupinfo copies them, the caller passes the entry back
 * as hints or to fi_fabric/fi_domain, and then a field the caller never
 * set means something.  Capability bits are worse, as a caller checks
 * them and they change what the provider does.  So the core clears, after
 * every provider has answered, what the caller's version did not define.
 *
 * When things appeared (fabric(7) "ABI" section and the release notes):
 *   1.5  fabric_attr->api_version; domain_attr cntr_cnt, mr_iov_limit,
 *        caps, mode, auth_key(_size), max_err_data, mr_cnt; ep_attr
 *        auth_key(_size); caps FI_LOCAL_COMM, FI_REMOTE_COMM, FI_SOURCE_ERR
 *   1.6  FI_RMA_PMEM
 *   1.7  fi_info->nic; FI_VARIABLE_MSG
 *   1.9  domain_attr->tclass, tx_attr->tclass; FI_COLLECTIVE, FI_HMEM
 * mr_mode is negotiated separately (fd_info_narrow: legacy values before
 * 1.5).  fabric_attr->api_version stays: it is how the caller's version
 * reaches fi_fabric, and the 1.0 layout simply ends before it.
 */
#include <stdlib.h>
#include <string.h>

#include "fd_core.h"

struct fd_cap_since {
	uint64_t cap;
	uint32_t version;
};

static const struct fd_cap_since fd_caps_since[] = {
	{ FI_LOCAL_COMM, FI_VERSION(1, 5) },
	{ FI_REMOTE_COMM, FI_VERSION(1, 5) },
	{ FI_SOURCE_ERR, FI_VERSION(1, 5) },
	{ FI_RMA_PMEM, FI_VERSION(1, 6) },
	{ FI_VARIABLE_MSG, FI_VERSION(1, 7) },
	{ FI_COLLECTIVE, FI_VERSION(1, 9) },
	{ FI_HMEM, FI_VERSION(1, 9) },
};

uint64_t fd_caps_unknown_to(uint32_t version)
{
	uint64_t caps = 0;

	for (size_t i = 0; i < sizeof(fd_caps_since) / sizeof(fd_caps_since[0]);
	     i++)
		if (FI_VERSION_LT(version, fd_caps_since[i].version))
			caps |= fd_caps_since[i].cap;
	return caps;
}

/*
 * Before 1.5 mr_mode was one of FI_MR_UNSPEC/BASIC/SCALABLE and local
 * registration was the FI_LOCAL_MR mode bit.  fd_info_narrow already
 * answers old callers that way; this covers entries made without it.
 * Whatever a provider needs of the remote-access bits, only basic
 * registration (virtual addresses, provider keys, allocated memory)
 * gives; with none of them scalable registration is enough.
 */
static void fd_legacy_mr_mode(struct fi_info *fi)
{
	struct fi_domain_attr *d = fi->domain_attr;
	int legacy = FI_MR_BASIC | FI_MR_SCALABLE;

	if (!(d->mr_mode & ~legacy))
		return;
	if (d->mr_mode & FI_MR_LOCAL)
		fi->mode |= FI_LOCAL_MR;
	d->mr_mode = d->mr_mode & (FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
				   FI_MR_PROV_KEY | FI_MR_BASIC) ?
		     FI_MR_BASIC : FI_MR_SCALABLE;
}

static void fd_entry_for_version(struct fi_info *fi, uint32_t version)
{
	uint64_t strip = fd_caps_unknown_to(version);

	fi->caps &= ~strip;
	if (fi->tx_attr)
		fi->tx_attr->caps &= ~strip;
	if (fi->rx_attr)
		fi->rx_attr->caps &= ~strip;
	if (fi->domain_attr)
		fi->domain_attr->caps &= ~strip;

	if (FI_VERSION_LT(version, FI_VERSION(1, 5))) {
		if (fi->domain_attr) {
			struct fi_domain_attr *d = fi->domain_attr;

			fd_legacy_mr_mode(fi);

			free(d->auth_key);
			d->auth_key = NULL;
			d->auth_key_size = 0;
			d->cntr_cnt = 0;
			d->mr_iov_limit = 0;
			d->caps = 0;
			d->mode = 0;
			d->max_err_data = 0;
			d->mr_cnt = 0;
		}
		if (fi->ep_attr) {
			free(fi->ep_attr->auth_key);
			fi->ep_attr->auth_key = NULL;
			fi->ep_attr->auth_key_size = 0;
		}
	}
	if (FI_VERSION_LT(version, FI_VERSION(1, 7)) && fi->nic) {
		if (fi->nic->fid.ops && fi->nic->fid.ops->close)
			fi->nic->fid.ops->close(&fi->nic->fid);
		fi->nic = NULL;
	}
	if (FI_VERSION_LT(version, FI_VERSION(1, 9))) {
		if (fi->domain_attr)
			fi->domain_attr->tclass = 0;
		if (fi->tx_attr)
			fi->tx_attr->tclass = 0;
	}
}

void fd_info_for_version(struct fi_info *list, uint32_t version)
{
	for (struct fi_info *fi = list; fi; fi = fi->next)
		fd_entry_for_version(fi, version);
}
