/*
 * sha256.h — content hashes through OpenSSL's libcrypto.
 *
 * Hashes identify the measured bytes (DESIGN §1.2): a kernel's sha256 is what
 * links an evaluation record to a candidate commit. Always lower-case hex.
 */
#ifndef AKA_BASE_SHA256_H
#define AKA_BASE_SHA256_H

#include "base/error.h"
#include <stddef.h>

#define AKA_SHA256_HEX_LEN 64

void aka_sha256_hex(const void *data, size_t len, char out[AKA_SHA256_HEX_LEN + 1]);
int aka_sha256_file(const char *path, char out[AKA_SHA256_HEX_LEN + 1], struct aka_err *err);
/* True when s is exactly 64 lower-case hex digits. */
int aka_sha256_is_hex(const char *s);

#endif
