/* A QEMU TCG plugin that prints the number of guest instructions a
 * qemu-user run executed: `insns=<n>` on stderr at exit.  It is a measuring
 * aid for backends/rvv (not part of libtinyml); see README.md.  Debian ships
 * QEMU's plugin support but not its header or the contrib plugins, so the
 * few plugin API calls used (API version 1, QEMU 7.x) are declared here.
 *
 *   cc -shared -fPIC -O2 -o qemu_insn_count.so backends/rvv/qemu_insn_count.c
 *   qemu-riscv64 -cpu rv64,v=true,vlen=128 -plugin ./qemu_insn_count.so PROG ...
 *
 * The count is exact: every translated block adds its instruction count
 * inline each time it runs.  A block left early by an exception is still
 * counted in full, which a tinyml-run does not do. */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
typedef struct qemu_info_t qemu_info_t; /* only passed through */
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*udata_cb_t)(qemu_plugin_id_t id, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
                                              enum qemu_plugin_op op, void *ptr,
                                              uint64_t imm);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, udata_cb_t cb, void *userdata);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

static uint64_t insns; /* qemu-user runs one vCPU per guest thread; use one */

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
  (void)id;
  qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &insns,
                                           qemu_plugin_tb_n_insns(tb));
}

static void on_exit(qemu_plugin_id_t id, void *userdata) {
  (void)id;
  (void)userdata;
  fprintf(stderr, "insns=%" PRIu64 "\n", insns);
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id,
                                                               const qemu_info_t *info,
                                                               int argc, char **argv) {
  (void)info;
  (void)argc;
  (void)argv;
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
  qemu_plugin_register_atexit_cb(id, on_exit, NULL);
  return 0;
}
