/*
 * base64.c — base64 through libcrypto (see base64.h).
 */
#include "base/base64.h"

#include <openssl/evp.h>

void aka_base64_encode(const void *data, size_t len, struct strbuf *out)
{
    const unsigned char *p = data;
    /* EVP_EncodeBlock takes an int length: go in chunks that are multiples of 3. */
    const size_t chunk = (size_t)3 << 20;
    for (size_t off = 0; off < len; off += chunk) {
        size_t n = len - off < chunk ? len - off : chunk;
        strbuf_grow(out, 4 * ((n + 2) / 3) + 1);
        int w = EVP_EncodeBlock((unsigned char *)out->buf + out->len, p + off, (int)n);
        strbuf_setlen(out, out->len + (size_t)w);
    }
}

bool aka_base64_decode(const char *text, size_t len, size_t limit, struct strbuf *out)
{
    size_t start = out->len;
    if (len % 4 != 0 || len / 4 * 3 > limit + 2)
        return false;
    EVP_ENCODE_CTX *ctx = EVP_ENCODE_CTX_new();
    int w = 0;
    bool ok = ctx != NULL;
    if (ok)
        EVP_DecodeInit(ctx);
    const size_t chunk = (size_t)1 << 24; /* a multiple of 4 */
    for (size_t off = 0; ok && off < len; off += chunk) {
        size_t n = len - off < chunk ? len - off : chunk;
        strbuf_grow(out, n / 4 * 3 + 3);
        ok = EVP_DecodeUpdate(ctx, (unsigned char *)out->buf + out->len, &w,
                              (const unsigned char *)text + off, (int)n) >= 0;
        if (ok)
            strbuf_setlen(out, out->len + (size_t)w);
    }
    if (ok) {
        strbuf_grow(out, 3);
        ok = EVP_DecodeFinal(ctx, (unsigned char *)out->buf + out->len, &w) >= 0;
        strbuf_setlen(out, out->len + (size_t)w);
    }
    EVP_ENCODE_CTX_free(ctx);
    if (!ok || out->len - start > limit) {
        strbuf_setlen(out, start);
        return false;
    }
    return true;
}
