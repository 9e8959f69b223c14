/* The arithmetic of RDM atomics, applied by the target (fdm_atomic.c):
 * which operation goes with which datatype (one table, upstream's
 * choices: bitwise operations and FI_MSWAP on integers only, the ordering
 * ones - min, max, <, <= ... - not on complex numbers), what each computes
 * (fi_atomic(3)), and the update of the target's memory.
 *
 * Each element is updated with a compare-and-swap loop on its bytes, so
 * that it is atomic against the target's CPU and anything else updating
 * it with atomic instructions, not only against this layer. The one
 * exception is FI_DOUBLE_COMPLEX (16 bytes, no portable 16-byte CAS): it
 * is read and written plainly, atomic against this layer's other atomics
 * on the domain, which the target applies one at a time. */
#include <string.h>

#include "fdm_atomic.h"
#include "fdm_ep.h"	/* FDM_EAGER_MAX */
#include "fdm_proto.h"	/* FDM_ATOMIC_DESC_LEN */

/* datatype classes */
#define FDM_C_INT	1u
#define FDM_C_REAL	2u	/* FI_FLOAT, FI_DOUBLE */
#define FDM_C_CPLX	4u	/* FI_FLOAT_COMPLEX, FI_DOUBLE_COMPLEX */
#define FDM_C_ALL	(FDM_C_INT | FDM_C_REAL | FDM_C_CPLX)
#define FDM_C_ORDERED	(FDM_C_INT | FDM_C_REAL)

/* The classes each operation is defined for. */
static const uint8_t fdm_op_classes[FI_ATOMIC_OP_LAST] = {
	[FI_MIN] = FDM_C_ORDERED,
	[FI_MAX] = FDM_C_ORDERED,
	[FI_SUM] = FDM_C_ALL,
	[FI_PROD] = FDM_C_ALL,
	[FI_LOR] = FDM_C_ALL,
	[FI_LAND] = FDM_C_ALL,
	[FI_BOR] = FDM_C_INT,
	[FI_BAND] = FDM_C_INT,
	[FI_LXOR] = FDM_C_ALL,
	[FI_BXOR] = FDM_C_INT,
	[FI_ATOMIC_READ] = FDM_C_ALL,
	[FI_ATOMIC_WRITE] = FDM_C_ALL,
	[FI_CSWAP] = FDM_C_ALL,
	[FI_CSWAP_NE] = FDM_C_ALL,
	[FI_CSWAP_LE] = FDM_C_ORDERED,
	[FI_CSWAP_LT] = FDM_C_ORDERED,
	[FI_CSWAP_GE] = FDM_C_ORDERED,
	[FI_CSWAP_GT] = FDM_C_ORDERED,
	[FI_MSWAP] = FDM_C_INT,
};

static unsigned fdm_dt_class(unsigned dt)
{
	switch (dt) {
	case FI_INT8: case FI_UINT8: case FI_INT16: case FI_UINT16:
	case FI_INT32: case FI_UINT32: case FI_INT64: case FI_UINT64:
		return FDM_C_INT;
	case FI_FLOAT: case FI_DOUBLE:
		return FDM_C_REAL;
	case FI_FLOAT_COMPLEX: case FI_DOUBLE_COMPLEX:
		return FDM_C_CPLX;
	default:
		return 0;
	}
}

size_t fdm_atomic_dt_size(unsigned dt)
{
	switch (dt) {
	case FI_INT8: case FI_UINT8:
		return 1;
	case FI_INT16: case FI_UINT16:
		return 2;
	case FI_INT32: case FI_UINT32: case FI_FLOAT:
		return 4;
	case FI_INT64: case FI_UINT64: case FI_DOUBLE: case FI_FLOAT_COMPLEX:
		return 8;
	case FI_DOUBLE_COMPLEX:
		return 16;
	default:
		return 0;
	}
}

size_t fdm_atomic_align(unsigned dt)
{
	size_t size = fdm_atomic_dt_size(dt);

	return size > 8 ? 8 : size;
}

bool fdm_atomic_ok(unsigned kind, unsigned op, unsigned dt)
{
	if (op >= FI_ATOMIC_OP_LAST || !(fdm_op_classes[op] & fdm_dt_class(dt)))
		return false;
	switch (kind) {
	case FDM_AK_WRITE:	/* everything that needs no answer */
		return op <= FI_BXOR || op == FI_ATOMIC_WRITE;
	case FDM_AK_FETCH:
		return op <= FI_ATOMIC_WRITE;
	case FDM_AK_COMPARE:
		return op >= FI_CSWAP;
	default:
		return false;
	}
}

size_t fdm_atomic_max_count(unsigned kind, unsigned dt)
{
	size_t size = fdm_atomic_dt_size(dt);

	if (!size)
		return 0;
	/* the answer (count * size) is smaller than the request */
	return (FDM_EAGER_MAX - FDM_ATOMIC_DESC_LEN) /
		(kind == FDM_AK_COMPARE ? 2 * size : size);
}

/* ---- one element: old value o, operand v, compare c -> new value r.
 * False when the location is to stay as it is (a read, a compare that
 * does not hold). Values come and go as bytes: no alignment assumed. */
typedef bool (*fdm_calc_fn)(unsigned op, const void *po, const void *pv,
			    const void *pc, void *pr);

/* The real types (integers, float, double): one body, with what differs
 * as arguments. SUM and PROD are the expressions of the two; EXTRA the
 * integer-only cases (bitwise, FI_MSWAP; the table keeps the others from
 * reaching them). The logical operations treat nonzero as true and give
 * 1 or 0. */
#define FDM_SCALAR_CALC(name, T, SUM, PROD, EXTRA)				\
static bool name(unsigned op, const void *po, const void *pv, const void *pc, \
		 void *pr)							\
{										\
	T o, v, c, r;								\
										\
	memcpy(&o, po, sizeof(T));						\
	memcpy(&v, pv, sizeof(T));						\
	memcpy(&c, pc, sizeof(T));						\
	switch (op) {								\
	case FI_MIN: r = v < o ? v : o; break;					\
	case FI_MAX: r = v > o ? v : o; break;					\
	case FI_SUM: r = SUM; break;						\
	case FI_PROD: r = PROD; break;						\
	case FI_LOR: r = (T)(o != 0 || v != 0); break;				\
	case FI_LAND: r = (T)(o != 0 && v != 0); break;				\
	case FI_LXOR: r = (T)((o != 0) != (v != 0)); break;			\
	case FI_ATOMIC_WRITE: r = v; break;					\
	case FI_CSWAP: if (!(c == o)) return false; r = v; break;		\
	case FI_CSWAP_NE: if (!(c != o)) return false; r = v; break;		\
	case FI_CSWAP_LE: if (!(c <= o)) return false; r = v; break;		\
	case FI_CSWAP_LT: if (!(c < o)) return false; r = v; break;		\
	case FI_CSWAP_GE: if (!(c >= o)) return false; r = v; break;		\
	case FI_CSWAP_GT: if (!(c > o)) return false; r = v; break;		\
	EXTRA									\
	default: return false;		/* FI_ATOMIC_READ */			\
	}									\
	memcpy(pr, &r, sizeof(T));						\
	return true;								\
}

/* Integers wrap as their unsigned type does: sums and products are taken
 * in 64-bit unsigned arithmetic and truncated, never overflowing a signed
 * type (undefined in C) or an int after promotion. */
#define FDM_INT_CALC(name, T, UT)						\
	FDM_SCALAR_CALC(name, T,						\
		(T)(UT)((uint64_t)(UT)o + (uint64_t)(UT)v),			\
		(T)(UT)((uint64_t)(UT)o * (uint64_t)(UT)v),			\
		case FI_BOR: r = (T)(o | v); break;				\
		case FI_BAND: r = (T)(o & v); break;				\
		case FI_BXOR: r = (T)(o ^ v); break;				\
		case FI_MSWAP: r = (T)((v & c) | (o & ~c)); break;)

#define FDM_REAL_CALC(name, T) FDM_SCALAR_CALC(name, T, o + v, o * v, )

/* Complex numbers as two T (C99's layout: real, imaginary): sums,
 * products, the logical operations (nonzero: either part), write, equal
 * and not equal. */
#define FDM_CPLX_CALC(name, T)							\
static bool name(unsigned op, const void *po, const void *pv, const void *pc, \
		 void *pr)							\
{										\
	T o[2], v[2], c[2], r[2];						\
	bool on, vn, eq;							\
										\
	memcpy(o, po, sizeof(o));						\
	memcpy(v, pv, sizeof(v));						\
	memcpy(c, pc, sizeof(c));						\
	on = o[0] != 0 || o[1] != 0;						\
	vn = v[0] != 0 || v[1] != 0;						\
	eq = c[0] == o[0] && c[1] == o[1];					\
	r[1] = 0;								\
	switch (op) {								\
	case FI_SUM: r[0] = o[0] + v[0]; r[1] = o[1] + v[1]; break;		\
	case FI_PROD:								\
		r[0] = o[0] * v[0] - o[1] * v[1];				\
		r[1] = o[0] * v[1] + o[1] * v[0];				\
		break;								\
	case FI_LOR: r[0] = on || vn; break;					\
	case FI_LAND: r[0] = on && vn; break;					\
	case FI_LXOR: r[0] = on != vn; break;					\
	case FI_ATOMIC_WRITE: r[0] = v[0]; r[1] = v[1]; break;			\
	case FI_CSWAP: if (!eq) return false; r[0] = v[0]; r[1] = v[1]; break;	\
	case FI_CSWAP_NE: if (eq) return false; r[0] = v[0]; r[1] = v[1]; break; \
	default: return false;							\
	}									\
	memcpy(pr, r, sizeof(r));						\
	return true;								\
}

FDM_INT_CALC(fdm_calc_i8, int8_t, uint8_t)
FDM_INT_CALC(fdm_calc_u8, uint8_t, uint8_t)
FDM_INT_CALC(fdm_calc_i16, int16_t, uint16_t)
FDM_INT_CALC(fdm_calc_u16, uint16_t, uint16_t)
FDM_INT_CALC(fdm_calc_i32, int32_t, uint32_t)
FDM_INT_CALC(fdm_calc_u32, uint32_t, uint32_t)
FDM_INT_CALC(fdm_calc_i64, int64_t, uint64_t)
FDM_INT_CALC(fdm_calc_u64, uint64_t, uint64_t)
FDM_REAL_CALC(fdm_calc_flt, float)
FDM_REAL_CALC(fdm_calc_dbl, double)
FDM_CPLX_CALC(fdm_calc_cflt, float)
FDM_CPLX_CALC(fdm_calc_cdbl, double)

static const fdm_calc_fn fdm_calc[] = {
	[FI_INT8] = fdm_calc_i8,
	[FI_UINT8] = fdm_calc_u8,
	[FI_INT16] = fdm_calc_i16,
	[FI_UINT16] = fdm_calc_u16,
	[FI_INT32] = fdm_calc_i32,
	[FI_UINT32] = fdm_calc_u32,
	[FI_INT64] = fdm_calc_i64,
	[FI_UINT64] = fdm_calc_u64,
	[FI_FLOAT] = fdm_calc_flt,
	[FI_DOUBLE] = fdm_calc_dbl,
	[FI_FLOAT_COMPLEX] = fdm_calc_cflt,
	[FI_DOUBLE_COMPLEX] = fdm_calc_cdbl,
};

/* One element of UT's width: compute from what the location holds and
 * store only if it still holds that (else again, from the newer value). */
#define FDM_CAS_ELEM(UT)							\
	do {									\
		UT o_ = __atomic_load_n((UT *)dst, __ATOMIC_ACQUIRE), n_;	\
										\
		while (calc(op, &o_, v, c, &n_) &&				\
		       !__atomic_compare_exchange_n((UT *)dst, &o_, n_, false,	\
						    __ATOMIC_ACQ_REL,		\
						    __ATOMIC_ACQUIRE))		\
			;							\
		if (res)							\
			memcpy(res, &o_, sizeof(UT));				\
	} while (0)

void fdm_atomic_apply(unsigned op, unsigned dt, void *dst_, const void *operand,
		      const void *compare, void *result, size_t count)
{
	static const uint8_t zero[16];
	size_t size = fdm_atomic_dt_size(dt);
	fdm_calc_fn calc = fdm_calc[dt];
	uint8_t *dst = dst_;

	for (size_t i = 0; i < count; i++, dst += size) {
		const void *v = operand ? (const uint8_t *)operand + i * size : zero;
		const void *c = compare ? (const uint8_t *)compare + i * size : zero;
		uint8_t *res = result ? (uint8_t *)result + i * size : NULL;

		switch (size) {
		case 1:
			FDM_CAS_ELEM(uint8_t);
			break;
		case 2:
			FDM_CAS_ELEM(uint16_t);
			break;
		case 4:
			FDM_CAS_ELEM(uint32_t);
			break;
		case 8:
			FDM_CAS_ELEM(uint64_t);
			break;
		default: {
			uint8_t o[16], n[16];

			memcpy(o, dst, size);
			if (calc(op, o, v, c, n))
				memcpy(dst, n, size);
			if (res)
				memcpy(res, o, size);
			break;
		}
		}
	}
}

void fdm_atomic_swab(void *buf, size_t count, unsigned dt)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	size_t size = fdm_atomic_dt_size(dt);
	size_t unit = fdm_dt_class(dt) == FDM_C_CPLX ? size / 2 : size;
	uint8_t *p = buf;

	/* not on the data path of anything but atomics: a plain reversal */
	for (size_t i = 0; i < count * (size / unit); i++, p += unit) {
		for (size_t j = 0; j < unit / 2; j++) {
			uint8_t t = p[j];

			p[j] = p[unit - 1 - j];
			p[unit - 1 - j] = t;
		}
	}
#else
	(void)buf;
	(void)count;
	(void)dt;
#endif
}
