// x86-64 (AVX2/FMA) code-generation strategy: see README.md beside this file.
// Tiles+vectorizes batch_matmul (6x16 register tiles over packed panels of B,
// peeled + masked remainders; meson embeds an AVX-512 variant with 8x32 tiles, see meson.build)
// and conv_2d_nhwc_fhwc (HWCF, 6x16 tile, decomposed to 1-D conv); bufferizes all.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @vec_suppress(%op: !transform.any_op {transform.consumed}) {
    transform.sequence %op : !transform.any_op failures(suppress) {
    ^bb0(%j: !transform.any_op):
      transform.structured.vectorize %j : !transform.any_op
    }
    transform.yield
  }
  transform.named_sequence @decompose_vec_suppress(%op: !transform.any_op {transform.consumed}) {
    transform.sequence %op : !transform.any_op failures(suppress) {
    ^bb0(%j: !transform.any_op):
      %d = transform.structured.decompose %j : (!transform.any_op) -> !transform.any_op
      transform.structured.vectorize %d : !transform.any_op
    }
    transform.yield
  }
  transform.named_sequence @mvec_mm_suppress(%op: !transform.any_op {transform.consumed}) {
    transform.sequence %op : !transform.any_op failures(suppress) {
    ^bb0(%j: !transform.any_op):
      transform.structured.vectorize %j vector_sizes [1, 6, 16, 1] {create_named_contraction} : !transform.any_op
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
  // A copy (a concat's insert_slice, after bufferization) one pixel at a
  // time, vectorized over channels: as scalar loops LLVM cannot vectorize
  // it (source and destination may overlap, for all it knows).
  transform.named_sequence @copy_vec_suppress(%op: !transform.any_op {transform.consumed}) {
    transform.sequence %op : !transform.any_op failures(suppress) {
    ^bb0(%j: !transform.any_op):
      %t, %l0, %l1, %l2 = transform.structured.tile_using_for %j tile_sizes [1, 1, 1, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      transform.structured.vectorize %t : !transform.any_op
    }
    transform.yield
  }
  // An elementwise op (marked by the compiler: lib/compiler/linalg/
  // inplace.h says why), flattened to 1-D, %ts elements per tile, the
  // remainder peeled; __transform_main then vectorizes the tiles.  Left
  // to LLVM, the loop vectorizer guards its vector loop with an overlap
  // check that fails when the memory plan puts the output exactly over an
  // input, which it does whenever it can: the scalar loop ran instead
  // (3 ns per element).
  transform.named_sequence @elementwise_tile(%op: !transform.any_op {transform.consumed}, %ts: !transform.param<i64> {transform.readonly}) {
    transform.sequence %op : !transform.any_op failures(suppress) {
    ^bb0(%g: !transform.any_op):
      %f = transform.structured.flatten_elementwise %g : (!transform.any_op) -> !transform.any_op
      %t, %l = transform.structured.tile_using_for %f tile_sizes [%ts] : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
      transform.annotate %t "tinyml.elementwise_tile" : !transform.any_op
      transform.include @peel_suppress failures(propagate) (%l) : (!transform.any_op) -> ()
    }
    transform.yield
  }
  // Elementwise ops whose (first) result has 32-bit elements, and the
  // others.  Their tiles differ on AVX2: 16 f32 made two 32-byte stores,
  // which LLVM emitted upper half first, and where the output sat 16
  // bytes past a cache line every store then split a line behind a
  // later one: a 14x14x576 add ran 2.5x slower on malloc's buffers than
  // on aligned ones (docs/PERF.md, "Buffer placement").  8 f32 is one
  // store; 16 int8 results are one 16-byte store already, and 8 would
  // halve their loops' work per iteration (2x slower).  A result with no
  // bit width (index: TOSA makes none) matches neither and is left to
  // LLVM's vectorizer.
  transform.named_sequence @result_bits_32(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    %s = transform.match.structured failures(propagate) %op : (!transform.any_op) -> !transform.any_op {
    ^bb0(%y: !transform.any_op):
      %init = transform.match.structured.init %y[0] : (!transform.any_op) -> !transform.any_value
      %bw = transform.match.structured.elemental_bitwidth %init : (!transform.any_value) -> !transform.param<i64>
      %c32 = transform.param.constant 32 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %bw, %c32 : !transform.param<i64>
      transform.match.structured.yield %y : !transform.any_op
    }
    transform.yield %s : !transform.any_op
  }
  transform.named_sequence @result_bits_other(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    %s = transform.match.structured failures(propagate) %op : (!transform.any_op) -> !transform.any_op {
    ^bb0(%y: !transform.any_op):
      %init = transform.match.structured.init %y[0] : (!transform.any_op) -> !transform.any_value
      %bw = transform.match.structured.elemental_bitwidth %init : (!transform.any_value) -> !transform.param<i64>
      %c32 = transform.param.constant 32 : i64 -> !transform.param<i64>
      transform.match.param.cmpi ne %bw, %c32 : !transform.param<i64>
      transform.match.structured.yield %y : !transform.any_op
    }
    transform.yield %s : !transform.any_op
  }
  // The tiles of @elementwise_tile, vectorized.  Where the size is not a
  // multiple of the tile's, the tiles' sizes are still dynamic after the
  // peel (an affine.min the peel has only rewritten), which vectorize
  // refuses: canonicalizing their functions first gives static vector<16>
  // (or <8>) tiles and one vector<rem> (mul_in_place in tests/e2e with
  // AVX-512: 105 = 6 x 16 + 9).
  // Done once, after every elementwise op is tiled, so that no pattern
  // replaces an op another handle still holds.
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
      transform.include @vec_suppress failures(propagate) (%x) : (!transform.any_op) -> ()
    }
    transform.yield
  }
  // batch_matmul, BLIS-like: strips of 16 columns (the 6x16 register
  // tile's width; 12 ymm accumulators), k blocks of 256, and each block's
  // 256x16 panel of B copied to a contiguous buffer first (BLIS's packing);
  // k 1 innermost.  With AVX-512 (meson.build) the same with 8x32 tiles
  // (16 zmm accumulators) and 256x32 panels.  Unpacked, B's rows lie a row
  // of B apart (2 KiB for N = 512): a strip's 256 rows fall into a few of
  // L1's 64 sets, came from L2 for every few rows of A, and where C lay
  // decided how often (4 KiB pages: 2.5x for the AVX2 tile, docs/PERF.md
  // "Buffer placement").  The panel is a stack buffer at the function's
  // top (memref.alloca): each workgroup's call has its own, so the strip
  // loop stays split over threads (loop_access.c).
  transform.named_sequence @matmul_packed(%op: !transform.any_op {transform.consumed}) {
    %t1, %lb, %ln = transform.structured.tile_using_for %op tile_sizes [1, 0, 16, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %t2, %lk = transform.structured.tile_using_for %t1 tile_sizes [0, 0, 0, 256] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.include @peel_suppress failures(propagate) (%lk) : (!transform.any_op) -> ()
    transform.include @peel_suppress failures(propagate) (%ln) : (!transform.any_op) -> ()
    transform.apply_patterns to %lb {
      transform.apply_patterns.linalg.tiling_canonicalization
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %blocks = transform.structured.match ops{["linalg.batch_matmul"]} in %lb : (!transform.any_op) -> !transform.any_op
    transform.foreach %blocks : !transform.any_op {
    ^bb1(%b: !transform.any_op):
      transform.include @pack_b_suppress failures(propagate) (%b) : (!transform.any_op) -> ()
    }
    %blocks2 = transform.structured.match ops{["linalg.batch_matmul"]} in %lb : (!transform.any_op) -> !transform.any_op
    transform.foreach %blocks2 : !transform.any_op {
    ^bb1(%b: !transform.any_op):
      %t5, %lir = transform.structured.tile_using_for %b tile_sizes [0, 6, 0, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      %t6, %lkk = transform.structured.tile_using_for %t5 tile_sizes [0, 0, 0, 1] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      transform.include @peel_suppress failures(propagate) (%lir) : (!transform.any_op) -> ()
    }
    transform.apply_patterns to %lb {
      transform.apply_patterns.linalg.tiling_canonicalization
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %inner = transform.structured.match ops{["linalg.batch_matmul"]} in %lb : (!transform.any_op) -> !transform.any_op
    transform.foreach %inner : !transform.any_op {
    ^bb2(%i: !transform.any_op):
      transform.include @vec_suppress failures(propagate) (%i) : (!transform.any_op) -> ()
    }
    %rem = transform.structured.match ops{["linalg.batch_matmul"]} in %lb : (!transform.any_op) -> !transform.any_op
    transform.foreach %rem : !transform.any_op {
    ^bb2(%i: !transform.any_op):
      transform.include @mvec_mm_suppress failures(propagate) (%i) : (!transform.any_op) -> ()
    }
    transform.yield
  }
  // B's block as a copy (a tensor.pad that pads nothing, nofold) into a
  // stack buffer; every block has static sizes after the peels.
  transform.named_sequence @pack_b_suppress(%op: !transform.any_op {transform.consumed}) {
    transform.sequence %op : !transform.any_op failures(suppress) {
    ^bb0(%j: !transform.any_op):
      %p, %pad, %cb = transform.structured.pad %j {padding_dimensions = [3], nofold_flags = [0, 1, 0], copy_back_op = "none"} : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      %buf, %new = transform.structured.bufferize_to_allocation %pad {alloc_op = "memref.alloca", memcpy_op = "linalg.copy"} : !transform.any_op
      %cp = transform.select "linalg.copy" in %new : (!transform.any_op) -> !transform.any_op
      %cpt, %cl0, %cl1 = transform.structured.tile_using_for %cp tile_sizes [1, 1, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      transform.structured.vectorize %cpt : !transform.any_op
    }
    transform.yield
  }
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.consumed}) {
    %mm = transform.structured.match ops{["linalg.batch_matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %mm : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      transform.include @matmul_packed failures(propagate) (%m) : (!transform.any_op) -> ()
    }
    %convs = transform.structured.match ops{["linalg.conv_2d_nhwc_fhwc"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %convs : !transform.any_op {
    ^bb0(%c0: !transform.any_op):
      %c = transform.structured.transpose_conv2d %c0 : (!transform.any_op) -> !transform.any_op
      %ct1, %cl0, %cl1, %cl2 = transform.structured.tile_using_for %c tile_sizes [1, 1, 6, 0, 0, 0, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      %ct2, %cl3 = transform.structured.tile_using_for %ct1 tile_sizes [0, 0, 0, 16, 0, 0, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      %ct3, %cl4, %cl5, %cl6 = transform.structured.tile_using_for %ct2 tile_sizes [0, 0, 0, 0, 1, 1, 1] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      transform.include @peel_suppress failures(propagate) (%cl3) : (!transform.any_op) -> ()
      transform.include @peel_suppress failures(propagate) (%cl2) : (!transform.any_op) -> ()
      transform.apply_patterns to %cl0 {
        transform.apply_patterns.linalg.tiling_canonicalization
        transform.apply_patterns.canonicalization
      } : !transform.any_op
      %cinner = transform.structured.match ops{["linalg.conv_2d_nhwc_hwcf"]} in %cl0 : (!transform.any_op) -> !transform.any_op
      transform.foreach %cinner : !transform.any_op {
      ^bb2(%i: !transform.any_op):
        transform.include @decompose_vec_suppress failures(propagate) (%i) : (!transform.any_op) -> ()
      }
    }
    // Pools: 8 pixels x 16 channels per tile, one window row at a time,
    // decomposed to 1-D and vectorized over channels.  Left to LLVM, the
    // window loop is innermost and nothing vectorizes.
    %pools = transform.structured.match ops{["linalg.pooling_nhwc_max", "linalg.pooling_nhwc_sum"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %pools : !transform.any_op {
    ^bb0(%p: !transform.any_op):
      %pt1, %pl0, %pl1, %pl2, %pl3 = transform.structured.tile_using_for %p tile_sizes [1, 1, 8, 16, 0, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      %pt2, %pl4 = transform.structured.tile_using_for %pt1 tile_sizes [0, 0, 0, 0, 1, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      transform.include @peel_suppress failures(propagate) (%pl3) : (!transform.any_op) -> ()
      transform.include @peel_suppress failures(propagate) (%pl2) : (!transform.any_op) -> ()
      transform.apply_patterns to %pl0 {
        transform.apply_patterns.linalg.tiling_canonicalization
        transform.apply_patterns.canonicalization
      } : !transform.any_op
      %pinner = transform.structured.match ops{["linalg.pooling_nhwc_max", "linalg.pooling_nhwc_sum"]} in %pl0 : (!transform.any_op) -> !transform.any_op
      transform.foreach %pinner : !transform.any_op {
      ^bb2(%i: !transform.any_op):
        transform.include @decompose_vec_suppress failures(propagate) (%i) : (!transform.any_op) -> ()
      }
    }
    %elts = transform.structured.match ops{["linalg.generic"]} attributes{tinyml.elementwise} in %root : (!transform.any_op) -> !transform.any_op
    %ts32 = transform.param.constant 8 : i64 -> !transform.param<i64>
    %ts = transform.param.constant 16 : i64 -> !transform.param<i64>
    transform.foreach %elts : !transform.any_op {
    ^bb0(%e: !transform.any_op):
      %w = transform.collect_matching @result_bits_32 in %e : (!transform.any_op) -> !transform.any_op
      %n = transform.collect_matching @result_bits_other in %e : (!transform.any_op) -> !transform.any_op
      transform.foreach %w : !transform.any_op {
      ^bb1(%x: !transform.any_op):
        transform.include @elementwise_tile failures(propagate) (%x, %ts32) : (!transform.any_op, !transform.param<i64>) -> ()
      }
      transform.foreach %n : !transform.any_op {
      ^bb1(%x: !transform.any_op):
        transform.include @elementwise_tile failures(propagate) (%x, %ts) : (!transform.any_op, !transform.param<i64>) -> ()
      }
    }
    transform.include @elementwise_vec failures(propagate) (%root) : (!transform.any_op) -> ()
    %f1 = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f1 {
      transform.apply_patterns.vector.reduction_to_contract
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %contracts = transform.structured.match ops{["vector.contract"]} in %root : (!transform.any_op) -> !transform.any_op
    %kloops = transform.get_parent_op %contracts {op_name = "scf.for", deduplicate, allow_empty_results} : (!transform.any_op) -> !transform.any_op
    transform.loop.hoist_loop_invariant_subsets %kloops : !transform.any_op
    %contracts2 = transform.structured.match ops{["vector.contract"]} in %root : (!transform.any_op) -> !transform.any_op
    %kloops2 = transform.get_parent_op %contracts2 {op_name = "scf.for", deduplicate, allow_empty_results, nth_parent = 2} : (!transform.any_op) -> !transform.any_op
    transform.loop.hoist_loop_invariant_subsets %kloops2 : !transform.any_op
    %contracts3 = transform.structured.match ops{["vector.contract"]} in %root : (!transform.any_op) -> !transform.any_op
    %kloops3 = transform.get_parent_op %contracts3 {op_name = "scf.for", deduplicate, allow_empty_results, nth_parent = 3} : (!transform.any_op) -> !transform.any_op
    transform.loop.hoist_loop_invariant_subsets %kloops3 : !transform.any_op
    %f1b = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f1b {
      transform.apply_patterns.tensor.fold_tensor_subset_ops_into_vector_transfers
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_cse to %f1b : !transform.any_op
    %b = transform.bufferization.one_shot_bufferize %root {memcpy_op = "linalg.copy"} : (!transform.any_op) -> !transform.any_op
    %f2 = transform.structured.match ops{["func.func"]} in %b : (!transform.any_op) -> !transform.any_op
    transform.apply_cse to %f2 : !transform.any_op
    transform.apply_patterns to %f2 {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    // The packed panels' stack buffers out of their loops, to the top of
    // their functions (inside a loop each iteration would grow the stack).
    %allocas = transform.structured.match ops{["memref.alloca"]} in %b : (!transform.any_op) -> !transform.any_op
    %fa = transform.get_parent_op %allocas {op_name = "func.func", deduplicate, allow_empty_results} : (!transform.any_op) -> !transform.any_op
    transform.bufferization.buffer_loop_hoisting %fa : !transform.any_op
    %f3 = transform.structured.hoist_redundant_vector_transfers %f2 : (!transform.any_op) -> !transform.any_op
    %copies = transform.structured.match ops{["linalg.copy"]} in %b : (!transform.any_op) -> !transform.any_op
    transform.foreach %copies : !transform.any_op {
    ^bb0(%cp: !transform.any_op):
      transform.include @copy_vec_suppress failures(propagate) (%cp) : (!transform.any_op) -> ()
    }
    transform.apply_patterns to %f3 {
      transform.apply_patterns.vector.lower_masked_transfers
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
}
