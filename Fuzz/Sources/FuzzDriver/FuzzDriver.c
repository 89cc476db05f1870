#include "FuzzDriver.h"

// libFuzzer's entry for programs with a main of their own (linked by -sanitize=fuzzer).
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*test)(const uint8_t *data, size_t size));

int hearth_fuzz_main(int argc, char **argv, int (*test)(const uint8_t *data, size_t size)) {
    return LLVMFuzzerRunDriver(&argc, &argv, test);
}
