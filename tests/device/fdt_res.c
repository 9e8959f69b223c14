#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fdt_res.h"

static int count_fds(pid_t pid)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.')
			n++;
	closedir(dir);
	/* the directory stream's own descriptor, when counting ourselves */
	return pid == getpid() ? n - 1 : n;
}

/* Lines of `rdma res show TYPE` that name pid ("... pid N ...", any pid
 * when pid < 0); kernel objects name no pid and are not counted. */
static int count_rdma(const char *type, pid_t pid)
{
	char cmd[96], line[1024], want[32];
	FILE *f;
	int n = 0, any = 0;

	snprintf(cmd, sizeof(cmd), "rdma res show %s 2>/dev/null", type);
	if (pid < 0)
		snprintf(want, sizeof(want), " pid ");
	else
		snprintf(want, sizeof(want), " pid %d ", (int)pid);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		size_t len = strlen(line);

		any = 1;
		/* make the last field end in a space too */
		if (len && line[len - 1] == '\n')
			line[len - 1] = ' ';
		if (strstr(line, want))
			n++;
	}
	if (pclose(f) != 0 && !any)
		return -1;
	return n;
}

int fdt_res_count_some(pid_t pid, struct fdt_res *out, unsigned int what)
{
	if (!pid)
		pid = getpid();
	out->fds = pid < 0 ? -1 : count_fds(pid);
	if (pid >= 0 && out->fds < 0)
		return -1;
	out->pd = what & FDT_RES_PD ? count_rdma("pd", pid) : -1;
	out->cq = what & FDT_RES_CQ ? count_rdma("cq", pid) : -1;
	out->qp = what & FDT_RES_QP ? count_rdma("qp", pid) : -1;
	out->mr = what & FDT_RES_MR ? count_rdma("mr", pid) : -1;
	out->cm_id = what & FDT_RES_CM_ID ? count_rdma("cm_id", pid) : -1;
	return 0;
}

int fdt_res_count(pid_t pid, struct fdt_res *out)
{
	return fdt_res_count_some(pid, out, FDT_RES_ALL);
}

static int delta(int a, int b)
{
	return a < 0 || b < 0 ? -1 : b - a;
}

struct fdt_res fdt_res_delta(const struct fdt_res *a, const struct fdt_res *b)
{
	struct fdt_res d = {
		.fds = b->fds - a->fds,
		.pd = delta(a->pd, b->pd),
		.cq = delta(a->cq, b->cq),
		.qp = delta(a->qp, b->qp),
		.mr = delta(a->mr, b->mr),
		.cm_id = delta(a->cm_id, b->cm_id),
	};

	return d;
}

void fdt_res_format(char *buf, size_t len, const struct fdt_res *r)
{
	char f[5][16];
	const int v[5] = { r->pd, r->cq, r->qp, r->mr, r->cm_id };

	for (int i = 0; i < 5; i++) {
		if (v[i] < 0)
			snprintf(f[i], sizeof(f[i]), "-");
		else
			snprintf(f[i], sizeof(f[i]), "%d", v[i]);
	}
	snprintf(buf, len, "fds %d pd %s cq %s qp %s mr %s cm_id %s",
		 r->fds, f[0], f[1], f[2], f[3], f[4]);
}
