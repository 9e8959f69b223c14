/* libFuzzer target: the rstream message decoder and the flow accounting
 * behind it, fed a sequence of arbitrary receive completions (kind,
 * length, word) as a hostile peer could produce them, interleaved with
 * local sends, completions and reads. Whatever arrives, the decoder must
 * not crash and the state must keep its invariants: nothing beyond the
 * ring we reported free, no more credits than the peer has, nothing freed
 * that was not sent. A message refused once ends the connection, as the
 * library does. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fdr_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t take32(const uint8_t **p, size_t *left)
{
	uint32_t v = 0;

	for (int i = 0; i < 4; i++) {
		v <<= 8;
		if (*left) {
			v |= **p;
			(*p)++;
			(*left)--;
		}
	}
	return v;
}

static void check(const struct fdr_flow *f)
{
	if (f->rx_arrived - f->rx_reported > f->rx_ring ||
	    f->rx_read > f->rx_arrived || f->rx_reported > f->rx_read ||
	    f->credits > f->peer_credits || f->peer_freed > f->tx_pos ||
	    f->tx_done > f->tx_pos || f->tx_pos - f->peer_freed > f->peer_ring ||
	    f->tx_pos - f->tx_done > f->tx_ring)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fdr_blob peer = {
		.ring_addr = 4096, .rkey = 1, .version = FDR_PROTO_VERSION,
	};
	struct fdr_flow f;
	int iwarp;
	size_t left = size;
	const uint8_t *p = data;

	if (size < 6)
		return 0;
	iwarp = p[0] & 1;
	peer.ring_size = FDR_RING_MIN + (uint32_t)p[1] * 97;
	peer.credits = (uint16_t)(FDR_CREDITS_MIN + p[2]);
	fdr_flow_init(&f, FDR_RING_MIN + (uint32_t)p[3] * 61,
		      FDR_RING_MIN + (uint32_t)p[4] * 89, FDR_CREDITS_MIN + p[5], &peer);
	p += 6;
	left -= 6;
	while (left) {
		uint8_t op = *p++;
		struct fdr_msg m;
		uint32_t a, b;
		int why;

		left--;
		switch (op & 3) {
		case 0: {	/* a completion from the peer */
			a = take32(&p, &left);
			b = take32(&p, &left);
			why = fdr_msg_decode(&m, iwarp, (enum fdr_rx_kind)(op >> 2 & 3),
					     a, b);
			if (!why) {
				if (m.len > FDR_W_LEN_MAX || (m.len && (m.credits || m.bytes || m.fin)))
					abort();
				why = fdr_flow_rx_apply(&f, &m);
			}
			if (why)
				return 0;	/* connection dropped */
			break;
		}
		case 1: {	/* the application writes */
			uint32_t toff, poff, n;

			a = take32(&p, &left);
			if (!fdr_flow_data_ok(&f))
				break;
			n = fdr_flow_tx_piece(&f, a, &toff, &poff);
			if (n > a || toff + n > f.tx_ring || poff + n > f.peer_ring)
				abort();
			if (n)
				fdr_flow_tx_commit(&f, n);
			break;
		}
		case 2:		/* local completions and reads */
			a = take32(&p, &left);
			if (op & 4) {
				uint64_t pending = f.tx_pos - f.tx_done;

				if (fdr_flow_tx_complete(&f, (uint32_t)(a % (pending + 1))))
					abort();
			} else {
				uint64_t avail = fdr_flow_rx_avail(&f);

				fdr_flow_rx_consume(&f, (size_t)(avail ? a % (avail + 1) : 0));
			}
			break;
		default:	/* a control message goes out */
			if (fdr_flow_ctrl_ok(&f, op >> 2 & 1)) {
				uint32_t w = fdr_flow_ctrl_take(&f, op >> 2 & 1);

				if (fdr_msg_decode(&m, iwarp, iwarp ? FDR_RX_SEND : FDR_RX_SEND_IMM,
						   iwarp ? 4 : 0, w) != FDR_OK)
					abort();	/* we must decode our own words */
			}
			break;
		}
		check(&f);
	}
	return 0;
}
