/* STRIDED_SLICE as TFLite Micro runs it (strided_slice.cc with
 * strided_slice_common.cc and strided_slice_logic.h): constant begin, end
 * and strides; begin, end and shrink-axis masks; any non-zero stride.
 * TFLM's BuildStridedSliceParams sets ellipsis_mask and new_axis_mask to
 * 0 and never sets offset, so a model using them fails TFLM's output shape
 * check or is sliced differently than TFLite would: they are refused. */
#include <stdio.h>

#include "tfl_lower.h"

enum { OPT_STRIDED_SLICE = 32 };

/* One axis of a STRIDED_SLICE resolved as TFLite's StartForAxis and
 * StopForAxis (strided_slice_logic.h): a masked begin or end goes to the
 * far end in the stride's direction; a negative index counts from the
 * end; then both are clamped to [0, dim] (stride > 0) or [-1, dim - 1]
 * (stride < 0); a shrunk axis keeps one element.  The kernel then takes
 * begin, begin + stride, ... while before the stop: `n` elements. */
typedef struct {
  int64_t first, stride, n;
} ss_axis_t;

static int64_t ss_clamp(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

static ss_axis_t ss_resolve(int64_t dim, int64_t b, int64_t e, int64_t s, int bmask, int emask,
                            int shrink) {
  const int64_t lo = s > 0 ? 0 : -1, hi = s > 0 ? dim : dim - 1;
  if (bmask) b = s > 0 ? INT32_MIN : INT32_MAX;
  if (b < 0) b += dim;
  b = ss_clamp(b, lo, hi);
  if (shrink) {
    e = b < dim ? b + 1 : b; /* StridedSliceEndForAxis: nothing past the end */
  } else {
    if (emask) e = s > 0 ? INT32_MAX : INT32_MIN;
    if (e < 0) e += dim;
    e = ss_clamp(e, lo, hi);
  }
  int64_t n = s > 0 ? (e - b + s - 1) / s : (b - e - s - 1) / -s;
  return (ss_axis_t){b, s, n > 0 ? n : 0};
}

/* x with every `k`-th element along `axis` from the first, `n` of them
 * ((n - 1) * k + 1 elements along the axis): seen as [outer, len, inner],
 * the first (n - 1) * k rows regrouped as [outer, n - 1, k * inner] give
 * their first row of each group; the last wanted row is appended.  Only
 * slices, reshapes and a concat: exact for every element type. */
static te_value_t ss_every_kth(te_t *e, te_value_t x, uint32_t axis, int64_t k, int64_t n) {
  int64_t outer = 1, inner = 1, dims[TE_MAX_RANK];
  for (uint32_t i = 0; i < x.type.rank; ++i) {
    dims[i] = x.type.dims[i];
    if (i < axis) outer *= dims[i];
    if (i > axis) inner *= dims[i];
  }
  int64_t len = dims[axis];
  te_value_t v = te_reshape(e, x, 3, (int64_t[3]){outer, len, inner});
  te_value_t head = te_slice(e, v, (int64_t[3]){0, 0, 0}, (int64_t[3]){outer, (n - 1) * k, inner});
  head = te_reshape(e, head, 3, (int64_t[3]){outer, n - 1, k * inner});
  te_value_t parts[2] = {
      te_slice(e, head, (int64_t[3]){0, 0, 0}, (int64_t[3]){outer, n - 1, inner}),
      te_slice(e, v, (int64_t[3]){0, len - 1, 0}, (int64_t[3]){outer, 1, inner})};
  dims[axis] = n;
  return te_reshape(e, te_concat(e, parts, 2, 1), x.type.rank, dims);
}

static te_value_t ss_reverse(te_t *e, te_value_t x, uint32_t axis) {
  char props[32];
  snprintf(props, sizeof props, "axis = %u : i32", axis);
  return te_op(e, "tosa.reverse", &x, 1, props, &x.type);
}

/* One tosa.slice of the span each axis touches (all the lowering does when
 * every stride is 1), then per axis with another stride a reverse (stride
 * < 0: the span's last element is the first taken) and every k-th. */
static te_value_t ss_emit(te_t *e, te_value_t x, const ss_axis_t *ax, uint32_t rank) {
  int64_t start[TE_MAX_RANK], size[TE_MAX_RANK];
  for (uint32_t d = 0; d < rank; ++d) {
    int64_t last = ax[d].first + (ax[d].n - 1) * ax[d].stride;
    start[d] = ax[d].stride > 0 ? ax[d].first : last;
    size[d] = (ax[d].n - 1) * (ax[d].stride > 0 ? ax[d].stride : -ax[d].stride) + 1;
  }
  x = te_slice(e, x, start, size);
  for (uint32_t d = 0; d < rank; ++d) {
    if (ax[d].stride < 0 && ax[d].n > 1) x = ss_reverse(e, x, d);
    int64_t k = ax[d].stride > 0 ? ax[d].stride : -ax[d].stride;
    if (k > 1 && ax[d].n > 1) x = ss_every_kth(e, x, d, k, ax[d].n);
  }
  return x;
}


/* The masks TFLM honours into *bm, *em, *shrink; refuses the options it
 * ignores (see the top of this file). */
static tinyml_status_t ss_masks(tfl_ctx_t *c, int *bm, int *em, int *shrink) {
  const tfl_table_t *o = tfl_options(c, OPT_STRIDED_SLICE);
  int bad = 0;
  if (!o) return c->error;
  *bm = tfl_table_i32(o, 0, 0, &bad);
  *em = tfl_table_i32(o, 1, 0, &bad);
  int ellipsis = tfl_table_i32(o, 2, 0, &bad), newax = tfl_table_i32(o, 3, 0, &bad);
  *shrink = tfl_table_i32(o, 4, 0, &bad);
  int offset = tfl_table_bool(o, 5, 0, &bad);
  if (bad) return tfl_fail(c, "malformed StridedSliceOptions");
  if (ellipsis)
    return tfl_fail(c, "ellipsis_mask 0x%x is not supported: TFLite Micro does not support it "
                       "either (its kernel sets the mask to 0 and slices as if it were absent)",
                    (unsigned)ellipsis);
  if (newax)
    return tfl_fail(c, "new_axis_mask 0x%x is not supported: TFLite Micro does not support it "
                       "either (its kernel sets the mask to 0, so the added dimensions fail its "
                       "output shape check)", (unsigned)newax);
  if (offset)
    return tfl_fail(c, "offset (end relative to begin) is not supported: TFLite Micro does not "
                       "support it either (its kernel never sets it and takes end as absolute)");
  return NULL;
}

/* Begin, end or strides (input i) read as constants; one computed at run
 * time is refused as TFLM refuses it ("Non-constant >begin< tensor is not
 * supported"): its kernel fixes the slice when the model is prepared. */
static tinyml_status_t ss_operand(tfl_ctx_t *c, uint32_t i, const char *what, int64_t *out,
                                  uint32_t *n) {
  const tfl_tensor_t *t = tfl_in(c, i);
  if (t && !t->data)
    return tfl_fail(c, "%s (input %u) is computed at run time: TFLite Micro does not support "
                       "that either (it needs constant begin, end and strides)", what, i);
  return tfl_const_ints(c, i, out, TE_MAX_RANK, n) ? NULL : c->error;
}

static tinyml_status_t ss_axes(tfl_ctx_t *c, const tfl_tensor_t *in, ss_axis_t *ax) {
  int64_t b[TE_MAX_RANK], e[TE_MAX_RANK], s[TE_MAX_RANK];
  uint32_t nb, ne, ns;
  int bm = 0, em = 0, shrink = 0;
  if (ss_masks(c, &bm, &em, &shrink) || ss_operand(c, 1, "begin", b, &nb) ||
      ss_operand(c, 2, "end", e, &ne) || ss_operand(c, 3, "strides", s, &ns))
    return c->error;
  if (nb != in->rank || ne != in->rank || ns != in->rank)
    return tfl_fail(c, "begin/end/strides must have one entry per input dimension");
  for (uint32_t d = 0; d < in->rank; ++d) {
    if (s[d] == 0) return tfl_fail(c, "stride along dimension %u is 0", d);
    /* begin + 1 as the stop of a shrunk axis selects nothing when the
     * stride is negative: TFLM leaves that output unwritten. */
    if (s[d] < 0 && ((shrink >> d) & 1))
      return tfl_fail(c, "a shrunk dimension (%u) with a negative stride selects nothing", d);
    ax[d] = ss_resolve(in->shape[d], b[d], e[d], s[d], (bm >> d) & 1, (em >> d) & 1,
                       (shrink >> d) & 1);
    if (ax[d].n == 0) return tfl_fail(c, "empty or out-of-range slice along dimension %u", d);
  }
  return NULL;
}

tinyml_status_t tfl_lower_strided_slice(tfl_ctx_t *c) {
  const tfl_tensor_t *in = tfl_in(c, 0), *out = tfl_out(c, 0);
  ss_axis_t ax[TE_MAX_RANK];
  if (!in || !out) return tfl_fail(c, "missing operands");
  if (ss_axes(c, in, ax)) return c->error;
  if (!tfl_quant_matches(in, out)) return tfl_fail(c, "input and output quantisation differ");
  te_value_t x = tfl_value_in(c, 0);
  if (!x.id) return c->error;
  return tfl_set_out(c, 0, ss_emit(&c->e, x, ax, in->rank));
}
