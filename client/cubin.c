/*
 * client/cubin.c — which cubin a process may load: the rule that a cubin
 * for the wrong GPU is never handed to the driver.
 *
 * A compile reply carries a cubin only for the architecture the request
 * named, and teenycd checks it against its store, but the client does not
 * take that on trust: the cubin is used only when the reply says it is for
 * this device's architecture *and* its ELF header (EM_CUDA, the SM in
 * e_flags: common/arch.c) says so too.  Anything else — no cubin, another
 * architecture, bytes that are not a CUDA ELF, an ELF for another SM —
 * loads the PTX, which the driver compiles for whatever GPU it has.
 * teeny_module_load_result (cuda.c) asks here first; a cubin the driver
 * still refuses falls back to the PTX there.  Pure function.
 */
#include <stdio.h>
#include <string.h>

#include "common/common.h"
#include "teeny/client.h"

bool teeny_cubin_usable(const char *cubin, size_t len, const char *cubin_arch,
                        const char *device_arch, char *why, size_t whysz) {
  char w[160] = "";
  int dev = teeny__arch_parse(device_arch, NULL);
  int sm = cubin ? teeny__cubin_sm(cubin, len) : -1;
  if (!cubin || !len)
    snprintf(w, sizeof w, "no cubin");
  else if (dev < 0)
    snprintf(w, sizeof w, "the device's architecture is unknown");
  else if (!cubin_arch || strcmp(cubin_arch, device_arch) != 0)
    snprintf(w, sizeof w, "the cubin is for %.16s, the device is %.16s",
             cubin_arch ? cubin_arch : "an unnamed GPU", device_arch);
  else if (sm < 0)
    snprintf(w, sizeof w, "the cubin is not a CUDA ELF image");
  else if (sm != dev)
    snprintf(w, sizeof w, "the cubin's ELF header says sm_%d, the device is %.16s", sm,
             device_arch);
  if (why && whysz)
    snprintf(why, whysz, "%s", w);
  return w[0] == '\0';
}
