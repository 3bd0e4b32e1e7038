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
 * One pass of sixteen bytes at a time where the compiler has SSE2 (x86-64 always; 32 where the CPU has
 * AVX2: avx2(on) turns that off and on), else a byte at a time. The
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
 *
 * trace(data, start, name_col) reads the lines of `data` from offset `start` as the rows of an nvprof
 * --print-gpu-trace / --print-api-trace table that profconv.parse.dialects.nvprof.trace's bulk reader
 * reads: ' *' then a time, ' +', a time, ' ' (a time: [0-9]{1,15}(\.[0-9]{1,12})? glued to ms, us, ns
 * or s), the name starting at column name_col after a blank; every byte ASCII and no control
 * character, no '&' or '\\', no "<br", "<BR", "<pre", "<PRE" and no '/' before a '*' (what the text's
 * normalization would rewrite). It stops at the first line that is not such a row (or has no newline) and gives
 * (end, rows, starts, durations, names, bases): the offset where that line begins, the rows read,
 * their times in ns (bytes of doubles: float(digits + the unit's exponent), correctly rounded as
 * Python's float() rounds), their names (the text from name_col, blanks at the end removed) and
 * (codes, distinct base names): each name's base (its [correlation id] left out, as
 * profconv.parse.names.strip_correlation does) numbered in order of first appearance, as
 * profconv.parse.traces.base_codes numbers them (codes: bytes of int64) -- None where a name ends
 * with "])" or is a correlation id alone (base_codes decides those).
 * profconv.parse.dialects.nvprof.trace_bytes uses it; without it the text path reads the rows.
 *
 * find(data, needle, start, end) is data.find(needle, start, end) for start >= 0 on any buffer, by
 * the C library's memmem where it has one (3-6 times faster than bytes.find on long inputs).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdio.h>
#include <string.h>

#include "_bytestable.h"

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

#if defined(__x86_64__)
/* The SIMD walks' last bytes (fewer than a vector) one by one, from k inside a row: where the rows end
 * (the line after a newline does not start with a digit), every byte from k before it tallied. */
static Py_ssize_t rows_rest(const unsigned char *p, Py_ssize_t k, Py_ssize_t n, const unsigned char *m,
                            Py_ssize_t nm, tally_t *t, Py_ssize_t *newlines) {
    for (Py_ssize_t i = k; i < n; i++) {
        if (p[i] != '\n')
            continue;
        ++*newlines;
        if (i + 1 >= n || p[i + 1] < '0' || p[i + 1] > '9') {
            tally_bytes(p, k, i + 1, m, nm, t);
            return i + 1;
        }
    }
    tally_bytes(p, k, n, m, nm, t);
    return n;
}
#endif

#if defined(__SSE2__) && defined(__x86_64__)
/* rows()'s walk and tally in one pass, sixteen bytes at a time: each newline's next byte looked at
 * (the rows end at the first line that does not start with a digit), every byte before that end
 * tallied as tally() does. The end (p[start] is a digit, start < n); *newlines counted. */
static Py_ssize_t rows_sse2(const unsigned char *p, Py_ssize_t start, Py_ssize_t n, const unsigned char *m,
                            Py_ssize_t nm, tally_t *t, Py_ssize_t *newlines) {
    const __m128i space = _mm_set1_epi8(0x20), newline = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();
    __m128i vm[MAX_MARKS], acc[MAX_MARKS];
    for (Py_ssize_t j = 0; j < nm; j++) {
        vm[j] = _mm_set1_epi8((char)m[j]);
        acc[j] = zero;
    }
    Py_ssize_t k = start, e = -1;
    int steps = 0;
    for (; k + 16 <= n && e < 0; k += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(p + k));
        __m128i nl = _mm_cmpeq_epi8(v, newline);
        for (unsigned bits = (unsigned)_mm_movemask_epi8(nl); bits; bits &= bits - 1) {
            Py_ssize_t q = k + __builtin_ctz(bits);
            ++*newlines;
            if (q + 1 >= n || p[q + 1] < '0' || p[q + 1] > '9') {
                e = q + 1;
                break;
            }
        }
        if (e >= 0 && e < k + 16) { /* the rows end inside this block: its bytes before e one by one */
            tally_bytes(p, k, e, m, nm, t);
            break;
        }
        /* signed: bytes 0x80-0xff are below 0x20 too */
        int low = _mm_movemask_epi8(_mm_andnot_si128(nl, _mm_cmplt_epi8(v, space)));
        if (low) {
            int wide = _mm_movemask_epi8(v);
            t->wide += bits((unsigned)wide);
            t->control += bits((unsigned)(low & ~wide));
        }
        for (Py_ssize_t j = 0; j < nm; j++) /* a match is -1 in its lane: subtracted, it counts up */
            acc[j] = _mm_sub_epi8(acc[j], _mm_cmpeq_epi8(v, vm[j]));
        if (++steps == 255) { /* before a lane's count can pass 255 */
            for (Py_ssize_t j = 0; j < nm; j++) {
                __m128i sum = _mm_sad_epu8(acc[j], zero);
                t->counts[j] += _mm_cvtsi128_si64(sum) + _mm_cvtsi128_si64(_mm_unpackhi_epi64(sum, sum));
                acc[j] = zero;
            }
            steps = 0;
        }
    }
    for (Py_ssize_t j = 0; j < nm; j++) {
        __m128i sum = _mm_sad_epu8(acc[j], zero);
        t->counts[j] += _mm_cvtsi128_si64(sum) + _mm_cvtsi128_si64(_mm_unpackhi_epi64(sum, sum));
    }
    return e >= 0 ? e : rows_rest(p, k, n, m, nm, t, newlines);
}
#endif

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_AVX2_TWIN 1
static int use_avx2 = 0; /* set at import where the CPU has AVX2 */

/* rows_sse2 thirty-two bytes at a time (compiled for AVX2, called only where the CPU has it). */
__attribute__((target("avx2"))) static Py_ssize_t rows_avx2(const unsigned char *p, Py_ssize_t start, Py_ssize_t n,
                                                             const unsigned char *m, Py_ssize_t nm, tally_t *t,
                                                             Py_ssize_t *newlines) {
    const __m256i space = _mm256_set1_epi8(0x20), newline = _mm256_set1_epi8('\n'), zero = _mm256_setzero_si256();
    __m256i vm[MAX_MARKS], acc[MAX_MARKS];
    for (Py_ssize_t j = 0; j < nm; j++) {
        vm[j] = _mm256_set1_epi8((char)m[j]);
        acc[j] = zero;
    }
    Py_ssize_t k = start, e = -1;
    int steps = 0;
    for (; k + 32 <= n && e < 0; k += 32) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(p + k));
        __m256i nl = _mm256_cmpeq_epi8(v, newline);
        for (unsigned bits = (unsigned)_mm256_movemask_epi8(nl); bits; bits &= bits - 1) {
            Py_ssize_t q = k + __builtin_ctz(bits);
            ++*newlines;
            if (q + 1 >= n || p[q + 1] < '0' || p[q + 1] > '9') {
                e = q + 1;
                break;
            }
        }
        if (e >= 0 && e < k + 32) {
            tally_bytes(p, k, e, m, nm, t);
            break;
        }
        /* signed: bytes 0x80-0xff are below 0x20 too (space > v) */
        unsigned low = (unsigned)_mm256_movemask_epi8(_mm256_andnot_si256(nl, _mm256_cmpgt_epi8(space, v)));
        if (low) {
            unsigned wide = (unsigned)_mm256_movemask_epi8(v);
            t->wide += __builtin_popcount(wide);
            t->control += __builtin_popcount(low & ~wide);
        }
        for (Py_ssize_t j = 0; j < nm; j++)
            acc[j] = _mm256_sub_epi8(acc[j], _mm256_cmpeq_epi8(v, vm[j]));
        if (++steps == 255) {
            for (Py_ssize_t j = 0; j < nm; j++) {
                __m256i sum = _mm256_sad_epu8(acc[j], zero);
                t->counts[j] += _mm256_extract_epi64(sum, 0) + _mm256_extract_epi64(sum, 1) +
                                _mm256_extract_epi64(sum, 2) + _mm256_extract_epi64(sum, 3);
                acc[j] = zero;
            }
            steps = 0;
        }
    }
    for (Py_ssize_t j = 0; j < nm; j++) {
        __m256i sum = _mm256_sad_epu8(acc[j], zero);
        t->counts[j] += _mm256_extract_epi64(sum, 0) + _mm256_extract_epi64(sum, 1) + _mm256_extract_epi64(sum, 2) +
                        _mm256_extract_epi64(sum, 3);
    }
    return e >= 0 ? e : rows_rest(p, k, n, m, nm, t, newlines);
}
#endif

/* rows()'s walk from i: the end of the lines that start with a digit, their bytes tallied into *t and
 * their newlines counted */
static Py_ssize_t walk_rows(const unsigned char *p, Py_ssize_t i, Py_ssize_t n, const unsigned char *m, Py_ssize_t nm,
                            tally_t *t, Py_ssize_t *newlines) {
    Py_ssize_t done = i;
#if defined(HAVE_AVX2_TWIN)
    if (use_avx2 && i < n && p[i] >= '0' && p[i] <= '9')
        i = done = rows_avx2(p, i, n, m, nm, t, newlines);
#endif
#if defined(__SSE2__) && defined(__x86_64__)
    if (i < n && p[i] >= '0' && p[i] <= '9')
        i = done = rows_sse2(p, i, n, m, nm, t, newlines);
#endif
    while (i < n && p[i] >= '0' && p[i] <= '9') {
        const unsigned char *nl = memchr(p + i, '\n', (size_t)(n - i));
        *newlines += nl != NULL;
        i = nl ? (Py_ssize_t)(nl - p) + 1 : n;
        if (i - done >= CHUNK) { /* tallied while the rows just walked are in the cache */
            tally(p, done, i, m, nm, t);
            done = i;
        }
    }
    tally(p, done, i, m, nm, t);
    return i;
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
    Py_ssize_t i = start < 0 ? 0 : start;
    Py_BEGIN_ALLOW_THREADS
    i = walk_rows(p, i, n, m, nm, &t, &newlines);
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


static const double POW10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                  1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* digits (n of them, a '.' among them or not) times 10^exp, correctly rounded: exactly where the
 * digits make an integer below 2^53 and |exp| <= 22 (one rounding: Clinger's fast path), else by
 * Python's own conversion of the text. Python's float() of the same text gives the same double. */
static int decimal_value(const unsigned char *d, Py_ssize_t n, int exp, double *out) {
    unsigned long long m = 0;
    int frac = 0, seen = 0, digits = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        if (d[k] == '.') {
            seen = 1;
            continue;
        }
        m = m * 10 + (unsigned long long)(d[k] - '0');
        frac += seen;
        digits++;
    }
    int e10 = exp - frac;
    if (digits <= 15 && e10 >= -22 && e10 <= 22) {
        *out = e10 >= 0 ? (double)m * POW10[e10] : (double)m / POW10[-e10];
        return 1;
    }
    char buf[48];
    memcpy(buf, d, (size_t)n);
    snprintf(buf + n, sizeof buf - (size_t)n, "e%d", exp);
    double v = PyOS_string_to_double(buf, NULL, NULL);
    if (v == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    *out = v;
    return 1;
}

/* One time of a trace row at p[*at..e): its digits and unit; the double in ns; 0 where it is none.
 * The digits are read once: their value kept on the way (Clinger's fast path of decimal_value
 * where it applies), else decimal_value from the text. */
static int trace_time(const unsigned char *p, Py_ssize_t *at, Py_ssize_t e, double *out) {
    Py_ssize_t i = *at, a = i;
    unsigned long long m = 0;
    while (i < e && p[i] >= '0' && p[i] <= '9')
        m = m * 10 + (unsigned long long)(p[i++] - '0'); /* (more than 15: refused below) */
    Py_ssize_t whole = i - a, frac = 0;
    if (whole < 1 || whole > 15)
        return 0;
    if (i < e && p[i] == '.') {
        Py_ssize_t f = ++i;
        while (i < e && p[i] >= '0' && p[i] <= '9' && i - f < 13)
            m = m * 10 + (unsigned long long)(p[i++] - '0');
        frac = i - f;
        if (frac < 1 || frac > 12)
            return 0;
    }
    Py_ssize_t n = i - a;
    int exp;
    if (i + 1 < e && p[i + 1] == 's' && (p[i] == 'm' || p[i] == 'u' || p[i] == 'n')) {
        exp = p[i] == 'm' ? 6 : p[i] == 'u' ? 3 : 0;
        i += 2;
    } else if (i < e && p[i] == 's') {
        exp = 9;
        i += 1;
    } else {
        return 0;
    }
    int e10 = exp - (int)frac;
    if (whole + frac <= 15 && e10 >= -22 && e10 <= 22)
        *out = e10 >= 0 ? (double)m * POW10[e10] : (double)m / POW10[-e10];
    else if (!decimal_value(p + a, n, exp, out))
        return 0;
    *at = i;
    return 1;
}

/* Bytes a trace row may not hold, or that need a look at the bytes after them (trace_row). */
static unsigned char TRACE_ODD[256];

static void trace_odd_init(void) {
    for (int c = 0; c < 256; c++)
        TRACE_ODD[c] = c < 0x20 || c >= 0x80 || c == '&' || c == '\\' || c == '<' || c == '/';
}

/* Whether the byte at p[k] (within p[..e)) is one a plain row may not hold: a control or non-ASCII
 * byte, '&', '\\', the '<' of "<br"/"<BR"/"<pre"/"<PRE", the '/' of "/ *" (without the blank). */
static int odd_at(const unsigned char *p, Py_ssize_t k, Py_ssize_t e) {
    unsigned char c = p[k];
    if (!TRACE_ODD[c])
        return 0;
    if (c < 0x20 || c >= 0x80 || c == '&' || c == '\\')
        return 1;
    if (c == '<' && k + 2 < e && ((p[k + 1] == 'b' && p[k + 2] == 'r') || (p[k + 1] == 'B' && p[k + 2] == 'R')))
        return 1;
    if (c == '<' && k + 3 < e && ((p[k + 1] == 'p' && p[k + 2] == 'r' && p[k + 3] == 'e') ||
                                 (p[k + 1] == 'P' && p[k + 2] == 'R' && p[k + 3] == 'E')))
        return 1;
    return c == '/' && k + 1 < e && p[k + 1] == '*';
}

/* Whether p[a..e) holds such a byte: sixteen bytes at a time where the compiler has SSE2 (the
 * bytes that may be such looked at one by one), else a byte at a time. */
static int odd_bytes(const unsigned char *p, Py_ssize_t a, Py_ssize_t e) {
    Py_ssize_t k = a;
#if defined(__SSE2__) && defined(__x86_64__)
    const __m128i space = _mm_set1_epi8(0x20), amp = _mm_set1_epi8('&'), bs = _mm_set1_epi8('\\'),
                  lt = _mm_set1_epi8('<'), sl = _mm_set1_epi8('/');
    for (; k + 16 <= e; k += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(p + k));
        /* signed: bytes 0x80-0xff are below 0x20 too */
        __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmplt_epi8(v, space), _mm_cmpeq_epi8(v, amp)),
                                 _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, bs), _mm_cmpeq_epi8(v, lt)),
                                              _mm_cmpeq_epi8(v, sl)));
        for (unsigned bits = (unsigned)_mm_movemask_epi8(m); bits; bits &= bits - 1)
            if (odd_at(p, k + __builtin_ctz(bits), e))
                return 1;
    }
#endif
    for (; k < e; k++)
        if (odd_at(p, k, e))
            return 1;
    return 0;
}

/* Where the line that starts at p[a] ends (its newline's offset; -1: no newline before len), and in
 * *odd whether p[a..e) holds a byte odd_bytes finds there: one pass for both, sixteen bytes at a time
 * where the compiler has SSE2 (a byte that may be odd: the line's end found from there, then
 * odd_bytes from that byte on), else memchr and odd_bytes. */
static Py_ssize_t line_end(const unsigned char *p, Py_ssize_t a, Py_ssize_t len, int *odd) {
    Py_ssize_t k = a;
#if defined(__SSE2__) && defined(__x86_64__)
    const __m128i space = _mm_set1_epi8(0x20), amp = _mm_set1_epi8('&'), bs = _mm_set1_epi8('\\'),
                  lt = _mm_set1_epi8('<'), sl = _mm_set1_epi8('/');
    for (; k + 16 <= len; k += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(p + k));
        __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmplt_epi8(v, space), _mm_cmpeq_epi8(v, amp)),
                                 _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, bs), _mm_cmpeq_epi8(v, lt)),
                                              _mm_cmpeq_epi8(v, sl)));
        unsigned bits = (unsigned)_mm_movemask_epi8(m);
        if (bits) {
            k += __builtin_ctz(bits);
            break;
        }
    }
#endif
    for (; k < len && p[k] != '\n' && !TRACE_ODD[p[k]]; k++)
        ;
    if (k < len && p[k] == '\n') {
        *odd = 0;
        return k;
    }
    const unsigned char *nl = k < len ? memchr(p + k, '\n', (size_t)(len - k)) : NULL;
    if (nl == NULL)
        return -1;
    Py_ssize_t e = (Py_ssize_t)(nl - p);
    *odd = odd_bytes(p, k, e);
    return e;
}

/* Whether p[a..e) (one line, its newline not included, none of its bytes odd: line_end) is a plain
 * row; its times and name's end. */
static int trace_row(const unsigned char *p, Py_ssize_t a, Py_ssize_t e, Py_ssize_t name_col, double *t0,
                     double *t1, Py_ssize_t *name_end) {
    if (e - a < name_col + 1 || p[a + name_col - 1] != ' ' || p[a + name_col] == ' ')
        return 0;
    Py_ssize_t i = a;
    while (i < e && p[i] == ' ')
        i++;
    if (!trace_time(p, &i, e, t0) || i >= e || p[i] != ' ')
        return 0;
    while (i < e && p[i] == ' ')
        i++;
    if (!trace_time(p, &i, e, t1) || i >= e || p[i] != ' ')
        return 0;
    Py_ssize_t z = e;
    while (z > a + name_col && p[z - 1] == ' ')
        z--;
    *name_end = z;
    return 1;
}


/* Where the base name of the name p[a..z) ends: its [correlation id] and the blanks before it left
 * out, as profconv.parse.names.strip_correlation does; -1 where the name ends with "])" (an API
 * launch: a pattern decides) or is a correlation id alone (base_codes may read such names otherwise). */
static Py_ssize_t base_end(const unsigned char *p, Py_ssize_t a, Py_ssize_t z) {
    if (z - a >= 2 && p[z - 1] == ')' && p[z - 2] == ']')
        return -1;
    if (z - a < 3 || p[z - 1] != ']')
        return z;
    Py_ssize_t k = z - 2;
    while (k > a && p[k] >= '0' && p[k] <= '9')
        k--;
    if (p[k] != '[' || k == z - 2)
        return z;
    if (k == a)
        return -1;
    while (k > a && p[k - 1] == ' ')
        k--;
    return k;
}

/* The base names met last, by a cheap key of their bytes: a trace's rows cycle through a few kernels,
 * whose base names are found here by one comparison, not hashed again (the table's codes: the same). */
#define RECENT 16
typedef struct {
    Py_ssize_t at, len;
    int64_t code;
} recent_t;

/* The slot of a base name of n bytes among the recent ones: its length and its last eight bytes
 * mixed ('[CUDA memcpy HtoD]' and '[CUDA memcpy DtoH]' apart: they alternate in a trace). */
static size_t recent_slot(const unsigned char *q, Py_ssize_t n) {
    uint64_t w = 0;
    if (n >= 8)
        memcpy(&w, q + n - 8, 8);
    else if (n > 0)
        memcpy(&w, q, (size_t)n);
    w = (w ^ (uint64_t)n) * 0x9E3779B97F4A7C15ULL;
    return (size_t)(w >> 60) % RECENT;
}

/* The code of the base name of the name p[a..z) among those met so far (_bytestable.h: numbered in
 * order of first appearance as traces.base_codes numbers them, each a str once); *coded set to 0 where
 * base_end cannot say; *whole: the base name is the whole name (no correlation id). */
static int base_code(const unsigned char *p, Py_ssize_t a, Py_ssize_t z, bytes_table *t, recent_t *recent,
                     long long *code, int *coded, int *whole) {
    Py_ssize_t b = base_end(p, a, z);
    if (b < 0) {
        *coded = 0;
        return 0;
    }
    *whole = b == z;
    Py_ssize_t n = b - a;
    recent_t *r = recent + recent_slot(p + a, n);
    if (r->len == n && memcmp(p + r->at, p + a, (size_t)n) == 0) {
        *code = (long long)r->code;
        return 0;
    }
    int64_t c = bt_code(t, p, a, n);
    if (c == -2) { /* not ASCII (trace_row checks every byte: not met) */
        *coded = 0;
        return 0;
    }
    if (c < 0)
        return -1;
    *r = (recent_t){a, n, c};
    *code = (long long)c;
    return 0;
}

/* A row's name as a str: ASCII (trace_row checked every byte), copied in. */
static PyObject *ascii_str(const unsigned char *p, Py_ssize_t n) {
    PyObject *s = PyUnicode_New(n, 127);
    if (s != NULL)
        memcpy(PyUnicode_DATA(s), p, (size_t)n);
    return s;
}

/* rows a trace from `start` may hold, a little over (the rest of the input in lines as long as its
 * first one, at most 1 a 64 bytes): the columns' first size, so that they are seldom copied to grow
 * (pages never written are never touched) */
static Py_ssize_t trace_rows_guess(const unsigned char *p, Py_ssize_t start, Py_ssize_t len) {
    const unsigned char *nl = memchr(p + start, '\n', (size_t)(len - start));
    Py_ssize_t first = nl ? nl - (p + start) + 1 : len - start, rest = len - start;
    first = first > 64 ? first : 64;
    Py_ssize_t rows = rest / first + rest / first / 8 + 1024;
    return rows < rest / 64 + 1024 ? rows : rest / 64 + 1024;
}

/* trace()'s arguments: the buffer (held from here on), start and name_col; 0, else -1 with the
 * exception set (a ValueError where start or name_col is out of range, the buffer released). */
static int trace_args(PyObject *args, Py_buffer *buf, Py_ssize_t *start, Py_ssize_t *name_col) {
    if (!PyArg_ParseTuple(args, "y*nn", buf, start, name_col))
        return -1;
    if (*name_col < 1 || *start < 0 || *start > buf->len) {
        PyBuffer_Release(buf);
        PyErr_SetString(PyExc_ValueError, "trace: start or name_col out of range");
        return -1;
    }
    return 0;
}

/* trace()'s columns (times and codes) twice as long, *cap doubled; -1 where memory runs out (no
 * exception set; each column still held, at its old or new length, for the caller to free). */
static int trace_grow(double **t0, double **t1, long long **codes, Py_ssize_t *cap) {
    double *a0 = PyMem_Realloc(*t0, sizeof(double) * (size_t)*cap * 2);
    if (a0 == NULL)
        return -1;
    *t0 = a0;
    double *a1 = PyMem_Realloc(*t1, sizeof(double) * (size_t)*cap * 2);
    if (a1 == NULL)
        return -1;
    *t1 = a1;
    long long *c1 = PyMem_Realloc(*codes, sizeof(long long) * (size_t)*cap * 2);
    if (c1 == NULL)
        return -1;
    *codes = c1;
    *cap *= 2;
    return 0;
}

/* A row's name p[a..z) appended to names, its base name's code put in *code while *coded (base_code
 * clears it where it cannot say); 0, else -1 with the exception set. */
static inline int trace_name(const unsigned char *p, Py_ssize_t a, Py_ssize_t z, bytes_table *bases, recent_t *recent,
                             long long *code, int *coded, PyObject *names) {
    int whole = 0;
    if (*coded && base_code(p, a, z, bases, recent, code, coded, &whole) < 0)
        return -1;
    /* a name without a correlation id ('[CUDA memcpy HtoD]', an API call's) is its base name's str */
    PyObject *name = *coded && whole ? Py_NewRef(PyList_GET_ITEM(bases->strs, *code)) : ascii_str(p + a, z - a);
    if (name == NULL || PyList_Append(names, name) < 0) {
        Py_XDECREF(name);
        return -1;
    }
    Py_DECREF(name);
    return 0;
}

/* trace()'s answer from its n rows read up to offset i: (end, rows, starts, durations, names, (codes,
 * bases)), None in place of (codes, bases) where a base name could not be coded; NULL where that fails. */
static PyObject *trace_result(Py_ssize_t i, Py_ssize_t n, const double *t0, const double *t1, PyObject *names,
                              const long long *codes, PyObject *strs, int coded) {
    if (coded)
        return Py_BuildValue("(nny#y#O(y#O))", i, n, (const char *)t0, n * (Py_ssize_t)sizeof(double),
                             (const char *)t1, n * (Py_ssize_t)sizeof(double), names, (const char *)codes,
                             n * (Py_ssize_t)sizeof(long long), strs);
    return Py_BuildValue("(nny#y#OO)", i, n, (const char *)t0, n * (Py_ssize_t)sizeof(double), (const char *)t1,
                         n * (Py_ssize_t)sizeof(double), names, Py_None);
}

static PyObject *trace(PyObject *self, PyObject *args) {
    Py_buffer buf;
    Py_ssize_t start, name_col;
    if (trace_args(args, &buf, &start, &name_col) < 0)
        return NULL;
    const unsigned char *p = (const unsigned char *)buf.buf;
    Py_ssize_t len = buf.len, cap = trace_rows_guess(p, start, len), n = 0, i = start;
    PyObject *names = PyList_New(0), *out = NULL;
    bytes_table bases;
    int ready = bt_init(&bases, 64);
    double *t0 = PyMem_Malloc(sizeof(double) * (size_t)cap), *t1 = PyMem_Malloc(sizeof(double) * (size_t)cap);
    long long *codes = PyMem_Malloc(sizeof(long long) * (size_t)cap);
    int coded = 1;  /* every base name found as base_codes finds it */
    recent_t recent[RECENT];
    for (int q = 0; q < RECENT; q++)
        recent[q] = (recent_t){0, -1, 0};
    if (names == NULL || ready < 0 || t0 == NULL || t1 == NULL || codes == NULL)
        goto done;
    while (i < len) {
        int odd;
        Py_ssize_t e = line_end(p, i, len, &odd), z;
        if (e < 0)
            break;
        if (n == cap && trace_grow(&t0, &t1, &codes, &cap) < 0)
            goto done;
        if (odd || !trace_row(p, i, e, name_col, t0 + n, t1 + n, &z))
            break;
        if (trace_name(p, i + name_col, z, &bases, recent, codes + n, &coded, names) < 0)
            goto done;
        n++;
        i = e + 1;
    }
    out = trace_result(i, n, t0, t1, names, codes, bases.strs, coded);
done:
    if (out == NULL && !PyErr_Occurred())
        PyErr_NoMemory();
    PyBuffer_Release(&buf);
    Py_XDECREF(names);
    bt_free(&bases);
    PyMem_Free(codes);
    PyMem_Free(t0);
    PyMem_Free(t1);
    return out;
}

/* One name's figures in by_name: rows, timed rows, Kahan sum and compensation, min, max, lines. */
typedef struct {
    Py_ssize_t count, timed;
    double sum, comp, lo, hi;
    long long first, last;
} name_acc;

/* A list of ints, a range or an array of int64 as n long longs (*ok cleared where it is none of
 * them, holds another length, or a value that is not an int that fits). */
static long long *int_column(PyObject *col, Py_ssize_t n, int *ok) {
    long long *out = PyMem_Malloc(sizeof(long long) * (size_t)(n ? n : 1));
    if (out == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    if (!PyList_Check(col) && !PyRange_Check(col) && PyObject_CheckBuffer(col)) { /* an array('q') */
        Py_buffer v;
        if (PyObject_GetBuffer(col, &v, PyBUF_FORMAT) < 0) {
            PyErr_Clear();
            *ok = 0;
            return out;
        }
        if (v.itemsize == 8 && v.format != NULL && (strcmp(v.format, "q") == 0 || strcmp(v.format, "l") == 0) &&
            v.len == n * 8)
            memcpy(out, v.buf, (size_t)v.len);
        else
            *ok = 0;
        PyBuffer_Release(&v);
        return out;
    }
    if (PyRange_Check(col)) {
        PyObject *a = PyObject_GetAttrString(col, "start"), *b = PyObject_GetAttrString(col, "step");
        long long start = a ? PyLong_AsLongLong(a) : -1, step = b ? PyLong_AsLongLong(b) : -1;
        Py_XDECREF(a);
        Py_XDECREF(b);
        if (PyErr_Occurred() || PyObject_Length(col) != n) {
            PyErr_Clear();
            *ok = 0;
        }
        for (Py_ssize_t k = 0; k < n && *ok; k++)
            out[k] = start + step * k;
        return out;
    }
    if (!PyList_Check(col) || PyList_GET_SIZE(col) != n) {
        *ok = 0;
        return out;
    }
    for (Py_ssize_t k = 0; k < n && *ok; k++) {
        PyObject *v = PyList_GET_ITEM(col, k);
        int over = 0;
        out[k] = PyLong_CheckExact(v) ? PyLong_AsLongLongAndOverflow(v, &over) : 0;
        if (!PyLong_CheckExact(v) || over || (out[k] == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            *ok = 0;
        }
    }
    return out;
}

static void name_add(name_acc *a, double v, long long line, long long end) {
    if (a->count++ == 0) {
        a->lo = a->hi = Py_NAN;
        a->first = line;
        a->last = end;
    }
    if (v == v) { /* traces._by_name: Kahan's sum of the timed rows, in file order */
        double y = v - a->comp;
        double u = a->sum + y;
        a->comp = (u - a->sum) - y;
        a->sum = u;
        if (a->timed++ == 0 || v < a->lo)
            a->lo = v;
        if (a->timed == 1 || v > a->hi)
            a->hi = v;
    }
    if (line < a->first)
        a->first = line;
    if (end > a->last)
        a->last = end;
}

static PyObject *by_name(PyObject *self, PyObject *args) {
    PyObject *codes, *lines, *ends;
    Py_buffer t;
    Py_ssize_t k;
    if (!PyArg_ParseTuple(args, "Oy*OOn", &codes, &t, &lines, &ends, &k))
        return NULL;
    Py_ssize_t n = PyObject_Length(codes);
    if (n < 0) {
        PyBuffer_Release(&t);
        return NULL;
    }
    const double *v = (const double *)t.buf;
    PyObject *out = NULL;
    int ok = t.len == n * (Py_ssize_t)sizeof(double) && k >= 0 && k <= n + 1;
    name_acc *acc = PyMem_Calloc((size_t)(k ? k : 1), sizeof(name_acc));
    long long *c = ok ? int_column(codes, n, &ok) : NULL, *ln = ok ? int_column(lines, n, &ok) : NULL;
    long long *en = ok ? (ends == lines ? ln : int_column(ends, n, &ok)) : NULL;
    if (acc == NULL || (ok && (c == NULL || ln == NULL || en == NULL)))
        goto done;
    for (Py_ssize_t r = 0; r < n && ok; r++) {
        if (c[r] < 0 || c[r] >= k)
            ok = 0;
        else
            name_add(acc + c[r], v[r], ln[r], en[r]);
    }
    for (Py_ssize_t j = 0; j < k && ok; j++)
        ok = acc[j].comp == acc[j].comp; /* an overflow on the way: the row-by-row reading (Python) */
    if (!ok) {
        out = Py_NewRef(Py_None);
        goto done;
    }
    out = PyList_New(0);
    for (Py_ssize_t j = 0; j < k && out != NULL; j++) {
        name_acc *a = acc + j;
        if (!a->count)
            continue;
        PyObject *item = Py_BuildValue("n[nnddddLL]", j, a->count, a->timed, a->sum, a->comp, a->lo, a->hi, a->first,
                                       a->last);
        if (item == NULL || PyList_Append(out, item) < 0)
            Py_CLEAR(out);
        Py_XDECREF(item);
    }
done:
    if (en != ln)
        PyMem_Free(en);
    PyMem_Free(ln);
    PyMem_Free(c);
    PyMem_Free(acc);
    PyBuffer_Release(&t);
    return out;
}

/* The first occurrence of needle[0..m) in p[0..n) (memmem where the C library has it: a search a
 * few times faster than bytes.find's on long inputs). */
static const unsigned char *search(const unsigned char *p, size_t n, const unsigned char *needle, size_t m) {
#if defined(__GLIBC__) || defined(__APPLE__) || defined(__FreeBSD__)
    return memmem(p, n, needle, m);
#else
    if (m == 0)
        return p;
    for (const unsigned char *q = p, *z = p + n; (size_t)(z - q) >= m;) {
        q = memchr(q, needle[0], (size_t)(z - q) - m + 1);
        if (q == NULL)
            return NULL;
        if (memcmp(q, needle, m) == 0)
            return q;
        q++;
    }
    return NULL;
#endif
}

static PyObject *find(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer buf, nd;
    Py_ssize_t start, end;
    if (!PyArg_ParseTuple(args, "y*y*nn", &buf, &nd, &start, &end))
        return NULL;
    Py_ssize_t at = -1;
    if (start < 0)
        start = 0;
    if (end > buf.len)
        end = buf.len;
    if (end - start >= nd.len) {
        const unsigned char *p = (const unsigned char *)buf.buf;
        const unsigned char *q = search(p + start, (size_t)(end - start), (const unsigned char *)nd.buf, (size_t)nd.len);
        at = q == NULL ? -1 : (Py_ssize_t)(q - p);
    }
    PyBuffer_Release(&buf);
    PyBuffer_Release(&nd);
    return PyLong_FromSsize_t(at);
}

/* Where the next line that starts with the head h[0..hn) begins, looked for from the newline at
 * `from` on (-1: none). */
static Py_ssize_t next_head(const unsigned char *p, Py_ssize_t n, const unsigned char *h, Py_ssize_t hn,
                            Py_ssize_t from) {
    for (Py_ssize_t q = from; q < n;) {
        const unsigned char *nl = memchr(p + q, '\n', (size_t)(n - q));
        if (nl == NULL)
            break;
        const unsigned char *hit = search(nl + 1, (size_t)(n - (nl + 1 - p)), h, (size_t)hn);
        if (hit == NULL)
            break;
        if (hit[-1] == '\n')
            return hit - p;
        q = hit - p;
    }
    return -1;
}

/* One table's record of tables() (below) written into r: the head line p[at..b), the rows p[b..e)
 * after it with their newlines, flags, the byte after them and their tally's mark counts. */
static void table_record(int64_t *r, const unsigned char *p, Py_ssize_t n, Py_ssize_t at, Py_ssize_t b, Py_ssize_t e,
                         Py_ssize_t newlines, const tally_t *t, Py_ssize_t nm) {
    int64_t wide = 0;
    for (Py_ssize_t k = at; k < b; k++)
        wide |= p[k] >= 0x80;
    r[0] = at, r[1] = b, r[2] = e, r[3] = newlines;
    r[4] = (t->wide || t->control ? 1 : 0) | (wide ? 2 : 0) | (e > b && p[e - 1] != '\n' ? 4 : 0);
    r[5] = e < n ? p[e] : -1;
    for (Py_ssize_t j = 0; j < nm; j++)
        r[6 + j] = t->counts[j];
}

/* tables(data, head, marks): every line of data that starts with `head` and the rows() after it, in
 * one walk (the next such line looked for after those rows; a head line with no newline ends it): bytes
 * of int64, 6 + len(marks) a table: the head line's start, the rows' start and end, their newlines,
 * flags (1: a row byte not ASCII or a control character other than the newline, 2: a head line byte not
 * ASCII, 4: the last row without its newline), the byte after the rows (-1: none), each mark's count
 * in the rows. */
static PyObject *tables(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer buf, hd, marks;
    if (!PyArg_ParseTuple(args, "y*y*y*", &buf, &hd, &marks))
        return NULL;
    const unsigned char *p = (const unsigned char *)buf.buf, *m = (const unsigned char *)marks.buf;
    const unsigned char *h = (const unsigned char *)hd.buf;
    Py_ssize_t n = buf.len, nm = marks.len, hn = hd.len, width = 6 + nm, used = 0, cap = 64;
    int bad = nm > MAX_MARKS || hn == 0;
    for (Py_ssize_t j = 0; j < nm; j++)
        bad |= m[j] < 0x20 || m[j] >= 0x80;
    int64_t *out = bad ? NULL : PyMem_Malloc((size_t)(cap * width) * sizeof(int64_t));
    if (out == NULL) {
        PyBuffer_Release(&buf);
        PyBuffer_Release(&hd);
        PyBuffer_Release(&marks);
        return bad ? (PyErr_SetString(PyExc_ValueError, "tables: a head, at most 16 marks, each 0x20-0x7f"), NULL)
                   : PyErr_NoMemory();
    }
    Py_ssize_t at = n >= hn && memcmp(p, h, (size_t)hn) == 0 ? 0 : -1, from = 0;
    while (1) {
        if (at < 0) { /* the next line that starts with the head, from the newline at `from` on */
            at = next_head(p, n, h, hn, from);
            if (at < 0)
                break;
        }
        const unsigned char *nl = memchr(p + at, '\n', (size_t)(n - at));
        if (nl == NULL)
            break;
        Py_ssize_t b = nl - p + 1, newlines = 0, e;
        tally_t t;
        memset(&t, 0, sizeof t);
        e = walk_rows(p, b, n, m, nm, &t, &newlines);
        if (used == cap) {
            int64_t *more = PyMem_Realloc(out, (size_t)(2 * cap * width) * sizeof(int64_t));
            if (more == NULL) {
                PyMem_Free(out);
                PyBuffer_Release(&buf);
                PyBuffer_Release(&hd);
                PyBuffer_Release(&marks);
                return PyErr_NoMemory();
            }
            out = more;
            cap *= 2;
        }
        table_record(out + used * width, p, n, at, b, e, newlines, &t, nm);
        used++;
        at = -1;
        from = e - 1;
    }
    PyObject *got = PyBytes_FromStringAndSize((const char *)out, (Py_ssize_t)(used * width * (Py_ssize_t)sizeof(int64_t)));
    PyMem_Free(out);
    PyBuffer_Release(&buf);
    PyBuffer_Release(&hd);
    PyBuffer_Release(&marks);
    return got;
}

/* take(values, codes): [values[c] for c in codes], codes a buffer of int64 (an array('q')). */
static PyObject *take(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *values;
    Py_buffer c;
    if (!PyArg_ParseTuple(args, "O!y*", &PyList_Type, &values, &c))
        return NULL;
    Py_ssize_t n = c.len / 8, k = PyList_GET_SIZE(values);
    const int64_t *code = (const int64_t *)c.buf;
    PyObject *out = c.len % 8 ? NULL : PyList_New(n);
    for (Py_ssize_t r = 0; out != NULL && r < n; r++) {
        if (code[r] < 0 || code[r] >= k) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, r, Py_NewRef(PyList_GET_ITEM(values, code[r])));
    }
    if (out == NULL && !PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError, "take: codes are int64 each below len(values)");
    PyBuffer_Release(&c);
    return out;
}

/* avx2(on): whether rows() takes its AVX2 twin (where the CPU has AVX2; tests compare both): the
 * setting before. */
static PyObject *avx2(PyObject *Py_UNUSED(self), PyObject *args) {
    int on;
    if (!PyArg_ParseTuple(args, "p", &on))
        return NULL;
#if defined(HAVE_AVX2_TWIN)
    int was = use_avx2;
    use_avx2 = on && __builtin_cpu_supports("avx2");
    return PyBool_FromLong(was);
#else
    return PyBool_FromLong(0);
#endif
}

/* unix_ends(data): the bytes of data (any buffer) with every "\r\n" made "\n", as
 * bytes(data).replace(b"\r\n", b"\n") gives them: the text between two carriage returns copied at
 * once (a Windows log's lines), where bytes.replace looks for the pair again after each one. */
static PyObject *unix_ends(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer buf;
    if (!PyArg_ParseTuple(args, "y*", &buf))
        return NULL;
    PyObject *out = PyBytes_FromStringAndSize(NULL, buf.len);
    if (out == NULL) {
        PyBuffer_Release(&buf);
        return NULL;
    }
    const char *r = (const char *)buf.buf, *end = r + buf.len;
    char *w0 = PyBytes_AS_STRING(out), *w = w0;
    while (r < end) {
        const char *cr = memchr(r, '\r', (size_t)(end - r));
        if (cr == NULL) {
            memcpy(w, r, (size_t)(end - r));
            w += end - r;
            break;
        }
        size_t k = (size_t)(cr - r) + (cr + 1 < end && cr[1] == '\n' ? 0 : 1); /* the '\r' kept where no '\n' follows */
        memcpy(w, r, k);
        w += k;
        r = cr + 1;
    }
    PyBuffer_Release(&buf);
    if (w - w0 < PyBytes_GET_SIZE(out) && _PyBytes_Resize(&out, w - w0) < 0)
        return NULL;
    return out;
}

static PyMethodDef methods[] = {
    {"rows", rows, METH_VARARGS,
     "rows(data, start, marks) -> (end, newlines, counts of each mark byte, non-ASCII bytes, control bytes) "
     "of the lines from start that start with a digit"},
    {"cells", cells, METH_VARARGS,
     "cells(data, start, end, ncells, whole) -> one status byte per line of data[start:end] as a row of a "
     "plain summary table (1: not one, 2: an undecided cell, 4: a decimal cell)"},
    {"trace", trace, METH_VARARGS,
     "trace(data, start, name_col) -> (end, rows, starts, durations, names, (codes, bases) or None) of the "
     "plain nvprof trace rows from start"},
    {"by_name", by_name, METH_VARARGS,
     "by_name(codes, durations, lines, line_ends, k) -> [(code, [rows, timed, sum, compensation, min, max, first "
     "line, last line]), ...] of each code below k met (traces._by_name's figures; codes, lines and line_ends "
     "lists of ints, ranges or arrays of int64), or None"},
    {"avx2", avx2, METH_VARARGS, "avx2(on) -> whether rows() took its AVX2 twin before (it does where asked and the CPU can)"},
    {"take", take, METH_VARARGS, "take(values, codes) -> [values[c] for c in codes] (codes: bytes of int64)"},
    {"tables", tables, METH_VARARGS,
     "tables(data, head, marks) -> bytes of int64, 6 + len(marks) a table: (head line start, rows start, rows "
     "end, rows, flags, byte after, mark counts...) of each line that starts with head and the rows() after it"},
    {"unix_ends", unix_ends, METH_VARARGS,
     "unix_ends(data) -> bytes(data).replace(b'\\r\\n', b'\\n') (any buffer), the lines copied whole"},
    {"find", find, METH_VARARGS,
     "find(data, needle, start, end) -> data.find(needle, start, end) for 0 <= start (any buffer)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_bytescan", "profconv.parse.bytescan's passes over a table's rows.", -1, methods,
};

PyMODINIT_FUNC PyInit__bytescan(void) {
    trace_odd_init();
#if defined(HAVE_AVX2_TWIN)
    __builtin_cpu_init();
    use_avx2 = __builtin_cpu_supports("avx2");
#endif
    return PyModule_Create(&module);
}
