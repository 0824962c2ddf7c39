/*
 * tinyml-compile - compiles a model into a libtinyml module file.
 *
 *   tinyml-compile MODEL -o MODULE [--target NAME] [--cpu NAME]
 *                  [--features LIST] [-O0..3]
 *   tinyml-compile MODEL --emit c|static-lib --name NAME -o DIR ...
 *
 * A thin shell over tinyml_compile(): the library checks the options and
 * words the compile errors, so the tool and the API cannot disagree.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tinyml.h"
#include "tool_util.h"

const char tool_name[] = "tinyml-compile";

typedef struct compile_args {
  const char *model;  /* input path */
  const char *output; /* module path */
  tinyml_compile_options_t options;
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
      "      --cpu NAME       LLVM CPU name, e.g. znver3 (default: the "
      "backend's)\n"
      "      --features LIST  LLVM target features, e.g. +avx2,+fma\n"
      "  -O0 .. -O3           optimisation level (default -O3)\n"
      "  -h, --help           show this help and exit\n"
      "      --version        show the library version and exit\n"
      "\n"
      "Errors go to stderr.  Exit status: 0 success, 1 compile or I/O error,\n"
      "2 bad command line.\n",
      tool_name, targets[0] ? targets : "none, this library has no compiler");
}

enum { OPT_TARGET = 256, OPT_CPU, OPT_FEATURES, OPT_VERSION, OPT_EMIT, OPT_NAME };

static const struct option kLongOptions[] = {
    {"output", required_argument, NULL, 'o'},
    {"target", required_argument, NULL, OPT_TARGET},
    {"cpu", required_argument, NULL, OPT_CPU},
    {"features", required_argument, NULL, OPT_FEATURES},
    {"emit", required_argument, NULL, OPT_EMIT},
    {"name", required_argument, NULL, OPT_NAME},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

static int parse_emit(const char *value, tinyml_emit_t *emit) {
  if (strcmp(value, "module") == 0) *emit = TINYML_EMIT_MODULE;
  else if (strcmp(value, "c") == 0) *emit = TINYML_EMIT_C;
  else if (strcmp(value, "static-lib") == 0) *emit = TINYML_EMIT_STATIC_LIB;
  else return tool_usage_error("--emit must be module, c or static-lib, not '%s'", value);
  return 0;
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
    case 'O':
      if (tool_parse_long(value, "-O", 0, 3, &level) != 0) return TOOL_EXIT_USAGE;
      args->options.opt_level = (int)level;
      return 0;
    case 'h': print_usage(); return TOOL_DONE;
    case OPT_VERSION: return tool_print_version();
    default: return tool_bad_option(opt, argv);
  }
}

/* Returns 0 to compile, TOOL_DONE after --help, or an exit code. */
static int parse_args(int argc, char **argv, compile_args_t *args) {
  args->model = args->output = NULL;
  tinyml_compile_options_init(&args->options);
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
  return 0;
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
  if (tool_read_file(args->model, &model, &size) != 0) return TOOL_EXIT_FAILURE;
  if (args->options.emit != TINYML_EMIT_MODULE) {
    int rc = write_files(args, model, size);
    free(model);
    return rc;
  }
  tinyml_blob_t *module = NULL;
  int rc = tool_check(tinyml_compile(model, size, &args->options, &module),
                      "cannot compile %s", args->model);
  free(model);
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
