/* Internal to the ONNX importer: sequences and optionals, which exist only
 * at compile time.  A sequence is a value of dtype ONNX_SEQUENCE whose
 * `data` is one self-contained block: a header, one record per element
 * (its type, its TOSA value if it has one, where its constant bytes are)
 * and the elements' constant bytes.  Being one block with offsets, it is
 * copied, forwarded and freed like a constant tensor's data.  An empty
 * optional is the same block with `none` set; a present optional is simply
 * its element.  Also the few tensor helpers the sequence, Loop and Scan
 * lowerings share: views of values, concatenation, slicing. */
#ifndef TINYML_IMPORTERS_ONNX_SEQ_H
#define TINYML_IMPORTERS_ONNX_SEQ_H

#include "onnx_lower.h"

typedef struct onnx_seq_hdr {
  uint64_t bytes;      /* of the whole block */
  uint32_t count;
  int32_t elem_dtype;  /* 0 if not known (an empty optional's) */
  uint32_t none;       /* an empty optional */
  uint32_t pad;
} onnx_seq_hdr_t;

typedef struct onnx_seq_item {
  int32_t dtype;
  uint32_t rank;
  int64_t dims[TE_MAX_RANK];
  te_value_t v;        /* id 0 if only a constant */
  uint64_t off;        /* of the constant bytes in the block; 0: none */
} onnx_seq_item_t;

/* A sequence being built: items own deep copies of their data. */
typedef struct onnx_seq_build {
  onnx_value_t *items;
  uint32_t count, cap;
  int32_t elem_dtype;
  int none;
} onnx_seq_build_t;

int onnx_is_seq(const onnx_value_t *v);
const onnx_seq_hdr_t *onnx_seq_hdr(const onnx_value_t *v);
/* Element k as a view: its data (if any) borrowed from the block. */
onnx_value_t onnx_seq_item(const onnx_value_t *s, uint32_t k);
/* Starts `b` with the elements of sequence `s` (NULL: empty). */
int onnx_seq_start(onnx_ctx_t *c, onnx_seq_build_t *b, const onnx_value_t *s);
/* Inserts a deep copy of tensor `x` at `pos` (0..count); 0 on error. */
int onnx_seq_insert(onnx_ctx_t *c, onnx_seq_build_t *b, uint32_t pos, const onnx_value_t *x);
void onnx_seq_erase(onnx_ctx_t *c, onnx_seq_build_t *b, uint32_t pos);
/* Packs `b` as output i, then frees it. */
tinyml_status_t onnx_seq_set_out(onnx_ctx_t *c, uint32_t i, onnx_seq_build_t *b);
void onnx_seq_build_free(onnx_ctx_t *c, onnx_seq_build_t *b);

/* Bytes of v's data: a tensor's elements or a sequence's block. */
size_t onnx_value_bytes(const onnx_value_t *v);
/* dst = src with its own copy of the data; 0 on out of memory. */
int onnx_value_copy(onnx_ctx_t *c, onnx_value_t *dst, const onnx_value_t *src);
/* Binds output i to `x`: a constant, a run-time tensor or a sequence. */
tinyml_status_t onnx_bind_out(onnx_ctx_t *c, uint32_t i, const onnx_value_t *x);
/* x as a run-time value (a constant is emitted and remembered in x->v). */
te_value_t onnx_view_runtime(onnx_ctx_t *c, onnx_value_t *x);
/* Reshapes x in place (same elements). */
void onnx_view_reshape(onnx_ctx_t *c, onnx_value_t *x, uint32_t rank, const int64_t *dims);
/* Inserts a unit axis at `axis` of `x`; 0 (error recorded) when `x` is not a
 * tensor of a rank that axis fits: items of a sequence or of a scan output
 * may differ in rank from the first one, which chose the axis. */
int onnx_view_unsqueeze(onnx_ctx_t *c, onnx_value_t *x, int32_t axis);
/* out = xs concatenated along `axis` (one dtype and rank; other dims
 * equal, checked): a constant with owned data when all are constants,
 * else a run-time value.  0 with an error recorded. */
int onnx_view_concat(onnx_ctx_t *c, onnx_value_t *xs, uint32_t n, int32_t axis,
                     onnx_value_t *out);
/* out = x[start : start+len] along `axis`, constant (owned) if x is. */
int onnx_view_slice(onnx_ctx_t *c, onnx_value_t *x, int32_t axis, int64_t start, int64_t len,
                    onnx_value_t *out);

#endif
