/*
 * A JSON text writer into a growing char buffer: the compact text jansson's
 * json_dump_callback(JSON_COMPACT) would make of the same values, written
 * straight from C values without building a tree. Large read endpoints
 * (/state, /state-summary) write their entities with it.
 *
 * Byte-for-byte what jansson 2.14 writes: strings escape '"', '\\' and the
 * control characters below 0x20 (\b \f \n \r \t, else \u00XX in upper-case
 * hex), nothing else ('/' and non-ASCII stay as they are); reals are
 * printf's "%.17g" with ".0" appended when that reads as an integer and the
 * exponent's '+' and leading zeros dropped ("1e20", "1e-5"). Where jansson
 * refuses a value (a string that is not valid UTF-8 or NULL, a real that is
 * not finite), the key and value are left out, as json_object_set_new
 * leaves out the NULL jansson made of it.
 *
 * Commas: the writer puts one before a key or a value when the previous
 * thing written at that level was a value, so callers write keys and values
 * in order and never a separator.
 */
#ifndef OFFERD_COMMON_JSON_OUT_H
#define OFFERD_COMMON_JSON_OUT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Recently formatted reals (a direct-mapped cache: resource quantities
 * repeat across thousands of entities, and "%.17g" is the slowest step). */
#define JOUT_REAL_CACHE 64

struct jout {
    char *buf;  /* the text written, not NUL-terminated; owned */
    size_t len; /* bytes in buf */
    size_t cap; /* bytes allocated */
    bool comma; /* the next key or value needs a ',' before it */
    struct {
        uint64_t bits; /* the double's bit pattern; 0 with len 0: empty */
        uint8_t len;   /* length of text */
        char text[31]; /* its JSON text */
    } reals[JOUT_REAL_CACHE];
};

/* Make *w empty (no allocation). */
void jout_init(struct jout *w);
/* Free w's buffer and make it empty. */
void jout_free(struct jout *w);
/* Forget the text written (the buffer is kept for reuse). */
void jout_reset(struct jout *w);

/* Append n bytes of ready-made JSON text as they are; the comma state is
 * left to the caller (jout_mark). */
void jout_raw(struct jout *w, const char *s, size_t n);
/* Append NUL-terminated ready-made text. */
void jout_raws(struct jout *w, const char *s);
/* Set whether the next key or value needs a comma (after raw text). */
void jout_mark(struct jout *w, bool comma);

void jout_obj_begin(struct jout *w);
void jout_obj_end(struct jout *w);
void jout_arr_begin(struct jout *w);
void jout_arr_end(struct jout *w);

/* An object key (escaped as a string); the value must follow. */
void jout_key(struct jout *w, const char *key);

/* A string value; returns false and writes nothing when s is NULL or not
 * valid UTF-8 (jansson's json_string would be NULL). */
bool jout_str(struct jout *w, const char *s);
/* A real, as jansson writes it; false and nothing written when not
 * finite. */
bool jout_real(struct jout *w, double v);
void jout_int(struct jout *w, int64_t v);
void jout_bool(struct jout *w, bool v);
/* A jansson value's compact text (borrowed; NULL writes nothing and
 * returns false). */
bool jout_json(struct jout *w, const json_t *j);

/* "key":value members, left out entirely where the value would be. */
void jout_kstr(struct jout *w, const char *key, const char *s);
void jout_kreal(struct jout *w, const char *key, double v);
void jout_kint(struct jout *w, const char *key, int64_t v);
void jout_kbool(struct jout *w, const char *key, bool v);
/* "key": j's text (borrowed); left out when j is NULL. */
void jout_kjson(struct jout *w, const char *key, const json_t *j);
/* "key": j's text, taking j (json_decref'd); left out when j is NULL. */
void jout_kjson_new(struct jout *w, const char *key, json_t *j);

/* Whether s (n bytes) is valid UTF-8 as jansson checks it. */
bool jout_utf8_valid(const char *s, size_t n);

#endif
