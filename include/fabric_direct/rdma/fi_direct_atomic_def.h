/* Generated from gen/api.spec and include/rdma by gen/gen.py: do not
 * edit; regenerate with `python3 gen/gen.py`. */


#ifndef FD_DIRECT_ATOMIC_DEF_H
#define FD_DIRECT_ATOMIC_DEF_H

/* Included by <rdma/fi_domain.h> under FABRIC_DIRECT. The verbs provider keeps
 * the default definitions here, so this header defines nothing. */

#endif /* FD_DIRECT_ATOMIC_DEF_H */
