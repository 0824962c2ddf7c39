/* Internal to the TFLite reader: subgraph 0's tensors (name, type, shape,
 * quantisation, constant data), verified against the model's buffers. */
#ifndef TINYML_IMPORTERS_TFLITE_TENSORS_H
#define TINYML_IMPORTERS_TFLITE_TENSORS_H

#include "tflite_decode.h"
#include "tflite_reader.h"

/* Reads the tensors of subgraph `sg` into m->tensors and m->tensor_count.
 * Each tensor's buffer index must lie in `buffers` (or be 0 when there are
 * none), and its constant data must match its shape and type when both are
 * known.  On failure the tensors read so far stay in `m` for tfl_model_free
 * to release. */
tinyml_status_t rd_tensors(reader_t *r, const tbl_t *sg, const vec_t *buffers,
                           tfl_model_t *m);

#endif
