#include "list.h"

#include <string.h>

int tinyml__list_has_n(const char *list, size_t n, const char *item, size_t k) {
  for (size_t i = 0; list && i < n;) {
    size_t len = 0;
    while (i + len < n && list[i + len] != ',') ++len;
    if (len == k && memcmp(list + i, item, k) == 0) return 1;
    i += len + 1;
  }
  return 0;
}

int tinyml__list_has(const char *list, const char *item) {
  return list && tinyml__list_has_n(list, strlen(list), item, strlen(item));
}

int tinyml__list_has_all(const char *list, const char *required) {
  const size_t n = list ? strlen(list) : 0;
  for (const char *s = required; s && *s;) {
    size_t len = strcspn(s, ",");
    if (!tinyml__list_has_n(list, n, s, len)) return 0;
    s += len + (s[len] == ',');
  }
  return 1;
}
