/* A mapped file cut short while it is read, caught instead of ending the process.
 *
 * A reader that maps a file (profconv.parse.file_windows.Mapped, the ncu raw page's reader) reads its
 * pages as memory. Where another program truncates the file meanwhile (a profiler run again with its
 * output sent to the same file: the shell empties it first), a read of a page past the new end raises
 * SIGBUS, and the process ends ("Bus error"), as any mapped reader's does (pyarrow's memory_map,
 * ripgrep's --mmap).
 *
 * guard(mapping) registers the mapping's pages (any object whose buffer is the mapping: an mmap) and,
 * while one is registered, puts a SIGBUS handler in place: a fault in a registered mapping has the rest
 * of that mapping, from the faulting page on, replaced by zero pages (anonymous, read-only), counted,
 * and the read goes on over zeros; a fault anywhere else goes to the handler that was there before
 * (Python's faulthandler where it is on), or ends the process as it would have. unguard(token) takes
 * the mapping off and gives how many such faults it had: the reader then says that the file changed
 * while it was read (profconv.errors.InputChanged) instead of giving rows read from zeros.
 *
 * On a platform without POSIX signals and mmap, guard gives -1 (nothing guarded) and unguard 0.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#if defined(__unix__) || defined(__APPLE__)
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>
#define MAPGUARD_SIGNALS 1
#else
#define MAPGUARD_SIGNALS 0
#endif

#define SLOTS 16

#if MAPGUARD_SIGNALS
typedef struct {
    volatile uintptr_t lo, hi;   /* the mapping's pages: [lo, hi) */
    volatile sig_atomic_t faults; /* faults caught in it */
    volatile sig_atomic_t used;   /* set last when a slot is filled, cleared first when it is let go */
} slot_t;

static slot_t slots[SLOTS];
static int in_use = 0;          /* slots used: the handler is in place while above 0 */
static uintptr_t page = 4096;   /* the page size (sysconf at import: not called in the handler) */
static struct sigaction before; /* SIGBUS's action before ours */

static void on_bus(int sig, siginfo_t *info, void *ctx) {
    uintptr_t at = (uintptr_t)info->si_addr;
    for (int k = 0; k < SLOTS; k++) {
        if (!slots[k].used || at < slots[k].lo || at >= slots[k].hi)
            continue;
        uintptr_t from = at - at % page;
        void *got = mmap((void *)from, (size_t)(slots[k].hi - from), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                         -1, 0);
        if (got != MAP_FAILED) {
            slots[k].faults++;
            return; /* the read is done again, over zeros */
        }
        break;
    }
    /* not a guarded mapping's page (or it could not be replaced): what was there before ours */
    if ((before.sa_flags & SA_SIGINFO) && before.sa_sigaction != NULL) {
        before.sa_sigaction(sig, info, ctx);
        return;
    }
    if (!(before.sa_flags & SA_SIGINFO) && before.sa_handler != SIG_DFL && before.sa_handler != SIG_IGN) {
        before.sa_handler(sig);
        return;
    }
    /* the default: put back, the read faults again and the process ends as it would have without us */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGBUS, &dfl, NULL);
}

static int handler_on(void) {
    struct sigaction ours;
    memset(&ours, 0, sizeof ours);
    ours.sa_sigaction = on_bus;
    ours.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
    sigemptyset(&ours.sa_mask);
    return sigaction(SIGBUS, &ours, &before);
}

static void handler_off(void) {
    struct sigaction now;
    if (sigaction(SIGBUS, NULL, &now) == 0 && (now.sa_flags & SA_SIGINFO) && now.sa_sigaction == on_bus)
        sigaction(SIGBUS, &before, NULL); /* (only where ours is still the one: another set since is kept) */
}
#endif

/* guard(mapping) -> token: the mapping's pages registered (a buffer of one byte or more), -1 where
 * nothing is guarded (no free slot, no signals here, the handler refused) */
static PyObject *guard(PyObject *Py_UNUSED(self), PyObject *obj) {
    Py_buffer b;
    if (PyObject_GetBuffer(obj, &b, PyBUF_SIMPLE) < 0)
        return NULL;
    uintptr_t lo = (uintptr_t)b.buf;
    Py_ssize_t n = b.len;
    PyBuffer_Release(&b);
#if MAPGUARD_SIGNALS
    if (n <= 0 || lo % page != 0)
        return PyLong_FromLong(-1);
    for (int k = 0; k < SLOTS; k++) {
        if (slots[k].used)
            continue;
        if (in_use == 0 && handler_on() != 0)
            return PyLong_FromLong(-1);
        slots[k].lo = lo;
        slots[k].hi = lo + ((uintptr_t)n + page - 1) / page * page;
        slots[k].faults = 0;
        slots[k].used = 1;
        in_use++;
        return PyLong_FromLong(k);
    }
#else
    (void)lo, (void)n;
#endif
    return PyLong_FromLong(-1);
}

/* unguard(token) -> faults: the slot let go (the handler taken off with the last one); the faults
 * caught in its mapping (0 for token -1) */
static PyObject *unguard(PyObject *Py_UNUSED(self), PyObject *arg) {
    long k = PyLong_AsLong(arg);
    if (k == -1 && PyErr_Occurred())
        return NULL;
    if (k == -1)
        return PyLong_FromLong(0);
#if MAPGUARD_SIGNALS
    if (k < 0 || k >= SLOTS || !slots[k].used) {
        PyErr_SetString(PyExc_ValueError, "unguard: not a token guard gave");
        return NULL;
    }
    slots[k].used = 0;
    long faults = (long)slots[k].faults;
    if (--in_use == 0)
        handler_off();
    return PyLong_FromLong(faults);
#else
    PyErr_SetString(PyExc_ValueError, "unguard: not a token guard gave");
    return NULL;
#endif
}

static PyMethodDef methods[] = {
    {"guard", guard, METH_O, "guard(mapping) -> token: its pages registered (a SIGBUS there replaced by zeros)"},
    {"unguard", unguard, METH_O, "unguard(token) -> faults: the mapping let go; the faults caught in it"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_mapguard",
                                    "A mapped file cut short while it is read, caught (SIGBUS).", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__mapguard(void) {
#if MAPGUARD_SIGNALS
    long p = sysconf(_SC_PAGESIZE);
    if (p > 0)
        page = (uintptr_t)p;
#endif
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddIntConstant(m, "SIGNALS", MAPGUARD_SIGNALS) < 0)
        Py_CLEAR(m);
    return m;
}
