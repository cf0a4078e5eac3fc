// libFuzzer's driver, called from a fuzz target's own main (Fuzz/Support/FuzzTarget.swift):
// SwiftPM links an executable's `main` to the target's entry point, so libFuzzer's `main`
// cannot be the program's. Only a fuzz build (scripts/fuzz) links libFuzzer and calls this;
// the normal build sees the declaration alone.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*test_one_input)(const uint8_t *data, size_t size));
