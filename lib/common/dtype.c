#include "tinyml.h"

const char *tinyml_dtype_name(tinyml_dtype_t dtype) {
  switch (dtype) {
    case TINYML_DTYPE_FLOAT32: return "float32";
    case TINYML_DTYPE_FLOAT16: return "float16";
    case TINYML_DTYPE_INT8: return "int8";
    case TINYML_DTYPE_UINT8: return "uint8";
    case TINYML_DTYPE_INT16: return "int16";
    case TINYML_DTYPE_INT32: return "int32";
    case TINYML_DTYPE_INT64: return "int64";
    case TINYML_DTYPE_BOOL: return "bool";
    case TINYML_DTYPE_FLOAT64: return "float64";
    case TINYML_DTYPE_BFLOAT16: return "bfloat16";
    case TINYML_DTYPE_UINT16: return "uint16";
    case TINYML_DTYPE_UINT32: return "uint32";
    case TINYML_DTYPE_UINT64: return "uint64";
    default: return "invalid";
  }
}

size_t tinyml_dtype_size(tinyml_dtype_t dtype) {
  switch (dtype) {
    case TINYML_DTYPE_FLOAT32: case TINYML_DTYPE_INT32: return 4;
    case TINYML_DTYPE_FLOAT16: case TINYML_DTYPE_INT16: return 2;
    case TINYML_DTYPE_INT8: case TINYML_DTYPE_UINT8: case TINYML_DTYPE_BOOL: return 1;
    case TINYML_DTYPE_INT64: return 8;
    case TINYML_DTYPE_FLOAT64: return 8;
    case TINYML_DTYPE_BFLOAT16: return 2;
    case TINYML_DTYPE_UINT16: return 2;
    case TINYML_DTYPE_UINT32: return 4;
    case TINYML_DTYPE_UINT64: return 8;
    default: return 0;
  }
}
