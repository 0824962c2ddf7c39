/* Post-processing stages on the model's output 0: dequantise, softmax,
 * argmax and top-k.
 *
 * Dequantise and softmax are TOSA.  Ranking (argmax, top-k) is one
 * reduction (a linalg.generic) over the model's own output values, mapped to
 * int32 keys that order exactly as those values do, so the chosen classes do
 * not depend on rounding in the scores.  The reduction keeps the k best so
 * far in k slots, best first, and inserts each element with a branch-free
 * compare-and-shift: O(k N) with no sort and no masks.  A strict compare
 * keeps the earlier index ahead on ties.  One more loop over the k results
 * writes the indices and reads their scores. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "prepost_internal.h"

#define MAX_TOP_K 64 /* the selection keeps 2 k values per element */

static int64_t last_dim(const te_type_t *t) { return t->rank ? t->dims[t->rank - 1] : 1; }

static int wants_scores(const tinyml_postprocess_t *q) {
  return q->dequantize || q->softmax;
}

static int check_scores(pp_t *p) {
  const pp_port_t *o = &p->out;
  const tinyml_postprocess_t *q = p->post;
  if (!wants_scores(q) && !q->top_k) return 0;
  if (o->quant_count > 1)
    return pp_fail(p, "output 0 '%s' is quantised per axis; post-processing dequantises "
                      "per-tensor outputs only", o->name);
  if (o->type.elem != TE_F32 && !o->quant_count && wants_scores(q))
    return pp_fail(p, "%s needs a float32 or quantised output 0, and '%s' is %s without "
                      "quantisation parameters", q->softmax ? "softmax" : "dequantize",
                   o->name, pp_dtype_name(o));
  return 0;
}

static int check_top_k(pp_t *p) {
  const pp_port_t *o = &p->out;
  uint32_t k = p->post->top_k;
  int64_t n = last_dim(&o->type), rows = te_numel(&o->type) / (n ? n : 1);
  if (!k) return 0;
  if (rows != 1) {
    char dims[96];
    pp_dims_text(&o->type, dims, sizeof(dims));
    return pp_fail(p, "top_k needs one row of scores; output 0 '%s' is %s", o->name, dims);
  }
  if ((int64_t)k > n)
    return pp_fail(p, "top_k %u is larger than the %lld classes of output 0 '%s'", k,
                   (long long)n, o->name);
  if (k > MAX_TOP_K)
    return pp_fail(p, "top_k %u is more than %d, the most this selection supports", k,
                   MAX_TOP_K);
  return 0;
}

int pp_check_post(pp_t *p) {
  const pp_port_t *o = &p->out;
  const tinyml_postprocess_t *q = p->post;
  if (te_numel(&o->type) == 0)
    return pp_fail(p, "output 0 '%s' has no elements", o->name);
  if (o->type.rank == 0 && (q->softmax || q->argmax || q->top_k))
    return pp_fail(p, "output 0 '%s' is a scalar, so it has no class axis for %s", o->name,
                   q->softmax ? "softmax" : q->argmax ? "argmax" : "top_k");
  if (check_scores(p)) return 1;
  return check_top_k(p);
}

/* ---- values -------------------------------------------------------------- */

/* float32 scores: (q - zero_point) * scale for quantised outputs; the
 * subtraction is exact, so there is one rounding as in TFLite. */
static te_value_t scores_of(pp_t *p, te_value_t x) {
  te_t *e = &p->e;
  if (x.type.elem == TE_F32) return x;
  int64_t zp = p->out.quant_count ? p->out.zero_point : 0;
  if (x.type.elem == TE_I8 && p->out.is_unsigned) {
    x = te_binary(e, "tosa.bitwise_xor", x, te_scalar_int(e, TE_I8, -128));
    zp -= 128;
  }
  te_value_t f = te_cast(e, x, TE_F32);
  if (!p->out.quant_count) return f;
  f = te_binary(e, "tosa.add", f, te_scalar_f32(e, (float)-zp));
  return te_mul(e, f, te_scalar_f32(e, p->out.scale), 0);
}

/* exp(x - max) / sum, over the last axis, as reciprocal times each term. */
static te_value_t softmax(pp_t *p, te_value_t x) {
  te_t *e = &p->e;
  int32_t axis = (int32_t)x.type.rank - 1;
  te_value_t m = te_reduce(e, "tosa.reduce_max", x, axis);
  te_value_t ex = te_unary(e, "tosa.exp", te_binary(e, "tosa.sub", x, m));
  te_value_t inv = te_unary(e, "tosa.reciprocal", te_reduce(e, "tosa.reduce_sum", ex, axis));
  return te_mul(e, ex, inv, 0);
}

/* Generic bodies write SSA values %t<N>. */
typedef struct tbody {
  strbuf_t *sb;
  uint32_t n;
} tbody_t;

static uint32_t tline(tbody_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static uint32_t tline(tbody_t *b, const char *fmt, ...) {
  char text[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof(text), fmt, ap);
  va_end(ap);
  strbuf_printf(b->sb, "      %%t%u = %s\n", ++b->n, text);
  return b->n;
}

/* An int32 key that orders as output element %t<x> does: uint8 (carried
 * as i8) flips its top bit; float32 maps its bits to two's-complement
 * order (negative floats reverse their magnitude bits). */
static uint32_t key_of(pp_t *p, tbody_t *b, uint32_t x) {
  te_elem_t el = p->out.type.elem;
  if (el == TE_I32) return x;
  if (el == TE_I8 && p->out.is_unsigned)
    x = tline(b, "arith.xori %%t%u, %%t%u : i8", x, tline(b, "arith.constant -128 : i8"));
  if (el != TE_F32) return tline(b, "arith.extsi %%t%u : %s to i32", x, te_elem_name(el));
  uint32_t bits = tline(b, "arith.bitcast %%t%u : f32 to i32", x);
  uint32_t sign = tline(b, "arith.shrsi %%t%u, %%t%u : i32", bits,
                        tline(b, "arith.constant 31 : i32"));
  uint32_t mag = tline(b, "arith.andi %%t%u, %%t%u : i32", sign,
                       tline(b, "arith.constant 2147483647 : i32"));
  return tline(b, "arith.xori %%t%u, %%t%u : i32", bits, mag);
}

/* Slot s takes the new element when it beats the slot or the slot is
 * still empty (j <= s: fewer than s + 1 elements seen); the slot above
 * it taking the element shifts the old value down.  So empty slots are
 * never compared, and their initial values never matter. */
static void insert(tbody_t *b, uint32_t k, uint32_t key, uint32_t j, uint32_t *out_keys,
                   uint32_t *out_idx) {
  uint32_t above = 0; /* the previous slot's "takes it" flag; none for slot 0 */
  for (uint32_t s = 0; s < k; ++s) {
    uint32_t empty = tline(b, "arith.cmpi sle, %%t%u, %%t%u : i32", j,
                           tline(b, "arith.constant %u : i32", s));
    uint32_t beats = tline(b, "arith.cmpi sgt, %%t%u, %%sk%u : i32", key, s);
    uint32_t takes = tline(b, "arith.ori %%t%u, %%t%u : i1", empty, beats);
    uint32_t nk = tline(b, "arith.select %%t%u, %%t%u, %%sk%u : i32", takes, key, s);
    uint32_t ni = tline(b, "arith.select %%t%u, %%t%u, %%si%u : i32", takes, j, s);
    if (s > 0) {
      nk = tline(b, "arith.select %%t%u, %%sk%u, %%t%u : i32", above, s - 1, nk);
      ni = tline(b, "arith.select %%t%u, %%si%u, %%t%u : i32", above, s - 1, ni);
    }
    out_keys[s] = nk;
    out_idx[s] = ni;
    above = takes;
  }
}

static void put_repeated(strbuf_t *sb, const char *text, uint32_t n, const char *sep) {
  for (uint32_t i = 0; i < n; ++i) strbuf_printf(sb, "%s%s", i ? sep : "", text);
}

/* One init per slot: outs that share one tensor would share one buffer,
 * and distinct fill values keep CSE from merging the fills. */
static void put_slot_inits(te_t *e, uint32_t count, const char *slot, uint32_t *fills) {
  uint32_t empty = ++e->next_id;
  strbuf_printf(e->sb, "    %%v%u = tensor.empty() : %s\n", empty, slot);
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t c = ++e->next_id;
    fills[i] = ++e->next_id;
    strbuf_printf(e->sb, "    %%v%u = arith.constant %u : i32\n    %%v%u = linalg.fill ins(%%v%u "
                         ": i32) outs(%%v%u : %s) -> %s\n", c, i, fills[i], c, empty, slot, slot);
  }
}

/* The reduction's body: block arguments %t0 (the element, so key_of() can
 * name it like any body value), %sk<s> and %si<s> (slot s's key, index). */
static void put_select_body(pp_t *p, uint32_t k, const char *slot) {
  strbuf_t *sb = p->e.sb;
  strbuf_printf(sb, ") {\n    ^bb0(%%t0: %s", te_elem_name(p->out.type.elem));
  for (uint32_t s = 0; s < k; ++s) strbuf_printf(sb, ", %%sk%u: i32", s);
  for (uint32_t s = 0; s < k; ++s) strbuf_printf(sb, ", %%si%u: i32", s);
  strbuf_append(sb, "):\n");
  tbody_t b = {sb, 0};
  uint32_t j = tline(&b, "arith.index_cast %%t%u : index to i32", tline(&b, "linalg.index 1 : index"));
  uint32_t keys[MAX_TOP_K], ids[MAX_TOP_K];
  insert(&b, k, key_of(p, &b, 0), j, keys, ids);
  strbuf_append(sb, "      linalg.yield ");
  for (uint32_t s = 0; s < 2 * k; ++s)
    strbuf_printf(sb, "%s%%t%u", s ? ", " : "", s < k ? keys[s] : ids[s - k]);
  strbuf_append(sb, " : ");
  put_repeated(sb, "i32", 2 * k, ", ");
  strbuf_append(sb, "\n    } -> (");
  put_repeated(sb, slot, 2 * k, ", ");
  strbuf_append(sb, ")\n");
}

/* The k best of each row of `out` (rows x N): idx[s] is int32 [rows], the
 * index of each row's (s+1)-th largest element. */
static void select_top(pp_t *p, te_value_t out, uint32_t k, te_value_t *idx) {
  te_t *e = &p->e;
  int64_t n = last_dim(&out.type), rows = te_numel(&out.type) / n, shape[2] = {rows, n};
  te_value_t x = te_reshape(e, out, 2, shape);
  char slot[64];
  snprintf(slot, sizeof(slot), "tensor<%lldxi32>", (long long)rows);
  uint32_t fills[2 * MAX_TOP_K];
  put_slot_inits(e, 2 * k, slot, fills);
  uint32_t first = e->next_id + 1;
  strbuf_append(e->sb, "    ");
  for (uint32_t i = 0; i < 2 * k; ++i) strbuf_printf(e->sb, "%s%%v%u", i ? ", " : "", ++e->next_id);
  strbuf_append(e->sb, " = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, ");
  put_repeated(e->sb, "affine_map<(d0, d1) -> (d0)>", 2 * k, ", ");
  strbuf_printf(e->sb, "], iterator_types = [\"parallel\", \"reduction\"]} ins(%%v%u : ", x.id);
  te_print_type(e, &x.type);
  strbuf_append(e->sb, ") outs(");
  for (uint32_t i = 0; i < 2 * k; ++i) strbuf_printf(e->sb, "%s%%v%u", i ? ", " : "", fills[i]);
  strbuf_append(e->sb, " : ");
  put_repeated(e->sb, slot, 2 * k, ", ");
  put_select_body(p, k, slot);
  te_type_t st = te_type(TE_I32, 1, &rows);
  for (uint32_t s = 0; s < k; ++s) idx[s] = (te_value_t){first + k + s, st};
}

/* Index of the largest element along the last axis; the first on ties. */
static te_value_t argmax(pp_t *p, te_value_t out) {
  te_value_t idx;
  select_top(p, out, 1, &idx);
  te_type_t t = out.type;
  t.rank -= 1;
  if (t.rank == 0) return idx;
  return te_reshape(&p->e, idx, t.rank, t.dims);
}

/* Pick number linalg.index 0 of the k picks: a select chain. */
static uint32_t chosen(tbody_t *b, const te_value_t *picks, uint32_t k, uint32_t r, uint32_t c0) {
  uint32_t sel = tline(b, "tensor.extract %%v%u[%%t%u] : tensor<1xi32>", picks[k - 1].id, c0);
  for (uint32_t j = k - 1; j-- > 0;) {
    uint32_t v = tline(b, "tensor.extract %%v%u[%%t%u] : tensor<1xi32>", picks[j].id, c0);
    uint32_t cj = tline(b, "arith.constant %u : index", j);
    uint32_t is = tline(b, "arith.cmpi eq, %%t%u, %%t%u : index", r, cj);
    sel = tline(b, "arith.select %%t%u, %%t%u, %%t%u : i32", is, v, sel);
  }
  return sel;
}

/* The score of class `idx` from `src` (N elements): as scores_of() would
 * compute it, or read from the softmax. */
static uint32_t score_at(pp_t *p, tbody_t *b, te_value_t src, uint32_t idx) {
  char ty[64];
  snprintf(ty, sizeof(ty), "tensor<%lldx%s>", (long long)src.type.dims[0],
           te_elem_name(src.type.elem));
  uint32_t at = tline(b, "arith.index_cast %%t%u : i32 to index", idx);
  uint32_t v = tline(b, "tensor.extract %%v%u[%%t%u] : %s", src.id, at, ty);
  if (src.type.elem == TE_F32) return v;
  const char *el = te_elem_name(src.type.elem);
  int64_t zp = p->out.quant_count ? p->out.zero_point : 0;
  if (src.type.elem == TE_I8 && p->out.is_unsigned) {
    uint32_t m = tline(b, "arith.constant -128 : i8");
    v = tline(b, "arith.xori %%t%u, %%t%u : i8", v, m);
    zp -= 128;
  }
  uint32_t f = tline(b, "arith.sitofp %%t%u : %s to f32", v, el);
  if (!p->out.quant_count) return f;
  char zc[32], sc[32];
  te_f32_attr((float)-zp, zc);
  te_f32_attr(p->out.scale, sc);
  f = tline(b, "arith.addf %%t%u, %%t%u : f32", f, tline(b, "arith.constant %s", zc));
  return tline(b, "arith.mulf %%t%u, %%t%u : f32", f, tline(b, "arith.constant %s", sc));
}

/* One loop over the k results writes both outputs: the picks in order and
 * their scores read from `src`. */
static void top_k_results(pp_t *p, const te_value_t *picks, uint32_t k, te_value_t src,
                          pp_result_t *res) {
  strbuf_t *sb = p->e.sb;
  int64_t len = k;
  te_type_t it = te_type(TE_I32, 1, &len), ft = te_type(TE_F32, 1, &len);
  uint32_t ei = ++p->e.next_id, ef = ++p->e.next_id;
  strbuf_printf(sb, "    %%v%u = tensor.empty() : tensor<%uxi32>\n", ei, k);
  strbuf_printf(sb, "    %%v%u = tensor.empty() : tensor<%uxf32>\n", ef, k);
  res[0] = (pp_result_t){{++p->e.next_id, it}, "top_k_indices"};
  res[1] = (pp_result_t){{++p->e.next_id, ft}, "top_k_scores"};
  strbuf_printf(sb, "    %%v%u, %%v%u = linalg.generic {indexing_maps = [affine_map<(d0) -> "
                    "(d0)>, affine_map<(d0) -> (d0)>], iterator_types = [\"parallel\"]} "
                    "outs(%%v%u, %%v%u : tensor<%uxi32>, tensor<%uxf32>) {\n"
                    "    ^bb0(%%tout0: i32, %%tout1: f32):\n",
                res[0].value.id, res[1].value.id, ei, ef, k, k);
  tbody_t b = {sb, 0};
  uint32_t r = tline(&b, "linalg.index 0 : index"), c0 = tline(&b, "arith.constant 0 : index");
  uint32_t idx = chosen(&b, picks, k, r, c0);
  uint32_t score = score_at(p, &b, src, idx);
  strbuf_printf(sb, "      linalg.yield %%t%u, %%t%u : i32, f32\n    } -> (tensor<%uxi32>, "
                    "tensor<%uxf32>)\n", idx, score, k, k);
}

/* Scores are read only at the k picks, so without softmax the raw output
 * is read and dequantised there rather than in full. */
static te_value_t top_k(pp_t *p, te_value_t out, te_value_t soft, pp_result_t *res) {
  uint32_t k = p->post->top_k;
  int64_t n = last_dim(&out.type);
  te_value_t picks[MAX_TOP_K];
  select_top(p, out, k, picks);
  te_value_t src = te_reshape(&p->e, soft.id ? soft : out, 1, &n);
  top_k_results(p, picks, k, src, res);
  return picks[0];
}

uint32_t pp_emit_post(pp_t *p, te_value_t out, pp_result_t *res) {
  const tinyml_postprocess_t *q = p->post;
  te_value_t soft = q->softmax ? softmax(p, scores_of(p, out)) : (te_value_t){0};
  uint32_t n = 0;
  te_value_t best = {0};
  if (q->top_k) {
    best = top_k(p, out, soft, res);
    n = 2;
  }
  /* With top_k the output has one row, so the class is the first pick. */
  if (q->argmax) res[n++] = (pp_result_t){best.id ? best : argmax(p, out), "class"};
  if (!q->top_k && !q->argmax) res[n++] = (pp_result_t){soft.id ? soft : scores_of(p, out), "scores"};
  return n;
}
