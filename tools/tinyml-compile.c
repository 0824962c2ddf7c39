/*
 * tinyml-compile - compiles a model into a libtinyml module file.
 *
 *   tinyml-compile MODEL -o MODULE [--target NAME] [--cpu NAME]
 *                  [--features LIST] [-O0..3]
 *   tinyml-compile MODEL --emit c|static-lib --name NAME -o DIR ...
 *   tinyml-compile MODEL -o MODULE --input-image WxH [--pixels F] [--mean M]
 *                  [--std S] [--dequantize] [--softmax] [--argmax] [--top-k K]
 *   tinyml-compile MODEL.onnx -o MODULE [--dim NAME=N]... [--input-shape NAME=D0,D1,...]...
 *                  [--input-value NAME=V0,V1,...]...
 *
 * A thin shell over tinyml_compile(): the library checks the options and
 * words the compile errors, so the tool and the API cannot disagree.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tinyml.h"
#include "tool_util.h"

const char tool_name[] = "tinyml-compile";

#define MAX_BINDINGS 32
#define MAX_SHAPE_RANK 8

typedef struct compile_args {
  const char *model;  /* input path */
  const char *output; /* module path */
  tinyml_compile_options_t options;
  tinyml_preprocess_t pre;
  tinyml_postprocess_t post;
  int pre_detail;        /* a pre-processing flag other than the kind */
  uint32_t mean_count, std_count;
  /* --dim and --input-shape; the strings point into argv. */
  tinyml_dim_binding_t dims[MAX_BINDINGS];
  tinyml_input_shape_t shapes[MAX_BINDINGS];
  int64_t shape_dims[MAX_BINDINGS][MAX_SHAPE_RANK];
  tinyml_input_value_t values[MAX_BINDINGS]; /* --input-value, as text */
} compile_args_t;

static void print_usage(void) {
  const char *targets = tinyml_compile_targets();
  printf(
      "Usage: %s MODEL -o MODULE [options]\n"
      "\n"
      "Compiles MODEL (.tflite, .onnx or TOSA MLIR text; the format is\n"
      "detected from the bytes) into a libtinyml module, which tinyml-run or\n"
      "tinyml_module_load() runs.\n"
      "\n"
      "Options:\n"
      "  -o, --output PATH    write the module to PATH (required); with\n"
      "                       --emit c or static-lib, PATH is a directory\n"
      "      --emit KIND      module (default); c: NAME.c, NAME.h and\n"
      "                       NAME_kernels.o, the schedule as C with no\n"
      "                       interpreter; static-lib: libNAME.a and NAME.h\n"
      "      --name NAME      C identifier for the emitted files and symbols\n"
      "                       (NAME_invoke, NAME_ARENA_SIZE; default model)\n"
      "      --target NAME    backend to compile for (built: %s;\n"
      "                       default: the host's)\n"
      "      --cpu NAME       LLVM CPU name, e.g. znver3, or host: this machine's\n"
      "                       CPU and features (default: the backend's)\n"
      "      --features LIST  LLVM target features, e.g. +avx2,+fma\n"
      "  -O0 .. -O3           optimisation level (default -O3)\n"
      "      --no-winograd    f32 3x3 convs sum their taps directly, never\n"
      "                       as Winograd F(2x2, 3x3) or F(4x4, 3x3) (same\n"
      "                       results within float rounding)\n"
      "      --strip          leave out the names of the model's operators each\n"
      "                       step computes (tinyml-run --profile shows them)\n"
      "      --arena-regions LIST\n"
      "                       split the arena into regions of at most these\n"
      "                       sizes, e.g. 64K,256K (a fast TCM, then slower\n"
      "                       RAM; suffixes K and M; up to %d): the buffers\n"
      "                       used most per byte go to the first region\n"
      "      --split-min-work N\n"
      "                       threads share a step only if it does at least N\n"
      "                       multiply-adds (copies, transposes and max pools:\n"
      "                       bytes moved; default: the target's; 1 splits\n"
      "                       every step that can be split, for tests)\n"
      "\n"
      "Resource limits (docs/SECURITY.md); a model over one is refused, naming\n"
      "the tensor or operator.  SIZE takes a suffix K, M or G:\n"
      "      --max-tensor-bytes SIZE    any one tensor (default 1G)\n"
      "      --max-constant-bytes SIZE  all constants together (default 2G)\n"
      "      --max-ops N                operators in the model (default 1000000)\n"
      "      --max-arena-bytes SIZE     the planned arena (default 4G)\n"
      "\n"
      "Dynamic dimensions of an ONNX model's inputs, fixed at compile time:\n"
      "      --dim NAME=N     the symbolic dimension NAME (a dim_param) is N,\n"
      "                       in every input that uses it (repeatable)\n"
      "      --input-shape NAME=D0,D1,...\n"
      "                       input NAME has this whole shape (repeatable;\n"
      "                       also for dimensions without a name)\n"
      "                       An unbound dynamic first dimension (the batch)\n"
      "                       is compiled as 1, with a note on stderr; any\n"
      "                       other must be bound\n"
      "      --input-value NAME=V0,V1,...\n"
      "                       input NAME is this constant (repeatable): it is\n"
      "                       no longer an input of the module, and what the\n"
      "                       model computes from it (a shape, axes, K) folds;\n"
      "                       the values are read in the input's element type\n"
      "\n"
      "Pre- and post-processing compiled into the model (docs/PREPOST.md):\n"
      "      --input-image WxH\n"
      "                       the module takes a uint8 HWC image of W x H\n"
      "                       pixels, resized and converted for input 0\n"
      "      --pixels F       rgb888 (default), bgr888, rgb565 (2 bytes per\n"
      "                       pixel, little-endian) or gray8\n"
      "      --resize M       bilinear (default) or nearest\n"
      "      --input-int16    the module takes int16 samples in input 0's shape\n"
      "      --mean M[,M,M]   subtracted per channel (default 0)\n"
      "      --std S[,S,S]    divided by, per channel (default 1)\n"
      "      --layout L       nhwc or nchw: where the model keeps channels\n"
      "                       (default: guessed from its input shape)\n"
      "      --dequantize     output 0 as float32 \"scores\"\n"
      "      --softmax        softmax over output 0's last axis\n"
      "      --argmax         an int32 output \"class\"\n"
      "      --top-k K        int32 \"top_k_indices\" and float32 \"top_k_scores\"\n"
      "                       outputs, best first\n"
      "  -h, --help           show this help and exit\n"
      "      --version        show the library version and exit\n"
      "\n"
      "Errors go to stderr.  Exit status: 0 success, 1 compile or I/O error,\n"
      "2 bad command line.\n",
      tool_name, targets[0] ? targets : "none, this library has no compiler",
      TINYML_MAX_ARENA_REGIONS);
}

enum {
  OPT_TARGET = 256, OPT_CPU, OPT_FEATURES, OPT_VERSION, OPT_EMIT, OPT_NAME,
  OPT_IMAGE, OPT_PIXELS, OPT_RESIZE, OPT_INT16, OPT_MEAN, OPT_STD, OPT_LAYOUT,
  OPT_DEQUANTIZE, OPT_SOFTMAX, OPT_ARGMAX, OPT_TOP_K, OPT_NO_WINOGRAD, OPT_STRIP,
  OPT_ARENA_REGIONS,
  OPT_SPLIT_MIN_WORK,
  OPT_MAX_TENSOR_BYTES,
  OPT_MAX_CONSTANT_BYTES,
  OPT_MAX_OPS,
  OPT_MAX_ARENA_BYTES,
  OPT_DIM,
  OPT_INPUT_SHAPE,
  OPT_INPUT_VALUE,
};

static const struct option kLongOptions[] = {
    {"output", required_argument, NULL, 'o'},
    {"target", required_argument, NULL, OPT_TARGET},
    {"cpu", required_argument, NULL, OPT_CPU},
    {"features", required_argument, NULL, OPT_FEATURES},
    {"emit", required_argument, NULL, OPT_EMIT},
    {"name", required_argument, NULL, OPT_NAME},
    {"input-image", required_argument, NULL, OPT_IMAGE},
    {"pixels", required_argument, NULL, OPT_PIXELS},
    {"resize", required_argument, NULL, OPT_RESIZE},
    {"input-int16", no_argument, NULL, OPT_INT16},
    {"mean", required_argument, NULL, OPT_MEAN},
    {"std", required_argument, NULL, OPT_STD},
    {"layout", required_argument, NULL, OPT_LAYOUT},
    {"dequantize", no_argument, NULL, OPT_DEQUANTIZE},
    {"softmax", no_argument, NULL, OPT_SOFTMAX},
    {"argmax", no_argument, NULL, OPT_ARGMAX},
    {"top-k", required_argument, NULL, OPT_TOP_K},
    {"no-winograd", no_argument, NULL, OPT_NO_WINOGRAD},
    {"strip", no_argument, NULL, OPT_STRIP},
    {"arena-regions", required_argument, NULL, OPT_ARENA_REGIONS},
    {"split-min-work", required_argument, NULL, OPT_SPLIT_MIN_WORK},
    {"max-tensor-bytes", required_argument, NULL, OPT_MAX_TENSOR_BYTES},
    {"max-constant-bytes", required_argument, NULL, OPT_MAX_CONSTANT_BYTES},
    {"max-ops", required_argument, NULL, OPT_MAX_OPS},
    {"max-arena-bytes", required_argument, NULL, OPT_MAX_ARENA_BYTES},
    {"dim", required_argument, NULL, OPT_DIM},
    {"input-shape", required_argument, NULL, OPT_INPUT_SHAPE},
    {"input-value", required_argument, NULL, OPT_INPUT_VALUE},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

/* "64K,256K" into 0-terminated byte counts. */
static int parse_regions(const char *value, size_t *out) {
  const char *p = value;
  for (int i = 0; i < TINYML_MAX_ARENA_REGIONS; ++i) {
    char *end;
    errno = 0;
    unsigned long long n = strtoull(p, &end, 10);
    unsigned long long scale = *end == 'K' ? 1024ull : *end == 'M' ? 1024ull * 1024 : 1;
    if (scale > 1) ++end;
    if (end == p || errno || n == 0 || n > (unsigned long long)SIZE_MAX / scale ||
        (*end != ',' && *end != '\0'))
      return tool_usage_error("--arena-regions: '%s' is not a list of sizes like 64K,256K",
                              value);
    out[i] = (size_t)(n * scale);
    if (*end == '\0') return 0;
    p = end + 1;
  }
  return tool_usage_error("--arena-regions: at most %d regions", TINYML_MAX_ARENA_REGIONS);
}

/* A limit: a positive count, with K, M or G (powers of 1024) for sizes.
 * 0 is refused: the API reads it as "the default", which a user typing
 * --max-ops 0 would not expect. */
static int parse_limit(const char *value, const char *flag, int sizes, uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long n = strtoull(value, &end, 10);
  unsigned long long scale = 1;
  if (sizes && *end) {
    scale = *end == 'K' ? 1ull << 10 : *end == 'M' ? 1ull << 20 : *end == 'G' ? 1ull << 30 : 0;
    if (scale) ++end;
  }
  if (end == value || value[0] == '-' || errno || n == 0 || !scale || *end != '\0' ||
      n > UINT64_MAX / scale)
    return tool_usage_error("%s: '%s' is not a positive %s", flag, value,
                            sizes ? "size like 512M" : "count");
  *out = (uint64_t)(n * scale);
  return 0;
}

/* Splits "NAME=REST" in place: *rest after the '=', NULL-free name. */
static int split_binding(char *value, const char *flag, const char *form, char **rest) {
  char *eq = strrchr(value, '=');
  if (!eq || eq == value || !eq[1])
    return tool_usage_error("%s must be %s, not '%s'", flag, form, value);
  *eq = '\0';
  *rest = eq + 1;
  return 0;
}

/* A dimension size: 1 .. 2^31, as the library accepts. */
static int parse_extent(const char *text, const char *flag, const char **end, int64_t *out) {
  char *e;
  errno = 0;
  long long n = strtoll(text, &e, 10);
  if (e == text || errno || n < 1 || n > (1LL << 31))
    return tool_usage_error("%s: '%s' is not a size in 1..2147483648", flag, text);
  *end = e;
  *out = n;
  return 0;
}

static int parse_dim(char *value, compile_args_t *args) {
  tinyml_compile_options_t *o = &args->options;
  char *rest;
  const char *end;
  if (o->dim_count == MAX_BINDINGS) return tool_usage_error("at most %d --dim", MAX_BINDINGS);
  if (split_binding(value, "--dim", "NAME=N", &rest)) return TOOL_EXIT_USAGE;
  tinyml_dim_binding_t *b = &args->dims[o->dim_count];
  if (parse_extent(rest, "--dim", &end, &b->value)) return TOOL_EXIT_USAGE;
  if (*end) return tool_usage_error("--dim: '%s' is not a size in 1..2147483648", rest);
  b->name = value;
  o->dims = args->dims;
  o->dim_count++;
  return 0;
}

static int parse_input_shape(char *value, compile_args_t *args) {
  tinyml_compile_options_t *o = &args->options;
  size_t i = o->input_shape_count;
  char *rest;
  if (i == MAX_BINDINGS) return tool_usage_error("at most %d --input-shape", MAX_BINDINGS);
  if (split_binding(value, "--input-shape", "NAME=D0,D1,...", &rest)) return TOOL_EXIT_USAGE;
  uint32_t rank = 0;
  for (const char *p = rest;; ++p) {
    if (rank == MAX_SHAPE_RANK)
      return tool_usage_error("--input-shape: at most %d dimensions", MAX_SHAPE_RANK);
    if (parse_extent(p, "--input-shape", &p, &args->shape_dims[i][rank++])) return TOOL_EXIT_USAGE;
    if (!*p) break;
    if (*p != ',') return tool_usage_error("--input-shape: '%s' is not D0,D1,...", rest);
  }
  args->shapes[i] = (tinyml_input_shape_t){value, rank, args->shape_dims[i]};
  o->input_shapes = args->shapes;
  o->input_shape_count++;
  return 0;
}

/* The library reads the values in the input's element type, which only
 * it knows: the tool passes the text. */
static int parse_input_value(char *value, compile_args_t *args) {
  tinyml_compile_options_t *o = &args->options;
  size_t i = o->input_value_count;
  char *rest;
  if (i == MAX_BINDINGS) return tool_usage_error("at most %d --input-value", MAX_BINDINGS);
  if (split_binding(value, "--input-value", "NAME=V0,V1,...", &rest)) return TOOL_EXIT_USAGE;
  args->values[i] = (tinyml_input_value_t){.input = value, .text = rest};
  o->input_values = args->values;
  o->input_value_count++;
  return 0;
}

/* The library never prints: its notes come here. */
static void print_note(void *user, const char *message) {
  (void)user;
  fprintf(stderr, "%s: note: %s\n", tool_name, message);
}

static int parse_emit(const char *value, tinyml_emit_t *emit) {
  if (strcmp(value, "module") == 0) *emit = TINYML_EMIT_MODULE;
  else if (strcmp(value, "c") == 0) *emit = TINYML_EMIT_C;
  else if (strcmp(value, "static-lib") == 0) *emit = TINYML_EMIT_STATIC_LIB;
  else return tool_usage_error("--emit must be module, c or static-lib, not '%s'", value);
  return 0;
}

/* Index of `value` in the NULL-terminated `names`, or -1. */
static int pick(const char *value, const char *const *names) {
  for (int i = 0; names[i]; ++i)
    if (strcmp(value, names[i]) == 0) return i;
  return -1;
}

static int parse_choice(const char *value, const char *option, const char *const *names,
                        const char *list, int *out) {
  int i = pick(value, names);
  if (i < 0) return tool_usage_error("%s must be %s, not '%s'", option, list, value);
  *out = i;
  return 0;
}

static int parse_size(const char *value, tinyml_preprocess_t *pre) {
  char *end;
  unsigned long w = strtoul(value, &end, 10), h = 0;
  if (end != value && (*end == 'x' || *end == 'X')) {
    const char *hs = end + 1;
    h = strtoul(hs, &end, 10);
    if (end == hs) h = 0;
  }
  if (*end || !w || !h || w > 16384 || h > 16384)
    return tool_usage_error("--input-image must be WxH with sizes 1..16384, not '%s'", value);
  pre->kind = TINYML_INPUT_IMAGE;
  pre->image_width = (uint32_t)w;
  pre->image_height = (uint32_t)h;
  return 0;
}

/* Parses "a[,b[,c[,d]]]" of finite numbers. */
static int parse_floats(const char *value, const char *option, float out[4], uint32_t *count) {
  const char *p = value;
  uint32_t n = 0;
  for (;;) {
    char *end;
    double v = strtod(p, &end);
    if (end == p || !isfinite(v) || n == 4 || (*end && *end != ','))
      return tool_usage_error("%s must be 1 to 4 numbers separated by commas, not '%s'",
                              option, value);
    out[n++] = (float)v;
    if (!*end) break;
    p = end + 1;
  }
  *count = n;
  return 0;
}

static int apply_pre_option(int opt, char *value, compile_args_t *args) {
  static const char *const pixels[] = {"rgb888", "bgr888", "rgb565", "gray8", NULL};
  static const char *const resize[] = {"bilinear", "nearest", NULL};
  static const char *const layout[] = {"auto", "nhwc", "nchw", NULL};
  tinyml_preprocess_t *pre = &args->pre;
  int v = 0, rc = 0;
  args->pre_detail |= opt != OPT_IMAGE && opt != OPT_INT16;
  switch (opt) {
    case OPT_IMAGE: return parse_size(value, pre);
    case OPT_INT16: pre->kind = TINYML_INPUT_INT16; return 0;
    case OPT_PIXELS:
      rc = parse_choice(value, "--pixels", pixels, "rgb888, bgr888, rgb565 or gray8", &v);
      pre->pixels = (tinyml_pixel_format_t)v;
      return rc;
    case OPT_RESIZE:
      rc = parse_choice(value, "--resize", resize, "bilinear or nearest", &v);
      pre->resize = (tinyml_resize_t)v;
      return rc;
    case OPT_LAYOUT:
      rc = parse_choice(value, "--layout", layout, "nhwc or nchw", &v);
      pre->model_layout = (tinyml_layout_t)v;
      return rc;
    case OPT_MEAN: return parse_floats(value, "--mean", pre->mean, &args->mean_count);
    default: return parse_floats(value, "--std", pre->std, &args->std_count);
  }
}

static int apply_post_option(int opt, char *value, compile_args_t *args) {
  long k;
  args->options.postprocess = &args->post;
  switch (opt) {
    case OPT_DEQUANTIZE: args->post.dequantize = 1; return 0;
    case OPT_SOFTMAX: args->post.softmax = 1; return 0;
    case OPT_ARGMAX: args->post.argmax = 1; return 0;
    default:
      if (tool_parse_long(value, "--top-k", 1, 65536, &k) != 0) return TOOL_EXIT_USAGE;
      args->post.top_k = (uint32_t)k;
      return 0;
  }
}

/* Applies one option from getopt_long(); returns 0 to go on. */
static int apply_option(int opt, char *value, char **argv,
                        compile_args_t *args) {
  long level;
  switch (opt) {
    case 'o': args->output = value; return 0;
    case OPT_TARGET: args->options.target = value; return 0;
    case OPT_CPU: args->options.cpu = value; return 0;
    case OPT_FEATURES: args->options.features = value; return 0;
    case OPT_NAME: args->options.name = value; return 0;
    case OPT_EMIT: return parse_emit(value, &args->options.emit);
    case OPT_NO_WINOGRAD: args->options.no_winograd = 1; return 0;
    case OPT_STRIP: args->options.strip = 1; return 0;
    case OPT_ARENA_REGIONS: return parse_regions(value, args->options.arena_regions);
    case OPT_SPLIT_MIN_WORK:
      return parse_limit(value, "--split-min-work", 0, &args->options.split_min_work);
    case OPT_MAX_TENSOR_BYTES:
      return parse_limit(value, "--max-tensor-bytes", 1, &args->options.max_tensor_bytes);
    case OPT_MAX_CONSTANT_BYTES:
      return parse_limit(value, "--max-constant-bytes", 1, &args->options.max_constant_bytes);
    case OPT_MAX_OPS: return parse_limit(value, "--max-ops", 0, &args->options.max_ops);
    case OPT_MAX_ARENA_BYTES:
      return parse_limit(value, "--max-arena-bytes", 1, &args->options.max_arena_bytes);
    case OPT_DIM: return parse_dim(value, args);
    case OPT_INPUT_SHAPE: return parse_input_shape(value, args);
    case OPT_INPUT_VALUE: return parse_input_value(value, args);
    case OPT_IMAGE: case OPT_PIXELS: case OPT_RESIZE: case OPT_INT16:
    case OPT_MEAN: case OPT_STD: case OPT_LAYOUT:
      return apply_pre_option(opt, value, args);
    case OPT_DEQUANTIZE: case OPT_SOFTMAX: case OPT_ARGMAX: case OPT_TOP_K:
      return apply_post_option(opt, value, args);
    case 'O':
      if (tool_parse_long(value, "-O", 0, 3, &level) != 0) return TOOL_EXIT_USAGE;
      args->options.opt_level = (int)level;
      return 0;
    case 'h': print_usage(); return TOOL_DONE;
    case OPT_VERSION: return tool_print_version();
    default: return tool_bad_option(opt, argv);
  }
}

/* One mean or std for every channel: a single value applies to all. */
static int finish_pre(compile_args_t *args) {
  tinyml_preprocess_t *pre = &args->pre;
  if (pre->kind == TINYML_INPUT_AS_MODEL) {
    if (args->pre_detail)
      return tool_usage_error("--pixels, --resize, --mean, --std and --layout need "
                              "--input-image or --input-int16");
    return 0;
  }
  uint32_t m = args->mean_count, s = args->std_count, n = m > s ? m : s;
  if (m > 1 && s > 1 && m != s)
    return tool_usage_error("--mean has %u values and --std %u; give both the same count "
                            "or one value", m, s);
  for (uint32_t c = 1; c < n; ++c) {
    if (m <= 1) pre->mean[c] = pre->mean[0];
    if (s <= 1) pre->std[c] = pre->std[0];
  }
  pre->channel_count = n ? n : 1;
  args->options.preprocess = pre;
  return 0;
}

/* Returns 0 to compile, TOOL_DONE after --help, or an exit code. */
static int parse_args(int argc, char **argv, compile_args_t *args) {
  memset(args, 0, sizeof(*args));
  tinyml_compile_options_init(&args->options);
  tinyml_preprocess_init(&args->pre);
  tinyml_postprocess_init(&args->post);
  args->options.note = print_note;
  int opt;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, ":o:O:h", kLongOptions, NULL)) != -1) {
    int rc = apply_option(opt, optarg, argv, args);
    if (rc != 0) return rc;
  }
  if (optind == argc) return tool_usage_error("missing MODEL");
  if (argc - optind > 1)
    return tool_usage_error("unexpected argument '%s'", argv[optind + 1]);
  args->model = argv[optind];
  if (args->output == NULL) return tool_usage_error("missing -o MODULE");
  return finish_pre(args);
}

static int write_files(const compile_args_t *args, const void *model, size_t size) {
  if (mkdir(args->output, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "%s: cannot create directory %s: %s\n", tool_name, args->output,
            strerror(errno));
    return TOOL_EXIT_FAILURE;
  }
  tinyml_files_t *files = NULL;
  int rc = tool_check(tinyml_compile_files(model, size, &args->options, &files),
                      "cannot compile %s", args->model);
  if (rc == 0)
    rc = tool_check(tinyml_files_write(files, args->output), "cannot write the files");
  for (size_t i = 0; rc == 0 && i < tinyml_files_count(files); ++i)
    printf("%s/%s\n", args->output, tinyml_files_name(files, i));
  tinyml_files_release(files);
  return rc;
}

static int compile_file(const compile_args_t *args) {
  void *model;
  size_t size;
  int mapped;
  if (tool_map_file(args->model, &model, &size, &mapped) != 0) return TOOL_EXIT_FAILURE;
  if (args->options.emit != TINYML_EMIT_MODULE) {
    int rc = write_files(args, model, size);
    tool_release_file(model, size, mapped);
    return rc;
  }
  tinyml_blob_t *module = NULL;
  int rc = tool_check(tinyml_compile(model, size, &args->options, &module),
                      "cannot compile %s", args->model);
  tool_release_file(model, size, mapped);
  if (rc == 0)
    rc = tool_check(tinyml_blob_write_file(module, args->output),
                    "cannot write the module");
  tinyml_blob_release(module);
  return rc;
}

int main(int argc, char **argv) {
  compile_args_t args;
  int rc = parse_args(argc, argv, &args);
  if (rc != 0) return rc == TOOL_DONE ? TOOL_EXIT_OK : rc;
  return compile_file(&args);
}
