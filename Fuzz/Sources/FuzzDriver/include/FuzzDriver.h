#ifndef HEARTH_FUZZ_DRIVER_H
#define HEARTH_FUZZ_DRIVER_H

#include <stddef.h>
#include <stdint.h>

/// Runs libFuzzer's driver (its command-line options, corpus and crash handling) with `test`
/// as the target: libFuzzer's own `main` cannot be used, because SwiftPM links every
/// executable's `main` to the Swift module's entry point.
int hearth_fuzz_main(int argc, char **argv, int (*test)(const uint8_t *data, size_t size));

#endif
