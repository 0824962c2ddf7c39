// Portable strategy: bufferize everything and leave vectorization to
// LLVM's loop and SLP vectorizers.  Target-tuned tiling comes with issue 7.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.consumed}) {
    %b = transform.bufferization.one_shot_bufferize %root {memcpy_op = "linalg.copy"} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
