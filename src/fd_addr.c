/*
 * Address helpers: sockaddr sizes, the FI_ADDR_STR text form used by
 * fi_tostr, and parsing that text form back (fi_getinfo accepts it as node).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <infiniband/ib.h>

#include "fd_core.h"

size_t fd_sockaddr_len(const struct sockaddr *sa)
{
	if (!sa)
		return 0;
	switch (sa->sa_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	case AF_IB:
		return sizeof(struct sockaddr_ib);
	default:
		return 0;
	}
}

uint32_t fd_sockaddr_format(const struct sockaddr *sa)
{
	if (!sa)
		return FI_FORMAT_UNSPEC;
	switch (sa->sa_family) {
	case AF_INET:
		return FI_SOCKADDR_IN;
	case AF_INET6:
		return FI_SOCKADDR_IN6;
	case AF_IB:
		return FI_SOCKADDR_IB;
	default:
		return FI_FORMAT_UNSPEC;
	}
}

/* Read a possibly unaligned value out of an address blob. */
static uint64_t fd_get_u64(const void *p, size_t idx)
{
	uint64_t v;

	memcpy(&v, (const char *)p + idx * sizeof(v), sizeof(v));
	return v;
}

/*
 * The sockaddr kinds are printed by their family, not by addr_format:
 * FI_SOCKADDR says nothing about the family, and a mislabelled address
 * is better shown as what it is than decoded wrongly.
 */
static void fd_sockaddr_str(char *buf, size_t len, const void *addr,
			    size_t addrlen)
{
	char ip[INET6_ADDRSTRLEN];
	sa_family_t family;

	buf[0] = '\0';
	if (addrlen < sizeof(family))
		return;
	memcpy(&family, addr, sizeof(family));

	if (family == AF_INET && addrlen >= sizeof(struct sockaddr_in)) {
		struct sockaddr_in sin;

		memcpy(&sin, addr, sizeof(sin));
		if (inet_ntop(AF_INET, &sin.sin_addr, ip, sizeof(ip)))
			snprintf(buf, len, "fi_sockaddr_in://%s:%u", ip,
				 (unsigned int)ntohs(sin.sin_port));
	} else if (family == AF_INET6 &&
		   addrlen >= sizeof(struct sockaddr_in6)) {
		struct sockaddr_in6 sin6;

		memcpy(&sin6, addr, sizeof(sin6));
		if (inet_ntop(AF_INET6, &sin6.sin6_addr, ip, sizeof(ip)))
			snprintf(buf, len, "fi_sockaddr_in6://[%s]:%u", ip,
				 (unsigned int)ntohs(sin6.sin6_port));
	} else if (family == AF_IB && addrlen >= sizeof(struct sockaddr_ib)) {
		struct sockaddr_ib sib;

		memcpy(&sib, addr, sizeof(sib));
		/* The GID reads naturally in IPv6 notation. */
		if (inet_ntop(AF_INET6, &sib.sib_addr, ip, sizeof(ip)))
			snprintf(buf, len,
				 "fi_sockaddr_ib://[%s]:0x%" PRIx16 ":0x%" PRIx64
				 ":0x%" PRIx64,
				 ip, ntohs(sib.sib_pkey),
				 (uint64_t)be64toh(sib.sib_sid),
				 (uint64_t)be64toh(sib.sib_sid_mask));
	}
}

static void fd_hex_str(char *buf, size_t len, const char *scheme,
		       const void *addr, size_t addrlen)
{
	const unsigned char *p = addr;
	size_t pos;
	int n;

	n = snprintf(buf, len, "%s://", scheme);
	if (n < 0 || (size_t)n >= len)
		return;
	pos = (size_t)n;
	for (size_t i = 0; i < addrlen && pos + 2 < len; i++, pos += 2)
		snprintf(buf + pos, len - pos, "%02x", p[i]);
}

void fd_addr_str(char *buf, size_t len, uint32_t addr_format,
		 const void *addr, size_t addrlen)
{
	if (!buf || !len)
		return;
	buf[0] = '\0';
	if (!addr) {
		snprintf(buf, len, "(null)");
		return;
	}

	switch (addr_format) {
	case FI_SOCKADDR:
	case FI_SOCKADDR_IN:
	case FI_SOCKADDR_IN6:
	case FI_SOCKADDR_IB:
		fd_sockaddr_str(buf, len, addr, addrlen);
		break;
	case FI_ADDR_STR:
		snprintf(buf, len, "%.*s", (int)strnlen(addr, addrlen),
			 (const char *)addr);
		break;
	case FI_ADDR_PSMX:
		if (addrlen >= 8)
			snprintf(buf, len, "fi_addr_psmx://%" PRIx64,
				 fd_get_u64(addr, 0));
		break;
	case FI_ADDR_PSMX2:
		if (addrlen >= 16)
			snprintf(buf, len, "fi_addr_psmx2://%" PRIx64 ":%" PRIx64,
				 fd_get_u64(addr, 0), fd_get_u64(addr, 1));
		break;
	case FI_ADDR_PSMX3:
		if (addrlen >= 32)
			snprintf(buf, len,
				 "fi_addr_psmx3://%" PRIx64 ":%" PRIx64 ":%" PRIx64
				 ":%" PRIx64,
				 fd_get_u64(addr, 0), fd_get_u64(addr, 1),
				 fd_get_u64(addr, 2), fd_get_u64(addr, 3));
		else if (addrlen >= 16)
			snprintf(buf, len, "fi_addr_psmx3://%" PRIx64 ":%" PRIx64,
				 fd_get_u64(addr, 0), fd_get_u64(addr, 1));
		break;
	case FI_ADDR_GNI:
		if (addrlen >= 8)
			snprintf(buf, len, "fi_addr_gni://%" PRIx64,
				 fd_get_u64(addr, 0));
		break;
	case FI_ADDR_OPX:
		if (addrlen >= 8)
			snprintf(buf, len, "fi_addr_opx://%016" PRIx64,
				 fd_get_u64(addr, 0));
		break;
	case FI_ADDR_CXI:
		if (addrlen >= 4) {
			uint32_t v;

			memcpy(&v, addr, sizeof(v));
			snprintf(buf, len, "fi_addr_cxi://0x%08" PRIx32, v);
		}
		break;
	case FI_ADDR_BGQ:
		fd_hex_str(buf, len, "fi_addr_bgq", addr, addrlen);
		break;
	case FI_ADDR_MLX:
		fd_hex_str(buf, len, "fi_addr_mlx", addr, addrlen);
		break;
	case FI_ADDR_IB_UD:
		fd_hex_str(buf, len, "fi_addr_ib_ud", addr, addrlen);
		break;
	case FI_ADDR_EFA:
		fd_hex_str(buf, len, "fi_addr_efa", addr, addrlen);
		break;
	default:
		/* FI_FORMAT_UNSPEC and provider formats are opaque. */
		break;
	}
}

/* Split "host:port" / "[v6]:port" (port optional) and fill the sockaddr. */
static int fd_parse_host_port(const char *s, int family, void *addr,
			      size_t *len)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *port = NULL, *end;
	unsigned long portnum = 0;
	size_t hlen;

	if (*s == '[') {
		end = strchr(s, ']');
		if (!end)
			return -FI_EINVAL;
		s++;
		hlen = (size_t)(end - s);
		if (end[1] == ':')
			port = end + 2;
		else if (end[1] != '\0')
			return -FI_EINVAL;
		if (family == AF_UNSPEC)
			family = AF_INET6;
	} else {
		end = strrchr(s, ':');
		/* More than one ':' without brackets is a bare IPv6 address. */
		if (end && memchr(s, ':', (size_t)(end - s)))
			end = NULL;
		hlen = end ? (size_t)(end - s) : strlen(s);
		if (end)
			port = end + 1;
		if (family == AF_UNSPEC)
			family = strchr(s, ':') && !end ? AF_INET6 : AF_INET;
	}
	if (hlen == 0 || hlen >= sizeof(host))
		return -FI_EINVAL;
	memcpy(host, s, hlen);
	host[hlen] = '\0';

	if (port && *port) {
		char *stop;

		portnum = strtoul(port, &stop, 10);
		if (*stop || portnum > 65535 || *port == '-' || *port == '+')
			return -FI_EINVAL;
	} else if (port) {
		return -FI_EINVAL;
	}

	if (family == AF_INET) {
		struct sockaddr_in sin;

		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_port = htons((uint16_t)portnum);
		if (inet_pton(AF_INET, host, &sin.sin_addr) != 1)
			return -FI_EINVAL;
		memcpy(addr, &sin, sizeof(sin));
		*len = sizeof(sin);
	} else {
		struct sockaddr_in6 sin6;

		memset(&sin6, 0, sizeof(sin6));
		sin6.sin6_family = AF_INET6;
		sin6.sin6_port = htons((uint16_t)portnum);
		if (inet_pton(AF_INET6, host, &sin6.sin6_addr) != 1)
			return -FI_EINVAL;
		memcpy(addr, &sin6, sizeof(sin6));
		*len = sizeof(sin6);
	}
	return 0;
}

int fd_str_to_sockaddr(const char *str, uint32_t *fmt, void *addr,
		       size_t *len)
{
	static const struct {
		const char *scheme;
		int family;
	} schemes[] = {
		{ "fi_sockaddr_in://", AF_INET },
		{ "fi_sockaddr_in6://", AF_INET6 },
		{ "fi_sockaddr://", AF_UNSPEC },
	};
	int ret;

	if (!str || !fmt || !addr || !len)
		return -FI_EINVAL;

	for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++) {
		size_t n = strlen(schemes[i].scheme);

		if (strncmp(str, schemes[i].scheme, n))
			continue;
		ret = fd_parse_host_port(str + n, schemes[i].family, addr, len);
		if (ret)
			return ret;
		*fmt = fd_sockaddr_format(addr);
		return 0;
	}
	return -FI_EINVAL;
}
