/* The static memory plan of a compiled graph. */
#ifndef TINYML_COMPILER_LINALG_MEMORY_PLAN_H
#define TINYML_COMPILER_LINALG_MEMORY_PLAN_H

#include "graph.h"

/* Lifetimes and arena offsets for every buffer and scratch; output claims. */
tinyml_status_t tc_plan_memory(tc_graph_t *g, const tinyml_allocator_t *a);

#endif
