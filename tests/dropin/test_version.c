/*
 * Version negotiation without a device: fi_getinfo answers in the API
 * version asked for (FI_PROV_ATTR_ONLY needs no device), and the core's
 * fd_info_for_version clears what an older version does not define.
 */
#include <stdio.h>
#include <stdlib.h>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include "fd_core.h"
#include "fdt_check.h"

static struct fi_info *prov_attr(uint32_t version, int *ret)
{
	struct fi_info *info = NULL;

	*ret = fi_getinfo(version, NULL, NULL, FI_PROV_ATTR_ONLY, NULL, &info);
	return info;
}

static void test_current(void)
{
	struct fi_info *fi;
	int ret;

	fi = prov_attr(FI_VERSION(1, 17), &ret);
	CHECK(ret == 0 && fi);
	if (!fi)
		return;
	/* The provider does report these at 1.17, so clearing them below
	 * is the version rule at work, not an empty template. */
	CHECK(fi->caps & FI_LOCAL_COMM);
	CHECK(fi->domain_attr->caps & FI_REMOTE_COMM);
	CHECK(fi->domain_attr->max_err_data > 0);
	CHECK(fi->domain_attr->mr_iov_limit > 0);
	CHECK(fi->fabric_attr->api_version == FI_VERSION(1, 17));
	CHECK(!(fi->domain_attr->mr_mode & (FI_MR_BASIC | FI_MR_SCALABLE)));
	fi_freeinfo(fi);
}

static void test_1_4(void)
{
	struct fi_info *fi;
	int ret;

	fi = prov_attr(FI_VERSION(1, 4), &ret);
	CHECK(ret == 0 && fi);
	if (!fi)
		return;
	CHECK(!(fi->caps & (FI_LOCAL_COMM | FI_REMOTE_COMM)));
	CHECK(!(fi->tx_attr->caps & (FI_LOCAL_COMM | FI_REMOTE_COMM)));
	CHECK(!(fi->rx_attr->caps & (FI_LOCAL_COMM | FI_REMOTE_COMM)));
	CHECK(fi->caps & FI_MSG);
	CHECK(fi->domain_attr->caps == 0);
	CHECK(fi->domain_attr->mode == 0);
	CHECK(fi->domain_attr->max_err_data == 0);
	CHECK(fi->domain_attr->mr_iov_limit == 0);
	CHECK(fi->domain_attr->mr_cnt == 0);
	CHECK(fi->domain_attr->cntr_cnt == 0);
	CHECK(fi->domain_attr->auth_key == NULL);
	CHECK(fi->ep_attr->auth_key_size == 0);
	CHECK(fi->nic == NULL);
	CHECK(fi->fabric_attr->api_version == FI_VERSION(1, 4));
	/* registration spoken in the 1.0 - 1.4 vocabulary */
	CHECK(fi->domain_attr->mr_mode == FI_MR_BASIC ||
	      fi->domain_attr->mr_mode == FI_MR_SCALABLE ||
	      fi->domain_attr->mr_mode == FI_MR_UNSPEC);
	fi_freeinfo(fi);
}

static void test_too_new(void)
{
	struct fi_info *fi = NULL;

	CHECK(fi_getinfo(FI_VERSION(1, 18), NULL, NULL, FI_PROV_ATTR_ONLY,
			 NULL, &fi) == -FI_ENOSYS);
	CHECK(fi == NULL);
	CHECK(fi_getinfo(FI_VERSION(2, 0), NULL, NULL, FI_PROV_ATTR_ONLY,
			 NULL, &fi) == -FI_ENOSYS);
}

/* The clearing rules themselves, on an entry that has everything set. */
static struct fi_info *full_entry(void)
{
	struct fi_info *fi = fi_allocinfo();

	if (!fi)
		return NULL;
	fi->caps = FI_MSG | FI_LOCAL_COMM | FI_RMA_PMEM | FI_VARIABLE_MSG |
		   FI_HMEM | FI_COLLECTIVE | FI_SOURCE_ERR;
	fi->tx_attr->caps = fi->caps;
	fi->rx_attr->caps = fi->caps;
	fi->tx_attr->tclass = FI_TC_LOW_LATENCY;
	fi->domain_attr->tclass = FI_TC_BULK_DATA;
	fi->domain_attr->caps = FI_LOCAL_COMM | FI_REMOTE_COMM;
	fi->domain_attr->auth_key = malloc(4);
	fi->domain_attr->auth_key_size = 4;
	fi->domain_attr->mr_cnt = 7;
	fi->ep_attr->auth_key = malloc(2);
	fi->ep_attr->auth_key_size = 2;
	fi->nic = fd_nic_alloc();
	return fi;
}

static void test_rules(void)
{
	struct fi_info *fi;

	CHECK(fd_caps_unknown_to(FI_VERSION(1, 17)) == 0);
	CHECK(fd_caps_unknown_to(FI_VERSION(1, 9)) == 0);
	CHECK(fd_caps_unknown_to(FI_VERSION(1, 8)) == (FI_COLLECTIVE | FI_HMEM));

	/* 1.8: knows nic and 1.5 fields, not traffic classes or 1.9 caps */
	fi = full_entry();
	CHECK(fi && fi->nic);
	if (fi) {
		fd_info_for_version(fi, FI_VERSION(1, 8));
		CHECK(fi->nic != NULL);
		CHECK(fi->tx_attr->tclass == 0 && fi->domain_attr->tclass == 0);
		CHECK(fi->domain_attr->auth_key_size == 4);
		CHECK(fi->caps == (FI_MSG | FI_LOCAL_COMM | FI_RMA_PMEM |
				   FI_VARIABLE_MSG | FI_SOURCE_ERR));
		fi_freeinfo(fi);
	}

	/* 1.6: no nic, no FI_VARIABLE_MSG */
	fi = full_entry();
	if (fi) {
		fd_info_for_version(fi, FI_VERSION(1, 6));
		CHECK(fi->nic == NULL);
		CHECK(fi->caps == (FI_MSG | FI_LOCAL_COMM | FI_RMA_PMEM |
				   FI_SOURCE_ERR));
		CHECK(fi->domain_attr->mr_cnt == 7);
		fi_freeinfo(fi);
	}

	/* 1.0: nothing newer than 1.0 (keys freed, not leaked) */
	fi = full_entry();
	if (fi) {
		fd_info_for_version(fi, FI_VERSION(1, 0));
		CHECK(fi->caps == FI_MSG);
		CHECK(fi->tx_attr->caps == FI_MSG && fi->rx_attr->caps == FI_MSG);
		CHECK(fi->domain_attr->caps == 0);
		CHECK(fi->domain_attr->auth_key == NULL);
		CHECK(fi->domain_attr->auth_key_size == 0);
		CHECK(fi->ep_attr->auth_key == NULL);
		CHECK(fi->ep_attr->auth_key_size == 0);
		CHECK(fi->domain_attr->mr_cnt == 0);
		CHECK(fi->nic == NULL);
		fi_freeinfo(fi);
	}
}

int main(void)
{
	test_current();
	test_1_4();
	test_too_new();
	test_rules();
	if (fdt_check_failures) {
		fprintf(stderr, "%d check(s) failed\n", fdt_check_failures);
		return 1;
	}
	printf("version negotiation: all checks passed\n");
	return 0;
}
