/* The module format: an in-memory description, a FlatBuffer writer and a
 * verifying reader.  Schema: schema/tinyml_module.fbs (file identifier "TMLM").
 *
 * The same struct is filled by the compiler (then written) and by the reader
 * (pointing into the module bytes, zero-copy, except for the arrays of
 * structs, which the reader allocates).  Nothing here knows about MLIR or
 * about executing code. */
#ifndef TINYML_MODULE_MODULE_H
#define TINYML_MODULE_MODULE_H

#include <stddef.h>
#include <stdint.h>

#include "tinyml.h"

#define TMOD_FILE_IDENTIFIER "TMLM"
/* Version 2 is written only when an input has a fixed_value, so that a
 * runtime older than pinned inputs refuses the module instead of running
 * the compiled-in value on any input; every other module stays version 1,
 * which every runtime reads.  The reader accepts both. */
#define TMOD_FORMAT_VERSION 1u
#define TMOD_FORMAT_VERSION_PINNED 2u
#define TMOD_CONSTANT_ALIGNMENT 64u

typedef struct tmod_tensor {
  const char *name;
  uint32_t dtype; /* tinyml_dtype_t */
  uint32_t rank;  /* <= TINYML_MAX_RANK */
  int64_t dims[TINYML_MAX_RANK];
  uint64_t byte_size; /* product(dims) * dtype size, checked by the reader */
  uint32_t quant_count;  /* 0 = not quantised */
  int32_t quant_axis;
  const float *scales;       /* quant_count entries */
  const int64_t *zero_points; /* quant_count entries */
  /* Inputs only: byte_size bytes the caller's input must equal at every
   * invoke, as the compiler fixed them; NULL = any value.  Non-NULL also
   * when byte_size is 0 (an empty pinned input). */
  const uint8_t *fixed_value;
} tmod_tensor_t;

typedef enum tmod_buffer_kind {
  TMOD_BUFFER_INPUT = 0,    /* index = input number, offset within it */
  TMOD_BUFFER_OUTPUT = 1,   /* index = output number, offset within it */
  TMOD_BUFFER_CONSTANT = 2, /* offset into the constants blob */
  TMOD_BUFFER_ARENA = 3,    /* offset into arena region `index` */
  TMOD_BUFFER_STATE = 4,    /* offset into the context's state */
} tmod_buffer_kind_t;

/* A byte range one dispatch argument refers to. */
typedef struct tmod_binding {
  uint32_t kind; /* tmod_buffer_kind_t */
  uint32_t index;
  uint64_t offset;
  uint64_t size;
} tmod_binding_t;

typedef enum tmod_step_kind {
  TMOD_STEP_DISPATCH = 0, /* call entry `entry` of executable `executable` */
  TMOD_STEP_COPY = 1,     /* memcpy bindings[0] -> bindings[1] (same size) */
} tmod_step_kind_t;

typedef struct tmod_step {
  uint32_t kind; /* tmod_step_kind_t */
  uint32_t executable;
  uint32_t entry;
  uint32_t binding_count;
  const tmod_binding_t *bindings;
  /* The model's operators it computes, e.g. "CONV_2D conv1, ..."; "" when
   * the module has none (stripped, or a copy). */
  const char *label;
} tmod_step_t;

/* A target executable.  format "elf" is an ELF shared object with no
 * external symbols but the runtime's imports (see runtime/executable_abi.h). */
typedef struct tmod_executable {
  const char *format;  /* e.g. "elf" */
  const char *arch;    /* e.g. "x86_64" */
  const uint8_t *image;
  uint64_t image_size;
  uint32_t checksum;   /* crc32 of image, checked by the reader */
} tmod_executable_t;

/* One more build of every executable, for CPUs with more features than
 * the module's cpu/features (the baseline, which a runtime without
 * variants runs).  It has exactly the baseline's executables and entry
 * numbering, so steps, constants and arena serve every variant. */
typedef struct tmod_variant {
  const char *cpu;
  const char *features;
  const tmod_executable_t *executables; /* the module's executable_count */
} tmod_variant_t;

/* The most variants a module carries: the writer refuses more, and the
 * reader refuses a module that claims more. */
#define TMOD_MAX_VARIANTS 8u

/* The most regions an arena may be split into (fast and slow memories). */
#define TMOD_MAX_ARENA_REGIONS 4 /* the reader's message says 4 */

typedef struct tmod_module {
  uint32_t format_version;
  const char *target; /* backend name */
  const char *cpu;
  const char *features;
  uint64_t arena_size; /* region 0's */
  uint32_t arena_alignment;
  /* 1 (or 0, for one) to TMOD_MAX_ARENA_REGIONS; region_sizes[0] is
   * arena_size (the reader sets it; the writer ignores it). */
  uint32_t region_count;
  uint64_t region_sizes[TMOD_MAX_ARENA_REGIONS];
  uint32_t input_count, output_count;
  const tmod_tensor_t *inputs;
  const tmod_tensor_t *outputs;
  const uint8_t *constants; /* aligned to TMOD_CONSTANT_ALIGNMENT in the file */
  uint64_t constants_size;
  uint32_t constants_checksum; /* crc32 of constants */
  uint32_t step_count;
  const tmod_step_t *steps;
  uint32_t executable_count;
  const tmod_executable_t *executables;
  /* What a context keeps between invokes: its initial value, state_size
   * bytes (0 = none), aligned like the constants. */
  const uint8_t *state;
  uint64_t state_size;
  uint32_t state_checksum; /* crc32 of state */
#if !TINYML_FREESTANDING /* that runtime runs the baseline: no room */
  /* Best first. */
  uint32_t variant_count;
  const tmod_variant_t *variants;
#endif
} tmod_module_t;

/* CRC-32 (IEEE 802.3, as zlib's crc32()) of `size` bytes. */
uint32_t tmod_crc32(const void *data, size_t size);

/* Serialises `module` into a new FlatBuffer allocated with `allocator`.  The
 * checksums in `module` are ignored and recomputed.  On success *out_data
 * (aligned to TMOD_CONSTANT_ALIGNMENT) and *out_size describe the bytes, to
 * be freed with tinyml__free(allocator, *out_data). */
tinyml_status_t tmod_write(const tmod_module_t *module,
                           const tinyml_allocator_t *allocator,
                           uint8_t **out_data, size_t *out_size);

/* Verifies `data` in full and fills *out_module (not NULL; `data` may be
 * NULL only with `size` 0, which is too few bytes).  Every offset is
 * bounds-checked; the checksums, the I/O byte sizes, every binding's range
 * (against its input/output byte size, the constants or arena_size) and
 * every index are checked.  Strings and blobs point into `data`; the arrays
 * are allocated with `allocator` and released by tmod_read_free().  The
 * status names the problem (INVALID_MODULE) or OUT_OF_MEMORY. */
tinyml_status_t tmod_read(const uint8_t *data, size_t size,
                          const tinyml_allocator_t *allocator,
                          tmod_module_t *out_module);
void tmod_read_free(tmod_module_t *module, const tinyml_allocator_t *allocator);

#endif
