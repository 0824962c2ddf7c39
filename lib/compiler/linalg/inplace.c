/* Dispatches whose output may share memory with an input (inplace.h). */
#include "inplace.h"

#include <mlir-c/AffineMap.h>
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <string.h>

#include "../tosa/ukernel_op.h"

/* Ops around the computation that touch no element: reading the
 * arguments, writing the result, constants. */
static int is_plumbing(MlirOperation op) {
  return tc_op_is(op, "bufferization.to_tensor") ||
         tc_op_is(op, "bufferization.materialize_in_destination") ||
         tc_op_is(op, "func.return") || tc_op_is(op, "tensor.empty") ||
         tc_op_is(op, "arith.constant");
}

/* A scalar body: no op takes a tensor or memref (no tensor.extract), so
 * it reads no element but the ones the maps give it.  tosa.apply_scale
 * stays in a rescale's body until later, hence no list of dialects. */
static int scalar_body(MlirOperation generic) {
  MlirBlock b = mlirRegionGetFirstBlock(mlirOperationGetRegion(generic, 0));
  for (MlirOperation op = mlirBlockGetFirstOperation(b); !mlirOperationIsNull(op);
       op = mlirOperationGetNextInBlock(op)) {
    if (mlirOperationGetNumRegions(op) != 0) return 0;
    for (intptr_t i = 0; i < mlirOperationGetNumOperands(op); ++i)
      if (mlirTypeIsAShaped(mlirValueGetType(mlirOperationGetOperand(op, i)))) return 0;
  }
  return 1;
}

static int all_identity_maps(MlirOperation generic) {
  MlirAttribute maps = mlirOperationGetAttributeByName(generic, tc_str("indexing_maps"));
  if (mlirAttributeIsNull(maps) || !mlirAttributeIsAArray(maps)) return 0;
  for (intptr_t i = 0; i < mlirArrayAttrGetNumElements(maps); ++i) {
    MlirAttribute m = mlirArrayAttrGetElement(maps, i);
    if (!mlirAttributeIsAAffineMap(m) || !mlirAffineMapIsIdentity(mlirAffineMapAttrGetValue(m)))
      return 0;
  }
  return 1;
}

static int is_elementwise_generic(MlirOperation op) {
  if (!tc_op_is(op, "linalg.generic") || mlirOperationGetNumRegions(op) != 1) return 0;
  MlirAttribute it = mlirOperationGetAttributeByName(op, tc_str("iterator_types"));
  if (mlirAttributeIsNull(it) || !mlirAttributeIsAArray(it)) return 0;
  for (intptr_t i = 0; i < mlirArrayAttrGetNumElements(it); ++i)
    if (!tc_attr_prints_with(mlirArrayAttrGetElement(it, i), "parallel")) return 0;
  return all_identity_maps(op) && scalar_body(op);
}

/* Every op is plumbing except one elementwise generic: element i of the
 * output is computed from element i of each input alone, and written after
 * they are read.  With two generics, bufferization may put the first's
 * result in the output buffer, which the second then reads over the input
 * it shares. */
static int is_elementwise_function(MlirBlock body) {
  int generics = 0;
  for (MlirOperation op = mlirBlockGetFirstOperation(body); !mlirOperationIsNull(op);
       op = mlirOperationGetNextInBlock(op)) {
    if (is_plumbing(op)) continue;
    if (!is_elementwise_generic(op)) return 0;
    ++generics;
  }
  return generics == 1;
}

/* An input of the output's size read for the last time here. */
static void note_elementwise(const tc_graph_t *g, uint32_t d, tc_dispatch_t *dp) {
  if (dp->output_count != 1 || dp->reuse_in) return;
  const tc_buffer_t *out = &g->buffers[dp->args[dp->input_count]];
  for (uint32_t i = 0; i < dp->input_count; ++i) {
    const tc_buffer_t *in = &g->buffers[dp->args[i]];
    if (in->kind != TC_BUFFER_PRODUCED || in->size != out->size || in->last_use != (int64_t)d)
      continue;
    dp->reuse_in = i + 1;
    dp->reuse_out = dp->input_count + 1;
    return;
  }
}

uint64_t tc_stream_lead(int32_t ih, int32_t iw, int32_t ic, int32_t oh, int32_t ow, int32_t oc,
                        int32_t stride_h, int32_t pad_top) {
  (void)ih;
  const uint64_t row = (uint64_t)iw * (uint64_t)ic;
  uint64_t lead = 0;
  for (int64_t oy = 0; oy < oh; ++oy) {
    /* The last pixel of output row oy ends here; this row's first window
     * row is the lowest any pixel from here on reads. */
    const uint64_t end = (uint64_t)(oy + 1) * (uint64_t)ow * (uint64_t)oc;
    const int64_t first = oy * stride_h - pad_top;
    const uint64_t keep = first > 0 ? (uint64_t)first * row : 0;
    if (end > keep && end - keep > lead) lead = end - keep;
  }
  return lead;
}

/* The kernel's single op, if the body is plumbing around one microkernel. */
static MlirOperation sole_kernel(MlirBlock body) {
  MlirOperation found = {NULL};
  for (MlirOperation op = mlirBlockGetFirstOperation(body); !mlirOperationIsNull(op);
       op = mlirOperationGetNextInBlock(op)) {
    if (is_plumbing(op)) continue;
    if (!tc_op_is(op, TC_UKERNEL_OP) || !mlirOperationIsNull(found)) return (MlirOperation){NULL};
    found = op;
  }
  return found;
}

static void note_stream(const tc_graph_t *g, tc_dispatch_t *dp, MlirBlock body) {
  MlirOperation uk = sole_kernel(body);
  if (mlirOperationIsNull(uk) || mlirOperationGetNumOperands(uk) != 2) return;
  if (!tc_uk_kind_is(uk, "conv_s8") && !tc_uk_kind_is(uk, "depthwise_s8")) return;
  const int x = tc_arg_of_operand(mlirOperationGetOperand(uk, 0));
  const int blob = tc_arg_of_operand(mlirOperationGetOperand(uk, 1));
  const int y = tc_arg_of_result(mlirOperationGetResult(uk, 0));
  const uint32_t nargs = dp->input_count + dp->output_count;
  if (x < 0 || blob < 0 || y < 0 || (uint32_t)x >= dp->input_count ||
      (uint32_t)blob >= dp->input_count || (uint32_t)y < dp->input_count || (uint32_t)y >= nargs)
    return;
  const tc_buffer_t *bb = &g->buffers[dp->args[blob]];
  tinyml_uk_params_t p;
  if (bb->kind != TC_BUFFER_CONSTANT || g->constants[bb->index].size < sizeof p) return;
  memcpy(&p, g->constants[bb->index].data, sizeof p);
  const tc_buffer_t *in = &g->buffers[dp->args[x]], *out = &g->buffers[dp->args[y]];
  if (p.batch != 1 || in->size != (uint64_t)p.ih * p.iw * p.ic ||
      out->size != (uint64_t)p.oh * p.ow * p.oc || p.stride_h < 1)
    return;
  dp->stream_in = (uint32_t)x + 1;
  dp->stream_out = (uint32_t)y + 1;
  dp->stream_lead = tc_stream_lead(p.ih, p.iw, p.ic, p.oh, p.ow, p.oc, p.stride_h, p.pad_top);
}

/* Every operand's elements are whole bytes: LLVM stores a vector of i1
 * as packed bits, while the scalar loops (and the runtime) keep one byte
 * per element. */
static int whole_byte_elements(MlirOperation op) {
  for (intptr_t i = 0; i < mlirOperationGetNumOperands(op); ++i) {
    MlirType t = mlirValueGetType(mlirOperationGetOperand(op, i));
    if (!mlirTypeIsAShaped(t)) continue;
    MlirType e = mlirShapedTypeGetElementType(t);
    if (!mlirTypeIsAInteger(e) && !mlirTypeIsAFloat(e)) return 0;
    const unsigned bits =
        mlirTypeIsAInteger(e) ? mlirIntegerTypeGetWidth(e) : mlirFloatTypeGetWidth(e);
    if (bits % 8 != 0) return 0;
  }
  return 1;
}

/* Marks every elementwise generic of the function for the strategies
 * (inplace.h: TC_ELEMENTWISE_ATTR). */
static void mark_elementwise(MlirOperation op) {
  if (mlirOperationIsNull(op)) return;
  if (is_elementwise_generic(op) && whole_byte_elements(op))
    mlirOperationSetAttributeByName(op, tc_str(TC_ELEMENTWISE_ATTR),
                                    mlirUnitAttrGet(mlirOperationGetContext(op)));
  for (intptr_t r = 0; r < mlirOperationGetNumRegions(op); ++r)
    for (MlirBlock b = mlirRegionGetFirstBlock(mlirOperationGetRegion(op, r)); !mlirBlockIsNull(b);
         b = mlirBlockGetNextInRegion(b))
      for (MlirOperation o = mlirBlockGetFirstOperation(b); !mlirOperationIsNull(o);
           o = mlirOperationGetNextInBlock(o))
        mark_elementwise(o);
}

void tc_note_inplace(tc_graph_t *g, int raster_kernels) {
  MlirBlock module = mlirModuleGetBody(g->dispatch_module);
  for (MlirOperation f = mlirBlockGetFirstOperation(module); !mlirOperationIsNull(f);
       f = mlirOperationGetNextInBlock(f)) {
    if (!tc_op_is(f, "func.func") || mlirOperationGetNumRegions(f) != 1) continue;
    const long d = tc_dispatch_index(f, g->dispatch_count);
    if (d < 0) continue;
    MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(f, 0));
    if (mlirBlockIsNull(body)) continue;
    tc_dispatch_t *dp = &g->dispatches[d];
    mark_elementwise(f);
    if (is_elementwise_function(body))
      note_elementwise(g, (uint32_t)d, dp);
    else if (raster_kernels)
      note_stream(g, dp, body);
  }
}
