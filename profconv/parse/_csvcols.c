/* profconv.parse._csvcols: a machine-written CSV table's plain columns read in C, without pyarrow.
 *
 * columns(data, start, end, ncols, floats, counts, texts) reads the rows data[start:end] (each one line
 * ending with a newline, the last one maybe not) of a table of ncols columns, and gives
 * (rows, floats, counts, codes, pools, values): for each column index in `floats` (a tuple) the bytes
 * of one double a row, in `counts` the bytes of one int64 a row, in `texts` the bytes of one int32 a
 * row (the cell's index in its pool), the pool (the distinct cells as str, in order of first
 * appearance: as pyarrow's dictionary-encoded reading numbers them) and the values (a list of the
 * pool's str, one a row). It gives None -- the caller then reads the table
 * as before (profconv.parse.columnar, pyarrow) -- wherever a row is not plainly one:
 *   - a row of another number of cells, an empty line, a carriage return or a byte not ASCII anywhere;
 *   - a cell that starts with '"' and does not end at the next '"' (a doubled quote, a newline inside,
 *     anything between the closing quote and the next ',' or the line's end); a '"' inside another cell;
 *   - a float cell that is not [0-9]+(\.[0-9]+)? with at most 19 digits making an integer m <= 2^53 and
 *     at most 22 decimals (its value m / 10^decimals: a correctly rounded division, Clinger's fast
 *     path, the double nearest the text as Python's float() and pyarrow's fast_float give it);
 *   - a count cell that is not [0-9]{1,18}; a text cell that is empty (or quoted: it is read quotes
 *     left out).
 * Those are exactly rows that pyarrow reads as the same values (profconv.parse.columnar's semantics),
 * so the caller's columns are the same either way (tests/test_parse_csvcols.py compares both).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_bytestable.h"

#if defined(__SSE2__) && defined(__x86_64__)
#include <emmintrin.h>
#endif

#define MAX_COLS 4096
#define MAX_READ 64 /* columns read (floats, counts and texts together) */
#define RECENT 64

/* the first byte of p[i, e) that ends or quotes a cell or is not plainly ASCII: ',' '"' '\n' '\r' or
 * >= 0x80; e where there is none */
static Py_ssize_t next_special(const unsigned char *p, Py_ssize_t i, Py_ssize_t e) {
#if defined(__SSE2__) && defined(__x86_64__)
    const __m128i comma = _mm_set1_epi8(','), quote = _mm_set1_epi8('"'), nl = _mm_set1_epi8('\n'),
                  cr = _mm_set1_epi8('\r');
    for (; i + 16 <= e; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(p + i));
        __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, comma), _mm_cmpeq_epi8(v, quote)),
                                   _mm_or_si128(_mm_cmpeq_epi8(v, nl), _mm_cmpeq_epi8(v, cr)));
        int bits = _mm_movemask_epi8(hit) | _mm_movemask_epi8(v); /* the sign bit: >= 0x80 */
        if (bits)
            return i + __builtin_ctz((unsigned)bits);
    }
#endif
    for (; i < e; i++) {
        unsigned char c = p[i];
        if (c == ',' || c == '"' || c == '\n' || c == '\r' || c >= 0x80)
            return i;
    }
    return e;
}

/* a float cell p[a, b) as above: 0 with *out set, -1 where it is not one */
static const double POW10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static inline int float_cell(const unsigned char *p, Py_ssize_t a, Py_ssize_t b, double *out) {
    uint64_t m = 0;
    Py_ssize_t i = a, f;
    for (; i < b && (unsigned)(p[i] - '0') < 10; i++)
        m = m * 10 + (unsigned)(p[i] - '0');
    Py_ssize_t whole = i - a, decimals = 0;
    if (i < b) { /* a point and digits after it, to the cell's end */
        if (p[i] != '.')
            return -1;
        for (f = ++i; i < b && (unsigned)(p[i] - '0') < 10; i++)
            m = m * 10 + (unsigned)(p[i] - '0');
        decimals = i - f;
        if (decimals == 0 || i < b)
            return -1;
    }
    if (whole == 0 || whole + decimals > 19 || m > (1ULL << 53) || decimals > 22)
        return -1;
    *out = decimals ? (double)m / POW10[decimals] : (double)m;
    return 0;
}

static int count_cell(const unsigned char *p, Py_ssize_t a, Py_ssize_t b, int64_t *out) {
    int64_t v = 0;
    if (a == b || b - a > 18)
        return -1;
    for (Py_ssize_t i = a; i < b; i++) {
        unsigned d = (unsigned)p[i] - '0';
        if (d >= 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/* what is read of each column: 0 nothing, 1 a float, 2 a count, 3 a text; and where it goes */
typedef struct {
    unsigned char what[MAX_COLS];
    int slot[MAX_COLS];
} plan_t;

typedef struct {
    char *buf;
    Py_ssize_t len, cap, first; /* first: the capacity to start with */
} grow_t;

static int grow_to(grow_t *g, Py_ssize_t k);

static inline int put(grow_t *g, const void *v, Py_ssize_t k) {
    if (g->len + k > g->cap && grow_to(g, k) < 0)
        return -1;
    memcpy(g->buf + g->len, v, (size_t)k);
    g->len += k;
    return 0;
}

static int grow_to(grow_t *g, Py_ssize_t k) {
    Py_ssize_t cap = g->cap ? 2 * g->cap : g->first;
    while (cap < g->len + k)
        cap *= 2;
    char *b = PyMem_Realloc(g->buf, (size_t)cap);
    if (b == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    g->buf = b, g->cap = cap;
    return 0;
}

typedef struct {
    const unsigned char *p;
    Py_ssize_t e, ncols;
    const plan_t *plan;
    grow_t out[MAX_READ];
    bytes_table names[MAX_READ];
    int what[MAX_READ]; /* each slot's kind (1 float, 2 count, 3 text) */
    Py_ssize_t cols[MAX_READ]; /* the columns read, in the table's order */
    int nread;
    Py_ssize_t pos[MAX_COLS]; /* a row's commas (those in need[]) */
    Py_ssize_t need[2 * MAX_READ + 1]; /* the commas around the columns read, and before the last one */
    int nneed;
    struct {
        Py_ssize_t at, len;
        int64_t code;
    } recent[MAX_READ][RECENT]; /* text cells met lately, by length and last bytes: no hash of each */
} reader_t;

/* a recent[] slot for the cell p[a, a + n) (n > 0) */
static inline unsigned recent_slot(const unsigned char *p, Py_ssize_t a, Py_ssize_t n) {
    uint64_t w = 0;
    memcpy(&w, p + a + (n >= 8 ? n - 8 : 0), (size_t)(n >= 8 ? 8 : n));
    return (unsigned)(((w ^ (uint64_t)n) * 0x9E3779B97F4A7C15ULL) >> 58); /* 0..63 */
}

/* one cell read from column c (what `plan` asks of it): 1 not plain, -1 an error set */
static int take(reader_t *r, int c, Py_ssize_t a, Py_ssize_t b, int quoted) {
    int what = r->plan->what[c], s = r->plan->slot[c];
    if (what == 0)
        return 0;
    if (what == 3) {
        if (a == b)
            return 1;
        unsigned h = recent_slot(r->p, a, b - a);
        int64_t code;
        if (r->recent[s][h].len == b - a && memcmp(r->p + r->recent[s][h].at, r->p + a, (size_t)(b - a)) == 0)
            code = r->recent[s][h].code;
        else {
            code = bt_code(&r->names[s], r->p, a, b - a);
            if (code < 0)
                return code == -2 ? 1 : -1;
            r->recent[s][h].at = a, r->recent[s][h].len = b - a, r->recent[s][h].code = code;
        }
        int32_t k = (int32_t)code;
        return put(&r->out[s], &k, 4);
    }
    if (quoted)
        return 1;
    if (what == 1) {
        double v;
        return float_cell(r->p, a, b, &v) < 0 ? 1 : put(&r->out[s], &v, 8);
    }
    int64_t v;
    return count_cell(r->p, a, b, &v) < 0 ? 1 : put(&r->out[s], &v, 8);
}

/* the row at *at: its cells read, *at after its newline; 1 where it is not plain, -1 an error set */
static int row(reader_t *r, Py_ssize_t *at) {
    const unsigned char *p = r->p;
    Py_ssize_t i = *at, e = r->e;
    for (Py_ssize_t c = 0; c < r->ncols; c++) {
        int last = c == r->ncols - 1, quoted = i < e && p[i] == '"';
        Py_ssize_t a = i + quoted, j = next_special(p, a, e);
        if (quoted) {
            while (j < e && p[j] == ',')
                j = next_special(p, j + 1, e);
            if (j == e || p[j] != '"')
                return 1;
        }
        int end = (quoted ? j + 1 : j) >= e || p[quoted ? j + 1 : j] == '\n';
        if (!end && p[quoted ? j + 1 : j] != ',')
            return 1; /* a quote, a carriage return or a byte not ASCII; or after a closing quote */
        if (end != last)
            return 1; /* fewer or more cells than columns */
        int rc = take(r, (int)c, a, j, quoted);
        if (rc)
            return rc;
        i = (quoted ? j + 1 : j) + 1;
    }
    *at = i;
    return 0;
}

#if defined(__SSE2__) && defined(__x86_64__)
/* the set bits of a 16-bit mask (no popcnt instruction is assumed: the builtin is a call without it) */
static inline int ones16(unsigned m) {
    m = m - ((m >> 1) & 0x5555u);
    m = (m & 0x3333u) + ((m >> 2) & 0x3333u);
    m = (m + (m >> 4)) & 0x0f0fu;
    return (int)((m + (m >> 8)) & 0x1fu);
}

/* the line at p[i, e) (up to its newline or e: its end in *l), its commas before its first quote:
 * their count (*nf) and the places of those whose index is listed in need[0, nneed) (ascending), at
 * pos[index]; the quotes' count and the first two's places; -1 where a byte of the line is a carriage
 * return or not ASCII */
static int line_marks(const unsigned char *p, Py_ssize_t i, Py_ssize_t e, const Py_ssize_t *need, int nneed,
                      Py_ssize_t *pos, Py_ssize_t *l, Py_ssize_t *nf, Py_ssize_t q[2], int *nq) {
    const __m128i comma = _mm_set1_epi8(','), quote = _mm_set1_epi8('"'), cr = _mm_set1_epi8('\r'),
                  nl = _mm_set1_epi8('\n');
    int k = 0;
    *nf = 0, *nq = 0;
    for (Py_ssize_t b = i;; b += 16) {
        unsigned char tail[16];
        const unsigned char *src = p + b;
        if (e - b < 16) { /* the input's last bytes, a newline after them (no read past the buffer) */
            memset(tail, '\n', 16);
            memcpy(tail, p + b, (size_t)(e - b));
            src = tail;
        }
        __m128i v = _mm_loadu_si128((const __m128i *)src);
        unsigned mn = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl));
        unsigned upto = mn ? (mn & (0u - mn)) - 1 : 0xffffu; /* the bytes before the line's end */
        unsigned mc = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, comma)) & upto;
        unsigned mq = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, quote)) & upto;
        if (((unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, cr)) | (unsigned)_mm_movemask_epi8(v)) & upto)
            return -1;
        if (*nq == 0 && mq)
            mc &= (mq & (0u - mq)) - 1; /* the commas before the first quote */
        else if (*nq)
            mc = 0;
        for (; mq && *nq < 2; mq &= mq - 1)
            q[(*nq)++] = b + __builtin_ctz(mq);
        *nq += ones16(mq);
        int pc = ones16(mc);
        for (; k < nneed && need[k] < *nf + pc; k++) { /* a listed comma in this block: its place */
            unsigned m = mc;
            for (Py_ssize_t skip = need[k] - *nf; skip > 0; skip--)
                m &= m - 1;
            pos[need[k]] = b + __builtin_ctz(m);
        }
        *nf += pc;
        if (mn) {
            *l = b + __builtin_ctz(mn);
            *l = *l < e ? *l : e;
            return 0;
        }
    }
}

/* the row at *at by its commas (cells unquoted, or the last one quoted whole with no quote inside):
 * 0 read (*at after it), 1 not such a row (the caller reads it cell by cell), 2 a cell in it not plain,
 * -1 an error set */
static int fast_row(reader_t *r, Py_ssize_t *at) {
    const unsigned char *p = r->p;
    Py_ssize_t i = *at, e = r->e, nf, q[2], *pos = r->pos;
    Py_ssize_t l;
    int nq;
    if (line_marks(p, i, e, r->need, r->nneed, pos, &l, &nf, q, &nq) < 0 || nf != r->ncols - 1)
        return 1;
    int qlast = nq == 2 && q[0] == (nf ? pos[nf - 1] + 1 : i) && q[1] == l - 1 && q[1] > q[0];
    if (nq && !qlast)
        return 1;
    for (int k = 0; k < r->nread; k++) {
        Py_ssize_t c = r->cols[k], a = c ? pos[c - 1] + 1 : i, b = c < nf ? pos[c] : l;
        int quoted = qlast && c == nf;
        int rc = take(r, (int)c, a + quoted, b - quoted, quoted);
        if (rc)
            return rc < 0 ? -1 : 2; /* a cell not plain: the table is not read here */
    }
    *at = l < e ? l + 1 : e;
    return 0;
}
#endif

/* about how many rows data[start, end) holds (from its first lines' length, a little over): the
 * columns' first capacity, so that they are not copied as they grow */
static Py_ssize_t guess_rows(const unsigned char *p, Py_ssize_t start, Py_ssize_t end) {
    Py_ssize_t i = start, lines = 0;
    for (; lines < 64 && i < end; lines++) {
        const unsigned char *nl = memchr(p + i, '\n', (size_t)(end - i));
        i = nl ? nl - p + 1 : end;
    }
    if (i <= start)
        return 64;
    Py_ssize_t rows = (Py_ssize_t)((double)(end - start) / (double)(i - start) * lines * 1.125) + 64;
    return rows > 64 ? rows : 64;
}

static int read_plan(PyObject *cols, int what, Py_ssize_t ncols, plan_t *plan, reader_t *r, int *nread) {
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(cols); k++) {
        Py_ssize_t c = PyLong_AsSsize_t(PyTuple_GET_ITEM(cols, k));
        if (c == -1 && PyErr_Occurred())
            return -1;
        if (c < 0 || c >= ncols || plan->what[c] || *nread >= MAX_READ) {
            PyErr_SetString(PyExc_ValueError, "a column out of range, listed twice, or too many");
            return -1;
        }
        plan->what[c] = (unsigned char)what;
        r->what[*nread] = what;
        plan->slot[c] = (*nread)++;
    }
    return 0;
}

/* a text column's values, a str a row (the pool's: one object for equal cells), appended to `to` */
static int text_values(reader_t *r, int s, Py_ssize_t rows, PyObject *to) {
    PyObject *values = PyList_New(rows), *strs = r->names[s].strs;
    if (values == NULL)
        return -1;
    const int32_t *codes = (const int32_t *)r->out[s].buf;
    for (Py_ssize_t k = 0; k < rows; k++)
        PyList_SET_ITEM(values, k, Py_NewRef(PyList_GET_ITEM(strs, codes[k])));
    int rc = PyList_Append(to, values);
    Py_DECREF(values);
    return rc;
}

/* the result tuple (see the module comment) from a reader that read every row: the columns in the
 * order they were listed in (their slots) */
static PyObject *result(reader_t *r, Py_ssize_t rows, int nread, PyObject *lists[4], PyObject *pools) {
    for (int s = 0; s < nread; s++) {
        int what = r->what[s];
        PyObject *b = PyBytes_FromStringAndSize(r->out[s].buf ? r->out[s].buf : "", r->out[s].len);
        if (b == NULL || PyList_Append(lists[what - 1], b) < 0) {
            Py_XDECREF(b);
            return NULL;
        }
        Py_DECREF(b);
        if (what == 3 && (PyList_Append(pools, r->names[s].strs) < 0 || text_values(r, s, rows, lists[3]) < 0))
            return NULL;
    }
    return Py_BuildValue("(nOOOOO)", rows, lists[0], lists[1], lists[2], pools, lists[3]);
}

static PyObject *read_all(reader_t *r, Py_ssize_t start, int nread) {
    Py_ssize_t at = start, rows = 0;
    int rc = 0;
    while (at < r->e) {
#if defined(__SSE2__) && defined(__x86_64__)
        rc = fast_row(r, &at);
        if (rc == 1)
#endif
            rc = row(r, &at);
        if (rc)
            break;
        rows++;
    }
    if (rc < 0)
        return NULL;
    if (rc > 0 || rows == 0)
        Py_RETURN_NONE;
    PyObject *lists[4] = {PyList_New(0), PyList_New(0), PyList_New(0), PyList_New(0)}, *pools = PyList_New(0), *out = NULL;
    if (lists[0] && lists[1] && lists[2] && lists[3] && pools)
        out = result(r, rows, nread, lists, pools);
    for (int k = 0; k < 4; k++)
        Py_XDECREF(lists[k]);
    Py_XDECREF(pools);
    return out;
}

static PyObject *columns(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer buf;
    Py_ssize_t start, end, ncols;
    PyObject *floats, *counts, *texts;
    if (!PyArg_ParseTuple(args, "y*nnnO!O!O!", &buf, &start, &end, &ncols, &PyTuple_Type, &floats, &PyTuple_Type,
                          &counts, &PyTuple_Type, &texts))
        return NULL;
    PyObject *out = NULL;
    plan_t *plan = PyMem_Calloc(1, sizeof(plan_t));
    reader_t *r = PyMem_Calloc(1, sizeof(reader_t));
    int nread = 0, ok = plan != NULL && r != NULL;
    if (!ok)
        PyErr_NoMemory();
    else if (start < 0 || end > buf.len || start > end || ncols < 1 || ncols > MAX_COLS) {
        PyErr_SetString(PyExc_ValueError, "rows or columns out of range");
        ok = 0;
    }
    ok = ok && read_plan(floats, 1, ncols, plan, r, &nread) == 0 && read_plan(counts, 2, ncols, plan, r, &nread) == 0 &&
         read_plan(texts, 3, ncols, plan, r, &nread) == 0;
    for (int s = 0; ok && s < nread; s++)
        ok = bt_init(&r->names[s], 1024) == 0;
    for (Py_ssize_t c = 0; ok && c < ncols; c++)
        if (plan->what[c])
            r->cols[r->nread++] = c;
    for (int k = 0; ok && k < r->nread; k++) { /* ascending: the columns are in the table's order */
        Py_ssize_t c = r->cols[k];
        if (c > 0 && (r->nneed == 0 || r->need[r->nneed - 1] < c - 1))
            r->need[r->nneed++] = c - 1;
        if (c < ncols - 1 && (r->nneed == 0 || r->need[r->nneed - 1] < c))
            r->need[r->nneed++] = c;
    }
    if (ok && ncols >= 2 && (r->nneed == 0 || r->need[r->nneed - 1] < ncols - 2))
        r->need[r->nneed++] = ncols - 2;
    Py_ssize_t guess = guess_rows((const unsigned char *)buf.buf, start, end);
    for (int s = 0; ok && s < nread; s++)
        r->out[s].first = (r->what[s] == 3 ? 4 : 8) * guess;
    if (ok) {
        r->p = (const unsigned char *)buf.buf, r->e = end, r->ncols = ncols, r->plan = plan;
        out = read_all(r, start, nread);
    }
    for (int s = 0; r != NULL && s < MAX_READ; s++) {
        PyMem_Free(r->out[s].buf);
        if (r->names[s].strs != NULL || r->names[s].slots != NULL)
            bt_free(&r->names[s]);
    }
    PyMem_Free(plan);
    PyMem_Free(r);
    PyBuffer_Release(&buf);
    return out;
}

static PyMethodDef methods[] = {
    {"columns", columns, METH_VARARGS,
     "columns(data, start, end, ncols, floats, counts, texts) -> (rows, floats, counts, codes, pools, values) or None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_csvcols", NULL, -1, methods};

PyMODINIT_FUNC PyInit__csvcols(void) { return PyModule_Create(&module); }
