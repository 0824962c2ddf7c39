/* The partitioned graph's storage (graph.h). */
#include "graph.h"

#include <string.h>

#include "../../common/alloc.h"
#include "signature.h"

void tc_graph_free(tc_graph_t *g, const tinyml_allocator_t *a) {
  for (uint32_t d = 0; g->dispatches && d < g->dispatch_count; ++d) {
    tinyml__free(a, g->dispatches[d].args);
    tinyml__free(a, g->dispatches[d].label);
  }
  for (uint32_t c = 0; g->constants && c < g->constant_count; ++c)
    if (g->constants[c].owned) tinyml__free(a, (void *)g->constants[c].data);
  tinyml__free(a, g->dispatches);
  tinyml__free(a, g->constants);
  tinyml__free(a, g->buffers);
  tinyml__free(a, g->outputs);
  tinyml__free(a, g->state_init);
  tc_signature_free(g->input_info, g->input_count, a);
  tc_signature_free(g->output_info, g->output_count, a);
  if (!mlirModuleIsNull(g->dispatch_module)) mlirModuleDestroy(g->dispatch_module);
  memset(g, 0, sizeof(*g));
}
