/* Internal to the ONNX importer: looking up a graph's own structure. */
#ifndef TINYML_IMPORTERS_ONNX_GRAPH_UTIL_H
#define TINYML_IMPORTERS_ONNX_GRAPH_UTIL_H

#include <string.h>

#include "onnx.pb-c.h"

/* The node among g's first `end` nodes that writes `name`, or NULL.
 * Searched from the back, so a caller passing its own index finds the
 * producer it reads. */
static inline const Onnx__NodeProto *onnx_producer(const Onnx__GraphProto *g, const char *name,
                                                   size_t end) {
  if (!g || !name || !name[0]) return NULL;
  for (size_t k = end < g->n_node ? end : g->n_node; k-- > 0;)
    for (size_t j = 0; j < g->node[k]->n_output; ++j)
      if (g->node[k]->output[j] && strcmp(g->node[k]->output[j], name) == 0) return g->node[k];
  return NULL;
}

#endif
