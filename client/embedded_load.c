/*
 * client/embedded_load.c — finding libteenyc-embedded on first need.
 *
 * The thin client maps no compiler until a caller needs one (embedded or
 * offline mode, auto mode falling back, teeny_spec_compile): then this
 * file dlopen()s libteenyc-embedded and takes its table (embedded_api.h).
 * Places tried, in order: $TEENYC_EMBEDDED_LIBRARY (read once; tests and
 * unusual installs), the directory libteenyc-client itself was loaded
 * from (the build tree and every install keep both side by side), then
 * the soname through the dynamic linker's search path.  The static library
 * (TEENY_EMBEDDED_LINKED) has the table linked in and loads nothing.
 *
 * Global state, and why: the handle, the table and the reason it is
 * missing are written once under pthread_once and read-only afterwards —
 * like the CUDA loader, a library mapped into a process belongs to the
 * process, not to one client.  This is the second of the two documented
 * exceptions to "no global mutable state" (docs/architecture.md).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client_int.h"
#include "client/embedded_api.h"
#include "teeny_build_id.h" /* generated: TEENY_COMPILER_BUILD_ID */

typedef struct loaded {
  const teeny__embedded_api *api; /* NULL when absent */
  char why[TEENY__ERR_LEN];       /* why it is absent */
} loaded;

static loaded lib;                             /* written once, by load() */
static pthread_once_t lib_once = PTHREAD_ONCE_INIT;

/* Is t a table of this very build? */
static bool same_build(const teeny__embedded_api *t, const char *where) {
  if (t->abi == TEENY__EMBEDDED_ABI && strcmp(t->version, TEENY_VERSION_STRING) == 0 &&
      strcmp(t->build_id, TEENY_COMPILER_BUILD_ID) == 0)
    return true;
  snprintf(lib.why, sizeof lib.why,
           "%.200s is teenyc %.16s (build %.16s, abi %u); this libteenyc-client is "
           "%s (build %s, abi %d): install matching versions",
           where, t->version, t->build_id, (unsigned)t->abi, TEENY_VERSION_STRING,
           TEENY_COMPILER_BUILD_ID, TEENY__EMBEDDED_ABI);
  return false;
}

#ifdef TEENY_EMBEDDED_LINKED
extern const teeny__embedded_api teeny_embedded_api_v1;

static void load(void) {
  if (same_build(&teeny_embedded_api_v1, "the linked-in compiler"))
    lib.api = &teeny_embedded_api_v1;
}
#else
/* dir/soname of the directory this library was loaded from, or "". */
static void beside_me(char *out, size_t size) {
  Dl_info info;
  out[0] = '\0';
  if (!dladdr((void *)teeny__embedded_get, &info) || !info.dli_fname)
    return;
  const char *slash = strrchr(info.dli_fname, '/');
  if (slash)
    snprintf(out, size, "%.*s/%s", (int)(slash - info.dli_fname), info.dli_fname,
             TEENY__EMBEDDED_SONAME);
}

/* Try one path; true when it gave a usable table.  why collects reasons. */
static bool try_open(const char *path, char *why, size_t size) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  size_t n = strlen(why);
  if (!h) {
    const char *e = dlerror();
    snprintf(why + n, size - n, "%s%.300s", n ? "; " : "", e ? e : path);
    return false;
  }
  const teeny__embedded_api *t = dlsym(h, TEENY__EMBEDDED_SYMBOL);
  if (!t) {
    snprintf(why + n, size - n, "%s%.300s has no %s", n ? "; " : "", path,
             TEENY__EMBEDDED_SYMBOL);
    dlclose(h);
    return false;
  }
  if (!same_build(t, path)) {
    dlclose(h);
    return false;
  }
  lib.api = t; /* kept mapped for the life of the process */
  return true;
}

static void load(void) {
  char why[TEENY__ERR_LEN] = "", here[1024];
  const char *env = getenv("TEENYC_EMBEDDED_LIBRARY");
  if (env && *env) {
    if (!try_open(env, why, sizeof why) && !lib.why[0])
      snprintf(lib.why, sizeof lib.why, "$TEENYC_EMBEDDED_LIBRARY: %.900s", why);
    return;
  }
  beside_me(here, sizeof here);
  if (here[0] && try_open(here, why, sizeof why))
    return;
  if (lib.why[0]) /* found, but from another build */
    return;
  if (!try_open(TEENY__EMBEDDED_SONAME, why, sizeof why) && !lib.why[0])
    snprintf(lib.why, sizeof lib.why, "%.900s", why);
}
#endif

const teeny__embedded_api *teeny__embedded_get(char *err, size_t errsz) {
  pthread_once(&lib_once, load);
  if (!lib.api)
    teeny__seterr(err, errsz, TEENY_E_UNSUPPORTED,
                  "compiling in process needs %s (the in-process compiler), "
                  "which could not be loaded: %s",
                  TEENY__EMBEDDED_SONAME, lib.why);
  return lib.api;
}
