/*
 * base64.h — standard base64 (RFC 4648, padded, no line breaks) over libcrypto's
 * EVP codec: how files and artifacts travel inside JSON (the gateway's requests
 * and results).
 */
#ifndef AKA_BASE_BASE64_H
#define AKA_BASE_BASE64_H

#include "base/strbuf.h"

#include <stdbool.h>
#include <stddef.h>

/* Append the encoding of data to out. */
void aka_base64_encode(const void *data, size_t len, struct strbuf *out);
/* Append the decoded bytes of text to out; false when text is not valid base64 or would
 * decode to more than limit bytes (out is then left as it was). */
bool aka_base64_decode(const char *text, size_t len, size_t limit, struct strbuf *out);

#endif
