/* Model bytes to a TOSA module (import.h).  The format comes from the
 * bytes: TFLite FlatBuffers carry "TFL3" at offset 4; an ONNX ModelProto
 * is binary protobuf; anything else must be TOSA MLIR text. */
#include "import.h"

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

tinyml_status_t tc_import(const tc_import_t *im, const void *model, size_t size,
                          MlirModule *out) {
  const tinyml_allocator_t *a = im->a;
  const uint8_t *p = model;
  char *text = NULL;
  size_t len = 0;
  if (size >= 8 && memcmp(p + 4, "TFL3", 4) == 0) {
    TINYML_RETURN_IF_ERROR(tfl_import(model, size, a, &text, &len));
  } else if (!looks_like_mlir_text(p, size) && onnx_looks_like(p, size)) {
    TINYML_RETURN_IF_ERROR(onnx_import(model, size, a, &text, &len));
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
  }
  if (im->dump_tosa) im->dump_tosa(im->dump_user, text, len);
  tinyml_status_t st = parse_text(im, text, len, out);
  tinyml__free(a, text);
  return st;
}
