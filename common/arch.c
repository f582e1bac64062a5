/*
 * common/arch.c — GPU architecture names and cubins, for the daemon (which
 * cubin to make for which request) and the client (which cubin it may
 * load).
 *
 * An architecture is "sm_" + the compute capability's digits ("sm_90" for
 * 9.0, "sm_120" for 12.0) + an optional suffix: 'a' (arch-specific: the
 * PTX uses features only that exact GPU has, so it runs there only) or 'f'
 * (family-specific; treated as exact here, the safe reading).  A plain
 * "sm_XY" PTX runs on any GPU of compute capability >= XY, so its SASS is
 * made for the GPU's own number.  A cubin's ELF header (EM_CUDA) says the
 * SM it is for: in e_flags bits 8-15 in the ELF ABI version 8 that CUDA
 * 12.8+ writes, in bits 0-7 before.  Pure functions.
 */
#include <stdio.h>
#include <string.h>

#include "common/common.h"

#define EM_CUDA 190

int teeny__arch_parse(const char *arch, char *suffix) {
  if (suffix)
    *suffix = '\0';
  if (!arch || strncmp(arch, "sm_", 3) != 0)
    return -1;
  const char *p = arch + 3;
  size_t digits = strspn(p, "0123456789");
  if (digits < 2 || digits > 3)
    return -1;
  int n = 0;
  for (size_t i = 0; i < digits; i++)
    n = n * 10 + (p[i] - '0');
  p += digits;
  char s = *p;
  if (s == 'a' || s == 'f')
    p++;
  else
    s = '\0';
  if (*p)
    return -1;
  if (suffix)
    *suffix = s;
  return n;
}

bool teeny__sass_target(const char *ptx_target, const char *arch, char *out,
                        size_t n) {
  char ps, as;
  int pn = teeny__arch_parse(ptx_target, &ps);
  int an = teeny__arch_parse(arch, &as);
  if (pn < 0 || an < 0 || as)
    return false; /* a GPU is named by its plain number */
  if (ps) { /* arch-specific PTX: that GPU only */
    if (pn != an)
      return false;
    snprintf(out, n, "%s", ptx_target);
    return true;
  }
  if (an < pn)
    return false; /* the PTX needs a newer GPU */
  snprintf(out, n, "sm_%d", an);
  return true;
}

static uint32_t le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

int teeny__cubin_sm(const void *data, size_t len) {
  const unsigned char *p = data;
  /* ELF64, little-endian, e_machine at 18, e_flags at 48 */
  if (!p || len < 64 || memcmp(p, "\x7f" "ELF", 4) != 0 || p[4] != 2 || p[5] != 1)
    return -1;
  if ((p[18] | p[19] << 8) != EM_CUDA)
    return -1;
  uint32_t flags = le32(p + 48);
  unsigned abi = p[8]; /* EI_ABIVERSION */
  int sm = (int)(abi >= 8 ? (flags >> 8) & 0xff : flags & 0xff);
  return sm > 0 ? sm : -1;
}

/* The first token of line that looks like a version (digits and dots, one
 * dot at least). */
static bool version_token(const char *line, char *out, size_t n) {
  for (const char *p = line; *p; p++) {
    if (!(*p >= '0' && *p <= '9') || (p > line && p[-1] != ' '))
      continue;
    size_t len = strspn(p, "0123456789.");
    if (len < 3 || !memchr(p, '.', len) || (p[len] && p[len] != ' ' && p[len] != '\n'))
      continue;
    snprintf(out, n, "%.*s", (int)len, p);
    return true;
  }
  return false;
}

bool teeny__driver_version(char *out, size_t n) {
  FILE *f = fopen("/proc/driver/nvidia/version", "re");
  if (!f)
    return false;
  char line[512];
  bool ok = fgets(line, sizeof line, f) && strstr(line, "NVRM") &&
            version_token(strstr(line, "Module") ? strstr(line, "Module") : line,
                          out, n);
  fclose(f);
  return ok;
}
