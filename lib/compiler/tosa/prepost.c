/* Pre/post-processing as a graph transformation: reads the model's
 * signature, writes a wrapper function around it in TOSA text, splices the
 * wrapper into the model's module and inlines the model into it. */
#include "prepost.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <stdio.h>
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/status.h"
#include "prepost_internal.h"

#define WRAPPER_NAME "tinyml_prepost"
/* Inlining leaves the model's body in the wrapper; symbol-dce drops the
 * then unused private model function. */
#define INLINE_PIPELINE "builtin.module(inline,symbol-dce)"

/* ---- the model's signature ------------------------------------------- */

typedef struct model_fn {
  MlirOperation op;
  MlirType type; /* function_type */
  MlirAttribute arg_attrs, res_attrs;
  MlirStringRef name;
} model_fn_t;

static int find_model(MlirModule m, model_fn_t *fn, int *clash) {
  int count = 0;
  *clash = 0;
  for (MlirOperation op = mlirBlockGetFirstOperation(mlirModuleGetBody(m));
       !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
    MlirAttribute name = mlirOperationGetAttributeByName(op, tc_str("sym_name"));
    if (!mlirAttributeIsNull(name) && mlirAttributeIsAString(name) &&
        mlirStringRefEqual(mlirStringAttrGetValue(name), tc_str(WRAPPER_NAME)))
      *clash = 1;
    if (!tc_op_is(op, "func.func") ||
        !mlirAttributeIsNull(mlirOperationGetAttributeByName(op, tc_str("sym_visibility"))))
      continue;
    fn->op = op;
    fn->name = mlirStringAttrGetValue(name);
    ++count;
  }
  if (count != 1) return count;
  fn->type = mlirTypeAttrGetValue(mlirOperationGetAttributeByName(fn->op, tc_str("function_type")));
  fn->arg_attrs = mlirOperationGetAttributeByName(fn->op, tc_str("arg_attrs"));
  fn->res_attrs = mlirOperationGetAttributeByName(fn->op, tc_str("res_attrs"));
  return 1;
}

static MlirAttribute dict_at(MlirAttribute attrs, intptr_t i) {
  if (mlirAttributeIsNull(attrs) || !mlirAttributeIsAArray(attrs) ||
      i >= mlirArrayAttrGetNumElements(attrs))
    return mlirAttributeGetNull();
  MlirAttribute d = mlirArrayAttrGetElement(attrs, i);
  return mlirAttributeIsADictionary(d) ? d : mlirAttributeGetNull();
}

static MlirAttribute dict_get(MlirAttribute dict, const char *key) {
  if (mlirAttributeIsNull(dict)) return mlirAttributeGetNull();
  return mlirDictionaryAttrGetElementByName(dict, tc_str(key));
}

static int te_elem_of(MlirType t, te_elem_t *out) {
  if (mlirTypeIsAF32(t)) return *out = TE_F32, 1;
  if (!mlirTypeIsAInteger(t)) return 0;
  switch (mlirIntegerTypeGetWidth(t)) {
    case 8: return *out = TE_I8, 1;
    case 16: return *out = TE_I16, 1;
    case 32: return *out = TE_I32, 1;
    default: return 0;
  }
}

/* Fills `port` from a signature entry; returns 0 when the stages cannot
 * handle its type (only ports that get stages need to be handled). */
static int read_port(MlirType type, MlirAttribute dict, const char *fallback, pp_port_t *port) {
  memset(port, 0, sizeof(*port));
  MlirAttribute n = dict_get(dict, "tinyml.name");
  if (!mlirAttributeIsNull(n) && mlirAttributeIsAString(n)) {
    MlirStringRef s = mlirStringAttrGetValue(n);
    snprintf(port->name, sizeof(port->name), "%.*s", (int)s.length, s.data);
  } else {
    snprintf(port->name, sizeof(port->name), "%s", fallback);
  }
  port->is_unsigned = !mlirAttributeIsNull(dict_get(dict, "tinyml.unsigned"));
  port->is_pinned = !mlirAttributeIsNull(dict_get(dict, "tinyml.fixed_value"));
  MlirAttribute sc = dict_get(dict, "tinyml.scale"), zp = dict_get(dict, "tinyml.zero_point");
  if (!mlirAttributeIsNull(sc) && mlirAttributeIsADenseF32Array(sc) &&
      mlirDenseArrayGetNumElements(sc) > 0) {
    port->quant_count = (uint32_t)mlirDenseArrayGetNumElements(sc);
    port->scale = mlirDenseF32ArrayGetElement(sc, 0);
    if (!mlirAttributeIsNull(zp) && mlirAttributeIsADenseI64Array(zp) &&
        mlirDenseArrayGetNumElements(zp) > 0)
      port->zero_point = mlirDenseI64ArrayGetElement(zp, 0);
  }
  te_elem_t elem;
  if (!mlirTypeIsARankedTensor(type) || !mlirShapedTypeHasStaticShape(type) ||
      mlirShapedTypeGetRank(type) > TE_MAX_RANK ||
      !te_elem_of(mlirShapedTypeGetElementType(type), &elem))
    return 0;
  int64_t dims[TE_MAX_RANK];
  uint32_t rank = (uint32_t)mlirShapedTypeGetRank(type);
  for (uint32_t d = 0; d < rank; ++d) dims[d] = mlirShapedTypeGetDimSize(type, d);
  port->type = te_type(elem, rank, dims);
  return 1;
}

/* ---- checks ------------------------------------------------------------ */

static int check_int16(pp_t *p) {
  const pp_port_t *in = &p->in;
  te_elem_t el = in->type.elem;
  uint32_t last = in->type.rank ? (uint32_t)in->type.dims[in->type.rank - 1] : 1;
  if (el != TE_F32 && el != TE_I8 && el != TE_I16)
    return pp_fail(p, "int16 pre-processing feeds float32, int8, uint8 or int16 inputs; "
                      "input 0 '%s' is %s", in->name, pp_dtype_name(in));
  if (p->pre->channel_count != 1 && p->pre->channel_count != last)
    return pp_fail(p, "channel_count %u does not match input 0 '%s': its last axis has %u "
                      "entries", p->pre->channel_count, in->name, last);
  return 0;
}

static int check_quantised_input(pp_t *p) {
  const pp_port_t *in = &p->in;
  if (in->type.elem == TE_F32) return 0;
  if (in->quant_count == 0)
    return pp_fail(p, "input 0 '%s' is an integer tensor without quantisation parameters, so "
                      "pre-processing cannot quantise to it", in->name);
  if (in->quant_count > 1)
    return pp_fail(p, "input 0 '%s' is quantised per axis; pre-processing needs per-tensor "
                      "quantisation", in->name);
  if (!(in->scale > 0.0f))
    return pp_fail(p, "input 0 '%s' has a quantisation scale that is not positive", in->name);
  return 0;
}

static int check_pre(pp_t *p, int in_ok) {
  if (p->input_count != 1)
    return pp_fail(p, "pre-processing needs a model with exactly one input; this one has %u",
                   p->input_count);
  if (!in_ok)
    return pp_fail(p, "input 0 '%s' must be a statically shaped float32, int8, int16 or "
                      "int32 tensor for pre-processing", p->in.name);
  /* The stages' new input would replace it, and its check with it. */
  if (p->in.is_pinned)
    return pp_fail(p, "input 0 '%s' has a value fixed at compile time, so pre-processing "
                      "cannot feed it", p->in.name);
  if (p->pre->kind == TINYML_INPUT_IMAGE ? pp_check_image(p) : check_int16(p)) return 1;
  return check_quantised_input(p);
}

static int check_all(pp_t *p, int in_ok, int out_ok) {
  if (p->pre && check_pre(p, in_ok)) return 1;
  if (!p->post) return 0;
  if (p->output_count < 1) return pp_fail(p, "post-processing needs a model with an output");
  if (!out_ok)
    return pp_fail(p, "output 0 '%s' must be a statically shaped float32, int8, int16 or "
                      "int32 tensor for post-processing", p->out.name);
  return pp_check_post(p);
}

/* ---- the wrapper text -------------------------------------------------- */

static void put_type(strbuf_t *sb, MlirType t) { mlirTypePrint(t, tc_print_to_strbuf, sb); }

static void put_attrs(strbuf_t *sb, MlirAttribute dict) {
  if (mlirAttributeIsNull(dict)) return;
  strbuf_append(sb, " ");
  mlirAttributePrint(dict, tc_print_to_strbuf, sb);
}

static void put_name_attr(strbuf_t *sb, const char *name, int is_unsigned) {
  strbuf_append(sb, " {tinyml.name = ");
  strbuf_mlir_string(sb, name);
  strbuf_append(sb, is_unsigned ? ", tinyml.unsigned}" : "}");
}

/* @"name", escaped as MLIR wants. */
static void put_symbol(strbuf_t *sb, MlirStringRef name) {
  char buf[256];
  snprintf(buf, sizeof(buf), "%.*s", (int)name.length, name.data);
  strbuf_append(sb, "@");
  strbuf_mlir_string(sb, buf);
}

static void put_type_list(strbuf_t *sb, MlirType fn, int results) {
  intptr_t n = results ? mlirFunctionTypeGetNumResults(fn) : mlirFunctionTypeGetNumInputs(fn);
  strbuf_append(sb, "(");
  for (intptr_t i = 0; i < n; ++i) {
    if (i) strbuf_append(sb, ", ");
    put_type(sb, results ? mlirFunctionTypeGetResult(fn, i) : mlirFunctionTypeGetInput(fn, i));
  }
  strbuf_append(sb, ")");
}

/* The wrapper's arguments: the raw input, or the model's own inputs. */
static void put_args(pp_t *p, const model_fn_t *fn, strbuf_t *head, te_value_t *args) {
  if (p->pre) {
    int image = p->pre->kind == TINYML_INPUT_IMAGE;
    te_type_t t = image ? pp_image_type(p) : te_type_with(&p->in.type, TE_I16);
    args[0] = (te_value_t){++p->e.next_id, t};
    strbuf_printf(head, "%%v%u: ", args[0].id);
    te_print_type(&(te_t){.sb = head}, &t);
    put_name_attr(head, image ? "image" : "samples", image);
    return;
  }
  for (uint32_t i = 0; i < p->input_count; ++i) {
    args[i] = (te_value_t){++p->e.next_id, p->in.type};
    strbuf_printf(head, "%s%%v%u: ", i ? ", " : "", args[i].id);
    put_type(head, mlirFunctionTypeGetInput(fn->type, i));
    put_attrs(head, dict_at(fn->arg_attrs, i));
  }
}

/* The call of the model; fills `outs` with the ids of its results. */
static void put_call(pp_t *p, const model_fn_t *fn, const te_value_t *ins, uint32_t *outs) {
  strbuf_t *sb = p->e.sb;
  strbuf_append(sb, "    ");
  for (uint32_t i = 0; i < p->output_count; ++i) {
    outs[i] = ++p->e.next_id;
    strbuf_printf(sb, "%s%%v%u", i ? ", " : "", outs[i]);
  }
  strbuf_append(sb, p->output_count ? " = func.call " : "func.call ");
  put_symbol(sb, fn->name);
  strbuf_append(sb, "(");
  for (uint32_t i = 0; i < p->input_count; ++i)
    strbuf_printf(sb, "%s%%v%u", i ? ", " : "", ins[i].id);
  strbuf_append(sb, ") : ");
  put_type_list(sb, fn->type, 0);
  strbuf_append(sb, " -> ");
  put_type_list(sb, fn->type, 1);
  strbuf_append(sb, "\n");
}

static void put_separator(strbuf_t *a, strbuf_t *b, uint32_t count) {
  if (!count) return;
  strbuf_append(a, ", ");
  strbuf_append(b, ", ");
}

/* The return op in `body` and the result list of the signature in `head`. */
static void put_return(pp_t *p, const model_fn_t *fn, const uint32_t *outs,
                       const pp_result_t *res, uint32_t nres, strbuf_t *head) {
  strbuf_t *body = p->e.sb;
  strbuf_t types;
  strbuf_init(&types, p->a);
  strbuf_append(head, ") -> (");
  strbuf_append(body, "    return");
  uint32_t first = nres ? 1 : 0, count = 0;
  for (uint32_t i = 0; i < nres; ++i, ++count) {
    strbuf_printf(body, "%s %%v%u", count ? "," : "", res[i].value.id);
    put_separator(&types, head, count);
    te_print_type(&(te_t){.sb = &types}, &res[i].value.type);
    te_print_type(&(te_t){.sb = head}, &res[i].value.type);
    put_name_attr(head, res[i].name, 0);
  }
  for (uint32_t i = first; i < p->output_count; ++i, ++count) {
    strbuf_printf(body, "%s %%v%u", count ? "," : "", outs[i]);
    put_separator(&types, head, count);
    put_type(&types, mlirFunctionTypeGetResult(fn->type, i));
    put_type(head, mlirFunctionTypeGetResult(fn->type, i));
    put_attrs(head, dict_at(fn->res_attrs, i));
  }
  strbuf_printf(body, "%s%s\n  }\n}\n", count ? " : " : "", types.data ? types.data : "");
  strbuf_append(head, ") {\n");
  head->oom |= types.oom; /* reported with the wrapper's own failures */
  strbuf_free(&types);
}

/* Writes the whole wrapper module into `out`. */
static void write_wrapper(pp_t *p, const model_fn_t *fn, strbuf_t *out) {
  te_value_t args[64];
  uint32_t outs[64];
  strbuf_init(out, p->a);
  strbuf_append(out, "module {\n  func.func private ");
  put_symbol(out, fn->name);
  put_type_list(out, fn->type, 0);
  strbuf_append(out, " -> ");
  put_type_list(out, fn->type, 1);
  strbuf_append(out, "\n  func.func @" WRAPPER_NAME "(");
  put_args(p, fn, out, args);
  te_value_t model_in[64];
  for (uint32_t i = 0; i < p->input_count; ++i) model_in[i] = args[i];
  /* Profiles name these stages (linalg/labels.h). */
  te_set_loc(&p->e, "pre-processing", NULL);
  if (p->pre) {
    model_in[0] = p->pre->kind == TINYML_INPUT_IMAGE
                      ? pp_emit_image(p, args[0])
                      : pp_emit_normalise(p, te_cast(&p->e, args[0], TE_F32),
                                          p->in.type.rank ? p->in.type.rank - 1 : 0);
  }
  put_call(p, fn, model_in, outs);
  te_set_loc(&p->e, "post-processing", NULL);
  pp_result_t res[PP_MAX_RESULTS];
  uint32_t nres = p->post ? pp_emit_post(p, (te_value_t){outs[0], p->out.type}, res) : 0;
  put_return(p, fn, outs, res, nres, out);
  strbuf_printf(out, "%s", p->sb.data ? p->sb.data : "");
}

/* ---- splicing ------------------------------------------------------------ */

static MlirOperation take_wrapper(MlirModule w) {
  for (MlirOperation op = mlirBlockGetFirstOperation(mlirModuleGetBody(w));
       !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op))
    if (tc_op_is(op, "func.func") &&
        mlirAttributeIsNull(mlirOperationGetAttributeByName(op, tc_str("sym_visibility")))) {
      mlirOperationRemoveFromParent(op);
      return op;
    }
  return (MlirOperation){NULL};
}

static tinyml_status_t splice(MlirContext ctx, MlirModule m, const model_fn_t *fn,
                              const strbuf_t *text, tc_diag_t *diag,
                              const tinyml_allocator_t *a) {
  MlirModule w = mlirModuleCreateParse(ctx, mlirStringRefCreate(text->data, text->length));
  if (mlirModuleIsNull(w))
    return tinyml__status_make(a, TINYML_STATUS_INTERNAL,
                               "compile: the pre/post-processing function does not parse: %s",
                               diag->len ? diag->text : "(no diagnostic)");
  MlirOperation wrapper = take_wrapper(w);
  mlirModuleDestroy(w);
  if (mlirOperationIsNull(wrapper))
    return tinyml__status_make(a, TINYML_STATUS_INTERNAL,
                               "compile: the pre/post-processing text has no public function");
  mlirBlockAppendOwnedOperation(mlirModuleGetBody(m), wrapper);
  mlirOperationSetAttributeByName(fn->op, tc_str("sym_visibility"),
                                  mlirStringAttrGet(ctx, tc_str("private")));
  return tc_run_pipeline(ctx, mlirModuleGetOperation(m), INLINE_PIPELINE, diag, a,
                         "inlining the model into its pre/post-processing");
}

static tinyml_status_t read_model(pp_t *p, MlirModule m, model_fn_t *fn, int *in_ok,
                                  int *out_ok) {
  int clash;
  int count = find_model(m, fn, &clash);
  if (count != 1)
    return tinyml__status_make(p->a, TINYML_STATUS_INVALID_MODEL,
                               "compiler: the model must have exactly one public function, "
                               "found %d", count);
  if (clash)
    return tinyml__status_make(p->a, TINYML_STATUS_INVALID_MODEL,
                               "compile: the model already has a symbol named '"
                               WRAPPER_NAME "', which pre/post-processing needs");
  if (fn->name.length > 200) /* put_symbol() copies it through a small buffer */
    return tinyml__status_make(p->a, TINYML_STATUS_UNSUPPORTED,
                               "compile: pre/post-processing needs a model function name of "
                               "at most 200 bytes");
  p->input_count = (uint32_t)mlirFunctionTypeGetNumInputs(fn->type);
  p->output_count = (uint32_t)mlirFunctionTypeGetNumResults(fn->type);
  if (p->input_count > 64 || p->output_count > 64)
    return tinyml__status_make(p->a, TINYML_STATUS_UNSUPPORTED,
                               "compile: pre/post-processing supports models with at most "
                               "64 inputs and 64 outputs");
  *in_ok = p->input_count &&
           read_port(mlirFunctionTypeGetInput(fn->type, 0), dict_at(fn->arg_attrs, 0),
                     "input_0", &p->in);
  *out_ok = p->output_count &&
            read_port(mlirFunctionTypeGetResult(fn->type, 0), dict_at(fn->res_attrs, 0),
                      "output_0", &p->out);
  return TINYML_OK;
}

tinyml_status_t tc_prepost_apply(MlirContext ctx, MlirModule module,
                                 const tinyml_preprocess_t *pre,
                                 const tinyml_postprocess_t *post, tc_diag_t *diag,
                                 const tinyml_allocator_t *a,
                                 void (*dump)(void *user, const char *text, size_t length),
                                 void *dump_user) {
  if (!pre && !post) return TINYML_OK;
  pp_t p = {.a = a, .pre = pre, .post = post};
  model_fn_t fn;
  int in_ok = 0, out_ok = 0;
  TINYML_RETURN_IF_ERROR(read_model(&p, module, &fn, &in_ok, &out_ok));
  if (check_all(&p, in_ok, out_ok))
    return tinyml__status_make(a, TINYML_STATUS_INVALID_ARGUMENT, "compile: %s", p.error);
  strbuf_init(&p.sb, a);
  p.e.sb = &p.sb;
  strbuf_t text;
  write_wrapper(&p, &fn, &text);
  tinyml_status_t st = TINYML_OK;
  if (text.oom || p.sb.oom)
    st = tinyml__status_make(a, TINYML_STATUS_OUT_OF_MEMORY, "compile: out of memory");
  if (!st && dump) dump(dump_user, text.data, text.length);
  if (!st) st = splice(ctx, module, &fn, &text, diag, a);
  strbuf_free(&text);
  strbuf_free(&p.sb);
  return st;
}
