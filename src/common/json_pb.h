/*
 * json_pb: one generic converter between any protobuf-c message and JSON
 * (jansson), driven by protobuf-c descriptors, plus bounded protobuf decoding.
 *
 * The JSON mapping is Mesos's (stout's protobuf <-> JSON):
 *  - object keys are the .proto field names (not camelCase);
 *  - enums are written by name; on input a name, or a number that is a
 *    defined value, is accepted;
 *  - 64-bit integers are JSON numbers (on input a decimal string is accepted
 *    too); doubles are numbers; bools are true/false;
 *  - bytes are base64 (RFC 4648 standard alphabet), written with padding;
 *    on input, as Mesos, padding may be left out and whitespace is skipped;
 *  - repeated fields are arrays, messages are objects;
 *  - unknown keys are ignored; a JSON null means the field is unset;
 *  - on output only fields that are set appear (has_x, non-NULL, n_x > 0).
 * A type mismatch, a missing required field, an unknown enum name or a value
 * out of range is an error whose one-line reason starts with the field path,
 * e.g. "subscribe.framework_info.capabilities[0].type: unknown enum value
 * \"FOO\"".
 *
 * Both directions are bounded: at most JPB_MAX_DEPTH levels of message
 * nesting, so a peer cannot exhaust the stack with a deep message (protobuf
 * input is pre-scanned before protobuf-c unpacks it).
 *
 * Decoded messages are allocated as protobuf-c's unpack does, so every message
 * returned here is released with jpb_free (protobuf_c_message_free_unpacked).
 * Nothing after the decoder knows which encoding arrived.
 */
#ifndef OFFERD_COMMON_JSON_PB_H
#define OFFERD_COMMON_JSON_PB_H

#include <jansson.h>
#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>

/* Deepest message nesting accepted or produced. */
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

/* Decode buf in the given format (jpb_from_json_text or jpb_from_pb). */
ProtobufCMessage *jpb_decode(const ProtobufCMessageDescriptor *desc,
                             enum jpb_format format, const uint8_t *buf,
                             size_t len, char *err, size_t errlen);

/* Encode msg in the given format into a new malloc'd buffer (caller frees);
 * the length in *len. JSON output is compact and NUL-terminated (the NUL is
 * not counted in *len). */
uint8_t *jpb_encode(const ProtobufCMessage *msg, enum jpb_format format,
                    size_t *len);

/* Free a message returned by this module; NULL is ignored. */
void jpb_free(ProtobufCMessage *msg);

#endif
