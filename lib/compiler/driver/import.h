/* The first stage of a compile: model bytes to a TOSA module, through
 * whichever importer the bytes call for. */
#ifndef TINYML_COMPILER_DRIVER_IMPORT_H
#define TINYML_COMPILER_DRIVER_IMPORT_H

#include <mlir-c/IR.h>
#include <stddef.h>

#include "../../importers/common/import_bindings.h"
#include "../../importers/common/import_limits.h"
#include "../mlir_util.h"

typedef struct tc_import {
  MlirContext ctx;
  const tc_diag_t *diag; /* the context's diagnostics, quoted on a parse error */
  const tinyml_allocator_t *a;
  /* Receives the TOSA text before it is parsed; NULL: none. */
  void (*dump_tosa)(void *user, const char *text, size_t length);
  void *dump_user;
  const te_limits_t *limits; /* the importers' limits; NULL: the defaults */
  const te_bindings_t *bindings; /* ONNX dynamic dimensions; NULL: none */
} tc_import_t;

/* Detects the format (TFLite, ONNX or TOSA MLIR text), imports and parses
 * `model` into *out (destroy with mlirModuleDestroy).  A refusal names the
 * format's problem: an unsupported op, a malformed file. */
tinyml_status_t tc_import(const tc_import_t *im, const void *model, size_t size,
                          MlirModule *out);

#endif
