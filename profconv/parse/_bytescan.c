/* profconv.parse._bytescan: the one pass of profconv.parse.bytescan over a table's rows, in C.
 *
 * rows(data, start, marks) walks the lines of `data` from offset `start` while each starts with a
 * digit ('0'-'9') and gives (end, newlines, counts, wide, control):
 *   end       the offset after the last such line (its newline included; len(data) where that line
 *             has none): the first line that does not start with a digit begins there;
 *   newlines  the newlines in data[start:end];
 *   counts    a tuple: how many times each byte of `marks` (each 0x20-0x7f) occurs in data[start:end];
 *   wide      how many bytes of data[start:end] are not ASCII (0x80 and above);
 *   control   how many are control characters (below 0x20) other than the newline.
 * Sixteen bytes at a time where the compiler has SSE2 (x86-64 always), else a byte at a time. The
 * pure-Python path (a regex, bytes.count and bytes.find) gives the same; tests/test_parse_bytescan.py
 * compares both.
 *
 * cells(data, start, end, ncells, whole) checks the lines of data[start:end] (each ending with a
 * newline) as rows of a plain summary table: ncells numbers, each followed by a comma, then a name.
 * It gives one status byte per line:
 *   1  not such a row: a cell that is not [0-9]+(\.[0-9]+)? ([0-9]{1,18} where bit j of `whole` is
 *      set for cell j), or a name that is empty, holds a comma or a quote, or is quoted other than
 *      as one "..." (no quote inside) that ends the line;
 *   2  a cell not in `whole` that reads as a decimal or a grouped number: [1-9][0-9]{0,2}\.[0-9]{3};
 *   4  a cell not in `whole` with a '.' that is not such a cell (then '.' is the decimal mark).
 * profconv.parse.dialects.nsys_batch has the same in Python (tests compare both).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define MAX_MARKS 16
#define CHUNK (1 << 15)

typedef struct {
    Py_ssize_t counts[MAX_MARKS], wide, control;
} tally_t;

static void tally_bytes(const unsigned char *p, Py_ssize_t a, Py_ssize_t e, const unsigned char *m, Py_ssize_t nm,
                        tally_t *t) {
    for (Py_ssize_t k = a; k < e; k++) {
        unsigned char c = p[k];
        if (c >= 0x80)
            t->wide++;
        else if (c < 0x20 && c != '\n')
            t->control++;
        for (Py_ssize_t j = 0; j < nm; j++)
            t->counts[j] += c == m[j];
    }
}

static int bits(unsigned v) {
    int k = 0;
    for (; v; v &= v - 1)
        k++;
    return k;
}

static void tally(const unsigned char *p, Py_ssize_t a, Py_ssize_t e, const unsigned char *m, Py_ssize_t nm,
                  tally_t *t) {
#if defined(__SSE2__) && defined(__x86_64__)
    const __m128i space = _mm_set1_epi8(0x20), newline = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();
    __m128i vm[MAX_MARKS], acc[MAX_MARKS];
    for (Py_ssize_t j = 0; j < nm; j++) {
        vm[j] = _mm_set1_epi8((char)m[j]);
        acc[j] = zero;
    }
    int steps = 0;
    for (; a + 16 <= e; a += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(p + a));
        /* signed: bytes 0x80-0xff are below 0x20 too */
        int low = _mm_movemask_epi8(_mm_andnot_si128(_mm_cmpeq_epi8(v, newline), _mm_cmplt_epi8(v, space)));
        if (low) {
            int wide = _mm_movemask_epi8(v);
            t->wide += bits((unsigned)wide);
            t->control += bits((unsigned)(low & ~wide));
        }
        for (Py_ssize_t j = 0; j < nm; j++) /* a match is -1 in its lane: subtracted, it counts up */
            acc[j] = _mm_sub_epi8(acc[j], _mm_cmpeq_epi8(v, vm[j]));
        if (++steps == 255 || a + 32 > e) { /* before a lane's count can pass 255 */
            for (Py_ssize_t j = 0; j < nm; j++) {
                __m128i sum = _mm_sad_epu8(acc[j], zero);
                t->counts[j] += _mm_cvtsi128_si64(sum) + _mm_cvtsi128_si64(_mm_unpackhi_epi64(sum, sum));
                acc[j] = zero;
            }
            steps = 0;
        }
    }
#endif
    tally_bytes(p, a, e, m, nm, t);
}

static PyObject *rows(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer buf, marks;
    Py_ssize_t start;
    if (!PyArg_ParseTuple(args, "y*ny*", &buf, &start, &marks))
        return NULL;
    const unsigned char *p = (const unsigned char *)buf.buf, *m = (const unsigned char *)marks.buf;
    Py_ssize_t n = buf.len, nm = marks.len, newlines = 0;
    for (Py_ssize_t j = 0; j < nm; j++)
        if (m[j] < 0x20 || m[j] >= 0x80 || nm > MAX_MARKS) {
            PyBuffer_Release(&buf);
            PyBuffer_Release(&marks);
            PyErr_SetString(PyExc_ValueError, "marks: at most 16 bytes, each 0x20-0x7f");
            return NULL;
        }
    tally_t t;
    memset(&t, 0, sizeof t);
    Py_ssize_t i = start < 0 ? 0 : start, done = i;
    Py_BEGIN_ALLOW_THREADS
    while (i < n && p[i] >= '0' && p[i] <= '9') {
        const unsigned char *nl = memchr(p + i, '\n', (size_t)(n - i));
        newlines += nl != NULL;
        i = nl ? (Py_ssize_t)(nl - p) + 1 : n;
        if (i - done >= CHUNK) { /* tallied while the rows just walked are in the cache */
            tally(p, done, i, m, nm, &t);
            done = i;
        }
    }
    tally(p, done, i, m, nm, &t);
    Py_END_ALLOW_THREADS
    PyObject *tuple = PyTuple_New(nm);
    for (Py_ssize_t j = 0; tuple != NULL && j < nm; j++) {
        PyObject *v = PyLong_FromSsize_t(t.counts[j]);
        if (v == NULL)
            Py_CLEAR(tuple);
        else
            PyTuple_SET_ITEM(tuple, j, v);
    }
    PyBuffer_Release(&buf);
    PyBuffer_Release(&marks);
    if (tuple == NULL)
        return NULL;
    return Py_BuildValue("nnNnn", i, newlines, tuple, t.wide, t.control);
}

/* the status byte of one row p[0:n] (its newline not included): see cells() above */
static unsigned char row_status(const unsigned char *p, Py_ssize_t n, Py_ssize_t ncells, unsigned long long whole) {
    Py_ssize_t i = 0;
    unsigned char status = 0;
    for (Py_ssize_t j = 0; j < ncells; j++) {
        Py_ssize_t a = i, d1, d2 = 0;
        while (i < n && p[i] >= '0' && p[i] <= '9')
            i++;
        d1 = i - a;
        int dot = i < n && p[i] == '.';
        if (dot) {
            Py_ssize_t b = ++i;
            while (i < n && p[i] >= '0' && p[i] <= '9')
                i++;
            d2 = i - b;
        }
        if (d1 == 0 || (dot && d2 == 0) || i >= n || p[i] != ',')
            return 1;
        if ((whole >> j) & 1ULL) {
            if (dot || d1 > 18)
                return 1;
        } else if (dot) {
            status |= (d1 <= 3 && p[a] != '0' && d2 == 3) ? 2 : 4;
        }
        i++; /* the comma */
    }
    const unsigned char *name = p + i;
    Py_ssize_t m = n - i;
    if (m == 0)
        return 1;
    if (name[0] == '"') {
        if (m < 3 || name[m - 1] != '"' || memchr(name + 1, '"', (size_t)(m - 2)) != NULL)
            return 1;
    } else if (memchr(name, '"', (size_t)m) != NULL || memchr(name, ',', (size_t)m) != NULL) {
        return 1;
    }
    return status;
}

static PyObject *cells(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer buf;
    Py_ssize_t start, end, ncells;
    unsigned long long whole;
    if (!PyArg_ParseTuple(args, "y*nnnK", &buf, &start, &end, &ncells, &whole))
        return NULL;
    const unsigned char *p = (const unsigned char *)buf.buf;
    if (start < 0 || end > buf.len || start > end || ncells < 0 || ncells > 64 || (end > start && p[end - 1] != '\n')) {
        PyBuffer_Release(&buf);
        PyErr_SetString(PyExc_ValueError, "cells: 0 <= start <= end <= len(data), data[end-1] a newline, ncells <= 64");
        return NULL;
    }
    Py_ssize_t lines = 0;
    for (const unsigned char *q = p + start; (q = memchr(q, '\n', (size_t)(p + end - q))) != NULL; q++)
        lines++;
    PyObject *out = PyBytes_FromStringAndSize(NULL, lines);
    if (out == NULL) {
        PyBuffer_Release(&buf);
        return NULL;
    }
    unsigned char *o = (unsigned char *)PyBytes_AS_STRING(out);
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t i = start;
    for (Py_ssize_t k = 0; k < lines; k++) {
        const unsigned char *nl = memchr(p + i, '\n', (size_t)(end - i));
        Py_ssize_t e = (Py_ssize_t)(nl - p);
        o[k] = row_status(p + i, e - i, ncells, whole);
        i = e + 1;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&buf);
    return out;
}

static PyMethodDef methods[] = {
    {"rows", rows, METH_VARARGS,
     "rows(data, start, marks) -> (end, newlines, counts of each mark byte, non-ASCII bytes, control bytes) "
     "of the lines from start that start with a digit"},
    {"cells", cells, METH_VARARGS,
     "cells(data, start, end, ncells, whole) -> one status byte per line of data[start:end] as a row of a "
     "plain summary table (1: not one, 2: an undecided cell, 4: a decimal cell)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_bytescan", "profconv.parse.bytescan's passes over a table's rows.", -1, methods,
};

PyMODINIT_FUNC PyInit__bytescan(void) { return PyModule_Create(&module); }
