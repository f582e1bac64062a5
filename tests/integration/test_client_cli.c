/*
 * tests/integration/test_client_cli.c — the CLIs people expect (issue 15),
 * against the real teenycd on a temporary socket and store:
 *   - --version on teenycd, teenyctl, teenyc, teenyc-gen and teenyc run,
 *     all printing the CMake project version and the protocol version;
 *   - one size/duration parser: 5GB, 1.5G, 512MiB, 90min, 1.5h on teenycd's
 *     flags and config file, teenyctl's purge options, clear errors;
 *   - teenyctl config (the daemon's resolved settings, human and JSON; no
 *     remote password);
 *   - show by key prefix, id or kernel name; ambiguous: candidates, exit 6;
 *   - list: '…' instead of silent truncation, --wide, --sort by every
 *     column and --reverse (orders checked by python3 over --json);
 *   - --json that is valid UTF-8 ("Größe" stays "Größe"; bytes that are not
 *     UTF-8 become U+FFFD);
 *   - stats: store path, max size, write errors; --prometheus with the
 *     compile-time and hit-latency histograms (every line checked against
 *     the text format's grammar).
 * Each check fails on the main before these features (01a4731).
 */
#include <libgen.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "teeny/client.h"
#include "tests/integration/itest.h"

#define OUT_MAX 262144

typedef struct cli {
  const tdaemon *d;   /* the daemon under test */
  char out[OUT_MAX];  /* the last run's standard output */
  char err[OUT_MAX];  /* ... and standard error */
  char path[256];     /* where the output is written */
} cli;

static void slurp(const char *path, char *buf, size_t size) {
  size_t n = 0;
  char *s = tc_read_file(path, &n);
  snprintf(buf, size, "%s", s ? s : "");
  free(s);
}

/* Run the shell command cmd with its output in c->out / c->err: its exit
 * status (-1: did not run). */
static int sh(cli *c, const char *cmd) {
  char full[4096], epath[300];
  snprintf(c->path, sizeof c->path, "%s/cli.out", c->d->dir);
  snprintf(epath, sizeof epath, "%s/cli.err", c->d->dir);
  snprintf(full, sizeof full, "%s >'%s' 2>'%s'", cmd, c->path, epath);
  int st = system(full);
  slurp(c->path, c->out, sizeof c->out);
  slurp(epath, c->err, sizeof c->err);
  int code = st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  fprintf(stderr, "%s -> %d\n", cmd, code);
  return code;
}

/* teenyctl --socket SOCK ARGS */
static int ctl(cli *c, const char *args) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "'%s' --socket '%s' %s", getenv("TEENYCTL_BIN"), c->d->sock, args);
  return sh(c, cmd);
}

/* python3 runs code with the last output's path as sys.argv[1]: true when
 * it exits 0 (its complaints go to stderr). */
static bool py(const cli *c, const char *code) {
  char script[512], cmd[1024];
  snprintf(script, sizeof script, "%s/check.py", c->d->dir);
  FILE *f = fopen(script, "w");
  if (!f)
    return false;
  fputs(code, f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "python3 '%s' '%s'", script, c->path);
  int st = system(cmd);
  if (st != 0)
    fprintf(stderr, "python check failed on:\n%.4000s\n", c->out);
  return st == 0;
}

static int compile(teeny_client *t, const char *src, const char *kernel, const char *dt,
                   int64_t block) {
  teeny_dtype_binding d = {"D", dt};
  teeny_const_binding k = {"BLOCK_SIZE", block};
  teeny_compile_req req = {.source = src, .source_len = strlen(src), .kernel = kernel,
                           .dtypes = &d, .ndtypes = dt ? 1 : 0, .consts = &k,
                           .nconsts = block ? 1 : 0};
  teeny_client_result *r = NULL;
  int rc = teeny_client_compile(t, &req, TEENY_EMIT_PTX, &r);
  teeny_client_result_free(r);
  return rc;
}

#define LONG_NAME "a_kernel_with_a_name_longer_than_its_column"

static const char long_src[] = "#include <teeny/dsl.h>\nTEENY_KERNEL()\n"
                               "void " LONG_NAME "(ptr(f32) x) { store(x, 2.0f); }\n";
static const char badutf_src[] = "#include <teeny/dsl.h>\n// not UTF-8: \xff\xc3 (cut)\n"
                                 "TEENY_KERNEL()\nvoid badutf(ptr(f32) x) { store(x, 4.0f); }\n";
static const char gross_src[] = "#include <teeny/dsl.h>\n// Größe: the size, in German\n"
                                "TEENY_KERNEL()\nvoid gross(ptr(f32) x) { store(x, 3.0f); }\n";

/* vector_add for f32 and f16 (one name, two ids), softmax, a long name and
 * the UTF-8 comment; then one repeat (a memory hit).  6 compiles asked, 5
 * compiled.  With late, only the kernel whose source is not UTF-8. */
static int compile_all(const tdaemon *d, bool late) {
  teeny_client_opts o = {.mode = TEENY_MODE_DAEMON, .socket_path = d->sock,
                         .memo_entries = -1};
  teeny_client *t = NULL;
  size_t len;
  char *va = tc_kernel_source("vector_add", &len), *sm = tc_kernel_source("softmax", &len);
  int rc = va && sm ? teeny_client_open(&t, &o) : -1;
  if (!rc && late) {
    rc = compile(t, badutf_src, "badutf", NULL, 0);
    goto done;
  }
  if (!rc)
    rc = compile(t, va, "vector_add", "f32", 1024);
  if (!rc)
    rc = compile(t, va, "vector_add", "f16", 1024);
  if (!rc)
    rc = compile(t, sm, "softmax", "f32", 1024);
  if (!rc)
    rc = compile(t, long_src, LONG_NAME, NULL, 0);
  if (!rc)
    rc = compile(t, gross_src, "gross", NULL, 0);
  if (!rc)
    rc = compile(t, va, "vector_add", "f32", 1024); /* a hit */
done:
  teeny_client_close(t);
  free(va);
  free(sm);
  return rc;
}

/* ---- --version everywhere -------------------------------------------------------------- */

static bool version_ok(cli *c, const char *prog, const char *cmd) {
  char want[128];
  snprintf(want, sizeof want, "%s " TEENY_VERSION_STRING " (", prog);
  return sh(c, cmd) == 0 && strstr(c->out, want) && strstr(c->out, "protocol 1");
}

static int versions(cli *c) {
  char cmd[1024], dir[512];
  snprintf(dir, sizeof dir, "%s", getenv("TEENYC_BIN"));
  const char *bin = dirname(dir);
  snprintf(cmd, sizeof cmd, "'%s' --version", getenv("TEENYCD_BIN"));
  CHECK(version_ok(c, "teenycd", cmd));
  snprintf(cmd, sizeof cmd, "'%s' --version", getenv("TEENYCTL_BIN"));
  CHECK(version_ok(c, "teenyctl", cmd));
  snprintf(cmd, sizeof cmd, "'%s' -V", getenv("TEENYCTL_BIN"));
  CHECK(version_ok(c, "teenyctl", cmd));
  snprintf(cmd, sizeof cmd, "'%s' --version", getenv("TEENYC_BIN"));
  CHECK(version_ok(c, "teenyc", cmd));
  snprintf(cmd, sizeof cmd, "'%s/teenyc-gen' --version", bin);
  CHECK(version_ok(c, "teenyc-gen", cmd));
  snprintf(cmd, sizeof cmd, "PATH='%s':$PATH '%s' run --version", bin, getenv("TEENYC_BIN"));
  CHECK(version_ok(c, "teenyc run", cmd));
  snprintf(cmd, sizeof cmd, "'%s' --help", getenv("TEENYCTL_BIN"));
  CHECK(sh(c, cmd) == 0 && strstr(c->out, "--version") && strstr(c->out, "--prometheus") &&
        strstr(c->out, "--reverse") && strstr(c->out, "6 show matched"));
  return 0;
fail:
  return -1;
}

/* ---- sizes and durations: one parser --------------------------------------------------- */

static int bad_units(cli *c) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "'%s' --socket '%s/x.sock' --max-size 5XB", getenv("TEENYCD_BIN"),
           c->d->dir);
  CHECK_INT(sh(c, cmd), ==, 2);
  CHECK(strstr(c->err, "max_size: bad size '5XB'") && strstr(c->err, "512MiB"));
  snprintf(cmd, sizeof cmd, "'%s' --socket '%s/x.sock' --idle-timeout 5parsecs",
           getenv("TEENYCD_BIN"), c->d->dir);
  CHECK_INT(sh(c, cmd), ==, 2);
  CHECK(strstr(c->err, "idle_timeout: bad duration '5parsecs'") && strstr(c->err, "90min"));
  CHECK_INT(ctl(c, "purge --older-than 5parsecs"), ==, 2);
  CHECK(strstr(c->err, "bad duration '5parsecs'"));
  CHECK_INT(ctl(c, "purge --to-size 5XB"), ==, 2);
  CHECK(strstr(c->err, "bad size '5XB'"));
  CHECK_INT(ctl(c, "purge --older-than 90min"), ==, 0); /* nothing is that old */
  CHECK(strstr(c->out, "removed 0 entries"));
  CHECK_INT(ctl(c, "purge --to-size 1.5G"), ==, 0);
  CHECK(strstr(c->out, "removed 0 entries"));
  CHECK_INT(ctl(c, "purge --older-than 1.5h"), ==, 0);
  return 0;
fail:
  return -1;
}

/* ---- config ------------------------------------------------------------------------- */

static int config(cli *c, const char *conf) {
  CHECK_INT(ctl(c, "config"), ==, 0);
  CHECK(strstr(c->out, "max_size                 = 5G\n"));      /* --max-size 5GB */
  CHECK(strstr(c->out, "memcache_size            = 512M\n"));    /* file: 512MiB */
  CHECK(strstr(c->out, "idle_timeout             = 90min\n"));   /* file: 1.5h */
  CHECK(strstr(c->out, "flush_interval           = 250ms\n"));   /* --flush-interval */
  CHECK(strstr(c->out, "compile_timeout          = 1min\n"));    /* the default */
  CHECK(strstr(c->out, c->d->dir) && strstr(c->out, conf));
  CHECK_INT(ctl(c, "--json config"), ==, 0);
  CHECK(py(c, "import json, sys\n"
              "d = json.load(open(sys.argv[1], encoding='utf-8'))\n"
              "assert d['max_size'] == '5G' and d['memcache_size'] == '512M', d\n"
              "assert d['socket_mode'] == '0660' and d['log_level'] == 'debug', d\n"
              "assert d['cache_dir'].endswith('/store'), d\n"));
  CHECK_INT(ctl(c, "config --bogus"), ==, 2);
  return 0;
fail:
  return -1;
}

/* ---- show by prefix, id, name ------------------------------------------------------------ */

static int show(cli *c) {
  CHECK_INT(ctl(c, "show vector_add__f32__1024"), ==, 0); /* by id */
  CHECK(strstr(c->out, "id:         vector_add__f32__1024"));
  CHECK_INT(ctl(c, "show softmax"), ==, 0); /* by name: one entry */
  CHECK(strstr(c->out, "id:         softmax__f32__1024"));
  CHECK_INT(ctl(c, "show softmax --ptx"), ==, 0);
  CHECK(strstr(c->out, ".entry softmax_entry_point"));
  CHECK_INT(ctl(c, "show vector_add"), ==, 6); /* by name: two entries */
  CHECK(strstr(c->err, "candidates") && strstr(c->err, "vector_add__f32__1024") &&
        strstr(c->err, "vector_add__f16__1024"));
  CHECK_INT(ctl(c, "--json show vector_add"), ==, 6);
  CHECK(py(c, "import json, sys\n"
              "d = json.load(open(sys.argv[1]))\n"
              "assert d['error'] == 'AMBIGUOUS' and len(d['candidates']) == 2, d\n"));
  CHECK_INT(ctl(c, "show no_such_kernel"), ==, 1);
  CHECK(strstr(c->err, "no entry has the key prefix, id or kernel name 'no_such_kernel'"));
  CHECK_INT(ctl(c, "show"), ==, 2);
  /* the key prefix still works, and is found from list's short key */
  CHECK_INT(ctl(c, "--json list --sort name"), ==, 0);
  char *k = strstr(c->out, "\"key\": \"");
  CHECK(k);
  char args[128];
  snprintf(args, sizeof args, "show %.12s", k + 8);
  CHECK_INT(ctl(c, args), ==, 0);
  CHECK(strstr(c->out, "key:"));
  return 0;
fail:
  return -1;
}

/* ---- list: no silent truncation, every sort ------------------------------------------------ */

static int list_wide(cli *c) {
  CHECK_INT(ctl(c, "list"), ==, 0);
  CHECK(!strstr(c->out, LONG_NAME));                  /* cut ... */
  CHECK(strstr(c->out, "a_kernel_with_a_name_lo\xe2\x80\xa6")); /* ... visibly */
  CHECK(strstr(c->out, "5 entries"));
  CHECK_INT(ctl(c, "list --wide"), ==, 0);
  CHECK(strstr(c->out, LONG_NAME " ") && !strstr(c->out, "\xe2\x80\xa6"));
  CHECK_INT(ctl(c, "--json list --limit 1 --sort name"), ==, 0);
  CHECK(strstr(c->out, LONG_NAME) && !strstr(c->out, "softmax"));
  CHECK_INT(ctl(c, "--json list --sort name --reverse --limit 1"), ==, 0);
  CHECK(strstr(c->out, "vector_add") && !strstr(c->out, LONG_NAME));
  CHECK_INT(ctl(c, "list --sort sideways"), ==, 2);
  CHECK(strstr(c->err, "created or compile"));
  return 0;
fail:
  return -1;
}

static int list_sorts(cli *c) {
  static const struct { const char *col, *field; bool text; } cols[] = {
      {"key", "key", true},       {"name", "name", true},       {"id", "id", true},
      {"target", "target", true}, {"warps", "num_warps", false}, {"size", "size", false},
      {"cubins", "cubins", false}, {"hits", "hits", false},     {"used", "last_used", false},
      {"created", "created", false}, {"compile", "compile_ms", false}};
  for (size_t i = 0; i < sizeof cols / sizeof *cols; i++)
    for (int rev = 0; rev < 2; rev++) {
      char args[128], code[600];
      snprintf(args, sizeof args, "--json list --sort %s%s", cols[i].col,
               rev ? " --reverse" : "");
      CHECK_INT(ctl(c, args), ==, 0);
      bool ascending = cols[i].text != (rev == 1);
      snprintf(code, sizeof code,
               "import json, sys\n"
               "e = json.load(open(sys.argv[1]))['entries']\n"
               "v = [x['%s'] for x in e]\n"
               "assert len(v) == 5, v\n"
               "assert v == sorted(v, reverse=%s), v\n",
               cols[i].field, ascending ? "False" : "True");
      CHECK(py(c, code));
    }
  return 0;
fail:
  return -1;
}

/* ---- JSON is UTF-8 ------------------------------------------------------------------------- */

static int utf8(cli *c) {
  CHECK_INT(ctl(c, "--json show gross --source"), ==, 0);
  CHECK(strstr(c->out, "// Größe: the size")); /* the bytes themselves */
  CHECK(!strstr(c->out, "\\u00c3"));           /* not Latin-1 mojibake */
  CHECK(py(c, "import json, sys\n"
              "raw = open(sys.argv[1], 'rb').read()\n"
              "d = json.loads(raw.decode('utf-8', 'strict'))\n"
              "assert 'Größe' in d['source'], d['source'][:200]\n"
              "assert d['entry']['name'] == 'gross'\n"));
  /* bytes that are not UTF-8 (texts need not be): U+FFFD, still valid */
  CHECK(compile_all(c->d, true) == 0);
  CHECK_INT(ctl(c, "--json show badutf --source"), ==, 0);
  CHECK(py(c, "import json, sys\n"
              "raw = open(sys.argv[1], 'rb').read()\n"
              "d = json.loads(raw.decode('utf-8', 'strict'))\n"
              "assert '// not UTF-8: \\ufffd\\ufffd (cut)' in d['source'], d['source'][:200]\n"));
  return 0;
fail:
  return -1;
}

/* ---- stats: store, max size, write errors, Prometheus --------------------------------------- */

static const char prom_check[] =
    "import re, sys\n"
    "lines = open(sys.argv[1]).read().splitlines()\n"
    "sample = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\\{[a-zA-Z_][a-zA-Z0-9_]*=\"(\\\\.|[^\"\\\\])*\""
    "(,[a-zA-Z_][a-zA-Z0-9_]*=\"(\\\\.|[^\"\\\\])*\")*\\})? (NaN|[+-]?Inf|[-+0-9.eE]+)$')\n"
    "meta = re.compile(r'^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .*$')\n"
    "types = {}\n"
    "vals = {}\n"
    "for l in lines:\n"
    "    assert sample.match(l) or meta.match(l), 'bad line: ' + l\n"
    "    if l.startswith('# TYPE '):\n"
    "        _, _, name, t = l.split(' ')\n"
    "        assert name not in types, 'twice: ' + name\n"
    "        types[name] = t\n"
    "    elif not l.startswith('#'):\n"
    "        k, v = l.rsplit(' ', 1)\n"
    "        vals[k] = float(v)\n"
    "assert types['teenycd_compile_seconds'] == 'histogram'\n"
    "assert types['teenycd_hit_seconds'] == 'histogram'\n"
    "assert types['teenycd_compiles_total'] == 'counter'\n"
    "assert vals['teenycd_compile_seconds_count'] == vals['teenycd_compiles_total'] == 5, vals\n"
    "assert vals['teenycd_compile_seconds_bucket{le=\"+Inf\"}'] == 5\n"
    "assert vals['teenycd_hit_seconds_count'] == vals['teenycd_hits_total'] >= 1, vals\n"
    "assert vals['teenycd_store_write_errors_total'] == 0\n"
    "assert vals['teenycd_max_bytes'] == 5 * 2**30\n"
    "b = [v for k, v in vals.items() if k.startswith('teenycd_compile_seconds_bucket')]\n"
    "assert b == sorted(b), b\n"
    "assert any(k.startswith('teenycd_info{') and '/store\"' in k for k in vals), vals\n";

static int stats(cli *c) {
  CHECK_INT(ctl(c, "stats"), ==, 0);
  CHECK(strstr(c->out, "of max size 5.0 GiB") && strstr(c->out, "store write errors 0"));
  CHECK(strstr(c->out, c->d->dir) && strstr(c->out, "/store\n"));
  CHECK_INT(ctl(c, "--json stats"), ==, 0);
  CHECK(py(c, "import json, sys\n"
              "d = json.load(open(sys.argv[1]))\n"
              "assert d['store'].endswith('/store') and d['max_bytes'] == 5 * 2**30, d\n"
              "h = d['histograms']['compile_seconds']\n"
              "assert h['count'] == d['compiles'] == 5 and sum(h['counts']) == 5, h\n"
              "assert len(h['counts']) == len(h['le']) + 1\n"
              "assert d['histograms']['hit_seconds']['count'] == d['hits'], d\n"));
  CHECK_INT(ctl(c, "stats --prometheus"), ==, 0);
  CHECK(strstr(c->out, "# TYPE teenycd_compile_seconds histogram\n"));
  CHECK(py(c, prom_check));
  CHECK_INT(ctl(c, "stats --prometheus --json"), ==, 2);
  return 0;
fail:
  return -1;
}

/* config on a daemon with a remote tier: the URL's password is not shown. */
static int config_secret(cli *c) {
  tdaemon d2;
  const tdaemon *d1 = c->d;
  bool failed = true;
  CHECK(td_init(&d2) == 0);
  const char *args[] = {"--remote", "redis://alice:s3cret@127.0.0.1:1/0", NULL};
  CHECK(td_start(&d2, args, NULL) == 0);
  c->d = &d2;
  CHECK_INT(ctl(c, "config"), ==, 0);
  CHECK(strstr(c->out, "remote                   = redis://alice:***@127.0.0.1:1/0\n"));
  CHECK(!strstr(c->out, "s3cret"));
  CHECK_INT(ctl(c, "--json config"), ==, 0);
  CHECK(!strstr(c->out, "s3cret") && strstr(c->out, "alice:***@"));
  failed = false;
fail:
  c->d = d1;
  return td_fini(&d2, failed) ? -1 : 0;
}

int it_client_teenyctl_cli(void); /* run by test_client.c's main */
int it_client_teenyctl_cli(void) {
  tdaemon d;
  static cli c;
  char conf[512];
  bool failed = true;
  c.d = &d;
  CHECK(getenv("TEENYCTL_BIN") && getenv("TEENYCD_BIN") && getenv("TEENYC_BIN"));
  if (system("python3 -c 'import json, re' 2>/dev/null") != 0) {
    fprintf(stderr, "SKIP: needs python3\n");
    return IT_SKIP;
  }
  CHECK(td_init(&d) == 0);
  snprintf(conf, sizeof conf, "%s/teenycd.conf", d.dir);
  FILE *f = fopen(conf, "w");
  CHECK(f);
  fputs("memcache_size = 512MiB\nidle_timeout = 1.5h  # 90min\n", f);
  fclose(f);
  char store[600];
  snprintf(store, sizeof store, "%s/store", d.dir);
  const char *args[] = {"--config", conf, "--max-size", "5GB", "--flush-interval", "250ms",
                        "--cache-dir", store, NULL};
  CHECK(td_start(&d, args, NULL) == 0);
  CHECK(versions(&c) == 0);
  CHECK(compile_all(&d, false) == 0);
  CHECK(config(&c, conf) == 0);
  CHECK(config_secret(&c) == 0);
  CHECK(show(&c) == 0);
  CHECK(list_wide(&c) == 0);
  CHECK(list_sorts(&c) == 0);
  CHECK(stats(&c) == 0);
  CHECK(utf8(&c) == 0); /* adds a sixth entry */
  CHECK(bad_units(&c) == 0);
  failed = false;
fail:
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}
