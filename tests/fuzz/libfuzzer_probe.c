/* Configure-time probe: does clang-22 link a libFuzzer target with ASan and
 * UBSan here?  (libFuzzer ships in libclang-rt-22-dev on Debian.) */
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return size > 0 && data[0] == 0;
}
