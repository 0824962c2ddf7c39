// RVV code-generation strategy: see README.md beside this file.
//
// Vector-length agnostic.  Convolutions and depthwise convolutions are
// vectorized along their contiguous channel dimension with *scalable*
// vectors (vector<[8]xi32>: 8 * vscale lanes, i.e. LMUL 4 at any VLEN),
// tiled by [8] * vscale channels and masked for the remainder.  For regular
// convolutions the accumulator is kept in registers across the reduction
// loops (kh, kw, c), and for depthwise ones across (kh, kw).
// Elementwise ops are vectorized by 16 elements, once bufferized, and
// rank-4 copies of at least 16 innermost elements one row at a time.
// Everything else is bufferized, lowered to loops and left to LLVM's loop
// and SLP vectorizers (which use scalable vectors and fixed-length ones that
// need only VLEN >= 128, the minimum of the V extension).
//
// Every step that can fail is inside failures(suppress): an op that does not
// vectorize stays a (correct) scalar loop nest.
module attributes {transform.with_named_sequence} {
  // Regular conv (HWCF filter): loops (n, oh, ow, kh, kw, c | f), vector f.
  transform.named_sequence @conv_tile_vectorize(%g: !transform.any_op {transform.consumed}) {
    %t1, %l0, %l1, %l2, %l3 = transform.structured.tile_using_for %g tile_sizes [1, 1, 1, 0, 0, 0, [8]] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %t2, %l4, %l5, %l6 = transform.structured.tile_using_for %t1 tile_sizes [0, 0, 0, 1, 1, 1, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.include @fold_vectorize failures(propagate) (%t2) : (!transform.any_op) -> ()
    transform.yield
  }
  // %tile: the tiled op.  Its unit dims are folded away (in its innermost
  // loop, which always exists: the vector dimension's) and the 1-D rest is
  // vectorized with scalable vectors, masked.
  transform.named_sequence @fold_vectorize(%tile: !transform.any_op {transform.readonly}) {
    %loop = transform.get_parent_op %tile {op_name = "scf.for"} : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %loop {
      transform.apply_patterns.linalg.fold_unit_extent_dims_via_slices
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    // The body's f32 multiply and add may fuse (vfmacc): without the
    // contract flag LLVM keeps vfmul + vfadd, one more instruction per tap
    // (the vectorizer copies the flag onto the vector ops).
    %fp = transform.structured.match ops{["arith.mulf", "arith.addf"]} in %loop : (!transform.any_op) -> !transform.any_op
    %contract = transform.param.constant #arith.fastmath<contract> -> !transform.any_param
    transform.annotate %fp "fastmath" = %contract : !transform.any_op, !transform.any_param
    %v = transform.structured.match ops{["linalg.generic"]} in %loop : (!transform.any_op) -> !transform.any_op
    transform.foreach %v : !transform.any_op {
    ^bb0(%x: !transform.any_op):
      transform.structured.vectorize %x vector_sizes [[8]] : !transform.any_op
    }
    transform.yield
  }
  // conv_2d_nhwc_fhwc[_q]: the filter to HWCF (a small transpose into
  // scratch), then the output channels f innermost.
  transform.named_sequence @conv_fhwc(%op: !transform.any_op {transform.consumed}) {
    transform.sequence %op : !transform.any_op failures(suppress) {
    ^bb0(%c0: !transform.any_op):
      %c = transform.structured.transpose_conv2d %c0 : (!transform.any_op) -> !transform.any_op
      %g = transform.structured.generalize %c : (!transform.any_op) -> !transform.any_op
      %i = transform.structured.interchange %g iterator_interchange = [0, 1, 2, 4, 5, 6, 3] : (!transform.any_op) -> !transform.any_op
      transform.include @conv_tile_vectorize failures(propagate) (%i) : (!transform.any_op) -> ()
    }
    transform.yield
  }
  transform.named_sequence @conv_hwcf(%op: !transform.any_op {transform.consumed}) {
    transform.sequence %op : !transform.any_op failures(suppress) {
    ^bb0(%c: !transform.any_op):
      %g = transform.structured.generalize %c : (!transform.any_op) -> !transform.any_op
      %i = transform.structured.interchange %g iterator_interchange = [0, 1, 2, 4, 5, 6, 3] : (!transform.any_op) -> !transform.any_op
      transform.include @conv_tile_vectorize failures(propagate) (%i) : (!transform.any_op) -> ()
    }
    transform.yield
  }
  // depthwise_conv_2d_nhwc_hwcm[_q] and _hwc[_q]: generalized, with the unit
  // dims of its dispatch folded away (batch 1, multiplier 1, as contiguous
  // reshapes), so that the loops are (oh, ow, c, kh, kw).  These become
  // (oh, ow, kh, kw | c), vector c.  Only generics of exactly that shape are
  // touched (@match_dw_folded); e.g. a 1x1-output average pool is not.
  transform.named_sequence @dw(%op: !transform.any_op {transform.consumed}) {
    transform.sequence %op : !transform.any_op failures(suppress) {
    ^bb0(%c: !transform.any_op):
      %g = transform.structured.generalize %c : (!transform.any_op) -> !transform.any_op
      %fn = transform.get_parent_op %g {op_name = "func.func"} : (!transform.any_op) -> !transform.any_op
      transform.apply_patterns to %fn {
        transform.apply_patterns.linalg.fold_unit_extent_dims_via_reshapes
        transform.apply_patterns.canonicalization
      } : !transform.any_op
      %fn2 = transform.foreach_match in %fn @match_dw_folded -> @dw_folded : (!transform.any_op) -> !transform.any_op
    }
    transform.yield
  }
  // A generic with loops (p, p, p, r, r): the folded depthwise conv.
  transform.named_sequence @match_dw_folded(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    %m = transform.match.structured %op : (!transform.any_op) -> !transform.any_op {
    ^bb0(%s: !transform.any_op):
      %r = transform.match.structured.rank %s : (!transform.any_op) -> !transform.param<i64>
      %c5 = transform.param.constant 5 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %r, %c5 : !transform.param<i64>
      transform.match.structured.dim %s[0, 1, 2] {parallel} : !transform.any_op
      transform.match.structured.dim %s[3, 4] {reduction} : !transform.any_op
      transform.match.structured.yield %s : !transform.any_op
    }
    transform.yield %m : !transform.any_op
  }
  transform.named_sequence @dw_folded(%op: !transform.any_op {transform.consumed}) {
    transform.sequence %op : !transform.any_op failures(suppress) {
    ^bb0(%g: !transform.any_op):
      %i = transform.structured.interchange %g iterator_interchange = [0, 1, 3, 4, 2] : (!transform.any_op) -> !transform.any_op
      %t1, %l0, %l1, %l2 = transform.structured.tile_using_for %i tile_sizes [1, 1, 0, 0, [8]] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      %t2, %l3, %l4 = transform.structured.tile_using_for %t1 tile_sizes [0, 0, 1, 1, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      transform.include @fold_vectorize failures(propagate) (%t2) : (!transform.any_op) -> ()
      transform.include @dw_hoist_acc failures(propagate) (%l3, %l4) : (!transform.any_op, !transform.any_op) -> ()
    }
    transform.yield
  }
  // The depthwise accumulator into registers across (kh, kw), on tensors:
  // after bufferization hoist_redundant_vector_transfers cannot, as the
  // output buffer is a collapse_shape view (the unit-dim reshapes) and it
  // gives up on views.  The masked transfers are unmasked-with-operand
  // first and the mask made loop-invariant (its size is the tile's), so
  // that the read/write pair of the accumulator is a subset pair.
  transform.named_sequence @dw_hoist_acc(%kh: !transform.any_op {transform.readonly},
                                         %kw: !transform.any_op {transform.readonly}) {
    transform.apply_patterns to %kh {
      transform.apply_patterns.memref.resolve_ranked_shaped_type_result_dims
      transform.apply_patterns.vector.lower_masked_transfers
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_licm to %kw : !transform.any_op
    transform.apply_licm to %kh : !transform.any_op
    transform.loop.hoist_loop_invariant_subsets %kw : !transform.any_op
    transform.loop.hoist_loop_invariant_subsets %kh : !transform.any_op
    transform.yield
  }
  // Elementwise ops (marked by the compiler: lib/compiler/linalg/
  // inplace.h), after bufferization: flattened to 1-D, tiled by 16
  // elements (fixed-length: VLEN >= 128 holds 16 f32 in LMUL 4; scalable
  // vectors broke LLVM on ops it must scalarize, tflm_trained_lstm), the
  // remainder peeled; @elementwise_vec vectorizes the tiles.  Left to LLVM,
  // the loop vectorizer guards its vector loop with an overlap check that
  // fails when the memory plan puts the output exactly over an input,
  // which it does whenever it can: those steps ran scalar.  Flattened only
  // once the convs' accumulators are hoisted: before that, the
  // collapse_shape views on a conv's output buffer stop
  // hoist_redundant_vector_transfers (resnet8_float +17% instructions).
  transform.named_sequence @elementwise_tile(%op: !transform.any_op {transform.consumed}) {
    transform.sequence %op : !transform.any_op failures(suppress) {
    ^bb0(%g: !transform.any_op):
      %f = transform.structured.flatten_elementwise %g : (!transform.any_op) -> !transform.any_op
      %t, %l = transform.structured.tile_using_for %f tile_sizes [16] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      transform.annotate %t "tinyml.elementwise_tile" : !transform.any_op
      transform.include @peel_suppress failures(propagate) (%l) : (!transform.any_op) -> ()
    }
    transform.yield
  }
  transform.named_sequence @peel_suppress(%l: !transform.any_op {transform.readonly}) {
    transform.sequence %l : !transform.any_op failures(suppress) {
    ^bb0(%j: !transform.any_op):
      %c = transform.cast %j : !transform.any_op to !transform.op<"scf.for">
      %a, %b = transform.loop.peel %c : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
    }
    transform.yield
  }
  // The tiles, once every elementwise op is tiled (no pattern replaces an
  // op another handle holds): canonicalized first, so that the peeled
  // loop's tiles are static vector<16> (and the remainder vector<rem>).
  transform.named_sequence @elementwise_vec(%root: !transform.any_op {transform.readonly}) {
    %ts = transform.structured.match ops{["linalg.generic"]} attributes{tinyml.elementwise_tile} in %root : (!transform.any_op) -> !transform.any_op
    %fns = transform.get_parent_op %ts {op_name = "func.func", deduplicate, allow_empty_results} : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %fns {
      transform.apply_patterns.linalg.tiling_canonicalization
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %ts2 = transform.structured.match ops{["linalg.generic"]} attributes{tinyml.elementwise_tile} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %ts2 : !transform.any_op {
    ^bb1(%x: !transform.any_op):
      transform.sequence %x : !transform.any_op failures(suppress) {
      ^bb2(%j: !transform.any_op):
        transform.structured.vectorize %j : !transform.any_op
      }
    }
    transform.yield
  }
  // A rank-4 copy (bufferization's linalg.copy, e.g. a pad's interior):
  // one vector of the innermost dimension per (n, h, w).  LLVM left it
  // scalar, a flw/fsw pair per element, unable to tell source from
  // destination apart (resnet8_float: 3% of its instructions).  Only from
  // 16 elements a row: every copy vectorized cost vww_96_float 0.6% more.
  transform.named_sequence @match_copy16(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    transform.match.operation_name %op ["linalg.copy"] : !transform.any_op
    %m = transform.match.structured %op : (!transform.any_op) -> !transform.any_op {
    ^bb0(%s: !transform.any_op):
      %r = transform.match.structured.rank %s : (!transform.any_op) -> !transform.param<i64>
      %c4 = transform.param.constant 4 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %r, %c4 : !transform.param<i64>
      %d = transform.match.structured.dim %s[3] : (!transform.any_op) -> !transform.param<i64>
      %c16 = transform.param.constant 16 : i64 -> !transform.param<i64>
      transform.match.param.cmpi ge %d, %c16 : !transform.param<i64>
      transform.match.structured.yield %s : !transform.any_op
    }
    transform.yield %m : !transform.any_op
  }
  transform.named_sequence @copy_vec(%op: !transform.any_op {transform.consumed}) {
    transform.sequence %op : !transform.any_op failures(suppress) {
    ^bb0(%c: !transform.any_op):
      %t, %l0, %l1, %l2 = transform.structured.tile_using_for %c tile_sizes [1, 1, 1, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      transform.structured.vectorize %t : !transform.any_op
    }
    transform.yield
  }
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.consumed}) {
    %c1 = transform.structured.match ops{["linalg.conv_2d_nhwc_fhwc", "linalg.conv_2d_nhwc_fhwc_q"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %c1 : !transform.any_op {
    ^bb0(%c: !transform.any_op):
      transform.include @conv_fhwc failures(propagate) (%c) : (!transform.any_op) -> ()
    }
    %c2 = transform.structured.match ops{["linalg.conv_2d_nhwc_hwcf", "linalg.conv_2d_nhwc_hwcf_q"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %c2 : !transform.any_op {
    ^bb0(%c: !transform.any_op):
      transform.include @conv_hwcf failures(propagate) (%c) : (!transform.any_op) -> ()
    }
    %d = transform.structured.match ops{["linalg.depthwise_conv_2d_nhwc_hwcm", "linalg.depthwise_conv_2d_nhwc_hwcm_q", "linalg.depthwise_conv_2d_nhwc_hwc", "linalg.depthwise_conv_2d_nhwc_hwc_q"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %d : !transform.any_op {
    ^bb0(%c: !transform.any_op):
      transform.include @dw failures(propagate) (%c) : (!transform.any_op) -> ()
    }
    // Fold the unit-dim slices into the transfers, so that bufferization
    // leaves no copies of a buffer onto itself.
    %f0 = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f0 {
      transform.apply_patterns.tensor.fold_tensor_subset_ops_into_vector_transfers
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_cse to %f0 : !transform.any_op
    %b = transform.bufferization.one_shot_bufferize %root {memcpy_op = "linalg.copy"} : (!transform.any_op) -> !transform.any_op
    // Transfers read and write the buffers directly; vector.mask regions
    // become masked transfers (the lowering needs that).
    %f = transform.structured.match ops{["func.func"]} in %b : (!transform.any_op) -> !transform.any_op
    transform.apply_cse to %f : !transform.any_op
    transform.apply_patterns to %f {
      transform.apply_patterns.memref.fold_memref_alias_ops
      transform.apply_patterns.vector.lower_masked_transfers
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    // Keep each accumulator vector in registers through the reduction loops
    // (this also hoists loop-invariant code such as the masks).
    transform.foreach %f : !transform.any_op {
    ^bb0(%fn: !transform.any_op):
      %h = transform.structured.hoist_redundant_vector_transfers %fn : (!transform.any_op) -> !transform.any_op
    }
    %fz = transform.structured.match ops{["func.func"]} in %b : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %fz {
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %e = transform.structured.match ops{["linalg.generic"]} attributes{tinyml.elementwise} in %b : (!transform.any_op) -> !transform.any_op
    transform.foreach %e : !transform.any_op {
    ^bb0(%x: !transform.any_op):
      transform.include @elementwise_tile failures(propagate) (%x) : (!transform.any_op) -> ()
    }
    transform.include @elementwise_vec failures(propagate) (%b) : (!transform.any_op) -> ()
    %fc = transform.structured.match ops{["func.func"]} in %b : (!transform.any_op) -> !transform.any_op
    %fc2 = transform.foreach_match in %fc @match_copy16 -> @copy_vec : (!transform.any_op) -> !transform.any_op
    %fe = transform.structured.match ops{["func.func"]} in %b : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %fe {
      transform.apply_patterns.vector.lower_masked_transfers
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
}
