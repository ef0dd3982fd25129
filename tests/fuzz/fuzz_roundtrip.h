/*
 * The check shared by the scheduler-Call fuzz targets: a message that one of
 * json_pb's decoders accepted must survive being encoded in both formats and
 * decoded again, and the encodings must be fixpoints (encoding the re-decoded
 * message gives the same bytes). Any failure is a codec bug: abort().
 */
#ifndef OFFERD_TESTS_FUZZ_ROUNDTRIP_H
#define OFFERD_TESTS_FUZZ_ROUNDTRIP_H

#include "common/json_pb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Encode m in format f, decode that, and check the re-encoding is the
 * same. Returns the re-decoded message (caller frees); *enc and *len hold
 * the first encoding (caller frees). */
static ProtobufCMessage *fuzz_reencode(const ProtobufCMessage *m,
                                       enum jpb_format f, uint8_t **enc,
                                       size_t *len)
{
    char err[512];
    *enc = jpb_encode(m, f, len);
    ProtobufCMessage *back =
        jpb_decode(m->descriptor, f, *enc, *len, err, sizeof(err));
    if (back == NULL) {
        fprintf(stderr, "re-decoding the %s encoding failed: %s\n",
                f == JPB_JSON ? "JSON" : "protobuf", err);
        if (f == JPB_JSON)
            fprintf(stderr, "JSON: %s\n", (const char *)*enc);
        abort();
    }
    size_t len2;
    uint8_t *enc2 = jpb_encode(back, f, &len2);
    if (len2 != *len || memcmp(enc2, *enc, *len) != 0) {
        fprintf(stderr, "the %s encoding is not a fixpoint\n",
                f == JPB_JSON ? "JSON" : "protobuf");
        if (f == JPB_JSON)
            fprintf(stderr, "first:  %s\nsecond: %s\n", (const char *)*enc,
                    (const char *)enc2);
        abort();
    }
    free(enc2);
    return back;
}

/* Check every round trip of a decoded message m. */
static void fuzz_check_round_trips(const ProtobufCMessage *m)
{
    uint8_t *json, *pb;
    size_t json_len, pb_len;
    ProtobufCMessage *from_json = fuzz_reencode(m, JPB_JSON, &json, &json_len);
    ProtobufCMessage *from_pb = fuzz_reencode(m, JPB_PROTOBUF, &pb, &pb_len);

    /* Through protobuf and back, the JSON is unchanged (unknown protobuf
     * fields never reach JSON). */
    size_t len;
    uint8_t *json2 = jpb_encode(from_pb, JPB_JSON, &len);
    if (len != json_len || memcmp(json2, json, len) != 0) {
        fprintf(stderr, "JSON differs after a protobuf round trip\n%s\n%s\n",
                (const char *)json, (const char *)json2);
        abort();
    }
    free(json2);
    jpb_free(from_json);
    jpb_free(from_pb);
    free(json);
    free(pb);
}

#endif
