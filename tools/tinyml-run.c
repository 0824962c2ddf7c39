/*
 * tinyml-run - runs a libtinyml module on raw input files, benchmarks it, or
 * describes it.
 *
 *   tinyml-run MODULE --input FILE ... [--output-dir DIR] [--bench N [--profile]]
 *              [--threads N] [--invokes N]
 *   tinyml-run --info MODULE
 *
 * Data files are the raw bytes of a tensor, exactly as the API binds them.
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "run_profile.h"
#include "tinyml.h"
#include "tool_util.h"

const char tool_name[] = "tinyml-run";

/* More timed runs than this is a typo, and the timings must fit in memory. */
#define MAX_BENCH_RUNS 10000000L

typedef struct run_args {
  const char *module_path;
  const char **inputs;    /* --input files, in input order */
  size_t input_count;
  const char *output_dir; /* NULL: "." for a plain run, nothing with --bench */
  long bench;             /* timed invokes; 0 means no benchmark */
  double flops;           /* per invoke, from --flops; 0 when not given */
  long threads;           /* --threads: the context's thread count */
  long invokes;           /* --invokes: before the outputs are written; 0 = 1 */
  long offset;            /* --offset: the inputs' bytes past a 64-byte line;
                             -1: malloc's */
  long offset_out;        /* the outputs' (--offset B: the same as the inputs') */
  int info;
  int profile;            /* --profile: time each step of the --bench runs */
} run_args_t;

/* Everything one run owns; run_state_free() releases all of it. */
typedef struct run_state {
  tinyml_context_t *context;
  size_t input_count, output_count;
  tinyml_tensor_info_t *in_info, *out_info;
  void **in_data, **out_data; /* one malloc'd buffer per tensor */
  unsigned char *slab;        /* with --offset: every buffer, which it owns */
} run_state_t;

/* ---------------------------------------------------------------------------
 * Command line
 * ------------------------------------------------------------------------- */

static void print_usage(void) {
  printf(
      "Usage: %s MODULE --input FILE ... [--output-dir DIR] [--bench N [--profile]]\n"
      "                  [--threads N] [--invokes N] [--offset B|IN,OUT]\n"
      "       %s --info MODULE\n"
      "\n"
      "Runs a module made by tinyml-compile.\n"
      "\n"
      "Options:\n"
      "  -i, --input FILE      raw little-endian bytes of one input; give one\n"
      "                        per input, in input order.  The file size must\n"
      "                        equal the input's byte size (see --info)\n"
      "      --output-dir DIR  write output i to DIR/output_<i>.bin (default\n"
      "                        '.'; created if missing)\n"
      "      --bench N         after one warm-up invoke, time N more and print\n"
      "                        runs=, min_ms= and median_ms= lines.  Outputs\n"
      "                        are written only if --output-dir is given.\n"
      "                        Without --input, inputs get deterministic\n"
      "                        pseudo-random data: floats in [-1, 1), integers\n"
      "                        and bools 0 or 1\n"
      "      --profile         with --bench: also time each step of the timed\n"
      "                        invokes and print one row per step: its index,\n"
      "                        median ms, share of median_ms and the model's\n"
      "                        operators it computes (left out by\n"
      "                        tinyml-compile --strip), then profile_sum_ms=\n"
      "      --flops F         with --bench: F operations per invoke; also\n"
      "                        print gflops= (F / median time)\n"
      "      --invokes N       invoke N times (default 1) before writing the\n"
      "                        outputs, on one context: a stateful model\n"
      "                        (state_size in --info) carries its state from\n"
      "                        each invoke to the next, as over a stream\n"
      "      --offset B        bind every input and output B bytes (0-63) past\n"
      "                        a 64-byte line (default: where malloc puts it),\n"
      "                        to test kernels on a caller's buffer at any\n"
      "                        alignment; the runtime refuses a buffer not\n"
      "                        aligned to its element size (B = 4 with an\n"
      "                        int64 tensor, say).  --offset IN,OUT puts the\n"
      "                        inputs IN bytes and the outputs OUT bytes past\n"
      "                        a line; prints where each buffer landed\n"
      "      --threads N       run each invoke on N threads, this one included\n"
      "                        (default 1: no thread is created); outputs are\n"
      "                        the same for every N\n"
      "      --info            print the module's signature (index, name,\n"
      "                        dtype, dims, byte size, quantisation of each\n"
      "                        input and output), arena and constant sizes,\n"
      "                        dispatch count, target and each step's\n"
      "                        operators, then exit\n"
      "  -h, --help            show this help and exit\n"
      "      --version         show the library version and exit\n"
      "\n"
      "Errors go to stderr.  Exit status: 0 success, 1 load, I/O or run\n"
      "error, 2 bad command line.\n",
      tool_name, tool_name);
}

enum {
  OPT_OUTPUT_DIR = 256, OPT_BENCH, OPT_FLOPS, OPT_THREADS, OPT_INFO, OPT_VERSION, OPT_PROFILE,
  OPT_INVOKES, OPT_OFFSET
};

static const struct option kLongOptions[] = {
    {"input", required_argument, NULL, 'i'},
    {"output-dir", required_argument, NULL, OPT_OUTPUT_DIR},
    {"bench", required_argument, NULL, OPT_BENCH},
    {"flops", required_argument, NULL, OPT_FLOPS},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"invokes", required_argument, NULL, OPT_INVOKES},
    {"offset", required_argument, NULL, OPT_OFFSET},
    {"info", no_argument, NULL, OPT_INFO},
    {"profile", no_argument, NULL, OPT_PROFILE},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

/* One byte offset of --offset (0..63) at text, ended by `stop`: digits
 * only (strtol alone would take " 16", "+16" and "-0"). */
static int offset_part(const char *text, char stop, long *out, const char **rest) {
  if (*text < '0' || *text > '9') return -1;
  char *end;
  errno = 0;
  const long value = strtol(text, &end, 10);
  if (end == text || *end != stop || errno != 0 || value < 0 || value > 63) return -1;
  *out = value;
  *rest = end;
  return 0;
}

/* --offset B (inputs and outputs) or IN,OUT: one offset for the inputs and
 * another for the outputs, so that a kernel meets its input and output at
 * different places in their lines, as a caller's buffers may be. */
static int parse_offset(const char *value, run_args_t *args) {
  const int two = strchr(value, ',') != NULL;
  const char *rest;
  if (offset_part(value, two ? ',' : '\0', &args->offset, &rest) != 0 ||
      (two && offset_part(rest + 1, '\0', &args->offset_out, &rest) != 0))
    return tool_usage_error("--offset: '%s' is not B or IN,OUT, integers in 0..63", value);
  if (!two) args->offset_out = args->offset;
  return 0;
}

/* Applies one option from getopt_long(); returns 0 to go on. */
static int apply_option(int opt, const char *value, char **argv,
                        run_args_t *args) {
  switch (opt) {
    case 'i': args->inputs[args->input_count++] = value; return 0;
    case OPT_OUTPUT_DIR: args->output_dir = value; return 0;
    case OPT_BENCH:
      return tool_parse_long(value, "--bench", 1, MAX_BENCH_RUNS, &args->bench);
    case OPT_FLOPS: return tool_parse_positive(value, "--flops", &args->flops);
    case OPT_THREADS:
      return tool_parse_long(value, "--threads", 1, TINYML_MAX_THREADS, &args->threads);
    case OPT_INVOKES:
      return tool_parse_long(value, "--invokes", 1, MAX_BENCH_RUNS, &args->invokes);
    case OPT_OFFSET: return parse_offset(value, args);
    case OPT_INFO: args->info = 1; return 0;
    case OPT_PROFILE: args->profile = 1; return 0;
    case 'h': print_usage(); return TOOL_DONE;
    case OPT_VERSION: return tool_print_version();
    default: return tool_bad_option(opt, argv);
  }
}

static int check_positional(int argc, char **argv, run_args_t *args) {
  if (optind == argc) return tool_usage_error("missing MODULE");
  if (argc - optind > 1)
    return tool_usage_error("unexpected argument '%s' (inputs need --input)",
                            argv[optind + 1]);
  args->module_path = argv[optind];
  if (args->flops > 0 && args->bench == 0)
    return tool_usage_error("--flops needs --bench");
  if (args->profile && args->bench == 0)
    return tool_usage_error("--profile needs --bench");
  return 0;
}

/* Returns 0 to run, TOOL_DONE after --help, or an exit code.  args->inputs
 * is allocated in every case; the caller frees it. */
static int parse_args(int argc, char **argv, run_args_t *args) {
  memset(args, 0, sizeof *args);
  args->threads = 1;
  args->offset = -1;
  /* There cannot be more --input options than arguments. */
  args->inputs = calloc((size_t)argc, sizeof *args->inputs);
  if (args->inputs == NULL) return tool_error("out of memory");
  int opt;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, ":i:h", kLongOptions, NULL)) != -1) {
    int rc = apply_option(opt, optarg, argv, args);
    if (rc != 0) return rc;
  }
  return check_positional(argc, argv, args);
}

/* ---------------------------------------------------------------------------
 * --info
 * ------------------------------------------------------------------------- */

static void print_quant(const tinyml_tensor_info_t *info) {
  if (info->quant_count == 0) return;
  if (info->quant_count == 1) {
    printf(", quant scale=%g zero_point=%lld", (double)info->scales[0],
           (long long)info->zero_points[0]);
    return;
  }
  printf(", quant axis=%d scales=[", (int)info->quant_axis);
  for (uint32_t i = 0; i < info->quant_count; ++i)
    printf("%s%g", i ? ", " : "", (double)info->scales[i]);
  printf("] zero_points=[");
  for (uint32_t i = 0; i < info->quant_count; ++i)
    printf("%s%lld", i ? ", " : "", (long long)info->zero_points[i]);
  printf("]");
}

/* Element `k` of a tensor's bytes, printed as its dtype reads. */
static void print_element(tinyml_dtype_t dtype, const uint8_t *bytes, size_t k) {
  size_t es = tinyml_dtype_size(dtype);
  uint8_t raw[8] = {0};
  memcpy(raw, bytes + k * es, es);
  int64_t i = 0;
  float f;
  double d;
  switch (dtype) {
    case TINYML_DTYPE_FLOAT32: memcpy(&f, raw, 4); printf("%.9g", (double)f); return;
    case TINYML_DTYPE_FLOAT64: memcpy(&d, raw, 8); printf("%.17g", d); return;
    case TINYML_DTYPE_INT8: i = (int8_t)raw[0]; break;
    case TINYML_DTYPE_INT16: { int16_t v; memcpy(&v, raw, 2); i = v; break; }
    case TINYML_DTYPE_INT32: { int32_t v; memcpy(&v, raw, 4); i = v; break; }
    case TINYML_DTYPE_INT64: memcpy(&i, raw, 8); break;
    case TINYML_DTYPE_UINT8: case TINYML_DTYPE_BOOL: i = raw[0]; break;
    case TINYML_DTYPE_UINT16: case TINYML_DTYPE_UINT32: case TINYML_DTYPE_UINT64: {
      uint64_t u; /* little-endian: the zero-filled high bytes widen it */
      memcpy(&u, raw, 8);
      printf("%llu", (unsigned long long)u);
      return;
    }
    default: printf("0x%02x%02x", raw[1], raw[0]); return; /* 16-bit floats: the bits */
  }
  printf("%lld", (long long)i);
}

/* A pinned input's value, the first 16 elements at most. */
static void print_fixed(const tinyml_tensor_info_t *info) {
  if (!info->fixed_value) return;
  size_t es = tinyml_dtype_size(info->dtype);
  size_t n = es ? info->byte_size / es : 0;
  printf(", fixed value [");
  for (size_t k = 0; k < n && k < 16; ++k) {
    if (k) printf(", ");
    print_element(info->dtype, info->fixed_value, k);
  }
  printf(n > 16 ? ", ...]" : "]");
}

/* One line, e.g.:  input 0 "image": float32 [1, 16, 16, 3], 3072 bytes */
static void print_tensor(const char *kind, size_t index,
                         const tinyml_tensor_info_t *info) {
  printf("  %s %zu \"%s\": %s [", kind, index, info->name,
         tinyml_dtype_name(info->dtype));
  for (uint32_t d = 0; d < info->rank; ++d)
    printf("%s%lld", d ? ", " : "", (long long)info->dims[d]);
  printf("], %zu bytes", info->byte_size);
  print_quant(info);
  print_fixed(info);
  printf("\n");
}

static const char *kind_name(int outputs) { return outputs ? "output" : "input"; }

/* Fills *info for input `index` (outputs != 0: output `index`). */
static int query_info(const tinyml_module_t *module, int outputs, size_t index,
                      tinyml_tensor_info_t *info) {
  tinyml_tensor_info_init(info);
  tinyml_status_t st = outputs ? tinyml_module_output_info(module, index, info)
                               : tinyml_module_input_info(module, index, info);
  return tool_check(st, "%s %zu", kind_name(outputs), index);
}

static int print_tensors(const tinyml_module_t *module, int outputs) {
  size_t count = outputs ? tinyml_module_output_count(module)
                         : tinyml_module_input_count(module);
  printf("%ss: %zu\n", kind_name(outputs), count);
  for (size_t i = 0; i < count; ++i) {
    tinyml_tensor_info_t info;
    if (query_info(module, outputs, i, &info) != 0) return TOOL_EXIT_FAILURE;
    print_tensor(kind_name(outputs), i, &info);
  }
  return 0;
}

/* Each phase of a step that has several, e.g. "(phases 43, 1)": the step's
 * largest alone hid that a matmul stayed whole after its 43-workgroup fill. */
static void print_phases(const tinyml_module_t *module, size_t s) {
  if (!tinyml_module_step_phase_workgroups(module, s, 1)) return;
  printf(" (phases");
  for (size_t p = 0; tinyml_module_step_phase_workgroups(module, s, p); ++p)
    printf("%s %u", p ? "," : "", tinyml_module_step_phase_workgroups(module, s, p));
  printf(")");
}

/* Which steps the context's threads share (tinyml_module_step_workgroups):
 * the others run inline on the invoking thread, whatever --threads says. */
static void print_parallel_steps(const tinyml_module_t *module) {
  size_t count = tinyml_module_dispatch_count(module), parallel = 0;
  for (size_t s = 0; s < count; ++s) parallel += tinyml_module_step_workgroups(module, s) > 1;
  printf("parallel_steps: %zu of %zu (the others run inline)\n", parallel, count);
  for (size_t s = 0; s < count; ++s) {
    if (tinyml_module_step_workgroups(module, s) < 2) continue;
    printf("  parallel %zu: %u workgroups", s, tinyml_module_step_workgroups(module, s));
    print_phases(module, s);
    printf("\n");
  }
}

static int print_info(const char *path, const tinyml_module_t *module) {
  printf("module: %s\n", path);
  printf("target: %s\n", tinyml_module_target(module));
  /* Variants can share a CPU name, so name their features; a pinned
   * module's (--cpu host lists every feature of the CPU) would drown the line. */
  const char *features = tinyml_module_variant_count(module) ? tinyml_module_features(module) : "";
  printf("variant: %s%s%s (chosen at load from %zu builds)\n", tinyml_module_cpu(module),
         *features ? " " : "", features, tinyml_module_variant_count(module) + 1);
  if (print_tensors(module, 0) != 0 || print_tensors(module, 1) != 0)
    return TOOL_EXIT_FAILURE;
  printf("arena_size: %zu bytes (alignment %zu)\n",
         tinyml_module_arena_size(module), tinyml_module_arena_alignment(module));
  if (tinyml_module_arena_region_count(module) > 1)
    for (size_t r = 0; r < tinyml_module_arena_region_count(module); ++r)
      printf("arena_region %zu: %zu bytes\n", r, tinyml_module_arena_region_size(module, r));
  printf("constant_size: %zu bytes\n", tinyml_module_constant_size(module));
  if (tinyml_module_state_size(module))
    printf("state_size: %zu bytes (kept between invokes of one context)\n",
           tinyml_module_state_size(module));
  printf("dispatch_count: %zu\n", tinyml_module_dispatch_count(module));
  for (size_t s = 0; s < tinyml_module_dispatch_count(module); ++s)
    printf("  step %zu: %s\n", s, tinyml_module_step_label(module, s));
  print_parallel_steps(module);
  return 0;
}

/* ---------------------------------------------------------------------------
 * Buffers
 * ------------------------------------------------------------------------- */

static void run_state_free(run_state_t *s) {
  for (size_t i = 0; !s->slab && s->in_data && i < s->input_count; ++i) free(s->in_data[i]);
  for (size_t i = 0; !s->slab && s->out_data && i < s->output_count; ++i) free(s->out_data[i]);
  free(s->slab);
  free(s->in_data);
  free(s->out_data);
  free(s->in_info);
  free(s->out_info);
  tinyml_context_release(s->context);
}

/* Fills `infos` for the inputs (outputs != 0: the outputs) of `module`. */
static int get_infos(const tinyml_module_t *module, int outputs, size_t count,
                     tinyml_tensor_info_t *infos) {
  for (size_t i = 0; i < count; ++i)
    if (query_info(module, outputs, i, &infos[i]) != 0) return TOOL_EXIT_FAILURE;
  return 0;
}

static int run_state_init(run_state_t *s, const tinyml_module_t *module, long threads) {
  memset(s, 0, sizeof *s);
  s->input_count = tinyml_module_input_count(module);
  s->output_count = tinyml_module_output_count(module);
  /* +1: calloc(0) may return NULL, which would read as out of memory. */
  s->in_info = calloc(s->input_count + 1, sizeof *s->in_info);
  s->out_info = calloc(s->output_count + 1, sizeof *s->out_info);
  s->in_data = calloc(s->input_count + 1, sizeof *s->in_data);
  s->out_data = calloc(s->output_count + 1, sizeof *s->out_data);
  if (!s->in_info || !s->out_info || !s->in_data || !s->out_data)
    return tool_error("out of memory");
  if (get_infos(module, 0, s->input_count, s->in_info) != 0 ||
      get_infos(module, 1, s->output_count, s->out_info) != 0)
    return TOOL_EXIT_FAILURE;
  tinyml_context_options_t options;
  tinyml_context_options_init(&options);
  options.thread_count = (uint32_t)threads;
  return tool_check(tinyml_context_create(module, &options, &s->context),
                    "cannot create a context");
}

static int load_input(run_state_t *s, size_t i, const char *path) {
  const tinyml_tensor_info_t *info = &s->in_info[i];
  size_t size;
  if (tool_read_file(path, &s->in_data[i], &size) != 0) return TOOL_EXIT_FAILURE;
  if (size != info->byte_size)
    return tool_error("input %zu \"%s\": %s has %zu bytes, but the input "
                      "needs %zu (%s, see --info)", i, info->name, path, size,
                      info->byte_size, tinyml_dtype_name(info->dtype));
  return 0;
}

static int load_inputs(run_state_t *s, const run_args_t *args) {
  if (args->input_count != s->input_count)
    return tool_usage_error("%s has %zu input(s) but %zu --input file(s) were "
                            "given", args->module_path, s->input_count,
                            args->input_count);
  for (size_t i = 0; i < s->input_count; ++i)
    if (load_input(s, i, args->inputs[i]) != 0) return TOOL_EXIT_FAILURE;
  return 0;
}

static uint32_t xorshift32(uint32_t *state) {
  *state ^= *state << 13;
  *state ^= *state >> 17;
  *state ^= *state << 5;
  return *state;
}

/* Stores the low `width` bytes of `value` as element `index`, in host order. */
static void store_uint(void *base, size_t index, size_t width, uint64_t value) {
  char *p = (char *)base + index * width;
  switch (width) {
    case 1: { uint8_t v = (uint8_t)value; memcpy(p, &v, 1); break; }
    case 2: { uint16_t v = (uint16_t)value; memcpy(p, &v, 2); break; }
    case 4: { uint32_t v = (uint32_t)value; memcpy(p, &v, 4); break; }
    default: memcpy(p, &value, 8); break;
  }
}

/* One element of --bench data: floats in [-1, 1); integers and bools 0 or 1,
 * valid for every dtype and in range should an integer input be an index. */
static uint64_t random_element(tinyml_dtype_t dtype, uint32_t r) {
  float f;
  uint32_t bits;
  switch (dtype) {
    case TINYML_DTYPE_FLOAT32:
      f = (float)((int32_t)(r >> 8) - (1 << 23)) / (float)(1 << 23);
      memcpy(&bits, &f, sizeof bits);
      return bits;
    case TINYML_DTYPE_FLOAT16: /* sign, exponent 0..14 (|x| < 1), mantissa */
      return (r >> 31) << 15 | ((r >> 10) % 15) << 10 | (r & 0x3ff);
    case TINYML_DTYPE_BFLOAT16: /* a float32's top half: |x| < 1 still */
      f = (float)((int32_t)(r >> 8) - (1 << 23)) / (float)(1 << 23);
      memcpy(&bits, &f, sizeof bits);
      return bits >> 16;
    case TINYML_DTYPE_FLOAT64: {
      double d = (double)((int32_t)(r >> 8) - (1 << 23)) / (double)(1 << 23);
      uint64_t wide;
      memcpy(&wide, &d, sizeof wide);
      return wide;
    }
    default: return r & 1;
  }
}

static void fill_random(void *data, const tinyml_tensor_info_t *info,
                        uint32_t seed) {
  size_t width = tinyml_dtype_size(info->dtype);
  size_t count = width ? info->byte_size / width : 0;
  uint32_t state = seed * 2654435761u + 1u; /* never 0: xorshift would stick */
  for (size_t i = 0; i < count; ++i)
    store_uint(data, i, width, random_element(info->dtype, xorshift32(&state)));
}

/* malloc'd buffers are aligned for every dtype, as set_input/output need. */
static int alloc_buffers(void **data, const tinyml_tensor_info_t *infos,
                         size_t count) {
  for (size_t i = 0; i < count; ++i)
    if ((data[i] = calloc(1, infos[i].byte_size + 1)) == NULL)
      return tool_error("out of memory");
  return 0;
}

static int random_inputs(run_state_t *s) {
  if (alloc_buffers(s->in_data, s->in_info, s->input_count) != 0)
    return TOOL_EXIT_FAILURE;
  for (size_t i = 0; i < s->input_count; ++i)
    fill_random(s->in_data[i], &s->in_info[i], (uint32_t)i + 1);
  /* A pinned input accepts its fixed value only. */
  for (size_t i = 0; i < s->input_count; ++i)
    if (s->in_info[i].fixed_value)
      memcpy(s->in_data[i], s->in_info[i].fixed_value, s->in_info[i].byte_size);
  return 0;
}

static int bind_buffers(run_state_t *s) {
  for (size_t i = 0; i < s->input_count; ++i)
    if (tool_check(tinyml_context_set_input(s->context, i, s->in_data[i],
                                            s->in_info[i].byte_size),
                   "input %zu", i) != 0)
      return TOOL_EXIT_FAILURE;
  for (size_t i = 0; i < s->output_count; ++i)
    if (tool_check(tinyml_context_set_output(s->context, i, s->out_data[i],
                                             s->out_info[i].byte_size),
                   "output %zu", i) != 0)
      return TOOL_EXIT_FAILURE;
  return 0;
}

/* ---------------------------------------------------------------------------
 * Running
 * ------------------------------------------------------------------------- */

static int write_outputs(const run_state_t *s, const char *dir) {
  if (mkdir(dir, 0777) != 0 && errno != EEXIST)
    return tool_error("cannot create directory %s: %s", dir, strerror(errno));
  size_t cap = strlen(dir) + 32;
  char *path = malloc(cap);
  if (path == NULL) return tool_error("out of memory");
  int rc = 0;
  for (size_t i = 0; i < s->output_count && rc == 0; ++i) {
    snprintf(path, cap, "%s/output_%zu.bin", dir, i);
    rc = tool_write_file(path, s->out_data[i], s->out_info[i].byte_size);
    if (rc == 0)
      printf("output %zu \"%s\": wrote %s (%zu bytes)\n", i, s->out_info[i].name,
             path, s->out_info[i].byte_size);
  }
  free(path);
  return rc;
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Returns the median. */
static double print_bench(double *ms, long runs, double flops) {
  qsort(ms, (size_t)runs, sizeof *ms, compare_doubles);
  double median = runs % 2 ? ms[runs / 2] : (ms[runs / 2 - 1] + ms[runs / 2]) / 2;
  printf("runs=%ld\nmin_ms=%.6f\nmedian_ms=%.6f\n", runs, ms[0], median);
  /* flops per invoke / (median seconds) / 1e9 */
  if (flops > 0) printf("gflops=%.3f\n", flops / (median * 1e6));
  return median;
}

/* Times `runs` invokes; the caller has already done the warm-up one.  With
 * `profile` each step is timed too, and the rows follow the totals. */
static int bench(run_state_t *s, const tinyml_module_t *module, long runs, double flops,
                 int profile) {
  double *ms = malloc((size_t)runs * sizeof *ms);
  if (ms == NULL) return tool_error("out of memory");
  run_profile_t *p = profile ? run_profile_start(s->context, module, runs) : NULL;
  int rc = profile && !p ? TOOL_EXIT_FAILURE : 0;
  for (long i = 0; i < runs && rc == 0; ++i) {
    double start = now_ms();
    rc = tool_check(tinyml_context_invoke(s->context), "invoke failed");
    ms[i] = now_ms() - start;
  }
  double median = rc == 0 ? print_bench(ms, runs, flops) : 0;
  if (p) run_profile_finish(p, rc == 0 ? median : 0);
  free(ms);
  return rc;
}

/* A 64-byte slot per tensor for --offset: its bytes, the offset and the
 * one spare byte alloc_buffers leaves too. */
static size_t slot_size(size_t bytes) { return (bytes + 64 + 1 + 63) / 64 * 64; }

/* --offset: every buffer moved into one slab, in_off (inputs) or out_off
 * (outputs) bytes into its 64-byte aligned slot (inputs then outputs). */
static int place_buffers(run_state_t *s, size_t in_off, size_t out_off) {
  const size_t n = s->input_count + s->output_count;
  size_t total = 64;
  for (size_t k = 0; k < n; ++k)
    total += slot_size(k < s->input_count ? s->in_info[k].byte_size
                                          : s->out_info[k - s->input_count].byte_size);
  unsigned char *slab = aligned_alloc(64, total), *at = slab;
  if (slab == NULL) return tool_error("out of memory");
  memset(slab, 0, total);
  for (size_t k = 0; k < n; ++k) {
    const int in = k < s->input_count;
    void **data = in ? &s->in_data[k] : &s->out_data[k - s->input_count];
    const size_t bytes = in ? s->in_info[k].byte_size : s->out_info[k - s->input_count].byte_size;
    const size_t offset = in ? in_off : out_off;
    memcpy(at + offset, *data, bytes);
    free(*data);
    *data = at + offset;
    at += slot_size(bytes);
  }
  s->slab = slab;
  return 0;
}

/* --offset: each buffer's bytes past a 64-byte line, read from its address
 * (so a test sees that IN and OUT were each honoured, not just the bits). */
static void print_placement(const run_state_t *s) {
  const char *sep = "";
  printf("placed:");
  for (size_t i = 0; i < s->input_count; ++i, sep = ",")
    printf("%s input %zu at %u", sep, i, (unsigned)((uintptr_t)s->in_data[i] % 64));
  for (size_t i = 0; i < s->output_count; ++i, sep = ",")
    printf("%s output %zu at %u", sep, i, (unsigned)((uintptr_t)s->out_data[i] % 64));
  printf(" (bytes past a 64-byte line)\n");
}

static int prepare(run_state_t *s, const run_args_t *args) {
  int rc = args->input_count == 0 && args->bench > 0 ? random_inputs(s)
                                                     : load_inputs(s, args);
  if (rc == 0) rc = alloc_buffers(s->out_data, s->out_info, s->output_count);
  if (rc == 0 && args->offset >= 0) {
    rc = place_buffers(s, (size_t)args->offset, (size_t)args->offset_out);
    if (rc == 0) print_placement(s);
  }
  return rc == 0 ? bind_buffers(s) : rc;
}

static int run(const tinyml_module_t *module, const run_args_t *args) {
  run_state_t s;
  int rc = run_state_init(&s, module, args->threads);
  if (rc == 0) rc = prepare(&s, args);
  for (long i = 0; rc == 0 && i < (args->invokes > 1 ? args->invokes : 1); ++i)
    rc = tool_check(tinyml_context_invoke(s.context), "invoke failed");
  const char *dir = args->output_dir ? args->output_dir
                                     : args->bench ? NULL : ".";
  if (rc == 0 && dir != NULL) rc = write_outputs(&s, dir);
  if (rc == 0 && args->bench > 0)
    rc = bench(&s, module, args->bench, args->flops, args->profile);
  run_state_free(&s);
  return rc;
}

int main(int argc, char **argv) {
  run_args_t args;
  int rc = parse_args(argc, argv, &args);
  if (rc == 0) {
    tinyml_module_t *module = NULL;
    rc = tool_check(tinyml_module_load_file(args.module_path, NULL, &module),
                    "cannot load the module");
    if (rc == 0)
      rc = args.info ? print_info(args.module_path, module) : run(module, &args);
    tinyml_module_release(module);
  }
  free(args.inputs);
  return rc == TOOL_DONE ? TOOL_EXIT_OK : rc;
}
