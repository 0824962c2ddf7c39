/* The model's inputs and outputs as the module records them. */
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <stdio.h>
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/status.h"
#include "signature.h"

static MlirAttribute dict_get(MlirAttribute attrs, intptr_t i, const char *key) {
  if (mlirAttributeIsNull(attrs) || !mlirAttributeIsAArray(attrs) ||
      i >= mlirArrayAttrGetNumElements(attrs))
    return mlirAttributeGetNull();
  MlirAttribute d = mlirArrayAttrGetElement(attrs, i);
  if (!mlirAttributeIsADictionary(d)) return mlirAttributeGetNull();
  return mlirDictionaryAttrGetElementByName(d, tc_str(key));
}

static tinyml_status_t read_name(const tinyml_allocator_t *a, MlirAttribute attrs,
                                 intptr_t i, const char *prefix, tmod_tensor_t *t) {
  MlirAttribute n = dict_get(attrs, i, "tinyml.name");
  char fallback[32];
  const char *src = fallback;
  size_t len;
  if (!mlirAttributeIsNull(n) && mlirAttributeIsAString(n)) {
    MlirStringRef s = mlirStringAttrGetValue(n);
    src = s.data;
    len = s.length;
  } else {
    len = (size_t)snprintf(fallback, sizeof(fallback), "%s_%ld", prefix, (long)i);
  }
  char *name = tinyml__alloc(a, len + 1, 1);
  if (!name) return tinyml__status_make(a, TINYML_STATUS_OUT_OF_MEMORY, "compiler: out of memory");
  if (len) memcpy(name, src, len); /* an empty StringAttr's data may be NULL */
  name[len] = '\0';
  t->name = name;
  return TINYML_OK;
}

static tinyml_status_t read_quant(const tinyml_allocator_t *a, MlirAttribute attrs,
                                  intptr_t i, tmod_tensor_t *t) {
  MlirAttribute sc = dict_get(attrs, i, "tinyml.scale");
  MlirAttribute zp = dict_get(attrs, i, "tinyml.zero_point");
  MlirAttribute ax = dict_get(attrs, i, "tinyml.quant_axis");
  if (mlirAttributeIsNull(sc) || !mlirAttributeIsADenseF32Array(sc)) return TINYML_OK;
  intptr_t n = mlirDenseArrayGetNumElements(sc);
  if (mlirAttributeIsNull(zp) || !mlirAttributeIsADenseI64Array(zp) ||
      mlirDenseArrayGetNumElements(zp) != n || n <= 0)
    return tinyml__status_make(a, TINYML_STATUS_INVALID_MODEL,
                               "compiler: tinyml.scale and tinyml.zero_point of '%s' "
                               "must be non-empty arrays of equal length", t->name);
  float *s = tinyml__calloc(a, (size_t)n, sizeof(float), 4);
  int64_t *z = tinyml__calloc(a, (size_t)n, sizeof(int64_t), 8);
  if (!s || !z) {
    tinyml__free(a, s);
    tinyml__free(a, z);
    return tinyml__status_make(a, TINYML_STATUS_OUT_OF_MEMORY, "compiler: out of memory");
  }
  for (intptr_t k = 0; k < n; ++k) {
    s[k] = mlirDenseF32ArrayGetElement(sc, k);
    z[k] = mlirDenseI64ArrayGetElement(zp, k);
  }
  t->scales = s;
  t->zero_points = z;
  t->quant_count = (uint32_t)n;
  t->quant_axis = (!mlirAttributeIsNull(ax) && mlirAttributeIsAInteger(ax))
                      ? (int32_t)mlirIntegerAttrGetValueInt(ax) : 0;
  return TINYML_OK;
}

static tinyml_dtype_t unsigned_of(tinyml_dtype_t d) {
  switch (d) {
    case TINYML_DTYPE_INT16: return TINYML_DTYPE_UINT16;
    case TINYML_DTYPE_INT32: return TINYML_DTYPE_UINT32;
    case TINYML_DTYPE_INT64: return TINYML_DTYPE_UINT64;
    default: return d;
  }
}

static tinyml_status_t read_tensor(const tinyml_allocator_t *a, MlirType type,
                                   MlirAttribute attrs, intptr_t i,
                                   const char *prefix, tmod_tensor_t *t) {
  TINYML_RETURN_IF_ERROR(read_name(a, attrs, i, prefix, t));
  if (!mlirTypeIsARankedTensor(type) || !mlirShapedTypeHasStaticShape(type) ||
      mlirShapedTypeGetRank(type) > TINYML_MAX_RANK)
    return tinyml__status_make(a, TINYML_STATUS_UNSUPPORTED,
                               "compiler: %s '%s' must be a statically shaped tensor "
                               "of rank <= %d", prefix, t->name, TINYML_MAX_RANK);
  t->dtype = tc_dtype_of(mlirShapedTypeGetElementType(type));
  /* TOSA 1.0 is signless: importers mark uint8 tensors carried as i8. */
  if (t->dtype == TINYML_DTYPE_INT8 && !mlirAttributeIsNull(dict_get(attrs, i, "tinyml.unsigned")))
    t->dtype = TINYML_DTYPE_UINT8;
  /* Wider unsigned integers travel as signless i16/i32/i64 the same way. */
  if (!mlirAttributeIsNull(dict_get(attrs, i, "tinyml.unsigned")))
    t->dtype = unsigned_of(t->dtype);
  if (t->dtype == TINYML_DTYPE_INVALID)
    return tinyml__status_make(a, TINYML_STATUS_UNSUPPORTED,
                               "compiler: %s '%s' has an unsupported element type",
                               prefix, t->name);
  t->rank = (uint32_t)mlirShapedTypeGetRank(type);
  for (uint32_t d = 0; d < t->rank; ++d) t->dims[d] = mlirShapedTypeGetDimSize(type, d);
  t->byte_size = tc_type_byte_size(type);
  return read_quant(a, attrs, i, t);
}

/* Element k of `v` as the caller's bytes: i1 is bit-packed in MLIR's raw
 * data but one byte per element at the boundary. */
static void fixed_element(MlirAttribute v, int64_t k, size_t es, uint8_t *dst) {
  MlirType elem = mlirShapedTypeGetElementType(mlirAttributeGetType(v));
  intptr_t at = mlirDenseElementsAttrIsSplat(v) ? 0 : (intptr_t)k;
  if (mlirTypeIsAInteger(elem) && mlirIntegerTypeGetWidth(elem) == 1)
    *dst = mlirDenseElementsAttrGetBoolValue(v, at) ? 1 : 0;
  else
    memcpy(dst, (const uint8_t *)mlirDenseElementsAttrGetRawData(v) + (size_t)at * es, es);
}

/* `tinyml.fixed_value`: the value the importer fixed input i to (it
 * compiled that value in as a constant); the runtime checks the caller's
 * bytes against it at every invoke. */
static tinyml_status_t read_fixed(const tinyml_allocator_t *a, MlirType type,
                                  MlirAttribute attrs, intptr_t i, tmod_tensor_t *t) {
  MlirAttribute v = dict_get(attrs, i, "tinyml.fixed_value");
  if (mlirAttributeIsNull(v)) return TINYML_OK;
  if (!mlirAttributeIsADenseElements(v) || !mlirTypeEqual(mlirAttributeGetType(v), type))
    return tinyml__status_make(a, TINYML_STATUS_INVALID_ARGUMENT,
                               "compiler: input %ld '%s': tinyml.fixed_value must be a "
                               "dense constant of the input's own type", (long)i, t->name);
  int64_t n = mlirElementsAttrGetNumElements(v);
  uint8_t *bytes = tinyml__alloc(a, (size_t)t->byte_size + 1, 8); /* +1: non-NULL if empty */
  if (!bytes) return tinyml__status_make(a, TINYML_STATUS_OUT_OF_MEMORY, "compiler: out of memory");
  size_t es = n ? (size_t)t->byte_size / (size_t)n : 0;
  for (int64_t k = 0; k < n; ++k) fixed_element(v, k, es, bytes + (size_t)k * es);
  t->fixed_value = bytes;
  return TINYML_OK;
}

static int is_state(MlirAttribute attrs, intptr_t i) {
  return !mlirAttributeIsNull(dict_get(attrs, i, "tinyml.state"));
}

/* Argument i's initial bytes: `tinyml.state_init`, a dense constant of
 * the argument's own type, else every byte `tinyml.state_fill` (default
 * 0).  Bit-packed i1 literals would need unpacking; no importer makes
 * boolean state. */
static tinyml_status_t read_init(const tinyml_allocator_t *a, MlirAttribute attrs, intptr_t i,
                                 MlirType type, const tmod_tensor_t *t, uint8_t *dst) {
  MlirAttribute v = dict_get(attrs, i, "tinyml.state_init");
  if (mlirAttributeIsNull(v)) {
    MlirAttribute f = dict_get(attrs, i, "tinyml.state_fill");
    int has_fill = !mlirAttributeIsNull(f) && mlirAttributeIsAInteger(f);
    memset(dst, has_fill ? (uint8_t)mlirIntegerAttrGetValueInt(f) : 0, (size_t)t->byte_size);
    return TINYML_OK;
  }
  MlirType elem = mlirShapedTypeGetElementType(type);
  int64_t n = 1;
  for (intptr_t d = 0; d < mlirShapedTypeGetRank(type); ++d) n *= mlirShapedTypeGetDimSize(type, d);
  if (!mlirAttributeIsADenseElements(v) || !mlirTypeEqual(mlirAttributeGetType(v), type) ||
      (mlirTypeIsAInteger(elem) && mlirIntegerTypeGetWidth(elem) == 1) || n <= 0)
    return tinyml__status_make(a, TINYML_STATUS_INVALID_MODEL,
                               "compiler: state '%s': tinyml.state_init must be a dense "
                               "constant of the state's own non-boolean type", t->name);
  const uint8_t *raw = mlirDenseElementsAttrGetRawData(v);
  size_t es = (size_t)t->byte_size / (size_t)n;
  for (int64_t k = 0; k < n; ++k)
    memcpy(dst + (size_t)k * es, mlirDenseElementsAttrIsSplat(v) ? raw : raw + (size_t)k * es, es);
  return TINYML_OK;
}

/* The trailing `tinyml.state` arguments and results pair up in order. */
static tinyml_status_t read_state(const tinyml_allocator_t *a, MlirType ft, MlirAttribute arg_attrs,
                                  MlirAttribute res_attrs, tc_graph_t *g) {
  uint32_t n = 0, m = 0;
  while (n < g->input_count && is_state(arg_attrs, g->input_count - 1 - n)) ++n;
  while (m < g->output_count && is_state(res_attrs, g->output_count - 1 - m)) ++m;
  for (uint32_t k = 0; k < n; ++k)
    if (g->input_info[g->input_count - 1 - k].fixed_value)
      return tinyml__status_make(a, TINYML_STATUS_INVALID_ARGUMENT,
                                 "compiler: state '%s' cannot have a tinyml.fixed_value",
                                 g->input_info[g->input_count - 1 - k].name);
  for (uint32_t i = 0; i + n < g->input_count; ++i)
    if (is_state(arg_attrs, i))
      return tinyml__status_make(a, TINYML_STATUS_INVALID_MODEL,
                                 "compiler: state input '%s' must come after the inputs",
                                 g->input_info[i].name);
  if (n != m)
    return tinyml__status_make(a, TINYML_STATUS_INVALID_MODEL,
                               "compiler: %u state inputs but %u state outputs", n, m);
  uint64_t total = 0; /* each type's size was checked when it was read */
  for (uint32_t k = 0; k < n; ++k) total += g->input_info[g->input_count - n + k].byte_size;
  g->state_init = tinyml__calloc(a, (size_t)total + 1, 1, 16);
  if (!g->state_init)
    return tinyml__status_make(a, TINYML_STATUS_OUT_OF_MEMORY, "compiler: out of memory");
  g->state_count = n;
  uint8_t *dst = g->state_init;
  for (uint32_t k = 0; k < n; ++k) {
    uint32_t i = g->input_count - n + k;
    const tmod_tensor_t *in = &g->input_info[i];
    const tmod_tensor_t *out = &g->output_info[g->output_count - n + k];
    if (in->dtype != out->dtype || in->byte_size != out->byte_size)
      return tinyml__status_make(a, TINYML_STATUS_INVALID_MODEL,
                                 "compiler: state '%s' is returned as '%s' of another type",
                                 in->name, out->name);
    TINYML_RETURN_IF_ERROR(read_init(a, arg_attrs, i, mlirFunctionTypeGetInput(ft, i), in, dst));
    dst += in->byte_size;
  }
  return TINYML_OK;
}

tinyml_status_t tc_signature_read(MlirOperation func, const tinyml_allocator_t *a,
                                  tc_graph_t *g) {
  MlirType ft = mlirTypeAttrGetValue(
      mlirOperationGetAttributeByName(func, tc_str("function_type")));
  MlirAttribute arg_attrs = mlirOperationGetAttributeByName(func, tc_str("arg_attrs"));
  MlirAttribute res_attrs = mlirOperationGetAttributeByName(func, tc_str("res_attrs"));
  g->input_count = (uint32_t)mlirFunctionTypeGetNumInputs(ft);
  g->output_count = (uint32_t)mlirFunctionTypeGetNumResults(ft);
  g->input_info = tinyml__calloc(a, g->input_count + 1, sizeof(tmod_tensor_t), 8);
  g->output_info = tinyml__calloc(a, g->output_count + 1, sizeof(tmod_tensor_t), 8);
  if (!g->input_info || !g->output_info)
    return tinyml__status_make(a, TINYML_STATUS_OUT_OF_MEMORY, "compiler: out of memory");
  for (uint32_t i = 0; i < g->input_count; ++i) {
    TINYML_RETURN_IF_ERROR(read_tensor(a, mlirFunctionTypeGetInput(ft, i), arg_attrs,
                                       i, "input", &g->input_info[i]));
    TINYML_RETURN_IF_ERROR(read_fixed(a, mlirFunctionTypeGetInput(ft, i), arg_attrs, i,
                                      &g->input_info[i]));
  }
  for (uint32_t i = 0; i < g->output_count; ++i)
    TINYML_RETURN_IF_ERROR(read_tensor(a, mlirFunctionTypeGetResult(ft, i), res_attrs,
                                       i, "output", &g->output_info[i]));
  return read_state(a, ft, arg_attrs, res_attrs, g);
}

void tc_signature_free(tmod_tensor_t *t, uint32_t n, const tinyml_allocator_t *a) {
  for (uint32_t i = 0; t && i < n; ++i) {
    tinyml__free(a, (void *)t[i].name);
    tinyml__free(a, (void *)t[i].scales);
    tinyml__free(a, (void *)t[i].zero_points);
    tinyml__free(a, (void *)t[i].fixed_value);
  }
  tinyml__free(a, t);
}
