/* Kernel objects a process holds: its open file descriptors
 * (/proc/PID/fd) and the RDMA resources the kernel tracks for it (`rdma
 * res show`, iproute2). For tests and the benchmarks: no libfabric or
 * verbs call, so it also counts another process (a peer, a killed one). */
#ifndef FDT_RES_H
#define FDT_RES_H

#include <sys/types.h>

struct fdt_res {
	int fds;
	/* -1 when `rdma` is not installed or lists nothing at all */
	int pd, cq, qp, mr, cm_id;
};

/* Counts pid's objects (0: this process; -1: the RDMA objects of every
 * process, fds -1). Returns 0, or -1 when /proc/PID/fd cannot be read. */
int fdt_res_count(pid_t pid, struct fdt_res *out);

/* The same for only the RDMA objects in `what` (each `rdma` run takes a
 * while in an emulated guest); the others are -1. */
#define FDT_RES_PD	0x1u
#define FDT_RES_CQ	0x2u
#define FDT_RES_QP	0x4u
#define FDT_RES_MR	0x8u
#define FDT_RES_CM_ID	0x10u
#define FDT_RES_ALL	0x1fu
int fdt_res_count_some(pid_t pid, struct fdt_res *out, unsigned int what);

/* b - a, field by field (a -1 on either side gives -1). */
struct fdt_res fdt_res_delta(const struct fdt_res *a, const struct fdt_res *b);

/* One line: "fds N pd N cq N qp N mr N cm_id N" ("-" for unknown). */
void fdt_res_format(char *buf, size_t len, const struct fdt_res *r);

#endif
