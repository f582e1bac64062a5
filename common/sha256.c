/*
 * common/sha256.c — SHA-256 through OpenSSL's EVP interface, as lowercase hex.
 * Cache keys and stored-file checksums both come from here.
 */
#include <openssl/evp.h>

#include "common/common.h"

int teeny__sha256_hex(const void *data, size_t len, char hex[65]) {
  static const char digits[] = "0123456789abcdef";
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int mdlen = 0;
  if (!EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) || mdlen != 32) {
    hex[0] = '\0';
    return TEENY_E_INTERNAL;
  }
  for (unsigned i = 0; i < 32; i++) {
    hex[2 * i] = digits[md[i] >> 4];
    hex[2 * i + 1] = digits[md[i] & 15];
  }
  hex[64] = '\0';
  return TEENY_OK;
}
