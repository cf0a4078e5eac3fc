#define _GNU_SOURCE
#include "CMAMKitQueues.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

// seed 000 and seed 002, "Thread identity": a block handed to Grand Central Dispatch runs with
// the identity of the thread that handed it over, and an operation with the identity of the
// thread that added it. On Linux libdispatch is a shared library and the app an executable
// linked with it, so the app can carry that itself: a function the executable defines under
// libdispatch's name is the one every library's call binds to (the linker exports it because
// libswiftDispatch and Foundation import it), and the real one is found past it with
// dlsym(RTLD_NEXT). No dispatch header is included: these definitions are the prototypes.
//
// Only the block entry points are taken. Swift's Dispatch overlay and Foundation call those; the
// function-pointer forms (`dispatch_async_f`, `dispatch_after_f`, ...) are what the Swift
// concurrency runtime enqueues its jobs with, and a task carries its identity as a task-local
// value already. OperationQueue makes each operation's DispatchWorkItem (dispatch_block_create)
// on the thread that adds it and may dispatch it later from another: the identity wrapped into
// the work item at creation is the inner one, so it wins.

// The blocks runtime's ABI (the clang "Block Implementation Specification"): a block is a header
// whose `invoke` takes the block itself first; a block with captured references has copy and
// dispose helpers, called by _Block_copy and the last _Block_release.
extern void *_NSConcreteStackBlock[];
void *_Block_copy(const void *block);
void _Block_release(const void *block);
enum { block_has_copy_dispose = 1 << 25 };

// Handlers take at most three arguments, each an integer or a pointer (a dispatch_data_t, an
// error number, a `done` flag, an index), which both supported ABIs pass in registers: one
// invoke with three such arguments forwards any of them unchanged, and a handler ignores what it
// does not take. Other architectures build without the wrapping (mam_queue_interposed says 0).
typedef void (*block_invoke)(void *block, uintptr_t a, uintptr_t b, uintptr_t c);
struct block_header { void *isa; int flags; int reserved; block_invoke invoke; };
struct block_descriptor { unsigned long reserved, size; void (*copy)(void *, const void *); void (*dispose)(const void *); };
struct carrying_block { struct block_header header; const struct block_descriptor *descriptor; void *inner; void *identity; };
struct queued_call { void *inner; uintptr_t a, b, c; };

struct hooks { mam_identity_capture capture; mam_identity_run run; mam_identity_retain retain; mam_identity_release release; };
static struct hooks hook_storage;
static _Atomic(const struct hooks *) installed;

void mam_queue_identity_install(mam_identity_capture capture, mam_identity_run run, mam_identity_retain retain,
                                mam_identity_release release) {
    static atomic_flag once = ATOMIC_FLAG_INIT;
    if (atomic_flag_test_and_set(&once)) return;
    hook_storage = (struct hooks){ capture, run, retain, release };
    atomic_store_explicit(&installed, &hook_storage, memory_order_release);
}

void mam_queue_continue(void *call) {
    const struct queued_call *q = call;
    const struct block_header *inner = q->inner;
    inner->invoke(q->inner, q->a, q->b, q->c);
}

#if defined(__x86_64__) || defined(__aarch64__)

static void carrying_invoke(void *self, uintptr_t a, uintptr_t b, uintptr_t c) {
    const struct carrying_block *k = self;
    struct queued_call call = { k->inner, a, b, c };
    hook_storage.run(k->identity, &call);
}

static void carrying_copy(void *to, const void *from) {
    struct carrying_block *d = to;
    const struct carrying_block *s = from;
    d->inner = _Block_copy(s->inner);
    hook_storage.retain(s->identity);
    d->identity = s->identity;
}

static void carrying_dispose(const void *block) {
    const struct carrying_block *k = block;
    _Block_release(k->inner);
    hook_storage.release(k->identity);
}

static const struct block_descriptor carrying_descriptor = {
    0, sizeof(struct carrying_block), carrying_copy, carrying_dispose,
};

// The caller's identity, owned; NULL when there is none or nothing is installed yet.
static void *caller_identity(const void *block) {
    const struct hooks *h = atomic_load_explicit(&installed, memory_order_acquire);
    return h && block ? h->capture() : NULL;
}

static struct carrying_block on_stack(const void *block, void *identity) {
    return (struct carrying_block){ { _NSConcreteStackBlock, block_has_copy_dispose, 0, carrying_invoke },
                                    &carrying_descriptor, (void *)block, identity };
}

static void nothing(void *block, uintptr_t a, uintptr_t b, uintptr_t c) { (void)block; (void)a; (void)b; (void)c; }
static const struct block_descriptor plain_descriptor = { 0, sizeof(struct block_header), NULL, NULL };
enum { block_is_global = 1 << 28 };
extern void *_NSConcreteGlobalBlock[];
static void *real_block_create(unsigned long flags, const void *block);

// A work item (a block made by dispatch_block_create) already runs under its maker's identity,
// and libdispatch knows it by its invoke function: its flags (a barrier, a QoS) and its
// cancellation hold only when it reaches the queue as it is, so it is never wrapped again.
static int is_work_item(const void *block) {
    static _Atomic(block_invoke) special;
    block_invoke known = atomic_load_explicit(&special, memory_order_acquire);
    if (!known) {
        static const struct { struct block_header header; const struct block_descriptor *descriptor; } sample = {
            { _NSConcreteGlobalBlock, block_is_global, 0, nothing }, &plain_descriptor };
        const struct block_header *item = real_block_create(0, &sample);
        known = item->invoke;
        _Block_release(item);
        atomic_store_explicit(&special, known, memory_order_release);
    }
    return ((const struct block_header *)block)->invoke == known;
}

// A block the queue keeps: copied to the heap (which retains the block and the identity),
// owned by the caller, who releases it once libdispatch has taken its own reference.
static void *kept(const void *block) {
    void *identity = caller_identity(block);
    if (identity && is_work_item(block)) { hook_storage.release(identity); return NULL; }
    if (!identity) return NULL;
    struct carrying_block stack = on_stack(block, identity);
    void *heap = _Block_copy(&stack);
    hook_storage.release(identity);
    return heap;
}

// Each real entry point, found past this executable once.
#define REAL(name, type) \
    static type real_##name(void) { \
        static _Atomic(type) cached; \
        type f = atomic_load_explicit(&cached, memory_order_acquire); \
        if (!f) { \
            f = (type)dlsym(RTLD_NEXT, #name); \
            if (!f) { fprintf(stderr, "MAMKit: libdispatch has no %s\n", #name); abort(); } \
            atomic_store_explicit(&cached, f, memory_order_release); \
        } \
        return f; \
    }

// A queued block: the work wrapped (or passed as it is) into the real call.
#define KEPT(call_with) \
    do { \
        void *wrapped = kept(block); \
        const void *work = wrapped ? wrapped : block; \
        call_with; \
        if (wrapped) _Block_release(wrapped); \
    } while (0)

// A block libdispatch runs before the call returns (sync, apply): wrapped on the stack, no copy.
#define NOW(call_with) \
    do { \
        void *identity = caller_identity(block); \
        if (identity && is_work_item(block)) { hook_storage.release(identity); identity = NULL; } \
        if (!identity) { const void *work = block; call_with; break; } \
        struct carrying_block stack = on_stack(block, identity); \
        const void *work = &stack; \
        call_with; \
        hook_storage.release(identity); \
    } while (0)

typedef void (*queue_block_f)(void *, const void *);
typedef void (*after_f)(uint64_t, void *, const void *);
typedef void (*group_block_f)(void *, void *, const void *);
typedef void (*apply_f)(size_t, void *, const void *);
typedef void *(*block_create_f)(unsigned long, const void *);
typedef void *(*block_create_qos_f)(unsigned long, unsigned int, int, const void *);
typedef void (*block_notify_f)(const void *, void *, const void *);
typedef void (*source_handler_f)(void *, const void *);
typedef void (*read_f)(int, size_t, void *, const void *);
typedef void (*write_f)(int, void *, void *, const void *);
typedef void (*io_read_f)(void *, off_t, size_t, void *, const void *);
typedef void (*io_write_f)(void *, off_t, void *, void *, const void *);
typedef void (*io_barrier_f)(void *, const void *);
typedef void *(*io_create_f)(unsigned long, int, void *, const void *);
typedef void *(*io_create_path_f)(unsigned long, const char *, int, unsigned int, void *, const void *);
typedef void *(*io_create_io_f)(unsigned long, void *, void *, const void *);

REAL(dispatch_async, queue_block_f)
REAL(dispatch_barrier_async, queue_block_f)
REAL(dispatch_sync, queue_block_f)
REAL(dispatch_barrier_sync, queue_block_f)
REAL(dispatch_after, after_f)
REAL(dispatch_group_async, group_block_f)
REAL(dispatch_group_notify, group_block_f)
REAL(dispatch_apply, apply_f)
REAL(dispatch_block_create, block_create_f)
REAL(dispatch_block_create_with_qos_class, block_create_qos_f)
REAL(dispatch_block_notify, block_notify_f)
REAL(dispatch_source_set_event_handler, source_handler_f)
REAL(dispatch_source_set_cancel_handler, source_handler_f)
REAL(dispatch_source_set_registration_handler, source_handler_f)
REAL(dispatch_read, read_f)
REAL(dispatch_write, write_f)
REAL(dispatch_io_read, io_read_f)
REAL(dispatch_io_write, io_write_f)
REAL(dispatch_io_barrier, io_barrier_f)
REAL(dispatch_io_create, io_create_f)
REAL(dispatch_io_create_with_path, io_create_path_f)
REAL(dispatch_io_create_with_io, io_create_io_f)

static void *real_block_create(unsigned long flags, const void *block) { return real_dispatch_block_create()(flags, block); }

void dispatch_async(void *queue, const void *block) { KEPT(real_dispatch_async()(queue, work)); }
void dispatch_barrier_async(void *queue, const void *block) { KEPT(real_dispatch_barrier_async()(queue, work)); }
void dispatch_after(uint64_t when, void *queue, const void *block) { KEPT(real_dispatch_after()(when, queue, work)); }
void dispatch_group_async(void *group, void *queue, const void *block) { KEPT(real_dispatch_group_async()(group, queue, work)); }
void dispatch_group_notify(void *group, void *queue, const void *block) { KEPT(real_dispatch_group_notify()(group, queue, work)); }
void dispatch_sync(void *queue, const void *block) { NOW(real_dispatch_sync()(queue, work)); }
void dispatch_barrier_sync(void *queue, const void *block) { NOW(real_dispatch_barrier_sync()(queue, work)); }
void dispatch_apply(size_t iterations, void *queue, const void *block) { NOW(real_dispatch_apply()(iterations, queue, work)); }

// A work item (Swift's DispatchWorkItem, each OperationQueue operation) keeps the identity of
// the code that made it, wherever it is performed.
void *dispatch_block_create(unsigned long flags, const void *block) {
    void *made = NULL;
    KEPT(made = real_dispatch_block_create()(flags, work));
    return made;
}
void *dispatch_block_create_with_qos_class(unsigned long flags, unsigned int qos, int relative, const void *block) {
    void *made = NULL;
    KEPT(made = real_dispatch_block_create_with_qos_class()(flags, qos, relative, work));
    return made;
}
void dispatch_block_notify(const void *item, void *queue, const void *block) { KEPT(real_dispatch_block_notify()(item, queue, work)); }

// A source's handlers keep the identity of the code that set them.
void dispatch_source_set_event_handler(void *source, const void *block) { KEPT(real_dispatch_source_set_event_handler()(source, work)); }
void dispatch_source_set_cancel_handler(void *source, const void *block) { KEPT(real_dispatch_source_set_cancel_handler()(source, work)); }
void dispatch_source_set_registration_handler(void *source, const void *block) {
    KEPT(real_dispatch_source_set_registration_handler()(source, work));
}

// I/O handlers keep the identity of the code that asked for the I/O.
void dispatch_read(int fd, size_t length, void *queue, const void *block) { KEPT(real_dispatch_read()(fd, length, queue, work)); }
void dispatch_write(int fd, void *data, void *queue, const void *block) { KEPT(real_dispatch_write()(fd, data, queue, work)); }
void dispatch_io_read(void *channel, off_t offset, size_t length, void *queue, const void *block) {
    KEPT(real_dispatch_io_read()(channel, offset, length, queue, work));
}
void dispatch_io_write(void *channel, off_t offset, void *data, void *queue, const void *block) {
    KEPT(real_dispatch_io_write()(channel, offset, data, queue, work));
}
void dispatch_io_barrier(void *channel, const void *block) { KEPT(real_dispatch_io_barrier()(channel, work)); }
void *dispatch_io_create(unsigned long type, int fd, void *queue, const void *block) {
    void *made = NULL;
    KEPT(made = real_dispatch_io_create()(type, fd, queue, work));
    return made;
}
void *dispatch_io_create_with_path(unsigned long type, const char *path, int flags, unsigned int mode, void *queue, const void *block) {
    void *made = NULL;
    KEPT(made = real_dispatch_io_create_with_path()(type, path, flags, mode, queue, work));
    return made;
}
void *dispatch_io_create_with_io(unsigned long type, void *io, void *queue, const void *block) {
    void *made = NULL;
    KEPT(made = real_dispatch_io_create_with_io()(type, io, queue, work));
    return made;
}

int mam_queue_interposed(void) {
    return dlsym(RTLD_DEFAULT, "dispatch_async") == (void *)dispatch_async
        && dlsym(RTLD_DEFAULT, "dispatch_block_create") == (void *)dispatch_block_create;
}

void mam_queue_real_async(void *queue, mam_queue_block block) { real_dispatch_async()(queue, (const void *)block); }

#else

int mam_queue_interposed(void) { return 0; }

void mam_queue_real_async(void *queue, mam_queue_block block) {
    ((void (*)(void *, const void *))dlsym(RTLD_DEFAULT, "dispatch_async"))(queue, (const void *)block);
}

#endif

// Bound the way a library's call is: by name, to whichever definition comes first.
void mam_queue_async(void *queue, mam_queue_block block) {
    static void (*bound)(void *, const void *);
    if (!bound) bound = (void (*)(void *, const void *))dlsym(RTLD_DEFAULT, "dispatch_async");
    bound(queue, (const void *)block);
}

void *mam_queue_serial(const char *label) {
    void *(*create)(const char *, void *) = (void *(*)(const char *, void *))dlsym(RTLD_DEFAULT, "dispatch_queue_create");
    return create(label, NULL);
}
