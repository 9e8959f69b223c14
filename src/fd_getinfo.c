/*
 * fi_getinfo front end: argument checks, provider selection (hints'
 * prov_name and FI_PROVIDER), and concatenation of what the providers
 * answer.  Providers do the matching themselves with fd_info_check /
 * fd_info_narrow.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fd_core.h"

/* ------------------------------------------------------------------------
 * Provider selection
 * ---------------------------------------------------------------------- */

/*
 * Does 'want' (a user-given name) select provider 'name'?  A layered
 * provider answers to its full name, its core part and its layer part, so
 * "verbs" also lists "verbs;rstream" and "rstream" finds it too.
 */
static int fd_name_selects(const char *name, const char *want, size_t len)
{
	const char *semi;

	if (strlen(name) == len && !strncasecmp(name, want, len))
		return 1;
	semi = strchr(name, ';');
	if (!semi)
		return 0;
	if ((size_t)(semi - name) == len && !strncasecmp(name, want, len))
		return 1;
	return strlen(semi + 1) == len && !strncasecmp(semi + 1, want, len);
}

/* A comma separated list ("verbs,tcp", "^verbs") as FI_PROVIDER takes. */
static int fd_list_selects(const char *name, const char *list)
{
	int negate = 0, found = 0;

	if (*list == '^') {
		negate = 1;
		list++;
	}
	while (*list && !found) {
		size_t n = strcspn(list, ",");

		if (n && fd_name_selects(name, list, n))
			found = 1;
		list += n;
		if (*list == ',')
			list++;
	}
	return negate ? !found : found;
}

static int fd_provider_selected(const struct fd_provider *p,
				const struct fi_info *hints)
{
	char *env = NULL;

	if (fd_param_get_str(NULL, "provider", &env) == 0 &&
	    !fd_list_selects(p->name, env)) {
		FD_INFO(FD_LOG_CORE, "skipping provider %s: not in "
			"FI_PROVIDER=%s", p->name, env);
		return 0;
	}
	if (hints && hints->fabric_attr && hints->fabric_attr->prov_name) {
		const char *want = hints->fabric_attr->prov_name;

		if (!fd_name_selects(p->name, want, strlen(want))) {
			FD_DBG(FD_LOG_CORE, "skipping provider %s: hints ask "
			       "for %s", p->name, want);
			return 0;
		}
	}
	return 1;
}

static int fd_check_hint_addrs(const struct fi_info *hints)
{
	if (!hints)
		return 0;
	if (!hints->src_addr != !hints->src_addrlen) {
		FD_WARN(FD_LOG_CORE, "hints: src_addr and src_addrlen "
			"disagree");
		return -FI_EINVAL;
	}
	if (!hints->dest_addr != !hints->dest_addrlen) {
		FD_WARN(FD_LOG_CORE, "hints: dest_addr and dest_addrlen "
			"disagree");
		return -FI_EINVAL;
	}
	return 0;
}

/* The core stamps what every entry must say whoever produced it. */
static int fd_finish_entries(struct fi_info *list, uint32_t version,
			     const char *prov_name)
{
	for (struct fi_info *fi = list; fi; fi = fi->next) {
		if (!fi->fabric_attr)
			continue;
		fi->fabric_attr->api_version = version;
		if (!fi->fabric_attr->prov_name) {
			fi->fabric_attr->prov_name = strdup(prov_name);
			if (!fi->fabric_attr->prov_name)
				return -FI_ENOMEM;
		}
		if (!fi->fabric_attr->prov_version)
			fi->fabric_attr->prov_version = FD_PROV_VERSION;
	}
	fd_info_for_version(list, version);
	return 0;
}

int fi_getinfo(uint32_t version, const char *node, const char *service,
	       uint64_t flags, const struct fi_info *hints,
	       struct fi_info **info)
{
	struct fi_info *head = NULL, **tail = &head;
	int ret, nomem = 0, nosys = 0;

	if (!info)
		return -FI_EINVAL;
	*info = NULL;
	fd_init();

	if (FI_MAJOR(version) != 1 || version > FD_API_VERSION) {
		FD_INFO(FD_LOG_CORE, "API version %u.%u not supported "
			"(this library implements up to %u.%u)",
			FI_MAJOR(version), FI_MINOR(version),
			FI_MAJOR(FD_API_VERSION), FI_MINOR(FD_API_VERSION));
		return -FI_ENOSYS;
	}
	ret = fd_check_hint_addrs(hints);
	if (ret)
		return ret;

	for (size_t i = 0; i < fd_provider_count; i++) {
		const struct fd_provider *prov = fd_providers[i];
		struct fi_info *cur = NULL;

		if (!fd_provider_selected(prov, hints))
			continue;
		ret = prov->getinfo(version, node, service, flags, hints,
					&cur);
		if (ret) {
			FD_INFO(FD_LOG_CORE, "provider %s: %s", prov->name,
				fi_strerror(-ret));
			if (ret == -FI_ENOMEM)
				nomem = 1;
			/* e.g. a program built against other inline headers */
			if (ret == -FI_ENOSYS)
				nosys = 1;
			/* A provider must not leave anything behind on
			 * failure; be safe if one does. */
			fi_freeinfo(cur);
			continue;
		}
		if (fd_finish_entries(cur, version, prov->name)) {
			fi_freeinfo(cur);
			nomem = 1;
			continue;
		}
		*tail = cur;
		while (*tail)
			tail = &(*tail)->next;
	}

	if (!head)
		return nomem ? -FI_ENOMEM : nosys ? -FI_ENOSYS : -FI_ENODATA;
	*info = head;
	return 0;
}
