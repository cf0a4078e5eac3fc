#ifndef CMAMKITQUEUES_H
#define CMAMKITQUEUES_H

// Queued work keeps the identity of the code that queued it: this target defines libdispatch's
// block entry points in the app's own executable, so every call to them (the app's, Swift's
// Dispatch overlay's, Foundation's OperationQueue's) comes here first; each wraps the block in
// one that runs under the caller's identity and passes it on to libdispatch. MAMKit supplies
// the identity through the hooks below (QueuedIdentity.swift).

#include <stdint.h>

/// The caller's identity as an owned reference, or NULL when it has none (nothing is wrapped).
typedef void *_Nullable (*mam_identity_capture)(void);
/// Runs `mam_queue_continue(call)` with `identity` in effect.
typedef void (*mam_identity_run)(void *_Nonnull identity, void *_Nonnull call);
typedef void (*mam_identity_retain)(void *_Nonnull identity);
typedef void (*mam_identity_release)(void *_Nonnull identity);

/// Turns the wrapping on (once; later calls are ignored). Until then every entry point passes
/// straight through.
void mam_queue_identity_install(mam_identity_capture _Nonnull capture, mam_identity_run _Nonnull run,
                                mam_identity_retain _Nonnull retain, mam_identity_release _Nonnull release);

/// Runs the queued block of `call`; only from inside `mam_identity_run`.
void mam_queue_continue(void *_Nonnull call);

/// 1 when this executable's dispatch entry points are the ones its libraries call (the symbols
/// are exported and bound here before libdispatch's), 0 when they were bypassed.
int mam_queue_interposed(void);

// For the benchmark (mamkitbench --queues): the same dispatch_async through the wrapping, as
// the app's libraries call it, and past it, libdispatch's own: the floor it is measured against.
// (A block where the compiler has them, as Swift's importer does; a plain pointer otherwise.)
#if __has_extension(blocks)
typedef void (^mam_queue_block)(void);
#else
typedef void *mam_queue_block;
#endif
void *_Nonnull mam_queue_serial(const char *_Nonnull label);
void mam_queue_async(void *_Nonnull queue, mam_queue_block _Nonnull block);
void mam_queue_real_async(void *_Nonnull queue, mam_queue_block _Nonnull block);

#endif
