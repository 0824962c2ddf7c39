/* Model bytes to a TOSA module (import.h).  The format comes from the
 * bytes: TFLite FlatBuffers carry "TFL3" at offset 4; an ONNX ModelProto
 * is binary protobuf; anything else must be TOSA MLIR text. */
#include "import.h"

#include <stdio.h>
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/status.h"
#include "../../importers/onnx/onnx_import.h"
#include "../../importers/tflite/tflite_import.h"

static int looks_like_mlir_text(const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] == 0 || (p[i] < 0x09) || (p[i] > 0x0d && p[i] < 0x20)) return 0;
  return n > 0;
}

static tinyml_status_t parse_text(const tc_import_t *im, const char *text, size_t size,
                                  MlirModule *out) {
  *out = mlirModuleCreateParse(im->ctx, mlirStringRefCreate(text, size));
  if (mlirModuleIsNull(*out))
    return tinyml__status_make(im->a, TINYML_STATUS_INVALID_MODEL,
                               "compile: cannot parse the model: %s",
                               im->diag->len ? im->diag->text : "(no diagnostic)");
  return TINYML_OK;
}

/* A hand-written model's ops are located by line only; "tosa.conv2d line
 * 7" names them in profiles as the importers' "CONV_2D name" does. */
static MlirWalkResult name_by_line(MlirOperation op, void *user) {
  (void)user;
  MlirLocation loc = mlirOperationGetLocation(op);
  if (!mlirLocationIsAFileLineColRange(loc) || mlirOperationGetNumResults(op) == 0)
    return MlirWalkResultAdvance;
  MlirStringRef kind = mlirIdentifierStr(mlirOperationGetName(op));
  char name[96];
  int n = snprintf(name, sizeof name, "%.*s line %d", (int)(kind.length > 64 ? 64 : kind.length),
                   kind.data, mlirLocationFileLineColRangeGetStartLine(loc));
  MlirContext ctx = mlirOperationGetContext(op);
  mlirOperationSetLocation(op, mlirLocationNameGet(ctx, mlirStringRefCreate(name, (size_t)n), loc));
  return MlirWalkResultAdvance;
}

tinyml_status_t tc_import(const tc_import_t *im, const void *model, size_t size,
                          MlirModule *out) {
  const tinyml_allocator_t *a = im->a;
  const uint8_t *p = model;
  char *text = NULL;
  size_t len = 0;
  int from_text = 0;
  int is_onnx = !(size >= 8 && memcmp(p + 4, "TFL3", 4) == 0) && !looks_like_mlir_text(p, size) &&
                onnx_looks_like(p, size);
  /* Other formats have static shapes: a binding there is a caller's mistake. */
  if (!is_onnx && im->bindings && im->bindings->input_value_count)
    return tinyml__status_make(a, TINYML_STATUS_INVALID_ARGUMENT,
                               "compile: input_values (--input-value) apply to ONNX models only");
  if (!is_onnx && te_bindings_any(im->bindings))
    return tinyml__status_make(a, TINYML_STATUS_INVALID_ARGUMENT,
                               "compile: dims and input_shapes (--dim, --input-shape) apply "
                               "to ONNX models only");
  if (size >= 8 && memcmp(p + 4, "TFL3", 4) == 0) {
    TINYML_RETURN_IF_ERROR(tfl_import_limited(model, size, im->limits, a, &text, &len));
  } else if (is_onnx) {
    TINYML_RETURN_IF_ERROR(
        onnx_import_bound(model, size, im->limits, im->bindings, a, &text, &len));
  } else {
    if (!looks_like_mlir_text(p, size))
      return tinyml__status_make(a, TINYML_STATUS_INVALID_MODEL,
                                 "compile: unrecognised model format (expected a "
                                 ".tflite FlatBuffer, an ONNX model or TOSA MLIR text)");
    text = tinyml__alloc(a, size + 1, 1);
    if (!text)
      return tinyml__status_make(a, TINYML_STATUS_OUT_OF_MEMORY, "compile: out of memory");
    memcpy(text, model, size);
    text[size] = '\0';
    len = size;
    from_text = 1;
  }
  if (im->dump_tosa) im->dump_tosa(im->dump_user, text, len);
  tinyml_status_t st = parse_text(im, text, len, out);
  tinyml__free(a, text);
  if (!st && from_text)
    mlirOperationWalk(mlirModuleGetOperation(*out), name_by_line, NULL, MlirWalkPreOrder);
  return st;
}
