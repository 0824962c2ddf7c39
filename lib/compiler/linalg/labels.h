/* What each dispatch computes, in the model's own words: the source
 * operators its ops were lowered from, for profiles (tinyml-run --profile). */
#ifndef TINYML_COMPILER_LINALG_LABELS_H
#define TINYML_COMPILER_LINALG_LABELS_H

#include "graph.h"

/* Sets every dispatch's `label` from the locations of the ops in its
 * function: the importers locate each op at "KIND name" of its source
 * operator, a TOSA MLIR model's are "OP line N" (driver/import.c).  Names appear once,
 * in the order the ops do, joined by ", ", at most TC_LABEL_MAX bytes.  A
 * dispatch with no located op gets an empty label. */
#define TC_LABEL_MAX 1024
tinyml_status_t tc_label_dispatches(tc_graph_t *g, const tinyml_allocator_t *a);

#endif
