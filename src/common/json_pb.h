/*
 * json_pb: one generic converter between any protobuf-c message and JSON
 * (jansson), driven by protobuf-c descriptors, plus bounded protobuf decoding.
 *
 * The JSON mapping is Mesos's (stout's protobuf <-> JSON):
 *  - object keys are the .proto field names (not camelCase), written in
 *    field-number order;
 *  - enums are written by name; on input a name, or a number that is a
 *    defined value, is accepted;
 *  - 64-bit integers are JSON numbers (on input a decimal string is accepted
 *    too). uint64/fixed64 values above INT64_MAX do not fit a JSON integer as
 *    jansson holds them, so they are written as decimal strings
 *    ("18446744073709551615"), which the decoder reads back exactly. Integer
 *    fields also accept a JSON real with an integral value (5.0, 1e3); a
 *    string is accepted only for the 64-bit types;
 *  - doubles and floats are JSON numbers in the shortest form that reads
 *    back to the same value, integral ones with ".0" (5.0, -0.0). NaN and
 *    the infinities have no JSON number: they are written as the strings
 *    "NaN", "Infinity" and "-Infinity" (as proto3's JSON mapping does) and
 *    read back from them; a float input that rounds beyond FLT_MAX is out of
 *    range; bools are true/false;
 *  - bytes are base64 (RFC 4648 standard alphabet), written with padding;
 *    on input, as Mesos, padding may be left out and whitespace is skipped;
 *  - repeated fields are arrays, messages are objects; a `map<string, V>`
 *    field (a repeated `...Entry {key = 1; value = 2}` message to protoc-c)
 *    is an object keyed by the map key (the last entry wins when a key
 *    repeats in protobuf input; an entry without a value is null); maps with
 *    other key types stay arrays of {"key": ..., "value": ...};
 *  - unknown keys are ignored; a JSON null means the field is unset (a null
 *    inside an array is an error); a key given twice is malformed JSON;
 *  - two members of one oneof is an error;
 *  - on output only fields that are set appear (has_x, non-NULL and not the
 *    default pointer, n_x > 0; for a oneof member, the case).
 * A type mismatch, a missing required field, an unknown enum name or a value
 * out of range is an error whose one-line reason starts with the field path,
 * e.g. "subscribe.framework_info.capabilities[0].type: unknown enum value
 * \"FOO\"" (map values: `limits["cpus"].value`); a problem with the whole
 * document has no path ("expected an object, got array", "invalid JSON at
 * line 3, column 10: ...").
 *
 * Protobuf input follows proto2 parsers: fields may come in any order,
 * repeated scalars packed or not, unknown fields are kept (and written again
 * by jpb_to_pb, never to JSON), an optional or repeated enum value the enum
 * does not define is dropped as a field this .proto does not know (a
 * required one is an error). A singular (not repeated, not oneof) message
 * field given twice, which protobuf would merge, is refused: protobuf-c's
 * merge is quadratic and no encoder writes one twice. Strings must be UTF-8
 * without NUL bytes in
 * either encoding, so that every decoded message is exactly representable
 * in JSON. Messages built in code that break this are still encoded: bytes
 * that are not UTF-8 become U+FFFD, undefined enum values are written as
 * numbers.
 *
 * Decoding is bounded: at most JPB_MAX_DEPTH levels of message nesting (the
 * top message is level 1, a map entry counts as a level), so a peer cannot
 * exhaust the stack with a deep message (protobuf input is pre-scanned,
 * tags, lengths and nesting checked, before protobuf-c unpacks it). The
 * encoders write whatever message they are given; the messages offerd
 * builds are a few levels above decoded ones at most.
 *
 * Decoded messages are allocated as protobuf-c's unpack does, so every message
 * returned here is released with jpb_free (protobuf_c_message_free_unpacked).
 * Nothing after the decoder knows which encoding arrived. err may be NULL
 * (errlen 0) when the reason is not wanted; a reason longer than errlen is
 * cut.
 */
#ifndef OFFERD_COMMON_JSON_PB_H
#define OFFERD_COMMON_JSON_PB_H

#include <jansson.h>
#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>

/* Deepest message nesting the decoders accept (the top message is 1). */
#define JPB_MAX_DEPTH 64

/* Wire encodings offerd speaks. */
enum jpb_format {
    JPB_JSON = 0,     /* application/json */
    JPB_PROTOBUF = 1, /* application/x-protobuf */
};

/* Build a new message of type desc from a parsed JSON value (which must be
 * an object). Returns the message (free with jpb_free), or NULL with a
 * one-line reason, starting with the field path, in err. */
ProtobufCMessage *jpb_from_json(const ProtobufCMessageDescriptor *desc,
                                const json_t *json, char *err, size_t errlen);

/* Parse len bytes of JSON text and convert as jpb_from_json. Malformed JSON
 * is an error naming the line and column. */
ProtobufCMessage *jpb_from_json_text(const ProtobufCMessageDescriptor *desc,
                                     const char *text, size_t len, char *err,
                                     size_t errlen);

/* The JSON type of v as a word ("object", "array", "string", "number",
 * "boolean", "null"), as the decoders' errors name it. */
const char *jpb_json_kind(const json_t *v);

/* Convert msg to a new JSON object (caller json_decref's it). */
json_t *jpb_to_json(const ProtobufCMessage *msg);

/* Convert msg to compact JSON text; returns a malloc'd NUL-terminated string
 * (caller frees) and its length in *len (OUT, may be NULL). */
char *jpb_to_json_text(const ProtobufCMessage *msg, size_t *len);

/* Unpack len bytes of protobuf wire format into a new message of type desc,
 * refusing input nested deeper than JPB_MAX_DEPTH, malformed input and
 * missing required fields. Returns the message (free with jpb_free), or NULL
 * with a one-line reason in err. */
ProtobufCMessage *jpb_from_pb(const ProtobufCMessageDescriptor *desc,
                              const uint8_t *buf, size_t len, char *err,
                              size_t errlen);

/* Pack msg into a new malloc'd buffer (caller frees); its length in *len. */
uint8_t *jpb_to_pb(const ProtobufCMessage *msg, size_t *len);

/* Parse len bytes of JSON text that must be an array of at most max
 * messages of desc (as Mesos's /machine/down or PUT /weights take them).
 * Returns 0 with *out (OUT) a malloc'd array of *n (OUT) messages (free
 * with jpb_array_free), or -1 with a one-line reason in err: malformed
 * JSON, "expected a JSON array", "more than <max> elements" or "[i]: "
 * and the element's reason. */
int jpb_array_from_json_text(const ProtobufCMessageDescriptor *desc,
                             const char *text, size_t len, size_t max,
                             ProtobufCMessage ***out, size_t *n, char *err,
                             size_t errlen);
/* Free n messages of an array from jpb_array_from_json_text, and the
 * array; NULL is ignored. */
void jpb_array_free(ProtobufCMessage **v, size_t n);

/* Decode buf in the given format (jpb_from_json_text or jpb_from_pb). */
ProtobufCMessage *jpb_decode(const ProtobufCMessageDescriptor *desc,
                             enum jpb_format format, const uint8_t *buf,
                             size_t len, char *err, size_t errlen);

/* Encode msg in the given format into a new malloc'd buffer (caller frees);
 * the length in *len. JSON output is compact and NUL-terminated (the NUL is
 * not counted in *len). */
uint8_t *jpb_encode(const ProtobufCMessage *msg, enum jpb_format format,
                    size_t *len);

/* Return a deep copy of msg, a message of type desc (packed and unpacked
 * again), or NULL when msg is NULL. The copy is allocated as protobuf-c's
 * unpack allocates: it is the caller's, released with jpb_free (that is,
 * protobuf_c_message_free_unpacked(copy, NULL)) and never field by field.
 * The return type is void * so that it assigns to the message's own type.
 * Meant for messages offerd decoded or built itself: a msg of another type
 * than desc, or one that does not read back (a string that is not UTF-8, a
 * missing required field, nesting deeper than JPB_MAX_DEPTH), is a bug, so
 * it is logged and the process aborts. Enum values the .proto does not
 * define are dropped from the copy, as jpb_from_pb drops them. */
void *jpb_copy(const ProtobufCMessageDescriptor *desc,
               const ProtobufCMessage *msg);

/* Free a message returned by this module; NULL is ignored. */
void jpb_free(ProtobufCMessage *msg);

/* Base64 as JSON bytes fields are written and read (RFC 4648, standard
 * alphabet): jpb_base64_encode returns n bytes of in as a new padded,
 * NUL-terminated string (caller frees); jpb_base64_decode reads n chars of s
 * as the decoder of bytes fields does (whitespace skipped, padding
 * optional) into a new buffer (*out, NULL when empty; caller frees) of
 * *outlen bytes, returning 0, or -1 for malformed text. */
char *jpb_base64_encode(const uint8_t *in, size_t n);
int jpb_base64_decode(const char *s, size_t n, uint8_t **out, size_t *outlen);

#ifdef JPB_PRIVATE
/* jpb_from_json_text's reader without a tree (json_pb.c, "JSON text ->
 * message without a tree"): the message, or NULL whenever it gives up,
 * for whatever reason, with nothing left behind. For tests. */
ProtobufCMessage *
jpb_fast_from_json_text(const ProtobufCMessageDescriptor *desc,
                        const char *text, size_t len);
#endif

#endif
