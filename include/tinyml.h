/*
 * tinyml.h - the public contract of libtinyml.
 *
 * libtinyml compiles machine-learning models ahead of time (MLIR/LLVM) into a
 * verified module and runs that module in-process.  Anything that is not in
 * this file is private and may change at any time.
 *
 * ABI policy: releases with the same TINYML_VERSION_MAJOR are ABI compatible.
 * Structs passed in carry a `struct_size` set by their `_init()` function, and
 * fields are only ever appended, so older callers keep working.
 *
 * ============================================================================
 * Rules that hold for every function unless its comment says otherwise
 * ============================================================================
 * Status:    every fallible call returns a tinyml_status_t.  NULL (TINYML_OK)
 *            means success.  A non-NULL status is owned by the caller and must
 *            be released with tinyml_status_free().  The library never aborts,
 *            exits or longjmps.  On error, out_ parameters are left untouched
 *            and nothing the caller owns is released or modified.
 * Ownership: pointer parameters are borrowed for the duration of the call
 *            unless the comment says how long they must live.  Objects
 *            returned through out_ parameters are owned by the caller and
 *            released with the matching _release()/_free() function.
 *            `_release(NULL)` and `_free(NULL)` are harmless no-ops.
 * Memory:    every object that allocates takes a tinyml_allocator_t (through
 *            its options) and remembers it.  A zeroed allocator selects the
 *            system allocator.  There is no global state.
 * Threads:   each type states its contract in its comment.
 */
#ifndef TINYML_H
#define TINYML_H

#include <stddef.h>
#include <stdint.h>

#include "tinyml_version.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(TINYML_BUILDING_LIBRARY) && defined(__GNUC__)
#define TINYML_API __attribute__((visibility("default")))
#else
#define TINYML_API
#endif

/* ============================================================================
 * Version
 * ========================================================================== */

/* Returns TINYML_VERSION_NUMBER of the library actually linked, so a host can
 * check it against the header it was built with. Thread-safe. */
TINYML_API uint32_t tinyml_version_number(void);

/* Returns the version as a static "X.Y.Z" string. Thread-safe. */
TINYML_API const char *tinyml_version_string(void);

/* ============================================================================
 * Status
 * ========================================================================== */

typedef enum tinyml_status_code_e {
  TINYML_STATUS_OK = 0,
  TINYML_STATUS_INVALID_ARGUMENT = 1, /* a NULL, a bad index, a bad option */
  TINYML_STATUS_OUT_OF_MEMORY = 2,    /* an allocation failed */
  TINYML_STATUS_INVALID_MODULE = 3,   /* module bytes failed verification */
  TINYML_STATUS_INVALID_MODEL = 4,    /* model bytes are malformed */
  TINYML_STATUS_UNSUPPORTED = 5,      /* valid input we cannot handle */
  TINYML_STATUS_SIZE_MISMATCH = 6,    /* a buffer has the wrong byte size */
  TINYML_STATUS_FAILED_PRECONDITION = 7, /* e.g. invoke before binding I/O */
  TINYML_STATUS_IO_ERROR = 8,         /* a file could not be read/written */
  TINYML_STATUS_INTERNAL = 9,         /* a bug in libtinyml: please report */
} tinyml_status_code_t;

/* Opaque, pointer-sized.  NULL is success. */
typedef struct tinyml_status_s *tinyml_status_t;
#define TINYML_OK ((tinyml_status_t)0)

/* The code of `status`; TINYML_STATUS_OK for NULL. Thread-safe. */
TINYML_API tinyml_status_code_t tinyml_status_code(tinyml_status_t status);

/* A human-readable message naming the problem.  Never NULL: "OK" for NULL.
 * The string lives until tinyml_status_free(status). Thread-safe. */
TINYML_API const char *tinyml_status_message(tinyml_status_t status);

/* Static name of a code, e.g. "INVALID_ARGUMENT". Thread-safe. */
TINYML_API const char *tinyml_status_code_name(tinyml_status_code_t code);

/* Releases a status.  NULL is a no-op. */
TINYML_API void tinyml_status_free(tinyml_status_t status);

/* ============================================================================
 * Allocator
 * ========================================================================== */

/* A caller-supplied allocator.  `alloc` returns `size` bytes aligned to
 * `alignment` (a power of two, at most 4096) or NULL; `free` releases a
 * pointer from `alloc` (never NULL).  `self` is passed back unchanged.  An
 * allocator whose `alloc` is NULL selects the system allocator.  Each object
 * calls its allocator only from the thread that is using that object. */
typedef struct tinyml_allocator_s {
  void *self;
  void *(*alloc)(void *self, size_t size, size_t alignment);
  void (*free)(void *self, void *ptr);
} tinyml_allocator_t;

/* ============================================================================
 * Tensors
 * ========================================================================== */

typedef enum tinyml_dtype_e {
  TINYML_DTYPE_INVALID = 0,
  TINYML_DTYPE_FLOAT32 = 1,
  TINYML_DTYPE_FLOAT16 = 2,
  TINYML_DTYPE_INT8 = 3,
  TINYML_DTYPE_UINT8 = 4,
  TINYML_DTYPE_INT16 = 5,
  TINYML_DTYPE_INT32 = 6,
  TINYML_DTYPE_INT64 = 7,
  TINYML_DTYPE_BOOL = 8, /* one byte per element */
  /* FLOAT64 and BFLOAT16 appear at the boundary only: the compiled graph
   * converts them to float32 on entry and back on exit, and computes in
   * float32.  A float64 model therefore keeps about 7 significant digits,
   * not 16; float16 and bfloat16 results are rounded once, at the output,
   * instead of after every operation. */
  TINYML_DTYPE_FLOAT64 = 9,
  TINYML_DTYPE_BFLOAT16 = 10,
  /* Unsigned integers, exact: importers keep their unsigned semantics. */
  TINYML_DTYPE_UINT16 = 11,
  TINYML_DTYPE_UINT32 = 12,
  TINYML_DTYPE_UINT64 = 13,
} tinyml_dtype_t;

/* Static name of a dtype, e.g. "float32". Thread-safe. */
TINYML_API const char *tinyml_dtype_name(tinyml_dtype_t dtype);
/* Bytes per element, 0 for an invalid dtype. Thread-safe. */
TINYML_API size_t tinyml_dtype_size(tinyml_dtype_t dtype);

#define TINYML_MAX_RANK 8

/* Describes one input or output.  Filled by tinyml_module_input_info() and
 * tinyml_module_output_info().  All pointers borrow from the module and live
 * as long as it. */
typedef struct tinyml_tensor_info_s {
  size_t struct_size;       /* set by tinyml_tensor_info_init() */
  const char *name;         /* never NULL */
  tinyml_dtype_t dtype;
  uint32_t rank;
  int64_t dims[TINYML_MAX_RANK];
  size_t byte_size;         /* exact size of the buffer invoke expects */
  /* Quantisation: `quant_count` is 0 when the tensor is not quantised, 1 for
   * per-tensor, and the size of dimension `quant_axis` for per-axis. */
  uint32_t quant_count;
  int32_t quant_axis;
  const float *scales;       /* quant_count entries, or NULL */
  const int64_t *zero_points; /* quant_count entries, or NULL */
  /* Pinned input: the value the compiler fixed this input to (a static-
   * shape compile of e.g. an ONNX TopK whose K is a graph input),
   * byte_size bytes laid out as the caller passes them; NULL when any value
   * is accepted, and always NULL for an output.  Non-NULL also when
   * byte_size is 0.  tinyml_context_invoke() refuses (INVALID_ARGUMENT)
   * an input whose bytes differ.  Points into the module: valid while it
   * lives.  Filled only when struct_size covers it. */
  const void *fixed_value;
} tinyml_tensor_info_t;

TINYML_API void tinyml_tensor_info_init(tinyml_tensor_info_t *info);

/* ============================================================================
 * Blob: bytes produced by the library
 * ========================================================================== */

/* An immutable byte buffer the library made (e.g. a compiled module).
 * Thread-safe once returned: it may be read from any thread. */
typedef struct tinyml_blob_s tinyml_blob_t;

TINYML_API const void *tinyml_blob_data(const tinyml_blob_t *blob);
TINYML_API size_t tinyml_blob_size(const tinyml_blob_t *blob);
/* Writes the blob to `path`, replacing the file. */
TINYML_API tinyml_status_t tinyml_blob_write_file(const tinyml_blob_t *blob,
                                                  const char *path);
TINYML_API void tinyml_blob_release(tinyml_blob_t *blob);

/* ============================================================================
 * Compile
 * ========================================================================== */

/* What a compile produces (see tinyml_compile_files). */
typedef enum tinyml_emit_e {
  TINYML_EMIT_MODULE = 0,     /* NAME.tmlm, for tinyml_module_load() */
  TINYML_EMIT_C = 1,          /* NAME.c + NAME.h + NAME_kernels.o: the schedule as
                                 C calling the kernels, no interpreter */
  TINYML_EMIT_STATIC_LIB = 2, /* libNAME.a + NAME.h: the same, compiled for the
                                 target (needs clang and llvm-ar) */
} tinyml_emit_t;

/* ---- Pre- and post-processing compiled into the model's graph ----------
 * These stages become part of the module: they are lowered and fused with
 * the model, not run as separate loops.  docs/PREPOST.md has the exact
 * arithmetic.  A stage that does not fit the model (an image for a model
 * whose input 0 is not a 4-D image, a channel count mismatch, top_k larger
 * than the class count, pre-processing on a model with several inputs, ...)
 * makes the compile fail with INVALID_ARGUMENT naming the problem. */

typedef enum tinyml_input_kind_e {
  TINYML_INPUT_AS_MODEL = 0,  /* no pre-processing */
  TINYML_INPUT_IMAGE = 1,     /* uint8 HWC image of image_width x image_height */
  TINYML_INPUT_INT16 = 2,     /* int16 samples/features, the model input's shape */
} tinyml_input_kind_t;

typedef enum tinyml_pixel_format_e {
  TINYML_PIXELS_RGB888 = 0,
  TINYML_PIXELS_BGR888 = 1,
  /* uint16 little-endian per pixel, R in the top 5 bits: the module's input
   * is uint8 [1, H, W, 2], the two bytes of each pixel low byte first. */
  TINYML_PIXELS_RGB565 = 2,
  TINYML_PIXELS_GRAY8 = 3,
} tinyml_pixel_format_t;

typedef enum tinyml_resize_e { TINYML_RESIZE_BILINEAR = 0, TINYML_RESIZE_NEAREST = 1 } tinyml_resize_t;
typedef enum tinyml_layout_e { TINYML_LAYOUT_AUTO = 0, TINYML_LAYOUT_NHWC = 1, TINYML_LAYOUT_NCHW = 2 } tinyml_layout_t;

/* Stages added before input 0 of the model, which must be its only input.
 * IMAGE: the module's input becomes "image", uint8 [1, image_height,
 *   image_width, 3 (RGB888/BGR888), 2 (RGB565) or 1 (GRAY8)]: converted to
 *   the model's channel count (1 or 3; gray -> 3 replicates, colour -> 1 is
 *   luma 0.299 R + 0.587 G + 0.114 B), resized to the model's H x W
 *   (TFLite's resize convention: align_corners and half_pixel_centers
 *   false), normalised, quantised when the model input is int8/uint8
 *   (round half to even, saturating), and transposed for NCHW models.
 * INT16: the module's input becomes "samples", int16 of the model input's
 *   shape, normalised and quantised the same way.
 * Normalisation: value' = (value - mean[c]) / std[c], c the model's
 *   channel (IMAGE) or the last axis (INT16). */
typedef struct tinyml_preprocess_s {
  size_t struct_size;            /* set by tinyml_preprocess_init() */
  tinyml_input_kind_t kind;      /* default TINYML_INPUT_AS_MODEL */
  tinyml_pixel_format_t pixels;  /* IMAGE: default RGB888 */
  uint32_t image_width, image_height; /* IMAGE: the size the module accepts */
  tinyml_resize_t resize;        /* IMAGE: to the model's H x W; default bilinear */
  tinyml_layout_t model_layout;  /* where the model keeps channels; AUTO: NHWC unless dim 1 is 1 or 3 and the last dim is not */
  uint32_t channel_count;        /* of mean/std; 1 = same for every channel */
  float mean[4], std[4];         /* value' = (value - mean[c]) / std[c]; defaults 0 and 1 */
} tinyml_preprocess_t;

/* Stages added after output 0 of the model.  The module's outputs are, in
 * this order:
 *   "top_k_indices" int32 [k] and "top_k_scores" float32 [k]  if top_k > 0
 *   "class" int32 (output 0's shape without its last axis)    if argmax
 *   "scores" float32, output 0's shape   if neither, with dequantize/softmax
 *   output 0 unchanged                   if none of the four is set
 * followed by the model's outputs 1, 2, ... unchanged.  Ranking uses the
 * model's own output values, so it is exact; ties go to the lower index.
 * top_k_scores are the softmax when softmax is set, else the dequantised
 * values.  dequantize on a float32 output changes nothing. */
typedef struct tinyml_postprocess_s {
  size_t struct_size;  /* set by tinyml_postprocess_init() */
  int dequantize;      /* int8/uint8 output -> float32 "scores" */
  int softmax;         /* softmax over the last axis (after dequantising) */
  int argmax;          /* adds an int32 output "class" */
  uint32_t top_k;      /* > 0: int32 "top_k_indices" [k] and float32 "top_k_scores" [k], best first; ties: lower index first */
} tinyml_postprocess_t;

/* Zeroes `p`, sets struct_size and the defaults above (std 1).  NULL is a
 * no-op. */
TINYML_API void tinyml_preprocess_init(tinyml_preprocess_t *p);
TINYML_API void tinyml_postprocess_init(tinyml_postprocess_t *p);

/* The most regions an arena may be split into (compile and context options). */
#define TINYML_MAX_ARENA_REGIONS 4

/* A value for a symbolic dimension (an ONNX dim_param such as
 * "sequence"); see tinyml_compile_options_t.dims. */
typedef struct tinyml_dim_binding_s {
  const char *name; /* the dim_param */
  int64_t value;    /* 1 .. 2^31 */
} tinyml_dim_binding_t;

/* The whole shape of one model input; see
 * tinyml_compile_options_t.input_shapes. */
typedef struct tinyml_input_shape_s {
  const char *input;   /* the graph input's name */
  uint32_t rank;       /* the input's declared rank */
  const int64_t *dims; /* `rank` values, each 1 .. 2^31 */
} tinyml_input_shape_t;

/* The value of one model input, bound at compile time; see
 * tinyml_compile_options_t.input_values.  Give either `text` or
 * `dtype`, `data` and `byte_size`.  Inputs of type float16, bfloat16 and
 * float64 cannot be bound (INVALID_ARGUMENT).  An array element without a
 * size field: this layout is fixed for good, as tinyml_dim_binding_t's. */
typedef struct tinyml_input_value_s {
  const char *input;    /* the graph input's name */
  tinyml_dtype_t dtype; /* the input's element type */
  const void *data;     /* its elements, dense, row-major, host byte order */
  size_t byte_size;     /* element count times tinyml_dtype_size(dtype) */
  /* NULL: the value is `data`.  Otherwise the elements as decimal text,
   * "v0,v1,...", read in the input's element type (a bool is 0/1 or
   * false/true); dtype, data and byte_size are then ignored. */
  const char *text;
} tinyml_input_value_t;

typedef struct tinyml_compile_options_s {
  size_t struct_size;  /* set by tinyml_compile_options_init() */
  const char *target;  /* backend name, e.g. "x86-64"; NULL = host default */
  const char *cpu;     /* LLVM CPU name; NULL = the backend's default;
                          "host" = this machine's CPU and (when features is
                          NULL) its features, for a target of its architecture */
  const char *features;/* LLVM features, e.g. "+avx2,+fma"; NULL = default */
  int opt_level;       /* 0..3, default 3 */
  tinyml_allocator_t allocator; /* for the returned blob and the status */
  tinyml_emit_t emit;  /* default TINYML_EMIT_MODULE */
  /* Names the emitted files and prefixes their C symbols (NAME_invoke,
   * NAME_ARENA_SIZE, ...): a C identifier of at most 48 characters.
   * NULL = "model".  Borrowed for the call. */
  const char *name;
  const tinyml_preprocess_t *preprocess;   /* NULL = none; borrowed for the call */
  const tinyml_postprocess_t *postprocess; /* NULL = none; borrowed for the call */
  /* 0 (default): f32 3x3 stride-1 convs may run as Winograd F(2x2, 3x3)
   * or F(4x4, 3x3) where the target's kernels gain by it (x86-64): 2.25x
   * or 4x fewer multiplies, results within float rounding of the direct
   * sum (about 1e-6 relative).  1: every conv sums its taps directly. */
  int no_winograd;
  /* 0 (default): the module names, for each step of its schedule, the
   * model's operators it computes (tinyml_module_step_label, for
   * profiles); a few tens of bytes per step.  1: leaves the names out. */
  int strip;
  /* All 0 (default): one arena, as large as the memory plan needs.
   * Otherwise the capacities in bytes of up to TINYML_MAX_ARENA_REGIONS
   * regions, e.g. {64 << 10, 256 << 10, 0, 0} for a small fast memory
   * (TCM) and a large slow one; the first 0 ends the list.  The planner
   * fills region 0 first with the buffers used most per byte (read by
   * the most steps, and kernel scratch), then region 1, and so on; a
   * buffer that fits in no region fails the compile (UNSUPPORTED, naming
   * its size and the step that makes it).  Each region's size in the
   * module is what it holds, at most its capacity
   * (tinyml_module_arena_region_size).  TINYML_EMIT_MODULE only. */
  size_t arena_regions[TINYML_MAX_ARENA_REGIONS];
  /* Resource limits (docs/SECURITY.md, "Limits (the contract)").  Each is
   * checked as early as the model allows, before anything of that size is
   * allocated or copied, and a model over one is refused with
   * UNSUPPORTED, naming the tensor or operator and the limit.
   * tinyml_compile_options_init() sets each to its default; 0, and a field
   * past an older caller's struct_size, also mean the default. */
  /* Bytes of any one tensor: input, output, constant or intermediate
   * (shape times element size).  Default TINYML_DEFAULT_MAX_TENSOR_BYTES. */
  uint64_t max_tensor_bytes;
  /* Bytes of all constants (weights) together.  Default
   * TINYML_DEFAULT_MAX_CONSTANT_BYTES. */
  uint64_t max_constant_bytes;
  /* Operators in the model (TFLite operators, ONNX nodes, TOSA ops).
   * Default TINYML_DEFAULT_MAX_OPS. */
  uint64_t max_ops;
  /* Bytes of the planned arena (all regions together).  Default
   * TINYML_DEFAULT_MAX_ARENA_BYTES. */
  uint64_t max_arena_bytes;
  /* Dynamic dimensions of an ONNX model's inputs, bound at compile time
   * (ONNX models only; any other format with one of these set is refused
   * with INVALID_ARGUMENT).  A dimension named by a dim_param takes the
   * value of the `dims` entry of that name, wherever it appears; an input
   * named in `input_shapes` takes that whole shape (its rank and its
   * static dimensions must agree with the model's).  A dynamic first
   * dimension left unbound (the batch) is compiled as 1 and reported
   * through `note`; any other unbound dynamic dimension fails the compile
   * with UNSUPPORTED, listing every unbound name and the inputs that use
   * it.  Unnamed dynamic dimensions (no dim_param, or "None") can only be
   * set by `input_shapes`.  INVALID_ARGUMENT: a binding no input uses,
   * a name or input bound twice, or an `input_shapes` size that differs
   * from the `dims` value of that dimension's name.
   * Shapes then follow through the graph as for a static model.  The
   * arrays and their strings are the caller's, read during the call only.
   * NULL / 0 (the default): none. */
  const tinyml_dim_binding_t *dims;
  size_t dim_count;
  const tinyml_input_shape_t *input_shapes;
  size_t input_shape_count;
  /* Receives each diagnostic the compile has to report (e.g. a batch
   * dimension defaulted to 1; a later stage may still fail the compile),
   * as one NUL-terminated line borrowed for the call; called on the
   * compiling thread.  NULL (default): none, and the defaults still
   * apply.  The library itself never prints. */
  void (*note)(void *user, const char *message);
  void *note_user;
  /* Model inputs whose values are bound at compile time (ONNX models
   * only, like dims): each such input becomes a constant of the model, so
   * everything computed from it folds (a Reshape's shape, a Slice's
   * starts, a TopK's K ...), and it is no longer an input of the module:
   * the module's inputs are the remaining ones, in the model's order.
   * The value has the input's shape (its declared shape with `dims` and
   * `input_shapes` applied; a 1-D input whose one dimension is dynamic and
   * otherwise unbound takes the value's element count) and its element
   * type.  An operator that needs such a value and finds a graph input
   * refuses with UNSUPPORTED, naming the input to bind.
   * INVALID_ARGUMENT: a name that is no input of the model, an input bound
   * twice, a dtype other than the input's, an element count other than its
   * shape's, text that does not read as that type, or data NULL with a
   * non-zero byte_size.  The array, its strings and data are the caller's,
   * read during the call only.  NULL / 0 (the default): none. */
  const tinyml_input_value_t *input_values;
  size_t input_value_count;
  /* Threads (docs/DESIGN.md, "Threads"): a dispatch phase whose estimated
   * work (multiply-adds, or element operations of a loop nest; for a
   * microkernel call, its multiply-adds or its weights' bytes, whichever
   * is more: a one-row matmul waits on its weights; for an f32 max pool's,
   * and a copy's, transpose's or broadcast's, the bytes it moves, input
   * plus twice the output) is below this many keeps one workgroup, so a
   * context runs it inline on the invoking thread, whatever its
   * thread_count.  0 (the default, and a
   * field past an older caller's struct_size): the target's own measured
   * value (x86-64: 2^20).  1 splits every phase that can be split, however
   * small: for tests of the split itself; it changes speed only, never
   * results (they are bit-identical for every split). */
  uint64_t split_min_work;
} tinyml_compile_options_t;

/* The defaults of the limits above.  Generous for a host compiler: a model
 * that reaches them could not run on the devices this library targets,
 * and each is well below what a 64-bit host can address, so a hostile
 * model is refused long before it costs the compiler memory or time.
 * 1 GiB per tensor matches the ONNX importer's cap on stored tensors; 2 GiB
 * of constants matches the 2 GiB FlatBuffer limit of a module; 10^6 ops is
 * 50 times the 20,000-op chain that compiles in seconds today; 4 GiB of
 * arena is what a 32-bit target could address at all. */
#define TINYML_DEFAULT_MAX_TENSOR_BYTES (UINT64_C(1) << 30)
#define TINYML_DEFAULT_MAX_CONSTANT_BYTES (UINT64_C(2) << 30)
#define TINYML_DEFAULT_MAX_OPS UINT64_C(1000000)
#define TINYML_DEFAULT_MAX_ARENA_BYTES (UINT64_C(4) << 30)

TINYML_API void tinyml_compile_options_init(tinyml_compile_options_t *options);

/* Lists the names of the backends this library was built with, separated by
 * commas, e.g. "x86-64".  Static string. Thread-safe. */
TINYML_API const char *tinyml_compile_targets(void);

/* Compiles a model into module bytes.
 * `model`/`model_size`: the model (TOSA MLIR text for now); the format is
 *   detected from the bytes.  Borrowed for the call.
 * `options`: may be NULL for defaults.
 * `out_module`: receives a blob owned by the caller.  options->emit must be
 *   TINYML_EMIT_MODULE (the other forms are several files:
 *   tinyml_compile_files).
 * Errors: INVALID_ARGUMENT, INVALID_MODEL (parse errors, with the parser's
 *   message), UNSUPPORTED (unknown target or op), OUT_OF_MEMORY, INTERNAL.
 * Thread-safe: concurrent compiles are independent. */
TINYML_API tinyml_status_t tinyml_compile(const void *model, size_t model_size,
                                          const tinyml_compile_options_t *options,
                                          tinyml_blob_t **out_module);

/* Named output files of one compile.  Immutable once returned; thread-safe
 * to read. Owned by the caller: release with tinyml_files_release(). */
typedef struct tinyml_files_s tinyml_files_t;

/* Compiles a model into the files `options->emit` names (module, C or
 * static library).  Arguments and errors as tinyml_compile(). */
TINYML_API tinyml_status_t tinyml_compile_files(const void *model, size_t model_size,
                                                const tinyml_compile_options_t *options,
                                                tinyml_files_t **out_files);
TINYML_API size_t tinyml_files_count(const tinyml_files_t *files);
/* File `index`'s plain name, e.g. "kws.h"; NULL when out of range.  Borrowed
 * from `files`. */
TINYML_API const char *tinyml_files_name(const tinyml_files_t *files, size_t index);
/* File `index`'s bytes; NULL when out of range.  Borrowed from `files`. */
TINYML_API const tinyml_blob_t *tinyml_files_blob(const tinyml_files_t *files,
                                                  size_t index);
/* Writes every file into the existing directory `dir`, replacing files. */
TINYML_API tinyml_status_t tinyml_files_write(const tinyml_files_t *files, const char *dir);
TINYML_API void tinyml_files_release(tinyml_files_t *files);

/* ============================================================================
 * Module
 * ========================================================================== */

/* A loaded, verified module.  Immutable: thread-safe, it may be shared by any
 * number of threads and contexts.  Release it only after every context made
 * from it has been released. */
typedef struct tinyml_module_s tinyml_module_t;

typedef struct tinyml_module_options_s {
  size_t struct_size; /* set by tinyml_module_options_init() */
  tinyml_allocator_t allocator;
  /* Limits a host sets to refuse a module before anything of that size is
   * allocated: a module over one fails to load with UNSUPPORTED, the
   * message naming the size and the limit.  0 (the default) = no limit
   * beyond the module's own bytes (constants must lie in them) and
   * size_t (each arena region must fit it).
   * max_arena_size: the arena all regions together claim; checked at
   * load, so that no context of the module allocates more.
   * max_constant_size: the constants (weights) the module holds.
   * A freestanding (bare-metal) runtime ignores both: there the firmware
   * holds the module's bytes already, and the arena it gives the context
   * (tinyml_context_options_t.arena, checked at create) or its allocator
   * bounds what a module can claim; the check would cost .text that the
   * Cortex-M4 runtime (8 KiB) does not have. */
  size_t max_arena_size;
  size_t max_constant_size;
} tinyml_module_options_t;

TINYML_API void tinyml_module_options_init(tinyml_module_options_t *options);

/* Loads module bytes from caller memory, without copying them.  The bytes are
 * verified in full (structure, bounds, checksums, executables) before this
 * returns.  `data` must stay alive and unchanged until the module is released,
 * and must be aligned to 16 bytes (constants are used in place).
 * Errors: INVALID_ARGUMENT, INVALID_MODULE (naming the problem),
 *   UNSUPPORTED (a target this runtime cannot execute, or an arena or
 *   constants larger than options->max_arena_size / max_constant_size),
 *   OUT_OF_MEMORY. */
TINYML_API tinyml_status_t tinyml_module_load(const void *data, size_t size,
                                              const tinyml_module_options_t *options,
                                              tinyml_module_t **out_module);

/* Like tinyml_module_load(), reading the bytes from `path` into memory the
 * module owns.  Errors also include IO_ERROR. */
TINYML_API tinyml_status_t tinyml_module_load_file(const char *path,
                                                   const tinyml_module_options_t *options,
                                                   tinyml_module_t **out_module);

TINYML_API void tinyml_module_release(tinyml_module_t *module);

/* Counts; 0 for a NULL module. */
TINYML_API size_t tinyml_module_input_count(const tinyml_module_t *module);
TINYML_API size_t tinyml_module_output_count(const tinyml_module_t *module);

/* Fills `out_info` (initialised with tinyml_tensor_info_init()) for input or
 * output `index`.  Errors: INVALID_ARGUMENT for NULLs or a bad index. */
TINYML_API tinyml_status_t tinyml_module_input_info(const tinyml_module_t *module,
                                                    size_t index,
                                                    tinyml_tensor_info_t *out_info);
TINYML_API tinyml_status_t tinyml_module_output_info(const tinyml_module_t *module,
                                                     size_t index,
                                                     tinyml_tensor_info_t *out_info);

/* The backend the module was compiled for, e.g. "x86-64"; "" for NULL. */
TINYML_API const char *tinyml_module_target(const tinyml_module_t *module);
/* The CPU the executables that run were compiled for, e.g. "x86-64-v4":
 * of a multi-versioned module, the best variant this CPU runs, chosen once
 * at load, else the module's baseline; "" for NULL.  Lives as long as the
 * module.  Thread-safe. */
TINYML_API const char *tinyml_module_cpu(const tinyml_module_t *module);
/* The LLVM target features those executables were compiled with beyond
 * the CPU's own, e.g. "+avx512f,+avx512bw,+avx512vl,+avx512dq,+avx512vnni":
 * two variants may share a CPU name (x86-64-v4 with and without VNNI), and
 * this tells them apart.  "" for none or NULL.  Lives as long as the
 * module.  Thread-safe. */
TINYML_API const char *tinyml_module_features(const tinyml_module_t *module);
/* How many builds of its executables the module carries besides the
 * baseline (0: a single-variant module, or a freestanding runtime, which
 * always runs the baseline); 0 for NULL.  Thread-safe. */
TINYML_API size_t tinyml_module_variant_count(const tinyml_module_t *module);
/* Arena bytes a context needs (what tinyml_context_options_t.arena_size must
 * be at least); 0 for NULL. */
TINYML_API size_t tinyml_module_arena_size(const tinyml_module_t *module);

/* Bytes of state each context of `module` keeps from one invoke to the
 * next, allocated by tinyml_context_create() with the context's
 * allocator: the memory of recurrent layers (TFLite's variable tensors,
 * e.g. an LSTM's cell and output state).  0 for a stateless module and
 * for NULL.  The state is the context's own, never in the arena. */
TINYML_API size_t tinyml_module_state_size(const tinyml_module_t *module);
/* Required alignment of a caller-given arena and of every region (a power of
 * two); 0 for NULL. */
TINYML_API size_t tinyml_module_arena_alignment(const tinyml_module_t *module);
/* How many regions the arena is split into: 1 unless compiled with
 * arena_regions; 0 for NULL.  Region 0's size is tinyml_module_arena_size. */
TINYML_API size_t tinyml_module_arena_region_count(const tinyml_module_t *module);
/* Bytes arena region `region` needs; 0 for NULL or a bad region. */
TINYML_API size_t tinyml_module_arena_region_size(const tinyml_module_t *module,
                                                  size_t region);
/* Bytes of constants (weights) the module holds; 0 for NULL. */
TINYML_API size_t tinyml_module_constant_size(const tinyml_module_t *module);
/* Number of steps (dispatches and copies) in the schedule; 0 for NULL. */
TINYML_API size_t tinyml_module_dispatch_count(const tinyml_module_t *module);
/* The model's operators step `index` (0 .. tinyml_module_dispatch_count() -
 * 1) computes, as "KIND name, KIND name, ...": TFLite builtin or custom
 * operator names or ONNX op types, each with its first output tensor's
 * (TFLite) or node's (ONNX) name from the model file; "tosa.conv2d line 7"
 * for a TOSA MLIR model; "pre-processing" / "post-processing" for stages
 * compiled in.  "" for a copy step, for a module compiled with `strip`, and
 * for a bad index or NULL.  Points into the module: valid while it lives.
 * A step that calls a hand-written microkernel also names it, e.g.
 * "CONV_2D conv1, kernel conv_s8" (int8 conv), "kernel depthwise_s8". */
TINYML_API const char *tinyml_module_step_label(const tinyml_module_t *module,
                                                size_t index);
/* How many threads can share step `index` at once: the most useful
 * workgroups of any of its phases (docs/DESIGN.md, "Threads").  1 when the
 * compiler found every phase of the step too small to repay waking a
 * worker thread, so the step always runs inline on the invoking thread
 * (see tinyml_context_options_t.thread_count); also 1 for a copy step, a
 * bad index, NULL, a module for a target without threads, and always in a
 * freestanding runtime (which has no threads).  Thread-safe. */
TINYML_API uint32_t tinyml_module_step_workgroups(const tinyml_module_t *module, size_t index);
/* The useful workgroups of phase `phase` of step `index` (a step runs its
 * phases one after the other, each shared by the context's threads or run
 * inline when 1), so a tool can tell which phase of a step splits: the
 * step's largest (tinyml_module_step_workgroups) can hide a phase kept
 * whole.  0 past the step's last phase, so counting up from phase 0 to the
 * first 0 gives its phase count; a copy step has one phase of 1.  0 for a
 * bad index and NULL; in a freestanding runtime (no threads), 1 for phase 0
 * of every step.  Thread-safe. */
TINYML_API uint32_t tinyml_module_step_phase_workgroups(const tinyml_module_t *module,
                                                        size_t index, size_t phase);

/* ============================================================================
 * Context: one execution of a module at a time
 * ========================================================================== */

/* Holds the arena and the I/O bindings for invoking one module, and the
 * context's worker threads, if any.
 * Thread-compatible: only one thread may use a context at any time.  Use one
 * context per thread to run a module concurrently. */
typedef struct tinyml_context_s tinyml_context_t;

/* The most threads one context may run on. */
#define TINYML_MAX_THREADS 32

typedef struct tinyml_context_options_s {
  size_t struct_size; /* set by tinyml_context_options_init() */
  tinyml_allocator_t allocator;
  /* Optional caller arena: at least tinyml_module_arena_size() bytes, aligned
   * to tinyml_module_arena_alignment().  Borrowed: it must outlive the
   * context.  NULL makes the context allocate its own.
   * The arena holds only what one tinyml_context_invoke() computes and
   * uses (activations and kernel scratch): nothing in it is read before
   * that invoke writes it, and nothing in it matters once the invoke
   * returns.  Inputs and outputs are never in the arena: they are the
   * caller's bound buffers, and a stateful model's state is the context's
   * (tinyml_module_state_size()).  So while no invoke runs, the caller may reuse
   * the arena for anything, and several contexts (of the same or different
   * modules) may share one arena, invoked one after another in any order
   * (A, B, A, ...).  Give it the largest tinyml_module_arena_size() of
   * those modules, aligned to the largest tinyml_module_arena_alignment()
   * (powers of two, so that one satisfies all).  Two invokes on contexts
   * sharing an arena must never overlap in time: use them from one thread,
   * or serialise them.  Outputs stay valid after an invoke of another
   * context as long as their buffers are distinct. */
  void *arena;
  size_t arena_size;
  /* Threads that run each invoke, the invoking thread included: 1 to
   * TINYML_MAX_THREADS, default 1.  1 creates no thread.  N > 1 makes
   * tinyml_context_create() start N - 1 worker threads, owned by the
   * context and joined by tinyml_context_release(); they block all signals,
   * have a stack of at least 256 KiB (or the system's default thread stack
   * where that is larger; kernels may use about 136 KiB of it, see
   * tinyml_context_invoke()),
   * run kernels only during tinyml_context_invoke(), and wait (spinning
   * briefly, then asleep) in between.  Outputs are bit-identical for every
   * N.  A freestanding (bare-metal) runtime has no threads: it ignores this
   * and runs every invoke on the invoking thread.
   * Which work the threads share is the compiler's decision, written into
   * the module: a phase of a step whose estimated work is too small to
   * repay waking a worker and joining it (the backend's measured minimum;
   * on x86-64 about 1 M multiply-adds) keeps one workgroup and runs inline
   * on the invoking thread while the workers wait.  So a model made only of
   * such steps (tinyml_module_step_workgroups() 1 for all; e.g. the
   * mlperf-tiny models) runs on N threads as on 1. */
  uint32_t thread_count;
  /* Optional caller memory for each region of a module compiled with
   * arena regions: arena_regions[r] holds at least
   * tinyml_module_arena_region_size(module, r) bytes (arena_region_sizes[r]
   * says how many), aligned to tinyml_module_arena_alignment(), borrowed
   * as `arena` is, e.g. a TCM block for region 0.  A NULL region 0 is
   * `arena`; other NULL regions the context allocates. */
  void *arena_regions[TINYML_MAX_ARENA_REGIONS];
  size_t arena_region_sizes[TINYML_MAX_ARENA_REGIONS];
} tinyml_context_options_t;

TINYML_API void tinyml_context_options_init(tinyml_context_options_t *options);

/* Creates a context for `module`, which must outlive it, with its worker
 * threads (options->thread_count).
 * Errors: INVALID_ARGUMENT (including an arena that is too small or
 *   misaligned, and a thread_count out of range), OUT_OF_MEMORY (also when
 *   the system refuses a thread). */
TINYML_API tinyml_status_t tinyml_context_create(const tinyml_module_t *module,
                                                 const tinyml_context_options_t *options,
                                                 tinyml_context_t **out_context);

TINYML_API void tinyml_context_release(tinyml_context_t *context);

/* Binds input `index` to caller memory of exactly the input's byte_size,
 * aligned to its element size.  Borrowed: read by every later invoke until
 * rebound; it is never written.
 * Errors: INVALID_ARGUMENT (bad index, NULL, misaligned), SIZE_MISMATCH. */
TINYML_API tinyml_status_t tinyml_context_set_input(tinyml_context_t *context,
                                                    size_t index,
                                                    const void *data, size_t size);

/* Binds output `index` to caller memory, as for inputs.  Written by invoke.
 * Output buffers must not overlap inputs or each other. */
TINYML_API tinyml_status_t tinyml_context_set_output(tinyml_context_t *context,
                                                     size_t index,
                                                     void *data, size_t size);

/* Runs the module on the bound buffers, on the context's threads.  Performs
 * no allocation from the heap; kernels may use about 136 KiB of the
 * invoking thread's stack (x86-64's AVX-512 matmul packs panels of its
 * right-hand operand there), so invoke from a thread with at least 256 KiB
 * of stack.  A stateful module (tinyml_module_state_size() > 0) reads
 * the context's state and leaves it updated for the next invoke.  Pinned
 * inputs (tinyml_tensor_info_t.fixed_value not NULL) are checked before
 * anything runs: the compiled code used that value.
 * Errors: FAILED_PRECONDITION if an input or output is unbound;
 * INVALID_ARGUMENT naming a pinned input whose bytes differ from its fixed
 * value (and, on a hosted build, the first differing element and both
 * values); nothing is written then. */
TINYML_API tinyml_status_t tinyml_context_invoke(tinyml_context_t *context);

/* Sets the context's state back to the model's initial value, the value a
 * new context starts from, as TFLite's ResetVariableTensors() does: start
 * a new sequence (an utterance, a stream) on a recurrent model.  Does
 * nothing for a stateless module.
 * Errors: INVALID_ARGUMENT (NULL context). */
TINYML_API tinyml_status_t tinyml_context_reset_state(tinyml_context_t *context);

/* ============================================================================
 * Profiling
 * ========================================================================== */

/* Called by tinyml_context_invoke() on the invoking thread just before step
 * `step` of the schedule starts (`done` 0) and again just after it has
 * finished on every thread (`done` 1), so the time between the two calls is
 * the step's.  Steps are numbered as tinyml_module_step_label() numbers
 * them.  The hook must not use the context. */
typedef void (*tinyml_step_hook_t)(void *user_data, size_t step, int done);

/* Installs `hook` for later invokes of `context`; NULL removes it.
 * `user_data` is passed to every call (borrowed: it must outlive the hook's
 * use).  Without a hook, an invoke costs one test per step more.
 * Errors: INVALID_ARGUMENT (NULL context). */
TINYML_API tinyml_status_t tinyml_context_set_step_hook(tinyml_context_t *context,
                                                        tinyml_step_hook_t hook,
                                                        void *user_data);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TINYML_H */
