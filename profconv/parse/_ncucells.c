/* The rows of an `ncu --csv --page raw` page read from the input's bytes in one pass
 * (profconv.parse.dialects.ncu_raw; its pure-Python twin there gives the same result).
 *
 * rows(data, start, end, kinds, out[, seen]) reads data[start:end]: lines of quoted cells ("a","b",...),
 * each line ending in '\n', `len(kinds)` cells a line. kinds holds one byte per column: 'i' a cell that
 * is only checked, 'n' a text returned as a str (a raw page's kernel name; a details page's kernel,
 * metric name and unit: the texts of a row's 'n' cells in column order; one str for each distinct
 * text, made once -- and where `seen`, a dict, is given, the one it holds for an equal text, else the
 * new one added to it: one object for a text over every call that shares `seen`), 'm' a metric value, 'd' a
 * metric value that is a whole number of nanoseconds (a duration: it also votes as a count, as
 * ncu._vote casts it), 'e' an empty cell that is not quoted (the trailing comma of a 2024+ details
 * page's metric row: '"...","21.30",'). Each metric cell goes to `out` (a writable buffer of doubles, launch by launch,
 * metric by metric):
 *   - empty: NaN;
 *   - a plain C-locale number (digits, an optional '.' part, or thousands grouped by ',' from a first
 *     group of 1-3 digits not starting with 0): the double Python's float() reads from it without
 *     its commas (PyOS_string_to_double: float()'s own conversion);
 *   - anything else, or a number too big for a double: NaN here and (its index, start, end) in the
 *     returned list of odd cells, for the Python side to vote on and read as the row reader does.
 * The decimal-mark vote of the plain cells is counted (units.LocaleVote: dot, comma, undecided).
 * Where kinds end in 'e', a line whose cells go on past the 'e' (a rule's row of a 2024+ details page,
 * every column quoted) is not read but handed out whole: its cells before the 'e' checked as every
 * row's, nothing of it kept, its (line index in the data, start, end) in `full`, the rest of its line
 * not looked at. Returns (rows, dot, comma, undecided, names, odd, full) -- `rows` not counting those
 * lines --, or None where the bytes are not such lines: a
 * cell not quoted, a quote inside a cell, another number of cells, a byte outside printable ASCII,
 * '&' or '\\', or a two-byte mark profconv.parse.text.normalize rewrites ('//', '/' '*', '--', '<b',
 * '<B', '<p', '<P') -- the text path reads those pages.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <string.h>

#include "_bytestable.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

typedef struct {
    long dot, comma;
    int undecided;
} Vote;

static int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

/* the length of the run of digits at s (< e) */
static Py_ssize_t digits(const unsigned char *s, const unsigned char *e) {
    const unsigned char *p = s;
    while (p < e && is_digit(*p)) p++;
    return p - s;
}

/* ^[1-9]\d{0,2}[.,]\d{3}$: a cell that reads either way ('524.288', '1,024') */
static int undecided(const unsigned char *s, const unsigned char *e) {
    Py_ssize_t k = digits(s, e);
    if (k < 1 || k > 3 || *s == '0' || s + k >= e) return 0;
    if (s[k] != '.' && s[k] != ',') return 0;
    return e - (s + k + 1) == 3 && digits(s + k + 1, e) == 3;
}

/* \d{1,3}(M\d{3})+ in full, M the mark */
static int grouped(const unsigned char *s, const unsigned char *e, unsigned char mark) {
    Py_ssize_t k = digits(s, e);
    const unsigned char *p = s + k;
    if (k < 1 || k > 3 || p >= e) return 0;
    while (p < e) {
        if (*p != mark || e - p < 4 || digits(p + 1, e) < 3) return 0;
        p += 4;
        if (p < e && is_digit(*p)) return 0;
    }
    return 1;
}

static const double POW10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                               1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* a long plain cell's value by float()'s own conversion (its commas left out); 0 where it is too
 * long or too big for a double */
static int slow_value(const unsigned char *s, const unsigned char *e, double *out) {
    char buf[128];
    Py_ssize_t n = 0;
    for (const unsigned char *p = s; p < e; p++) {
        if (*p == ',') continue;
        if (n >= (Py_ssize_t)sizeof(buf) - 1) return 0;
        buf[n++] = (char)*p;
    }
    buf[n] = 0;
    char *end = NULL;
    double v = PyOS_string_to_double(buf, &end, NULL);
    if (v == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    if (end != buf + n || isinf(v)) return 0;
    *out = v;
    return 1;
}

/* the digit c taken into the mantissa; nd counts the digits from the first that is not 0 */
#define TAKE(c) (nd += (mant != 0 || (c) != '0'), mant = mant * 10 + (unsigned long long)((c) - '0'))

/* a plain C-locale number ^(?:\d+(?:\.\d*)?|[1-9]\d{0,2}(?:,\d{3})+(?:\.\d*)?)$ read as it is checked, in
 * one pass: its value (its commas left out) to *out and whether it holds a '.' or ',' to *marks; 0
 * where it is no such number, or too long or too big for a double. Up to 15 digits and 22 decimals the
 * digits and the power of ten are exact doubles, so one division is the correctly rounded value
 * (float()'s: Clinger's fast path); longer ones go to float()'s own conversion */
static int plain_read(const unsigned char *s, const unsigned char *e, double *out, int *marks) {
    unsigned long long mant = 0; /* wraps only past 19 digits, when nd > 15 has sent it the slow way */
    int nd = 0, dec = -1;
    const unsigned char *p = s;
    for (; p < e && is_digit(*p); p++) TAKE(*p);
    if (p == s) return 0;
    *marks = 0;
    if (p < e && *p == ',') {
        if (p - s > 3 || *s == '0') return 0;
        while (p < e && *p == ',') {
            if (e - p < 4 || !is_digit(p[1]) || !is_digit(p[2]) || !is_digit(p[3])) return 0;
            TAKE(p[1]), TAKE(p[2]), TAKE(p[3]);
            p += 4;
            if (p < e && is_digit(*p)) return 0;
        }
        *marks = 1;
    }
    if (p < e && *p == '.') {
        *marks = 1;
        for (dec = 0, p++; p < e && is_digit(*p); p++, dec++) TAKE(*p);
    }
    if (p != e) return 0;
    if (nd <= 15 && dec <= 22) {
        *out = dec > 0 ? (double)mant / POW10[dec] : (double)mant;
        return 1;
    }
    return slow_value(s, e, out);
}

/* one metric cell: its value to *out, its vote counted; 0 where it is odd (the Python side reads it) */
static int metric(const unsigned char *s, const unsigned char *e, int duration, Vote *vote, double *out) {
    if (s == e) {
        *out = Py_NAN;
        return 1;
    }
    int marks;
    if (!plain_read(s, e, out, &marks)) {
        *out = Py_NAN;
        return 0;
    }
    if (marks) {
        if (undecided(s, e))
            vote->undecided = 1;
        else
            vote->dot++;
    }
    if (duration) {
        if (grouped(s, e, '.'))
            vote->comma++;
        else if (grouped(s, e, ','))
            vote->dot++;
    }
    return 1;
}

/* what a byte of a cell is to cell_end: 0 a byte normalize leaves as it is; 1 one it rewrites or
 * that changes what it does (a control character, a byte outside ASCII, '&', '\\'); 2 the first of
 * a two-byte mark it rewrites ('//', '/' '*', '--', '<b', '<B', '<p', '<P'); 3 the closing quote */
static unsigned char CELL[256];

static void cell_table(void) {
    for (int c = 0; c < 256; c++) CELL[c] = c < 0x20 || c > 0x7e || c == '&' || c == '\\' ? 1 : 0;
    CELL['/'] = CELL['-'] = CELL['<'] = 2;
    CELL['"'] = 3;
}

#if defined(__SSE2__)
/* the first of the sixteen bytes at p that CELL does not map to 0 (16 where none is): below 0x20 or
 * from 0x7f up (below 0x20 as signed bytes: 0x80 up too), '&', '\\', '/', '-', '<' or '"' */
static inline int cell_stop16(const unsigned char *p) {
    __m128i x = _mm_loadu_si128((const __m128i *)p);
    __m128i hit = _mm_or_si128(_mm_cmplt_epi8(x, _mm_set1_epi8(0x20)), _mm_cmpeq_epi8(x, _mm_set1_epi8(0x7f)));
    hit = _mm_or_si128(hit, _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('&')), _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))));
    hit = _mm_or_si128(hit, _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('/')), _mm_cmpeq_epi8(x, _mm_set1_epi8('-'))));
    hit = _mm_or_si128(hit, _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('<')), _mm_cmpeq_epi8(x, _mm_set1_epi8('"'))));
    unsigned m = (unsigned)_mm_movemask_epi8(hit);
    return m ? __builtin_ctz(m) : 16;
}
#endif

/* the closing quote of the cell whose text starts at s, its bytes looked at once (sixteen a step where
 * they are there: the bytes CELL maps to 0 passed over); NULL where one is a byte or mark normalize
 * rewrites, or where there is none before stop */
static const unsigned char *cell_end(const unsigned char *s, const unsigned char *stop) {
    for (const unsigned char *p = s; p < stop; p++) {
#if defined(__SSE2__)
        while (p + 16 <= stop) { /* (then p at a byte CELL maps to a stop, or fewer than 16 left) */
            int k = cell_stop16(p);
            p += k;
            if (k < 16) break;
        }
#endif
        unsigned char t = CELL[*p];
        if (t == 0) continue;
        if (t == 3) return p;
        if (t == 1 || p + 1 >= stop) return NULL; /* past stop there is no closing quote either */
        unsigned char c = *p, d = p[1];
        if ((c == '/' && (d == '/' || d == '*')) || (c == '-' && d == '-') ||
            (c == '<' && (d == 'b' || d == 'B' || d == 'p' || d == 'P')))
            return NULL;
    }
    return NULL;
}

typedef struct {
    const unsigned char *base;
    const char *kinds;
    Py_ssize_t ncols, metrics, rows;
    double *out;
    Py_ssize_t cap;
    Vote vote;
    PyObject *names, *odd, *full;
    bytes_table texts; /* each distinct text of the 'n' cells, one str (_bytestable.h) */
    PyObject *seen;    /* a dict where given: a text's str the one it holds for an equal text, added where none */
    PyObject **last;   /* per column, the str of the cell above (borrowed: texts.strs holds it) */
} Scan;

/* the text s..e of column `col` as a str: the cell above's where it is the same (a launch's rows name
 * its kernel), else the one made for it before in this call, else a new one (where sc->seen is given,
 * the equal str it holds: one object for a text across calls); borrowed, NULL with an error set or,
 * where the text is not ASCII, with none (cell_end lets no such byte through) */
static PyObject *name_of(Scan *sc, Py_ssize_t col, const unsigned char *s, const unsigned char *e) {
    Py_ssize_t n = e - s;
    PyObject *o = sc->last[col];
    if (o != NULL && PyUnicode_GET_LENGTH(o) == n && memcmp(PyUnicode_DATA(o), s, (size_t)n) == 0)
        return o;
    Py_ssize_t before = PyList_GET_SIZE(sc->texts.strs);
    int64_t code = bt_code(&sc->texts, sc->base, s - sc->base, n);
    if (code < 0)
        return NULL;
    o = PyList_GET_ITEM(sc->texts.strs, code);
    if (sc->seen != NULL && PyList_GET_SIZE(sc->texts.strs) > before) {
        PyObject *held = PyDict_SetDefault(sc->seen, o, o); /* (borrowed) */
        if (held == NULL)
            return NULL;
        if (held != o) {
            PyList_SET_ITEM(sc->texts.strs, code, Py_NewRef(held));
            Py_DECREF(o);
            o = held;
        }
    }
    return sc->last[col] = o;
}

/* one cell at *pp (its opening quote): read, checked, handled; 0: not such a cell; -1: error; 2: a
 * row that holds more cells where its kinds end in 'e' */
static int cell(Scan *sc, const unsigned char **pp, const unsigned char *stop, Py_ssize_t col, Py_ssize_t *m) {
    const unsigned char *p = *pp;
    if (sc->kinds[col] == 'e') { /* an empty cell, not quoted: what a 2024+ details page's metric row ends in */
        if (p < stop && *p == '"') return 2; /* a quoted cell instead: a row of every column (a rule's) */
        if (p >= stop || *p != (col + 1 < sc->ncols ? ',' : '\n')) return 0;
        *pp = p + 1;
        return 1;
    }
    if (p >= stop || *p != '"') return 0;
    const unsigned char *s = ++p;
    const unsigned char *q = cell_end(s, stop);
    if (q == NULL) return 0;
    p = q + 1;
    if (p >= stop || *p != (col + 1 < sc->ncols ? ',' : '\n')) return 0;
    *pp = p + 1;
    char kind = sc->kinds[col];
    if (kind == 'n') {
        PyObject *name = name_of(sc, col, s, q);
        if (name == NULL)
            return PyErr_Occurred() ? -1 : 0;
        if (PyList_Append(sc->names, name) < 0)
            return -1;
    } else if (kind == 'm' || kind == 'd') {
        Py_ssize_t at = sc->rows * sc->metrics + *m;
        if (at >= sc->cap) return 0;
        if (!metric(s, q, kind == 'd', &sc->vote, sc->out + at)) {
            PyObject *t = Py_BuildValue("(nnn)", at, (Py_ssize_t)(s - sc->base), (Py_ssize_t)(q - sc->base));
            if (t == NULL || PyList_Append(sc->odd, t) < 0) {
                Py_XDECREF(t);
                return -1;
            }
            Py_DECREF(t);
        }
        (*m)++;
    }
    return 1;
}

/* a row of every column (cell() gave 2) at `row`, its cells up to the 'e' read: what it added to the
 * names, odd cells and vote taken back, its line's (index, start, end) handed out in `full`, *pp past
 * its line end; 0 where it has none */
static int full_row(Scan *sc, const unsigned char **pp, const unsigned char *stop, const unsigned char *row,
                    Py_ssize_t names_at, Py_ssize_t odd_at, Vote vote) {
    const unsigned char *nl = memchr(*pp, '\n', (size_t)(stop - *pp));
    if (nl == NULL) return 0;
    if (PyList_SetSlice(sc->names, names_at, PY_SSIZE_T_MAX, NULL) < 0 ||
        PyList_SetSlice(sc->odd, odd_at, PY_SSIZE_T_MAX, NULL) < 0)
        return -1;
    sc->vote = vote;
    PyObject *t = Py_BuildValue("(nnn)", sc->rows + PyList_GET_SIZE(sc->full), (Py_ssize_t)(row - sc->base),
                                (Py_ssize_t)(nl + 1 - sc->base));
    if (t == NULL || PyList_Append(sc->full, t) < 0) {
        Py_XDECREF(t);
        return -1;
    }
    Py_DECREF(t);
    *pp = nl + 1;
    return 1;
}

static PyObject *rows(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer data, kinds, out;
    Py_ssize_t start, end;
    PyObject *seen = Py_None;
    if (!PyArg_ParseTuple(args, "y*nny*w*|O", &data, &start, &end, &kinds, &out, &seen)) return NULL;
    PyObject *result = NULL;
    Scan sc = {(const unsigned char *)data.buf, (const char *)kinds.buf, kinds.len, 0, 0,
               (double *)out.buf, out.len / (Py_ssize_t)sizeof(double), {0, 0, 0}, PyList_New(0), PyList_New(0),
               PyList_New(0), {NULL, 0, 0, 64, NULL}, seen == Py_None ? NULL : seen,
               PyMem_Calloc((size_t)kinds.len + 1, sizeof(PyObject *))};
    for (Py_ssize_t k = 0; k < kinds.len; k++) sc.metrics += (sc.kinds[k] == 'm' || sc.kinds[k] == 'd');
    if (sc.seen != NULL && !PyDict_CheckExact(sc.seen)) {
        PyErr_SetString(PyExc_TypeError, "rows: seen must be a dict or None");
        goto done;
    }
    if (sc.last == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (sc.names == NULL || sc.odd == NULL || sc.full == NULL || bt_init(&sc.texts, 64) < 0 || start < 0 ||
        end > data.len || start > end || kinds.len == 0)
        goto done;
    const unsigned char *p = sc.base + start, *stop = sc.base + end;
    int ok = 1;
    while (ok > 0 && p < stop) {
        Py_ssize_t m = 0, names_at = PyList_GET_SIZE(sc.names), odd_at = PyList_GET_SIZE(sc.odd);
        const unsigned char *row = p;
        Vote vote = sc.vote;
        for (Py_ssize_t col = 0; ok == 1 && col < sc.ncols; col++) ok = cell(&sc, &p, stop, col, &m);
        if (ok == 2)
            ok = full_row(&sc, &p, stop, row, names_at, odd_at, vote);
        else
            sc.rows += ok > 0;
    }
    if (ok < 0) goto done;
    if (ok == 0) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    result = Py_BuildValue("(nlliOOO)", sc.rows, sc.vote.dot, sc.vote.comma, sc.vote.undecided, sc.names, sc.odd,
                           sc.full);
done:
    Py_XDECREF(sc.names);
    Py_XDECREF(sc.odd);
    Py_XDECREF(sc.full);
    bt_free(&sc.texts);
    PyMem_Free(sc.last);
    PyBuffer_Release(&data);
    PyBuffer_Release(&kinds);
    PyBuffer_Release(&out);
    return result;
}

/* page_end(data, lo, hi): the lines of a page's rows from `lo` (a line's start) walked to the first
 * that is not one -- a line that does not start with '"' (an empty one too), or starts another page
 * ('"ID",', '"Process ID",') -- for the lines starting before `hi`: (its offset or -1 where none of
 * those lines is it, the '\n' passed on the way, the offset of the first line not looked at). Where
 * the data ends in a line with no '\n' that line is a row; at the data's end the page ends. What
 * ncu_raw._PAGE_END's search and a count of the '\n' before it give, in one pass. */
static PyObject *page_end(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer data;
    Py_ssize_t lo, hi, lines = 0;
    if (!PyArg_ParseTuple(args, "y*nn", &data, &lo, &hi)) return NULL;
    const char *b = (const char *)data.buf;
    Py_ssize_t len = data.len, at = lo < 0 ? 0 : lo, end = -1;
    hi = hi > len ? len : hi;
    while (at < hi) {
        const char *s = b + at;
        Py_ssize_t left = len - at;
        if (*s != '"' || (left >= 5 && memcmp(s, "\"ID\",", 5) == 0) ||
            (left >= 13 && memcmp(s, "\"Process ID\",", 13) == 0)) {
            end = at;
            break;
        }
        const char *nl = memchr(s, '\n', left);
        if (nl == NULL) {
            at = len;
            break;
        }
        lines++;
        at = nl - b + 1;
    }
    if (end < 0 && at >= len) end = len;
    PyBuffer_Release(&data);
    return Py_BuildValue("(nnn)", end, lines, at);
}

static PyMethodDef methods[] = {
    {"rows", rows, METH_VARARGS,
     "rows(data, start, end, kinds, out[, seen]) -> (rows, dot, comma, undecided, names, odd, full) | None: an ncu "
     "page's rows (see the module's source)"},
    {"page_end", page_end, METH_VARARGS,
     "page_end(data, lo, hi) -> (end or -1, newlines, next): where a page's rows end (see the source)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_ncucells", NULL, -1, methods};

PyMODINIT_FUNC PyInit__ncucells(void) {
    cell_table();
    return PyModule_Create(&module);
}
