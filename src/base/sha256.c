/*
 * sha256.c — SHA-256 of buffers and files through OpenSSL's EVP interface
 * (see sha256.h). EVP rather than the deprecated SHA256_* calls so the code
 * builds unchanged against OpenSSL 3 and its FIPS provider.
 */
#include "base/sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void to_hex(const unsigned char *md, char out[AKA_SHA256_HEX_LEN + 1])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < AKA_SHA256_HEX_LEN / 2; i++) {
        out[2 * i] = digits[md[i] >> 4];
        out[2 * i + 1] = digits[md[i] & 15];
    }
    out[AKA_SHA256_HEX_LEN] = '\0';
}

void aka_sha256_hex(const void *data, size_t len, char out[AKA_SHA256_HEX_LEN + 1])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    /* EVP_Digest only fails on allocation failure; treat it like any other OOM. */
    if (!EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) || mdlen != 32) {
        fprintf(stderr, "aka: SHA-256 through libcrypto failed\n");
        abort();
    }
    to_hex(md, out);
}

/* Feed fd into ctx; returns 0, or -1 with errno set. */
static int digest_fd(EVP_MD_CTX *ctx, int fd)
{
    unsigned char buf[65536];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            return 0;
        if (!EVP_DigestUpdate(ctx, buf, (size_t)n)) {
            errno = ENOMEM;
            return -1;
        }
    }
}

int aka_sha256_file(const char *path, char out[AKA_SHA256_HEX_LEN + 1], struct aka_err *err)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: cannot open: %s", path, strerror(errno));
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) && digest_fd(ctx, fd) == 0 &&
             EVP_DigestFinal_ex(ctx, md, &mdlen) && mdlen == 32;
    int e = errno;
    EVP_MD_CTX_free(ctx);
    close(fd);
    if (!ok)
        return aka_err_set(err, AKA_EXIT_FAILED, "%s: cannot hash: %s", path, strerror(e));
    to_hex(md, out);
    return 0;
}

int aka_sha256_is_hex(const char *s)
{
    size_t i = 0;
    for (; s[i]; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return i == AKA_SHA256_HEX_LEN;
}
