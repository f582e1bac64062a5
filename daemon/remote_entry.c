/*
 * daemon/remote_entry.c — the value of a remote entry, and its checks.
 *
 *   0    4  magic "TNYC"
 *   4    1  format version (TEENY_REMOTE_FORMAT = 1)
 *   5    1  flags: bit 0 = the trailer is HMAC-SHA256 with the cluster's
 *           secret (else plain SHA-256); other bits 0
 *   6    2  zero
 *   8    4  body length, big-endian
 *   12  32  SHA-256 of the PTX
 *   44  32  SHA-256 of the MLIR (of "" when there is none)
 *   76  32  SHA-256 of the generated source: the key itself, raw
 *   108  n  body: the artifact as a protocol compile reply (PROTOCOL.md
 *           §4.1: key, entry, id, name, target, num_warps, ptx, mlir,
 *           source, params, threads_per_block, shared_bytes, compile_ms)
 *   108+n 32 trailer: SHA-256 (or HMAC-SHA256) of bytes [0, 108+n)
 *
 * Verification (teeny__remote_entry_verify) refuses anything that is not
 * exactly this, for exactly the key asked: the sizes, the magic and
 * version, the trailer, the signing mode, the body (decoded by the same
 * hostile-input decoder as client replies), the key inside it, the source
 * hashing to the key, and the PTX and MLIR to their digests.  Without a
 * secret this stops bit rot, truncated writes and mix-ups, not a writer
 * who means harm: that takes --remote-secret-file (docs/remote.md).
 * Runs on the remote thread, once per fetched value.
 */
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <string.h>

#include "daemon/helper.h"
#include "daemon/remote.h"
#include "proto/msg.h"

static const unsigned char magic[4] = {'T', 'N', 'Y', 'C'};

#define FLAG_HMAC 1u
#define OFF_LEN 8
#define OFF_PTX 12
#define OFF_MLIR 44
#define OFF_SRC 76

const char *teeny__remote_reject_name(teeny_remote_reject r) {
  switch (r) {
  case TEENY_REMOTE_OK: return "ok";
  case TEENY_REMOTE_BAD_SIZE: return "bad size";
  case TEENY_REMOTE_BAD_MAGIC: return "not a teenyc entry of this format";
  case TEENY_REMOTE_BAD_DIGEST: return "digest mismatch";
  case TEENY_REMOTE_BAD_SIGNING: return "signed differently (--remote-secret-file)";
  case TEENY_REMOTE_BAD_BODY: return "undecodable artifact";
  case TEENY_REMOTE_BAD_KEY: return "another key's entry";
  case TEENY_REMOTE_BAD_ARTIFACT: return "artifact does not match its digest";
  }
  return "unknown";
}

static bool sha256_raw(const void *p, size_t n, unsigned char md[32]) {
  unsigned int len = 0;
  return EVP_Digest(p ? p : "", n, md, &len, EVP_sha256(), NULL) && len == 32;
}

static bool trailer_of(const void *p, size_t n, const void *secret,
                       size_t secret_len, unsigned char md[32]) {
  if (!secret_len)
    return sha256_raw(p, n, md);
  unsigned int len = 0;
  return HMAC(EVP_sha256(), secret, (int)secret_len, p, n, md, &len) && len == 32;
}

static int hexval(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* 64 lowercase hex digits to 32 bytes; false if it is not that. */
static bool key_raw(const char *key, unsigned char out[32]) {
  for (int i = 0; i < 32; i++) {
    int hi = hexval(key[2 * i]), lo = hexval(key[2 * i + 1]);
    if (hi < 0 || lo < 0)
      return false;
    out[i] = (unsigned char)(hi * 16 + lo);
  }
  return key[64] == '\0';
}

int teeny__remote_entry_encode(const teeny_artifact *a, const void *secret,
                               size_t secret_len, teeny_buf *out) {
  unsigned char head[TEENY_REMOTE_HEAD] = {0}, md[32];
  if (!a->ptx || !a->source || !key_raw(a->key, head + OFF_SRC))
    return TEENY_E_INVAL;
  out->len = 0;
  out->oom = false;
  teeny_msg_reply rep;
  memset(&rep, 0, sizeof rep);
  rep.op = TEENY_OP_COMPILE;
  rep.u.compile.art = *a;
  rep.u.compile.cache = TEENY_CACHE_MISS;
  teeny__buf_append(out, head, sizeof head); /* filled in below */
  int rc = teeny_msg_reply_encode(&rep, out);
  if (rc)
    return rc;
  if (out->oom || out->len - TEENY_REMOTE_HEAD > UINT32_MAX)
    return TEENY_E_NOMEM;
  uint32_t n = (uint32_t)(out->len - TEENY_REMOTE_HEAD);
  memcpy(head, magic, 4);
  head[4] = TEENY_REMOTE_FORMAT;
  head[5] = secret_len ? FLAG_HMAC : 0;
  head[OFF_LEN] = (unsigned char)(n >> 24);
  head[OFF_LEN + 1] = (unsigned char)(n >> 16);
  head[OFF_LEN + 2] = (unsigned char)(n >> 8);
  head[OFF_LEN + 3] = (unsigned char)n;
  if (!sha256_raw(a->ptx, a->ptx_len, head + OFF_PTX) ||
      !sha256_raw(a->mlir, a->mlir ? a->mlir_len : 0, head + OFF_MLIR))
    return TEENY_E_INTERNAL;
  memcpy(out->p, head, sizeof head);
  if (!trailer_of(out->p, out->len, secret, secret_len, md))
    return TEENY_E_INTERNAL;
  teeny__buf_append(out, md, sizeof md);
  return out->oom ? TEENY_E_NOMEM : 0;
}

/* The checks on the head and trailer: the body's offset and length. */
static teeny_remote_reject check_frame(const unsigned char *v, size_t len,
                                       const void *secret, size_t secret_len,
                                       size_t max_len, size_t *body_len) {
  if (len < TEENY_REMOTE_HEAD + TEENY_REMOTE_TRAILER || len > max_len)
    return TEENY_REMOTE_BAD_SIZE;
  if (memcmp(v, magic, 4) != 0 || v[4] != TEENY_REMOTE_FORMAT || v[6] || v[7] ||
      (v[5] & ~FLAG_HMAC))
    return TEENY_REMOTE_BAD_MAGIC;
  uint32_t n = (uint32_t)v[OFF_LEN] << 24 | (uint32_t)v[OFF_LEN + 1] << 16 |
               (uint32_t)v[OFF_LEN + 2] << 8 | v[OFF_LEN + 3];
  if ((size_t)n != len - TEENY_REMOTE_HEAD - TEENY_REMOTE_TRAILER)
    return TEENY_REMOTE_BAD_SIZE;
  if (((v[5] & FLAG_HMAC) != 0) != (secret_len > 0))
    return TEENY_REMOTE_BAD_SIGNING;
  unsigned char md[32];
  size_t signed_len = len - TEENY_REMOTE_TRAILER;
  if (!trailer_of(v, signed_len, secret, secret_len, md) ||
      CRYPTO_memcmp(md, v + signed_len, 32) != 0)
    return TEENY_REMOTE_BAD_DIGEST;
  *body_len = n;
  return TEENY_REMOTE_OK;
}

/* The artifact against the key asked and the head's digests. */
static teeny_remote_reject check_art(const teeny_artifact *a,
                                     const unsigned char *v, const char *key) {
  unsigned char md[32], want[32];
  if (!key_raw(key, want) || strcmp(a->key, key) != 0 ||
      memcmp(v + OFF_SRC, want, 32) != 0 || !a->source ||
      !sha256_raw(a->source, a->source_len, md) || memcmp(md, want, 32) != 0)
    return TEENY_REMOTE_BAD_KEY;
  if (!a->ptx || !a->ptx_len || !sha256_raw(a->ptx, a->ptx_len, md) ||
      memcmp(md, v + OFF_PTX, 32) != 0 ||
      !sha256_raw(a->mlir, a->mlir ? a->mlir_len : 0, md) ||
      memcmp(md, v + OFF_MLIR, 32) != 0)
    return TEENY_REMOTE_BAD_ARTIFACT;
  return TEENY_REMOTE_OK;
}

teeny_remote_reject teeny__remote_entry_verify(const void *value, size_t len,
                                               const char *key,
                                               const void *secret,
                                               size_t secret_len,
                                               size_t max_len,
                                               teeny_artifact **out) {
  const unsigned char *v = value;
  size_t n = 0;
  *out = NULL;
  teeny_remote_reject why = check_frame(v, len, secret, secret_len, max_len, &n);
  if (why)
    return why;
  teeny_msg_reply rep;
  char err[256];
  if (teeny_msg_reply_decode(v + TEENY_REMOTE_HEAD, n, TEENY_OP_COMPILE, &rep,
                             err) ||
      rep.status != 0) {
    teeny_msg_reply_free(&rep);
    return TEENY_REMOTE_BAD_BODY;
  }
  why = check_art(&rep.u.compile.art, v, key);
  if (!why && !(*out = teeny__artifact_copy(&rep.u.compile.art)))
    why = TEENY_REMOTE_BAD_BODY;
  teeny_msg_reply_free(&rep);
  return why;
}
