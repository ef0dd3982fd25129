/*
 * RecordIO: the framing Mesos uses for event streams (SUBSCRIBE responses,
 * the agent stream). Each record is its length in ASCII decimal, a newline,
 * then exactly that many bytes:
 *
 *     5\nhello0\n3\nabc
 *
 * is the records "hello", "" and "abc". Mesos sends each record in an HTTP
 * chunk of its own, but a reader must not rely on it: the decoder here takes
 * the bytes in whatever pieces they arrive.
 *
 * The encoder writes one frame into a caller buffer or a new allocation. The
 * decoder is incremental in the style of picohttpparser: feed it any slice of
 * the stream, it answers "here is a record" (and how many bytes it used),
 * "need more" or "error". It allocates nothing per byte: a record that
 * arrives whole in one slice is returned as a pointer into that slice; one
 * that spans slices is gathered in a buffer the decoder grows at most to the
 * caller's record limit. A malformed length line or a record above the limit
 * puts the decoder in error for good, with a one-line reason.
 *
 * Pure code: no I/O, no libevent.
 */
#ifndef OFFERD_COMMON_RECORDIO_H
#define OFFERD_COMMON_RECORDIO_H

#include <stddef.h>
#include <stdint.h>

/* Most digits a length line may have. 20 digits hold any 64-bit length;
 * longer lines are refused before their value is computed. */
#define RIO_MAX_LENGTH_DIGITS 20

/* Bytes rio_encode_header needs at most: the digits plus the newline. */
#define RIO_HEADER_MAX (RIO_MAX_LENGTH_DIGITS + 1)

/* Largest record limit a decoder accepts; bigger limits are clamped. */
#define RIO_MAX_RECORD_LIMIT ((size_t)1 << 40)

/* ---- Encoder ---- */

/* Size of the frame of a len-byte record (length line plus record). */
size_t rio_frame_size(size_t len);

/* Write the length line of a len-byte record ("<len>\n") into out, which has
 * room for cap bytes. Returns the bytes written (no NUL is added), or 0 when
 * cap is too small (RIO_HEADER_MAX always suffices). */
size_t rio_encode_header(size_t len, uint8_t *out, size_t cap);

/* Write the whole frame of record (len bytes; record may be NULL when len is
 * 0) into out, which has room for cap bytes. Returns the bytes written
 * (rio_frame_size(len)), or 0 when cap is too small, leaving out unchanged. */
size_t rio_encode(const uint8_t *record, size_t len, uint8_t *out, size_t cap);

/* Return the frame of record in a new allocation (caller frees) and its
 * length in *frame_len (OUT). Never fails (allocation failure aborts). */
uint8_t *rio_frame(const uint8_t *record, size_t len, size_t *frame_len);

/* ---- Decoder ---- */

/* What rio_decoder_feed found. */
enum rio_result {
    RIO_ERROR = -1,    /* malformed input or over the limit; see the reason */
    RIO_NEED_MORE = 0, /* every byte given was used; no record completed */
    RIO_RECORD = 1,    /* one record completed */
};

struct rio_decoder;

/* Create a decoder that refuses records longer than max_record bytes
 * (clamped to RIO_MAX_RECORD_LIMIT). Free with rio_decoder_free. */
struct rio_decoder *rio_decoder_new(size_t max_record);

/* Free the decoder and its buffer; NULL is ignored. */
void rio_decoder_free(struct rio_decoder *d);

/* Feed up to len bytes of the stream (buf may be NULL when len is 0).
 *
 * Returns RIO_RECORD as soon as one record completes: *record and
 * *record_len (OUT) give it, and *consumed (OUT) tells how many bytes of buf
 * were used up to its end; call again with the rest of buf for more records.
 * The record is borrowed: it points into buf or into the decoder, and stays
 * valid until the next call on the decoder (or its free). A zero-length
 * record has *record_len 0 and a non-NULL *record.
 *
 * Returns RIO_NEED_MORE when all len bytes were used (*consumed == len)
 * without completing a record; they are remembered, so the caller passes
 * only new bytes next time.
 *
 * Returns RIO_ERROR when the stream is malformed: a length line that is
 * empty, holds anything but the digits 0-9 (a sign, a space, '\r'), or has
 * more than RIO_MAX_LENGTH_DIGITS digits, or a length above the limit.
 * *consumed is the bytes used before the bad byte. The decoder then stays in
 * error: every later call returns RIO_ERROR and consumes nothing. Record
 * out-parameters are written only for RIO_RECORD. */
enum rio_result rio_decoder_feed(struct rio_decoder *d, const uint8_t *buf,
                                 size_t len, size_t *consumed,
                                 const uint8_t **record, size_t *record_len);

/* The one-line reason of the error (e.g. "recordio: record length 70000
 * exceeds the limit of 65536 bytes"), or NULL while not in error. Borrowed:
 * valid until the decoder is freed. */
const char *rio_decoder_error(const struct rio_decoder *d);

/* True when the decoder sits between records (no partial length line or
 * record pending): a stream that ends here ended cleanly. */
int rio_decoder_is_idle(const struct rio_decoder *d);

#endif
