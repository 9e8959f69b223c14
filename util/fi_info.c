/*
 * fd_fi_info: what this library's fi_getinfo offers, printed the way
 * libfabric's own fi_info tool prints it.
 *
 * The options, the summary/verbose/-e/-l layouts and the exit codes follow
 * fi_info 1.17 (Debian's libfabric-bin) so that scripts and habits carry
 * over; the two are compared side by side on Soft-RoCE.  Deliberate
 * differences are listed in docs/fi_direct_verbs.7.md ("fd_fi_info").
 *
 * Only the public API is used, so this file also builds against upstream
 * libfabric, which is how its output was checked.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* getopt_long, strcasestr */
#endif
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#ifdef FD_UTIL_BUILD_INFO
#include <fdv/fdv_config.h>
#endif

#ifndef FD_UTIL_VERSION
#define FD_UTIL_VERSION "unknown"
#endif

static const char *prog = "fi_info";

/* ------------------------------------------------------------------------
 * Names the user may type.  Matching ignores case, and the "FI_" prefix
 * may be left out ("msg|rma" works as well as "FI_MSG|FI_RMA").
 * ---------------------------------------------------------------------- */
struct name_val {
	const char *name;
	uint64_t val;
};

#define NV(x) { #x, (uint64_t)(x) }

static const struct name_val cap_names[] = {
	NV(FI_MSG), NV(FI_RMA), NV(FI_TAGGED), NV(FI_ATOMIC),
	NV(FI_MULTICAST), NV(FI_COLLECTIVE), NV(FI_READ), NV(FI_WRITE),
	NV(FI_RECV), NV(FI_SEND), NV(FI_REMOTE_READ), NV(FI_REMOTE_WRITE),
	NV(FI_MULTI_RECV), NV(FI_REMOTE_CQ_DATA), NV(FI_TRIGGER), NV(FI_FENCE),
	NV(FI_XPU_TRIGGER), NV(FI_HMEM), NV(FI_VARIABLE_MSG), NV(FI_RMA_PMEM),
	NV(FI_SOURCE_ERR), NV(FI_LOCAL_COMM), NV(FI_REMOTE_COMM),
	NV(FI_SHARED_AV), NV(FI_RMA_EVENT), NV(FI_SOURCE),
	NV(FI_NAMED_RX_CTX), NV(FI_DIRECTED_RECV),
	{ NULL, 0 }
};

static const struct name_val mode_names[] = {
	NV(FI_CONTEXT), NV(FI_MSG_PREFIX), NV(FI_ASYNC_IOV), NV(FI_RX_CQ_DATA),
	NV(FI_LOCAL_MR), NV(FI_NOTIFY_FLAGS_ONLY), NV(FI_RESTRICTED_COMP),
	NV(FI_CONTEXT2), NV(FI_BUFFERED_RECV),
	{ NULL, 0 }
};

static const struct name_val ep_type_names[] = {
	NV(FI_EP_UNSPEC), NV(FI_EP_MSG), NV(FI_EP_DGRAM), NV(FI_EP_RDM),
	NV(FI_EP_SOCK_STREAM), NV(FI_EP_SOCK_DGRAM),
	{ NULL, 0 }
};

static const struct name_val addr_format_names[] = {
	NV(FI_FORMAT_UNSPEC), NV(FI_SOCKADDR), NV(FI_SOCKADDR_IN),
	NV(FI_SOCKADDR_IN6), NV(FI_SOCKADDR_IB), NV(FI_ADDR_PSMX),
	NV(FI_ADDR_GNI), NV(FI_ADDR_BGQ), NV(FI_ADDR_MLX), NV(FI_ADDR_STR),
	NV(FI_ADDR_PSMX2), NV(FI_ADDR_IB_UD), NV(FI_ADDR_EFA),
	NV(FI_ADDR_PSMX3), NV(FI_ADDR_OPX), NV(FI_ADDR_CXI),
	{ NULL, 0 }
};

static int lookup(const struct name_val *tab, const char *s, size_t len,
		  uint64_t *val)
{
	for (; tab->name; tab++) {
		const char *n = tab->name;

		if (strlen(n) == len && !strncasecmp(n, s, len))
			goto found;
		n += 3;		/* without "FI_" */
		if (strlen(n) == len && !strncasecmp(n, s, len))
			goto found;
		continue;
found:
		*val = tab->val;
		return 0;
	}
	return -1;
}

/* "A|B|C" (blanks around the names allowed) into the OR of the values. */
static int parse_flags(const struct name_val *tab, const char *what,
		       const char *arg, uint64_t *out)
{
	const char *p = arg;

	*out = 0;
	for (;;) {
		size_t len;
		uint64_t v;

		while (*p == ' ' || *p == '\t')
			p++;
		len = strcspn(p, "|");
		while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		if (lookup(tab, p, len, &v)) {
			fprintf(stderr, "error: Unrecognized %s: %.*s\n",
				what, (int)len, p);
			return -1;
		}
		*out |= v;
		p = strchr(p, '|');
		if (!p)
			return 0;
		p++;
	}
}

static int parse_one(const struct name_val *tab, const char *what,
		     const char *arg, uint64_t *out)
{
	if (lookup(tab, arg, strlen(arg), out)) {
		fprintf(stderr, "error: Unrecognized %s: %s\n", what, arg);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * Output
 * ---------------------------------------------------------------------- */
static void print_summary(const struct fi_info *fi)
{
	const struct fi_fabric_attr *fa = fi->fabric_attr;
	const struct fi_domain_attr *da = fi->domain_attr;
	const struct fi_ep_attr *ea = fi->ep_attr;

	printf("provider: %s\n", fa && fa->prov_name ? fa->prov_name :
	       "(null)");
	printf("    fabric: %s\n", fa && fa->name ? fa->name : "(null)");
	printf("    domain: %s\n", da && da->name ? da->name : "(null)");
	printf("    version: %u.%u\n", fa ? FI_MAJOR(fa->prov_version) : 0,
	       fa ? FI_MINOR(fa->prov_version) : 0);
	if (ea) {
		printf("    type: %s\n", fi_tostr(&ea->type, FI_TYPE_EP_TYPE));
		printf("    protocol: %s\n",
		       fi_tostr(&ea->protocol, FI_TYPE_PROTOCOL));
	}
}

static void print_verbose(const struct fi_info *fi)
{
	printf("---\n");
	printf("%s", fi_tostr(fi, FI_TYPE_INFO));
}

static int print_infos(const struct fi_info *list, int verbose,
		       const char *substr)
{
	for (const struct fi_info *fi = list; fi; fi = fi->next) {
		if (substr) {
			if (!strstr(fi_tostr(fi, FI_TYPE_INFO), substr))
				continue;
			print_verbose(fi);
		} else if (verbose) {
			print_verbose(fi);
		} else {
			print_summary(fi);
		}
	}
	return 0;
}

/* One line per provider, as each answers FI_PROV_ATTR_ONLY. */
static int list_providers(uint32_t version, int verbose)
{
	struct fi_info *list = NULL;
	int ret;

	ret = fi_getinfo(version, NULL, NULL, FI_PROV_ATTR_ONLY, NULL, &list);
	if (ret) {
		fprintf(stderr, "fi_getinfo: %d (%s)\n", ret,
			fi_strerror(-ret));
		return -ret;
	}
	for (struct fi_info *fi = list; fi; fi = fi->next) {
		const char *name = fi->fabric_attr->prov_name;
		int seen = 0;

		if (verbose) {
			print_verbose(fi);
			continue;
		}
		for (struct fi_info *p = list; p != fi && !seen; p = p->next)
			seen = p->fabric_attr->prov_name && name &&
			       !strcmp(p->fabric_attr->prov_name, name);
		if (seen)
			continue;
		printf("%s:\n", name ? name : "(null)");
		printf("    version: %u.%u\n",
		       FI_MAJOR(fi->fabric_attr->prov_version),
		       FI_MINOR(fi->fabric_attr->prov_version));
	}
	fi_freeinfo(list);
	return 0;
}

static const char *param_type_name(enum fi_param_type t)
{
	switch (t) {
	case FI_PARAM_STRING:
		return "String";
	case FI_PARAM_INT:
		return "Integer";
	case FI_PARAM_BOOL:
		return "Boolean (0/1, on/off, true/false, yes/no)";
	case FI_PARAM_SIZE_T:
		return "size_t";
	}
	return "Unknown";
}

/*
 * Every variable the library reads: name and type, help text, and the
 * value it has now (only when set).  A value with blanks in it is quoted
 * so that the line can be pasted into a shell.
 */
static int list_params(const char *substr)
{
	struct fi_param *params = NULL;
	int count = 0, ret;

	ret = fi_getparams(&params, &count);
	if (ret) {
		fprintf(stderr, "fi_getparams: %d (%s)\n", ret,
			fi_strerror(-ret));
		return -ret;
	}
	for (int i = 0; i < count; i++) {
		const struct fi_param *p = &params[i];

		if (substr && !strcasestr(p->name, substr))
			continue;
		printf("# %s: %s\n", p->name, param_type_name(p->type));
		printf("# %s\n", p->help_string ? p->help_string : "");
		if (p->value) {
			const char *q = strpbrk(p->value, " \t") ? "\"" : "";

			printf("%s=%s%s%s\n", p->name, q, p->value, q);
		}
		printf("\n");
	}
	fi_freeparams(params);
	return 0;
}

static void print_version(void)
{
	uint32_t v = fi_version();

	printf("%s: %s\n", prog, FD_UTIL_VERSION);
	printf("libfabric: %u.%u.%u\n", FI_MAJOR(v), FI_MINOR(v),
	       FI_REVISION_VERSION);
	printf("libfabric api: %u.%u\n", FI_MAJOR_VERSION, FI_MINOR_VERSION);
#ifdef FD_UTIL_BUILD_INFO
	printf("fabric-direct: %s, data path: %s, threading: %s, "
	       "rstream: %s\n", FD_UTIL_VERSION,
#ifdef FABRIC_DIRECT
	       "direct (FABRIC_DIRECT=verbs)",
#else
	       "ops tables (FABRIC_DIRECT=OFF)",
#endif
	       FDV_THREAD_SAFE ? "FI_THREAD_SAFE" : "FI_THREAD_DOMAIN",
	       FD_HAVE_RSTREAM ? "yes" : "no");
#endif
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s\n"
"  -h, --help\t\t\tdisplay this help and exit\n"
"  -s, --src_addr=ADDR\t\tsource name or address\n"
"  -n, --node=NAME\t\tdest node name or address\n"
"  -P, --port=PNUM\t\tport number\n"
"  -c, --caps=CAP1|CAP2..\tone or more capabilities: FI_MSG|FI_RMA...\n"
"  -m, --mode=MOD1|MOD2..\tone or more modes, default all modes\n"
"  -t, --ep_type=EPTYPE\t\tspecify single endpoint type: FI_EP_MSG, "
"FI_EP_DGRAM...\n"
"  -d, --domain=DOMAIN\t\tspecify the domain name\n"
"  -f, --fabric=FABRIC\t\tspecify the fabric name\n"
"  -a, --addr_format=FMT\t\tspecify accepted address format: "
"FI_FORMAT_UNSPEC, FI_SOCKADDR...\n"
"  -p, --provider=PROV\t\tspecify provider explicitly\n"
"  -e, --env\t\t\tprint libfabric environment variables\n"
"  -g, --getenv=SUBSTR\t\tprint libfabric environment variables with "
"substr\n"
"  -i, --info=SUBSTR\t\tprint fi_info structures containing substr\n"
"  -l, --list\t\t\tlist available libfabric providers\n"
"  -v, --verbose\t\t\tverbose output\n"
"  --version\t\t\tprint version info and exit\n", prog);
}

static char *xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d) {
		fprintf(stderr, "%s: out of memory\n", prog);
		exit(ENOMEM);
	}
	return d;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "src_addr", required_argument, NULL, 's' },
		{ "node", required_argument, NULL, 'n' },
		{ "port", required_argument, NULL, 'P' },
		{ "caps", required_argument, NULL, 'c' },
		{ "mode", required_argument, NULL, 'm' },
		{ "ep_type", required_argument, NULL, 't' },
		{ "domain", required_argument, NULL, 'd' },
		{ "fabric", required_argument, NULL, 'f' },
		{ "addr_format", required_argument, NULL, 'a' },
		{ "provider", required_argument, NULL, 'p' },
		{ "env", no_argument, NULL, 'e' },
		{ "getenv", required_argument, NULL, 'g' },
		{ "info", required_argument, NULL, 'i' },
		{ "list", no_argument, NULL, 'l' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const uint32_t version = FI_VERSION(FI_MAJOR_VERSION,
					    FI_MINOR_VERSION);
	const char *node = NULL, *service = NULL, *env_substr = NULL;
	const char *info_substr = NULL;
	int verbose = 0, env = 0, list = 0, opt, ret;
	struct fi_info *hints, *info = NULL;
	uint64_t flags = 0, v;

	if (argv[0] && *argv[0]) {
		const char *slash = strrchr(argv[0], '/');

		prog = slash ? slash + 1 : argv[0];
	}

	hints = fi_allocinfo();
	if (!hints) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return ENOMEM;
	}
	/*
	 * As fi_info does: an application that copes with every mode and
	 * every registration requirement, so the listing shows what the
	 * providers have rather than what a particular application accepts.
	 */
	hints->mode = ~0ULL;
	hints->domain_attr->mode = ~0ULL;
	hints->domain_attr->mr_mode = ~(FI_MR_BASIC | FI_MR_SCALABLE);

	while ((opt = getopt_long(argc, argv, "s:n:P:c:m:t:a:p:d:f:eg:i:lvh",
				  longopts, NULL)) != -1) {
		switch (opt) {
		case 's':
			/* a local address: the listing is for a listener */
			node = optarg;
			flags |= FI_SOURCE;
			break;
		case 'n':
			node = optarg;
			break;
		case 'P':
			service = optarg;
			break;
		case 'c':
			if (parse_flags(cap_names, "capability", optarg,
					&hints->caps))
				return EINVAL;
			break;
		case 'm':
			if (parse_flags(mode_names, "mode", optarg,
					&hints->mode))
				return EINVAL;
			break;
		case 't':
			if (parse_one(ep_type_names, "endpoint type", optarg,
				      &v))
				return EINVAL;
			hints->ep_attr->type = (enum fi_ep_type)v;
			break;
		case 'a':
			if (parse_one(addr_format_names, "address format",
				      optarg, &v))
				return EINVAL;
			hints->addr_format = (uint32_t)v;
			break;
		case 'p':
			free(hints->fabric_attr->prov_name);
			hints->fabric_attr->prov_name = xstrdup(optarg);
			break;
		case 'd':
			free(hints->domain_attr->name);
			hints->domain_attr->name = xstrdup(optarg);
			break;
		case 'f':
			free(hints->fabric_attr->name);
			hints->fabric_attr->name = xstrdup(optarg);
			break;
		case 'e':
			env = 1;
			break;
		case 'g':
			env = 1;
			env_substr = optarg;
			break;
		case 'i':
			info_substr = optarg;
			break;
		case 'l':
			list = 1;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'V':
			print_version();
			fi_freeinfo(hints);
			return 0;
		case 'h':
			usage(stdout);
			fi_freeinfo(hints);
			return 0;
		default:
			usage(stdout);
			fi_freeinfo(hints);
			return 1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", prog,
			argv[optind]);
		usage(stdout);
		fi_freeinfo(hints);
		return 1;
	}

	if (env) {
		ret = list_params(env_substr);
		goto out;
	}
	if (list) {
		ret = list_providers(version, verbose);
		goto out;
	}

	ret = fi_getinfo(version, node, service, flags, hints, &info);
	if (ret) {
		fprintf(stderr, "fi_getinfo: %d (%s)\n", ret,
			fi_strerror(-ret));
		ret = -ret;
		goto out;
	}
	ret = print_infos(info, verbose, info_substr);
	fi_freeinfo(info);
out:
	fi_freeinfo(hints);
	return ret;
}
