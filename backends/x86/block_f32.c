/* Kernels that chain others so that what flows between them stays in the
 * workgroup's scratch, in cache, instead of crossing memory (and, on
 * threads, a phase boundary): a depthwise conv and the 1x1 conv after it
 * (dwpw_f32), and MobileNetV2's whole block, 1x1 expansion (or the
 * network's first conv), depthwise, 1x1 projection (pwdwpw_f32);
 * uk_abi.h lays out their blobs and lib/compiler/ukernel_dwpw.c makes
 * them.  Built into both bitcodes on the conv driver (conv_f32.h) and the
 * depthwise rows (depthwise_f32.h).  Every value is the one the kernels
 * give apart, whatever the band. */
#include "depthwise_f32.h"

/* Pixels of depthwise result that `bytes` of scratch hold (ic floats
 * each), at most a run (the compiler sizes it so). */
static int32_t mid_cap(int32_t bytes, int32_t ic) {
  int32_t cap = bytes / (4 * ic);
  return cap > FB_MAX ? FB_MAX : cap < 1 ? 1 : cap;
}

/* The 1x1 conv's view of the blob at `blob` + next_off, writing `out`
 * with residual `res` (or none). */
static ukf_ctx_t next_ctx(const void *blob, float *out, const float *res) {
  const tinyml_uk_params_t *p = (const tinyml_uk_params_t *)blob;
  ukf_ctx_t c = ukf_ctx((const uint8_t *)blob + p->next_off);
  c.res = res;
  c.out0 = out;
  return c;
}

/* The band's pixels in equal chunks that fit the scratch, each chunk's
 * depthwise result there, then straight into the 1x1 conv's tiles as
 * their input rows. */
static void dwpw_f32(const float *in, const void *blob, float *out, void *scratch, int32_t wg,
                     int32_t count, const float *res) {
  const ukf_ctx_t d = ukf_ctx(blob), pw = next_ctx(blob, out, res);
  const int32_t ic = d.p->ic, oc = pw.p->oc;
  int32_t lo, hi;
  uk_band(d.p, wg, count, &lo, &hi);
  float *mid = (float *)uk_scratch(scratch, d.p, wg);
  const int32_t cap = mid_cap(d.p->scratch_bytes, ic);
  const int32_t n = hi - lo, chunks = (n + cap - 1) / cap;
  for (int32_t j = 0, q = lo; j < chunks; ++j) {
    const int32_t len = n / chunks + (j < n % chunks);
    dw_f32(&d, in, q, q + len, mid);
    fgemm_rows(&pw, mid, ic, 0, len, out + (size_t)q * oc, 0, pw.p->oc_padded);
    q += len;
  }
}

void tinyml_uk_dwpw_f32(const float *in, const void *blob, float *out, void *scratch,
                        int32_t wg, int32_t count) {
  dwpw_f32(in, blob, out, scratch, wg, count, 0);
}

void tinyml_uk_dwpw_add_f32(const float *in, const void *blob, float *out, void *scratch,
                            int32_t wg, int32_t count, const float *res) {
  dwpw_f32(in, blob, out, scratch, wg, count, res);
}

/* The band's output rows in order: the ring gets the first conv's rows the
 * row's taps need, the depthwise row goes into the chunk after the ring,
 * and a full chunk runs through the projection.  A band's first row
 * computes all its ring rows; later rows only stride_h new ones. */
static void pwdwpw_f32(const float *in, const void *blob, float *out, void *scratch,
                       int32_t wg, int32_t count, const float *res) {
  const ukf_ctx_t ex = ukf_ctx(blob);
  const uint8_t *db = (const uint8_t *)blob + ex.p->next_off;
  const ukf_ctx_t d = ukf_ctx(db), pw = next_ctx(db, out, res);
  const tinyml_uk_params_t *dp = d.p;
  const int32_t ic = dp->ic, oc = pw.p->oc, span = (dp->kh - 1) * dp->dil_h + 1;
  float *ring = (float *)uk_scratch(scratch, ex.p, wg);
  const int32_t ccap = tinyml_uk_window_cols(ex.p), col_floats = ccap * ex.p->k;
  float *cols = ring + ex.p->scratch_bytes / 4 - col_floats;
  xwin_t w = {&ex, in, ring, cols, ccap, {ring, 0, span, dp->iw * ic}, -1, 0};
  float *mid = ring + (size_t)span * w.src.row;
  const int32_t cap = (ex.p->scratch_bytes / 4 - col_floats - span * w.src.row) / ic; /* >= ow */
  dw_plan_t pl;
  dw_plan(dp, &pl);
  int32_t lo, hi, q, m = 0;
  uk_band(dp, wg, count, &lo, &hi);
  q = lo;
  const int32_t r1 = uk_rows_end(dp, lo, hi);
  for (int32_t r = lo / dp->ow; r < r1; ++r) {
    const int32_t oy = r % dp->oh, iy0 = oy * dp->stride_h - dp->pad_top;
    int32_t x0, x1;
    uk_row_span(dp, r, lo, hi, &x0, &x1);
    if (m + x1 - x0 > cap) {
      fgemm_rows(&pw, mid, ic, 0, m, out + (size_t)q * oc, 0, pw.p->oc_padded);
      q += m;
      m = 0;
    }
    const int32_t ya = iy0 > 0 ? iy0 : 0, yb = iy0 + span < dp->ih ? iy0 + span : dp->ih;
    xwin_slide(&w, r / dp->oh, ya, yb);
    dw_row(&d, &pl, &w.src, oy, x0, x1, mid + (size_t)m * ic);
    m += x1 - x0;
  }
  if (m) fgemm_rows(&pw, mid, ic, 0, m, out + (size_t)q * oc, 0, pw.p->oc_padded);
}

void tinyml_uk_pwdwpw_f32(const float *in, const void *blob, float *out, void *scratch,
                          int32_t wg, int32_t count) {
  pwdwpw_f32(in, blob, out, scratch, wg, count, 0);
}

void tinyml_uk_pwdwpw_add_f32(const float *in, const void *blob, float *out, void *scratch,
                              int32_t wg, int32_t count, const float *res) {
  pwdwpw_f32(in, blob, out, scratch, wg, count, res);
}
