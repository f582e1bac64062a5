/*
 * proto/msg_admin.c — the parts of admin replies added with `teenyctl
 * config` and `stats --prometheus` (PROTOCOL.md §4.4, §4.14): the stats
 * reply's optional `store` and `histograms`, and the config reply's
 * `settings`.
 *
 * All are optional on the wire in the stats reply (older servers do not
 * send them; older clients ignore them, §8).  Decoding is as strict as the
 * rest: bounds finite and ascending, one more count than bounds, counts
 * summing to `count`, at most TEENY_PROTO_MAX_HISTS histograms of at most
 * TEENY_PROTO_MAX_BOUNDS bounds.  Called once per stats or config request.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "proto/mp.h"

/* ---- histograms ------------------------------------------------------------- */

/* le: the array of bounds of histogram h. */
static int decode_bounds(teeny__dec *d, const char *where, const teeny__field *f,
                         teeny_msg_hist *h) {
  const msgpack_object *a = NULL;
  int rc = teeny__get_array(d, where, f, true, TEENY_PROTO_MAX_BOUNDS, &a);
  if (rc)
    return rc;
  if (a->via.array.size == 0)
    return teeny__dec_fail(d, TEENY_E_PROTO, "field '%s.le': no bounds", where);
  double *le = teeny__mem_array(d->mem, a->via.array.size, sizeof *le);
  if (!le)
    return teeny__dec_fail(d, TEENY_E_NOMEM, "out of memory");
  for (uint32_t i = 0; i < a->via.array.size; i++) {
    teeny__field x = {"le", &a->via.array.ptr[i]};
    if ((rc = teeny__get_ms(d, where, &x, true, DBL_MAX, &le[i])))
      return rc;
    if (i && le[i] <= le[i - 1])
      return teeny__dec_fail(d, TEENY_E_PROTO, "field '%s.le': not ascending", where);
  }
  h->le = le;
  h->nle = a->via.array.size;
  return 0;
}

/* counts: one more than bounds, summing to count. */
static int decode_counts(teeny__dec *d, const char *where, const teeny__field *f,
                         teeny_msg_hist *h) {
  const msgpack_object *a = NULL;
  int rc = teeny__get_array(d, where, f, true, TEENY_PROTO_MAX_BOUNDS + 1, &a);
  if (rc)
    return rc;
  if (a->via.array.size != h->nle + 1)
    return teeny__dec_fail(d, TEENY_E_PROTO, "field '%s.counts': want %zu counts", where,
                           h->nle + 1);
  uint64_t *counts = teeny__mem_array(d->mem, a->via.array.size, sizeof *counts);
  if (!counts)
    return teeny__dec_fail(d, TEENY_E_NOMEM, "out of memory");
  uint64_t total = 0;
  for (uint32_t i = 0; i < a->via.array.size; i++) {
    teeny__field x = {"counts", &a->via.array.ptr[i]};
    if ((rc = teeny__get_u64(d, where, &x, true, 0, UINT64_MAX - total, &counts[i])))
      return rc;
    total += counts[i];
  }
  if (total != h->count)
    return teeny__dec_fail(d, TEENY_E_PROTO, "field '%s.counts': do not sum to count",
                           where);
  h->counts = counts;
  return 0;
}

static int decode_hist(teeny__dec *d, const msgpack_object_kv *kv, teeny_msg_hist *h) {
  teeny__field key = {"histograms", &kv->key}, v = {"histograms", &kv->val};
  const msgpack_object *m = NULL;
  int rc = teeny__get_str(d, NULL, &key, true, TEENY_PROTO_MAX_NAME, &h->name);
  if (!rc)
    rc = teeny__get_map(d, NULL, &v, true, SIZE_MAX, &m);
  if (rc)
    return rc;
  teeny__field f[] = {{"le", NULL}, {"counts", NULL}, {"sum", NULL}, {"count", NULL}};
  const char *where = "histograms";
  if ((rc = teeny__dec_fields(d, m, where, f, 4)) ||
      (rc = teeny__get_ms(d, where, &f[2], true, DBL_MAX, &h->sum)) ||
      (rc = teeny__get_u64(d, where, &f[3], true, 0, UINT64_MAX, &h->count)) ||
      (rc = decode_bounds(d, where, &f[0], h)))
    return rc;
  return decode_counts(d, where, &f[1], h);
}

int teeny__decode_stats_more(teeny__dec *d, const msgpack_object *root,
                             teeny_msg_stats_reply *s) {
  teeny__field f[] = {{"store", NULL}, {"histograms", NULL}};
  const msgpack_object *m = NULL;
  int rc = teeny__dec_fields(d, root, NULL, f, 2);
  if (!rc)
    rc = teeny__get_str(d, NULL, &f[0], false, TEENY_PROTO_MAX_TEXT, &s->store);
  if (!rc)
    rc = teeny__get_map(d, NULL, &f[1], false, TEENY_PROTO_MAX_HISTS, &m);
  if (rc || !m || m->via.map.size == 0)
    return rc;
  s->hists = teeny__mem_array(d->mem, m->via.map.size, sizeof *s->hists);
  if (!s->hists)
    return teeny__dec_fail(d, TEENY_E_NOMEM, "out of memory");
  for (uint32_t i = 0; i < m->via.map.size; i++, s->nhists++)
    if ((rc = decode_hist(d, &m->via.map.ptr[i], &s->hists[i])))
      return rc;
  return 0;
}

static bool hist_ok(const teeny_msg_hist *h) {
  if (!teeny__str_ok(h->name, TEENY_PROTO_MAX_NAME) || !h->le || !h->counts ||
      h->nle == 0 || h->nle > TEENY_PROTO_MAX_BOUNDS || !isfinite(h->sum) || h->sum < 0)
    return false;
  uint64_t total = 0;
  for (size_t i = 0; i <= h->nle; i++) {
    if (i < h->nle && (!isfinite(h->le[i]) || h->le[i] < 0 || (i && h->le[i] <= h->le[i - 1])))
      return false;
    total += h->counts[i];
  }
  return total == h->count;
}

int teeny__stats_more_fields(const teeny_msg_stats_reply *s) {
  if ((s->store && !teeny__str_ok(s->store, TEENY_PROTO_MAX_TEXT)) ||
      s->nhists > TEENY_PROTO_MAX_HISTS || (s->nhists && !s->hists))
    return -1;
  for (size_t i = 0; i < s->nhists; i++)
    if (!hist_ok(&s->hists[i]))
      return -1;
  return (s->store != NULL) + (s->nhists > 0);
}

void teeny__put_stats_more(teeny__enc *e, const teeny_msg_stats_reply *s) {
  if (s->store)
    teeny__kv_str(e, "store", s->store);
  if (!s->nhists)
    return;
  teeny__put_str(e, "histograms");
  teeny__put_map(e, s->nhists);
  for (size_t i = 0; i < s->nhists; i++) {
    const teeny_msg_hist *h = &s->hists[i];
    teeny__put_str(e, h->name);
    teeny__put_map(e, 4);
    teeny__put_str(e, "le");
    teeny__put_array(e, h->nle);
    for (size_t k = 0; k < h->nle; k++)
      teeny__put_f64(e, h->le[k]);
    teeny__put_str(e, "counts");
    teeny__put_array(e, h->nle + 1);
    for (size_t k = 0; k <= h->nle; k++)
      teeny__put_u64(e, h->counts[k]);
    teeny__kv_f64(e, "sum", h->sum);
    teeny__kv_u64(e, "count", h->count);
  }
}

/* ---- config ------------------------------------------------------------------ */

int teeny__decode_config_reply(teeny__dec *d, const msgpack_object *root,
                               teeny_msg_config_reply *c) {
  teeny__field f[] = {{"settings", NULL}};
  const msgpack_object *m = NULL;
  int rc = teeny__dec_fields(d, root, NULL, f, 1);
  if (!rc)
    rc = teeny__get_map(d, NULL, &f[0], true, TEENY_PROTO_MAX_SETTINGS, &m);
  if (rc || m->via.map.size == 0)
    return rc;
  c->settings = teeny__mem_array(d->mem, m->via.map.size, sizeof *c->settings);
  if (!c->settings)
    return teeny__dec_fail(d, TEENY_E_NOMEM, "out of memory");
  for (uint32_t i = 0; i < m->via.map.size; i++, c->nsettings++) {
    teeny__field k = {"settings", &m->via.map.ptr[i].key};
    teeny__field v = {"settings", &m->via.map.ptr[i].val};
    teeny_msg_setting *s = &c->settings[i];
    if ((rc = teeny__get_str(d, NULL, &k, true, TEENY_PROTO_MAX_NAME, &s->key)) ||
        (rc = teeny__get_str(d, NULL, &v, true, TEENY_PROTO_MAX_TEXT, &s->value)))
      return rc;
  }
  return 0;
}

int teeny__config_reply_fields(const teeny_msg_config_reply *c) {
  if (c->nsettings > TEENY_PROTO_MAX_SETTINGS || (c->nsettings && !c->settings))
    return -1;
  for (size_t i = 0; i < c->nsettings; i++)
    if (!teeny__str_ok(c->settings[i].key, TEENY_PROTO_MAX_NAME) ||
        !teeny__str_ok(c->settings[i].value, TEENY_PROTO_MAX_TEXT))
      return -1;
  return 1;
}

void teeny__put_config_reply(teeny__enc *e, const teeny_msg_config_reply *c) {
  teeny__put_str(e, "settings");
  teeny__put_map(e, c->nsettings);
  for (size_t i = 0; i < c->nsettings; i++) {
    teeny__kv_str(e, c->settings[i].key, c->settings[i].value);
  }
}
