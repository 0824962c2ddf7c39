/* Windows shared by the convolution and pooling lowerings
 * (onnx_ops_nn.c, onnx_ops_nn3d.c).  Internal to the ONNX importer. */
#ifndef TINYML_IMPORTERS_ONNX_WINDOW_H
#define TINYML_IMPORTERS_ONNX_WINDOW_H

#include "onnx_nn_util.h"

typedef struct win {
  uint32_t rank;                    /* the ONNX rank: 3 (1-D) or 4 (2-D) */
  int64_t in[2], k[2], s[2], d[2];  /* [0] is a unit height for 1-D */
  int64_t pb[2], pe[2], out[2];
  int ceil_extra;                   /* ceil_mode added an output row/col */
} win_t;

enum { PAD_NOTSET, PAD_VALID, PAD_SAME_UPPER, PAD_SAME_LOWER };

/* The node's auto_pad as PAD_*; -1 with an error recorded if unknown. */
int onnx_auto_pad_mode(onnx_ctx_t *c);
/* Axis i of w: ONNX's output size and pads from in, k, s, d and (for
 * NOTSET) the given pads; 0 with an error recorded when invalid. */
int onnx_window_axis(onnx_ctx_t *c, win_t *w, int i, int mode, int ceil_mode);
/* Pools NHWC x over w (onnx_ops_nn.c); dt is the ONNX dtype. */
te_value_t onnx_pool_nhwc(onnx_ctx_t *c, te_value_t x, win_t *w, int is_max, int cip,
                          int32_t dt);

/* The node's window for an input of `xdims` (strides, dilations, pads,
 * auto_pad; ceil_mode as given); 0 with an error recorded when invalid. */
int onnx_read_window(onnx_ctx_t *c, const int64_t *xdims, uint32_t rank,
                     const int64_t *kernel, int ceil_mode, win_t *w);
/* NHWC x trimmed for TOSA's window (rows no window reads sliced off), with
 * pad[4] (top, bottom, left, right) making the output size exact. */
te_value_t onnx_tosa_window(onnx_ctx_t *c, const win_t *w, te_value_t x, int64_t pad[4]);
/* One axis of that: a = {kernel, dilation, stride, input size, leading
 * pad, output size}; sets pad[2] (leading, trailing) and shrinks *size by
 * the rows no window reads; 0 with an error recorded when none is read. */
int onnx_trim_axis(onnx_ctx_t *c, const int64_t a[6], int64_t *size, int64_t pad[2]);
enum { WIN_CONV, WIN_AVG, WIN_MAX };
/* The TOSA properties of a conv (WIN_CONV) or pool over w with pad. */
void onnx_window_props(const win_t *w, const int64_t pad[4], int kind, char *out, size_t cap);
/* [N, C, (H,) W] to NHWC (a unit height for 1-D), and back to `rank`. */
te_value_t onnx_to_nhwc(onnx_ctx_t *c, te_value_t x);
te_value_t onnx_from_nhwc(onnx_ctx_t *c, te_value_t y, uint32_t rank);
/* The window helpers above are in onnx_ops_nn.c; onnx_pool_nhwc is in
 * onnx_ops_pool.c. */

/* 3-D forms (onnx_ops_nn3d.c). */
tinyml_status_t onnx_pool3d(onnx_ctx_t *c, int is_max);
te_value_t onnx_conv3d_f32(onnx_ctx_t *c, const onnx_value_t *xv, const onnx_value_t *wv,
                           te_value_t x, const conv_w_t *w, te_value_t bias);
/* ConvTranspose's pads for one axis (onnx_ops_nn.c), and its 3-D form. */
int onnx_convt_axis(onnx_ctx_t *c, int64_t in, int64_t eff, int64_t s, int64_t op, int64_t want,
                    int mode, int64_t *pb, int64_t *pe);
tinyml_status_t onnx_conv_transpose3d(onnx_ctx_t *c);

/* MaxPool's Indices output and MaxUnpool (onnx_ops_unpool.c). */
tinyml_status_t onnx_max_pool_indices(onnx_ctx_t *c, te_value_t x, const win_t *w, int32_t dt);
tinyml_status_t onnx_lower_max_unpool(onnx_ctx_t *c);

#endif
