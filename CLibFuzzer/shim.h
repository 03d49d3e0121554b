// libFuzzer's driver, for `monsoon-fuzz` (Sources/monsoon-fuzz). Only declared here: the
// definition comes from the toolchain's libclang_rt.fuzzer, linked by `-sanitize=fuzzer`
// in `make fuzz`, and only that build (`-D FUZZING`) calls it.
#ifndef MONSOON_CLIBFUZZER_SHIM_H
#define MONSOON_CLIBFUZZER_SHIM_H

#include <stddef.h>
#include <stdint.h>

/// Runs libFuzzer as its own `main` would: parses libFuzzer's flags from `argv`, then
/// fuzzes (or replays, merges …) with `callback` as the fuzz target. Returns the exit status.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
