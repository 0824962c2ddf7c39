/* Dispatch labels from op locations (labels.h). */
#include "labels.h"

#include <mlir-c/BuiltinAttributes.h>

#include <stdio.h>
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/status.h"
#include "../../common/strbuf.h"


typedef struct collect {
  strbuf_t sb;
  int full; /* the label reached TC_LABEL_MAX */
} collect_t;

/* Whether `name` already is one of the ", "-separated entries. */
static int listed(const collect_t *c, const char *name, size_t n) {
  const char *s = c->sb.data;
  for (size_t at = 0; s && at < c->sb.length;) {
    const char *end = strstr(s + at, ", ");
    size_t len = end ? (size_t)(end - (s + at)) : c->sb.length - at;
    if (len == n && memcmp(s + at, name, n) == 0) return 1;
    at += len + 2;
  }
  return 0;
}

static void add_name(collect_t *c, const char *name, size_t n) {
  if (!n || c->full || listed(c, name, n)) return;
  if (c->sb.length + n + 2 > TC_LABEL_MAX - 5) {
    strbuf_append(&c->sb, c->sb.length ? ", ..." : "...");
    c->full = 1;
    return;
  }
  if (c->sb.length) strbuf_append(&c->sb, ", ");
  strbuf_printf(&c->sb, "%.*s", (int)n, name);
}

static void add_loc(collect_t *c, MlirLocation loc) {
  if (mlirLocationIsAName(loc)) {
    MlirStringRef s = mlirIdentifierStr(mlirLocationNameGetName(loc));
    add_name(c, s.data, s.length);
  } else if (mlirLocationIsAFused(loc)) {
    unsigned n = mlirLocationFusedGetNumLocations(loc);
    MlirLocation parts[n ? n : 1];
    mlirLocationFusedGetLocations(loc, parts);
    for (unsigned i = 0; i < n; ++i) add_loc(c, parts[i]);
  } else if (mlirLocationIsACallSite(loc)) {
    add_loc(c, mlirLocationCallSiteGetCallee(loc));
  } else if (mlirLocationIsAFileLineColRange(loc)) {
    MlirStringRef f = mlirIdentifierStr(mlirLocationFileLineColRangeGetFilename(loc));
    char at[300];
    int n = snprintf(at, sizeof at, "%.*s:%d", (int)(f.length > 256 ? 256 : f.length), f.data,
                     mlirLocationFileLineColRangeGetStartLine(loc));
    add_name(c, at, (size_t)n);
  }
}

/* A microkernel call also names its kernel ("kernel conv_s8"), so that
 * tinyml-run --info and profiles show which steps run on the hand-written
 * kernels and which on generated code. */
static void add_kernel(collect_t *c, MlirOperation op) {
  MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(op));
  if (n.length != 9 || memcmp(n.data, "tinyml.uk", 9) != 0) return;
  MlirAttribute k = mlirOperationGetAttributeByName(op, mlirStringRefCreateFromCString("kind"));
  if (mlirAttributeIsNull(k) || !mlirAttributeIsAString(k)) return;
  MlirStringRef s = mlirStringAttrGetValue(k);
  char name[80];
  int len = snprintf(name, sizeof name, "kernel %.*s", (int)(s.length > 64 ? 64 : s.length), s.data);
  add_name(c, name, (size_t)len);
}

static MlirWalkResult visit(MlirOperation op, void *user) {
  add_loc(user, mlirOperationGetLocation(op));
  add_kernel(user, op);
  return MlirWalkResultAdvance;
}

/* The dispatch number of a func.func named "d<N>", or -1. */
static long dispatch_number(MlirOperation op) {
  MlirAttribute name = mlirOperationGetAttributeByName(op, mlirStringRefCreateFromCString("sym_name"));
  if (mlirAttributeIsNull(name) || !mlirAttributeIsAString(name)) return -1;
  MlirStringRef s = mlirStringAttrGetValue(name);
  if (s.length < 2 || s.length > 10 || s.data[0] != 'd') return -1;
  long d = 0;
  for (size_t i = 1; i < s.length; ++i) {
    if (s.data[i] < '0' || s.data[i] > '9') return -1;
    d = d * 10 + (s.data[i] - '0');
  }
  return d;
}

tinyml_status_t tc_label_dispatches(tc_graph_t *g, const tinyml_allocator_t *a) {
  MlirBlock body = mlirModuleGetBody(g->dispatch_module);
  for (MlirOperation op = mlirBlockGetFirstOperation(body); !mlirOperationIsNull(op);
       op = mlirOperationGetNextInBlock(op)) {
    long d = dispatch_number(op);
    if (d < 0 || (unsigned long)d >= g->dispatch_count || g->dispatches[d].label) continue;
    collect_t c = {.full = 0};
    strbuf_init(&c.sb, a);
    mlirOperationWalk(op, visit, &c, MlirWalkPreOrder);
    strbuf_append(&c.sb, "");
    g->dispatches[d].label = strbuf_take(&c.sb, NULL);
    if (!g->dispatches[d].label)
      return tinyml__status_make(a, TINYML_STATUS_OUT_OF_MEMORY, "compiler: out of memory");
  }
  return TINYML_OK;
}
