/* profconv.parse._summarycells: the cells of a sweep's many small summary tables, read in C.
 *
 * A sweep's `nsys stats --format csv` logs concatenated hold thousands of small tables of one header
 * (profconv.parse.dialects.nsys_batch). Their rows are read here straight from the input's bytes,
 * table by table, without joining them first and without pyarrow:
 *
 * status(data, bounds, ncells, whole) gives one status byte per row of the ranges data[b:e], for each
 * (b, e) in `bounds` (bytes of int64 pairs; each range whole lines, each ending with a newline): the
 * bits of profconv.parse._bytescan.cells (1: not a plain row -- ncells numbers [0-9]+(\.[0-9]+)? each
 * followed by a comma, [0-9]{1,18} where bit j of `whole` is set for cell j, then a name that is not
 * empty, holds no comma or quote, or is one "..." with no quote inside; 2: a cell not in `whole` that
 * reads as a decimal or a grouped number, [1-9][0-9]{0,2}\.[0-9]{3}; 4: a cell not in `whole` with
 * another '.', the decimal mark then).
 *
 * columns(data, bounds, ncells, whole) reads the rows of those ranges (each a plain row) and gives
 * (cells, codes, names, status), or None where a row is not plain, a name is not ASCII or a number
 * cell is longer than MAX_CELL bytes:
 *   cells  a list of ncells bytes objects, one a cell, each of rows 8-byte values: an int64 where bit j
 *          of `whole` is set, else a double, correctly rounded as Python's float() of the cell rounds
 *          (exactly where the digits make an integer below 2^53 and at most 22 decimals: Clinger's fast
 *          path; else Python's own conversion of the text);
 *   codes  bytes of int32, one per row: its name's index in `names`;
 *   names  the distinct names as str (the quotes around a quoted name left out), in order of first
 *          appearance (as pyarrow's dictionary-encoded reading of the same rows numbers them);
 *   status what status() gives the same rows (read in the same pass).
 * nsys_batch keeps the pure-Python status and pyarrow's reader where this module is not built
 * (tests/test_parse_summary_cells.py compares both).
 *
 * nvprof(data, (et, ea, emin, emax)) reads the rows of a sweep's `nvprof --csv` summary tables
 * (profconv.parse.dialects.nvprof.csv_batch), data their lines each ending with a newline, and gives
 * (cells, type codes, types, name codes, names, decimals, bad): cells six bytes objects of one 8-byte
 * value a row (Time(%), Time, Calls, Avg, Min, Max: the calls an int64, the others doubles of the
 * cell times 10**e of its column's unit, as float() of the text followed by 'e<e>' gives it), the
 * labels and names numbered as above (int32 codes, -1 for a row not read), two bytes a row (the
 * decimals of its Time and Avg cells) and one (1: not a plain row -- see nv_split -- its values 0).
 * csv_batch keeps pyarrow's reader where this module is not built (tests compare both).
 * nvprof_found(lines, i, header) gives those tables as csv_batch._found takes them (pairs, the units
 * line where all have the same, the lines after them); nvprof_sizes(tables) their rows' counts.
 *
 * nvprof_starts(lines, heads) reads the start and result lines of a sweep's profiles (two and one
 * lines before each table's header) as profconv.parse.dialects.nvprof.sweep._plain_many does.
 *
 * nvprof_lines(lines, tables, exps) gives what nvprof() gives for the rows lines[h + 2 : e] of each
 * (h, e) in `tables`, read from the list of str itself (no text joined and encoded first).
 *
 * nvprof_sweep(data, header, units, exps, last[, alloc]) reads a machine-written sweep's profiles (start,
 * result, header, units lines and plain rows, nothing else) straight from a chunk of the file's bytes:
 * each profile's PID, command and rows, the rows' cells as nvprof() gives them (or written into the six
 * writable buffers of 8 x rows bytes alloc(rows) gives: the caller's own columns, no copy), no line made a str
 * (profconv.parse.dialects.nvprof.csv_sweep; None where a profile is of another shape: the readers
 * then). nvprof_take(pool, codes) and nvprof_runs(values, sizes) make its list columns.
 *
 * nsys_sweep(data, head, reports, ncells, whole, (pct, time, calls, avg), max_rows[, head2, ncells2, whole2,
 * dest2, head3, unread, gap_ranges, needles]) checks and reads a chunk of a plain `nsys stats --format csv` sweep
 * (profconv.parse.dialects.nsys_csv_sweep) in one pass of its shape and one of its rows: tables each
 * after (a run's "Generating SQLite file P from P" line) "Processing [P] with [PREFIX/reports/R.py]..."
 * and a blank line (P [A-Za-z0-9._/-]+ or a Windows path: ns_any_path, ns_win_path_ok; the separators '/'
 * or '\\'; R one of `reports`, no "/reports/" in the first P), a header
 * line starting with `head`, `head2` or `head3` (at most eight distinct ones a chunk, given back: the caller
 * holds each to the cells' layout), 1 to max_rows - 1 rows (lines starting with a digit) and a blank
 * line; the first table a run's, the data ending with a blank. Every row is read as columns() reads it
 * and must be one nsys_batch takes: plain (status bit 1 clear), a name of printable ASCII without '&'
 * or '\\', doubles finite, Time(%) (cell `pct`) at most 100, the total within 1% of calls x average,
 * per table no undecided cell without a decimal one. A table whose header starts with head2 (the
 * second kind: a memory-size report's, no Time(%)) has ncells2 cells (whole2 its whole ones), each
 * read into the column of the first kind's cell dest2[j] (a byte a cell), its Time(%) NaN, only held
 * to be plain and finite. A table whose header starts with head3 (the third kind: an NVTX report's,
 * checked before head, which it starts with) is read as the first kind's, a cell of letters (its
 * Style) between the numbers and the name left out. It gives (tables, cells, codes, names, gaps, headers, newlines): per table
 * (rows, report index, starts a run, kind 0, 1 or 2, the newlines before its header line, before its
 * run's Generating line or -1) as bytes of int64, columns()'s cells, codes and names, the text before
 * each table joined by NULs (the chunk's start or the previous table's end up to the header line),
 * the distinct header lines (a tuple of bytes, in order of first appearance) and the chunk's
 * newlines, then per table of a report in `unread` (a tuple of bytes: reports whose tables nsys's
 * readers note and do not read) the newlines before its header line and before its last line and the
 * report's index in `unread` (bytes of int64): such a report's Processing line, a blank line or not, its
 * table (a header of [A-Za-z0-9 ()_./,-] with a comma and none of what the readers take otherwise, rows
 * of printable ASCII with a comma and no '%') and a blank line, where a SKIPPED report may be: before a
 * run's Generating line or at the chunk's end (the gaps then end with a NUL and what follows the last
 * table); None where the chunk is not of that shape (the caller reads it otherwise). With gap_ranges
 * true, the gaps are given as ranges of data instead (bytes of int64 pairs, the same bounds: a range a
 * table, then the one after the last table where a report not read is there), not copied out and joined
 * (_kahan.find_any looks in such ranges; NSYS_SWEEP_GAP_RANGES says a build takes the flag). With `needles`
 * (a tuple of str as find_any takes them), each of those ranges is looked in for them as the shape's pass walks
 * it (its bytes still in the cache: not a second pass over them, ~40% of an app on unified memory's sweep with
 * its um_* tables), and whether one is there is given after `noted`: True or False, None where the needles are
 * not ones find_any looks for (NSYS_SWEEP_NEEDLES says a build takes them; None: none). With `alloc`, the cells
 * are written into the ncells writable buffers of 8 x rows bytes alloc(rows) gives (the caller's own columns,
 * no copy; NVPROF_SWEEP_ALLOC says a build takes it, here and in nvprof_sweep).
 *
 * nvprof_tables(lines, i, header) finds those tables in a parse's lines (a list of str): every index
 * h >= i whose line is `header`, where the lines from h + 2 on start and end with a quote (two
 * characters at least; one such line at least), and the index after them: (heads, ends), bytes of
 * int64 each (csv_batch.extent's loop, table by table, where this module is not built).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "_bytestable.h"
#include "_teddy.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define MAX_CELL 320

/* The ranges of `bounds` (int64 pairs) checked against the data's length; NULL with an error set. */
static const int64_t *ranges(Py_buffer *b, Py_ssize_t len, const unsigned char *p, Py_ssize_t *count) {
    if (b->len % 16) {
        PyErr_SetString(PyExc_ValueError, "bounds: int64 pairs");
        return NULL;
    }
    const int64_t *r = (const int64_t *)b->buf;
    *count = b->len / 16;
    for (Py_ssize_t k = 0; k < *count; k++) {
        int64_t a = r[2 * k], e = r[2 * k + 1];
        if (a < 0 || e > len || a > e || (e > a && p[e - 1] != '\n')) {
            PyErr_SetString(PyExc_ValueError, "bounds: 0 <= b <= e <= len(data), data[e-1] a newline");
            return NULL;
        }
    }
    return r;
}

typedef struct {
    Py_ssize_t a, n;      /* a cell's digits (a '.' among them or not) */
    unsigned long long m; /* the digits as one integer, the '.' left out (exact up to 19 digits) */
    int digits, frac;     /* how many digits, how many of them after the '.' */
} cell_t;

/* The number cell at p[*i] (digits, then a '.' and digits or not) followed by its comma (before p[n]; p[n]
 * is the row's newline: no digit): 1 where so, its digits as one integer in *m (the '.' left out, exact up
 * to 19 digits), how many before the '.' and after it in *d1 and *d2 (0 where none), whether there is one
 * in *dot, *i at the comma; 0 where not */
static inline int split_cell(const unsigned char *p, Py_ssize_t n, Py_ssize_t *i, unsigned long long *m,
                             Py_ssize_t *d1, Py_ssize_t *d2, int *dot) {
    Py_ssize_t k = *i, a = k;
    unsigned long long v = 0;
    unsigned d;
    while ((d = (unsigned)p[k] - '0') < 10) {
        v = v * 10 + d;
        k++;
    }
    *d1 = k - a, *d2 = 0;
    *dot = k < n && p[k] == '.';
    if (*dot) {
        Py_ssize_t b = ++k;
        while ((d = (unsigned)p[k] - '0') < 10) {
            v = v * 10 + d;
            k++;
        }
        *d2 = k - b;
    }
    *i = k, *m = v;
    return !(*d1 == 0 || (*dot && *d2 == 0) || k >= n || p[k] != ',');
}

/* The number cells of one row p[0:n] (its newline not included) split into `cells` (where not NULL):
 * its status (see above; 1 where they are not ncells plain cells each followed by a comma), *at the
 * index after the last one's comma. */
static unsigned char split_cells(const unsigned char *p, Py_ssize_t n, Py_ssize_t ncells, unsigned long long whole,
                                 cell_t *cells, Py_ssize_t *at) {
    Py_ssize_t i = 0;
    unsigned char status = 0;
    for (Py_ssize_t j = 0; j < ncells; j++) {
        Py_ssize_t a = i, d1, d2;
        unsigned long long m;
        int dot;
        if (!split_cell(p, n, &i, &m, &d1, &d2, &dot))
            return 1;
        if ((whole >> j) & 1ULL) {
            if (dot || d1 > 18)
                return 1;
        } else if (dot) {
            status |= (d1 <= 3 && p[a] != '0' && d2 == 3) ? 2 : 4;
        }
        if (cells != NULL)
            cells[j] = (cell_t){a, i - a, m, (int)(d1 + d2), (int)d2};
        i++; /* the comma */
    }
    *at = i;
    return status;
}

/* The name p[i:n] of a row: 0 where it is not empty and holds no comma or quote, or is one "..." with
 * no quote inside (its bytes, the quotes left out, at *name, *name_n), else 1 */
static unsigned char split_name(const unsigned char *p, Py_ssize_t n, Py_ssize_t i, Py_ssize_t *name,
                                Py_ssize_t *name_n) {
    const unsigned char *nm = p + i;
    Py_ssize_t m = n - i;
    if (m == 0)
        return 1;
    if (nm[0] == '"') {
        if (m < 3 || nm[m - 1] != '"' || memchr(nm + 1, '"', (size_t)(m - 2)) != NULL)
            return 1;
        *name = i + 1;
        *name_n = m - 2;
    } else {
        if (memchr(nm, '"', (size_t)m) != NULL || memchr(nm, ',', (size_t)m) != NULL)
            return 1;
        *name = i;
        *name_n = m;
    }
    return 0;
}

/* One row p[0:n] (its newline not included) split: its status (see above), its number cells in
 * `cells` and its name's bytes (quotes left out) at *name, *name_n. */
static unsigned char split_row(const unsigned char *p, Py_ssize_t n, Py_ssize_t ncells, unsigned long long whole,
                               cell_t *cells, Py_ssize_t *name, Py_ssize_t *name_n) {
    Py_ssize_t at = 0;
    unsigned char status = split_cells(p, n, ncells, whole, cells, &at);
    return status & 1 ? status : status | split_name(p, n, at, name, name_n);
}

static PyObject *status(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer buf, bounds;
    Py_ssize_t ncells, count, lines = 0;
    unsigned long long whole;
    if (!PyArg_ParseTuple(args, "y*y*nK", &buf, &bounds, &ncells, &whole))
        return NULL;
    const unsigned char *p = (const unsigned char *)buf.buf;
    PyObject *out = NULL;
    const int64_t *r = ncells < 0 || ncells > 64 ? NULL : ranges(&bounds, buf.len, p, &count);
    if (r == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "ncells: 0 to 64");
        goto done;
    }
    for (Py_ssize_t k = 0; k < count; k++)
        for (const unsigned char *q = p + r[2 * k]; (q = memchr(q, '\n', (size_t)(p + r[2 * k + 1] - q))) != NULL; q++)
            lines++;
    out = PyBytes_FromStringAndSize(NULL, lines);
    if (out == NULL)
        goto done;
    unsigned char *o = (unsigned char *)PyBytes_AS_STRING(out);
    Py_ssize_t row = 0, name, name_n;
    for (Py_ssize_t k = 0; k < count; k++) {
        for (Py_ssize_t i = r[2 * k], e = r[2 * k + 1]; i < e;) {
            const unsigned char *nl = memchr(p + i, '\n', (size_t)(e - i));
            Py_ssize_t z = (Py_ssize_t)(nl - p);
            o[row++] = split_row(p + i, z - i, ncells, whole, NULL, &name, &name_n);
            i = z + 1;
        }
    }
done:
    PyBuffer_Release(&buf);
    PyBuffer_Release(&bounds);
    return out;
}

static const double POW10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                  1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* The double of the cell d[0:n] (digits, one '.' or none) times 10**exp (-22 <= exp <= 22), as
 * float() of the cell's text followed by 'e<exp>' gives it; 0 where it cannot. */
static int cell_scaled(const unsigned char *d, Py_ssize_t n, int exp, double *out) {
    unsigned long long m = 0;
    int frac = 0, seen = 0, digits = 0;
    for (Py_ssize_t k = 0; k < n && digits <= 15; k++) {
        if (d[k] == '.') {
            seen = 1;
            continue;
        }
        m = m * 10 + (unsigned long long)(d[k] - '0');
        frac += seen;
        digits++;
    }
    int scale = exp - frac; /* Clinger's fast path: m and 10**|scale| exact, one rounding */
    if (digits <= 15 && scale >= -22 && scale <= 22) {
        *out = scale < 0 ? (double)m / POW10[-scale] : (double)m * POW10[scale];
        return 1;
    }
    if (n > MAX_CELL)
        return 0;
    char text[MAX_CELL + 8];
    memcpy(text, d, (size_t)n);
    if (exp)
        snprintf(text + n, 8, "e%d", exp);
    else
        text[n] = '\0';
    double v = PyOS_string_to_double(text, NULL, NULL);
    if (v == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    *out = v;
    return 1;
}

/* cell_scaled of a cell split already (its digits read into c->m): without reading them again. */
static inline int cell_value(const unsigned char *p, const cell_t *c, int exp, double *out) {
    int scale = exp - c->frac;
    if (c->digits <= 15 && scale >= -22 && scale <= 22) {
        *out = scale < 0 ? (double)c->m / POW10[-scale] : (double)c->m * POW10[scale];
        return 1;
    }
    return cell_scaled(p + c->a, c->n, exp, out);
}

/* The code of the name p[a:a+n] among the distinct names met so far (_bytestable.h: each a str once,
 * numbered in order of first appearance): -1 with an error set, -2 where it is not ASCII. */
static int64_t name_code(const unsigned char *p, Py_ssize_t a, Py_ssize_t n, bytes_table *t) {
    int64_t code = bt_code(t, p, a, n);
    if (code > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "more than 2**31 distinct names");
        return -1;
    }
    return code;
}

/* Row `row` read into cells/codes/status: 1 read, 0 not plain (or a cell it cannot read), -1 error. */
static int read_row(const unsigned char *p, Py_ssize_t i, Py_ssize_t z, Py_ssize_t ncells, unsigned long long whole,
                    Py_ssize_t row, char *const *base, int32_t *codes, unsigned char *status, bytes_table *t) {
    cell_t cs[64];
    Py_ssize_t name = 0, name_n = 0;
    status[row] = split_row(p + i, z - i, ncells, whole, cs, &name, &name_n);
    if (status[row] & 1)
        return 0;
    for (Py_ssize_t j = 0; j < ncells; j++) {
        char *slot = base[j] + 8 * row;
        if ((whole >> j) & 1ULL) {
            int64_t v = (int64_t)cs[j].m; /* at most 18 digits, no '.' */
            memcpy(slot, &v, 8);
        } else {
            double v;
            if (!cell_value(p + i, &cs[j], 0, &v))
                return 0;
            memcpy(slot, &v, 8);
        }
    }
    int64_t code = name_code(p, i + name, name_n, t);
    if (code < 0)
        return code == -2 ? 0 : -1;
    codes[row] = (int32_t)code;
    return 1;
}

/* The lines in the ranges r[0:count] of p (their newlines) */
static Py_ssize_t range_lines(const unsigned char *p, const int64_t *r, Py_ssize_t count) {
    Py_ssize_t rows = 0;
    for (Py_ssize_t k = 0; k < count; k++)
        for (const unsigned char *q = p + r[2 * k]; (q = memchr(q, '\n', (size_t)(p + r[2 * k + 1] - q))) != NULL; q++)
            rows++;
    return rows;
}

/* The rows of the ranges r[0:count] of p read into the columns `base` and into codes and status
 * (`rows` of each, the count the caller gave or found): 1, 0 where one is not plain, -1 with an error set
 * (more or fewer rows than `rows`) */
static int columns_read(const unsigned char *p, const int64_t *r, Py_ssize_t count, Py_ssize_t rows,
                        Py_ssize_t ncells, unsigned long long whole, char *const *base, int32_t *codes,
                        unsigned char *status, bytes_table *t) {
    Py_ssize_t row = 0;
    for (Py_ssize_t k = 0; k < count; k++) {
        for (Py_ssize_t i = r[2 * k], e = r[2 * k + 1]; i < e; row++) {
            if (row == rows) {
                PyErr_SetString(PyExc_ValueError, "more rows than given");
                return -1;
            }
            Py_ssize_t z = (Py_ssize_t)((const unsigned char *)memchr(p + i, '\n', (size_t)(e - i)) - p);
            int got = read_row(p, i, z, ncells, whole, row, base, codes, status, t);
            if (got <= 0)
                return got;
            i = z + 1;
        }
    }
    if (row != rows) {
        PyErr_SetString(PyExc_ValueError, "fewer rows than given");
        return -1;
    }
    return 1;
}

static PyObject *columns(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer buf, bounds;
    Py_ssize_t ncells, count, rows = 0, given = -1;
    unsigned long long whole;
    if (!PyArg_ParseTuple(args, "y*y*nK|n", &buf, &bounds, &ncells, &whole, &given))
        return NULL;
    const unsigned char *p = (const unsigned char *)buf.buf;
    PyObject *out = NULL, *cells = NULL, *codes = NULL, *status = NULL;
    bytes_table t;
    int ready = bt_init(&t, 256);
    const int64_t *r = ncells < 0 || ncells > 64 ? NULL : ranges(&bounds, buf.len, p, &count);
    if (r == NULL || ready < 0) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "ncells: 0 to 64");
        goto done;
    }
    /* (the caller's count, checked as the rows are read: no pass to count them) */
    rows = given >= 0 ? given : range_lines(p, r, count);
    cells = PyList_New(ncells);
    codes = PyBytes_FromStringAndSize(NULL, 4 * rows);
    status = PyBytes_FromStringAndSize(NULL, rows);
    if (cells == NULL || codes == NULL || status == NULL)
        goto done;
    char *base[64]; /* each cell's column */
    for (Py_ssize_t j = 0; j < ncells; j++) {
        PyObject *col = PyBytes_FromStringAndSize(NULL, 8 * rows);
        if (col == NULL)
            goto done;
        PyList_SET_ITEM(cells, j, col);
        base[j] = PyBytes_AS_STRING(col);
    }
    int got = columns_read(p, r, count, rows, ncells, whole, base, (int32_t *)PyBytes_AS_STRING(codes),
                           (unsigned char *)PyBytes_AS_STRING(status), &t);
    if (got > 0)
        out = PyTuple_Pack(4, cells, codes, t.strs, status);
    else if (got == 0)
        out = Py_NewRef(Py_None);
done:
    Py_XDECREF(cells);
    Py_XDECREF(codes);
    Py_XDECREF(status);
    bt_free(&t);
    PyBuffer_Release(&buf);
    PyBuffer_Release(&bounds);
    return out;
}

/* ---- nvprof --csv summary rows: '"Type",pct,time,calls,avg,min,max,"Name"' ---- */

#define NV_CELLS 6 /* the numbers between the quoted Type and Name: Time(%), Time, Calls, Avg, Min, Max */
#define NV_CALLS 2

/* Whether text.clean may rewrite the line p[0:n], or it holds what a plain row does not (a byte
 * that is not printable ASCII: a tab, a carriage return, UTF-8): '\\', '&', '|', '**', or an HTML
 * bold tag (</?(b|strong|code|em|i|tt)>); p[from:n] looked at (what is before it is plain). */
static int nv_odd_from(const unsigned char *p, Py_ssize_t n, Py_ssize_t from) {
    static const char *tags[] = {"b>", "strong>", "code>", "em>", "i>", "tt>"};
    /* 1: odd wherever it is; 2: '*' (odd before another); 3: '<' (odd before a bold tag); 0: plain */
    static unsigned char kind[256];
    static int ready = 0;
    if (!ready) {
        for (int c = 0; c < 256; c++)
            kind[c] = (c < 0x20 || c >= 0x7f || c == '\\' || c == '&' || c == '|') ? 1 : c == '*' ? 2 : c == '<' ? 3 : 0;
        ready = 1;
    }
    for (Py_ssize_t k = from; k < n; k++) {
        unsigned char what = kind[p[k]];
        if (!what)
            continue;
        if (what == 1)
            return 1;
        if (what == 2) {
            if (k + 1 < n && p[k + 1] == '*')
                return 1;
            continue;
        }
        Py_ssize_t a = k + 1 + (k + 1 < n && p[k + 1] == '/');
        for (size_t t = 0; t < sizeof tags / sizeof *tags; t++) {
            size_t len = strlen(tags[t]);
            if ((size_t)(n - a) >= len && memcmp(p + a, tags[t], len) == 0)
                return 1;
        }
    }
    return 0;
}

#if defined(__SSE2__)
/* Whether the 16 bytes at q hold a byte nv_odd_from stops at (not printable ASCII, '\\', '&', '|', '*', '<') */
static inline int nv_flagged16(const unsigned char *q) {
    const __m128i space = _mm_set1_epi8(0x20), del = _mm_set1_epi8(0x7f), bs = _mm_set1_epi8('\\'),
                  amp = _mm_set1_epi8('&'), bar = _mm_set1_epi8('|'), star = _mm_set1_epi8('*'), lt = _mm_set1_epi8('<');
    __m128i v = _mm_loadu_si128((const __m128i *)q);
    __m128i m = _mm_or_si128(_mm_cmplt_epi8(v, space), _mm_cmpeq_epi8(v, del)); /* (signed: >= 0x80 too) */
    m = _mm_or_si128(m, _mm_or_si128(_mm_cmpeq_epi8(v, bs), _mm_cmpeq_epi8(v, amp)));
    m = _mm_or_si128(m, _mm_or_si128(_mm_cmpeq_epi8(v, bar), _mm_or_si128(_mm_cmpeq_epi8(v, star), _mm_cmpeq_epi8(v, lt))));
    return _mm_movemask_epi8(m);
}
#endif

/* nv_odd_from(p, n, 0): where the CPU has SSE2 (every x86-64), 16 bytes a step up to the first 16
 * that hold a byte the byte loop stops at, the byte loop from there (what it finds does not depend on
 * the bytes before: it looks ahead only); the last 16 bytes (overlapping the ones before) looked at
 * so too, not byte by byte, where none before held one */
static int nv_odd(const unsigned char *p, Py_ssize_t n) {
    Py_ssize_t k = 0;
#if defined(__SSE2__)
    for (; k + 16 <= n; k += 16)
        if (nv_flagged16(p + k))
            return nv_odd_from(p, n, k);
    if (k < n && n >= 16 && !nv_flagged16(p + n - 16))
        return 0;
#endif
    return nv_odd_from(p, n, k);
}

typedef struct {
    Py_ssize_t type, type_n, name, name_n; /* offsets from the row's start, quotes left out */
    cell_t cells[NV_CELLS];
    int decimals[NV_CELLS];
} nv_row;

/* One row p[0:n] split (1) or not a plain one (0): '"' Type '"' then NV_CELLS numbers
 * [0-9]+(\.[0-9]+)?, each after a comma (the calls [0-9]{1,18}), then ',"' Name '"' -- the four quotes
 * the line's only ones, Type and Name not empty, no blank around the name, nothing nv_odd finds. */
static int nv_split(const unsigned char *p, Py_ssize_t n, nv_row *r) {
    if (n < 2 || p[0] != '"' || p[n - 1] != '"' || nv_odd(p, n))
        return 0;
    const unsigned char *q2 = memchr(p + 1, '"', (size_t)(n - 1));
    Py_ssize_t i = (Py_ssize_t)(q2 - p) + 1;
    r->type = 1;
    r->type_n = i - 2;
    if (r->type_n == 0 || i >= n || p[i] != ',')
        return 0;
    /* the line ends with '"' (checked above): a run of digits stops before its end with no bound check */
    for (int j = 0; j < NV_CELLS; j++) {
        Py_ssize_t a = ++i, d2 = 0; /* past the comma */
        unsigned long long m = 0;
        unsigned d;
        while ((d = (unsigned)p[i] - '0') < 10)
            m = m * 10 + d, i++;
        Py_ssize_t d1 = i - a;
        int dot = p[i] == '.';
        if (dot) {
            Py_ssize_t b = ++i;
            while ((d = (unsigned)p[i] - '0') < 10)
                m = m * 10 + d, i++;
            d2 = i - b;
        }
        if (d1 == 0 || (dot && d2 == 0) || i >= n || p[i] != ',' || d2 > 255 || i - a > MAX_CELL)
            return 0;
        if (j == NV_CALLS && (dot || d1 > 18))
            return 0;
        r->cells[j] = (cell_t){a, i - a, m, (int)(d1 + d2), (int)d2};
        r->decimals[j] = (int)d2;
    }
    i++; /* the comma before the name */
    if (i + 2 >= n || p[i] != '"' || p[i + 1] == ' ' || p[n - 2] == ' ' || memchr(p + i + 1, '"', (size_t)(n - i - 2)))
        return 0;
    r->name = i + 1;
    r->name_n = n - i - 2;
    return 1;
}

typedef struct {
    PyObject *cells[NV_CELLS], *types, *names, *decimals, *bad;
    char *cell[NV_CELLS];     /* where each cell column's values go: its bytes', or its given buffer's */
    Py_buffer view[NV_CELLS]; /* the given columns' buffers (`views` of them), held while they are written */
    Py_ssize_t views;
} nv_out;

/* The cell columns `alloc(rows)` gives (nvprof_sweep's and nsys_sweep's `alloc`): a list of ncells objects,
 * each a writable buffer of 8 x rows bytes (the caller's own columns, written in place), each one's bytes at
 * base[j], its view in views[j] (*nviews of them taken, for the caller to release, error or not). The list (a
 * new reference), or NULL with an exception set. */
static PyObject *given_cells(PyObject *alloc, Py_ssize_t ncells, Py_ssize_t rows, char **base, Py_buffer *views,
                             Py_ssize_t *nviews) {
    PyObject *cells = PyObject_CallFunction(alloc, "n", rows);
    if (cells == NULL)
        return NULL;
    if (!PyList_CheckExact(cells) || PyList_GET_SIZE(cells) != ncells) {
        PyErr_SetString(PyExc_TypeError, "alloc(rows): a list of a buffer a cell");
        Py_DECREF(cells);
        return NULL;
    }
    for (Py_ssize_t j = 0; j < ncells; j++) {
        if (PyObject_GetBuffer(PyList_GET_ITEM(cells, j), &views[j], PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) {
            Py_DECREF(cells);
            return NULL;
        }
        ++*nviews;
        if (views[j].len != 8 * rows) {
            PyErr_SetString(PyExc_ValueError, "alloc(rows): buffers of 8 x rows bytes");
            Py_DECREF(cells);
            return NULL;
        }
        base[j] = (char *)views[j].buf;
    }
    return cells;
}

/* given_cells into `o` (its cells holding their own references) */
static PyObject *nv_given(nv_out *o, Py_ssize_t rows, PyObject *alloc) {
    PyObject *cells = given_cells(alloc, NV_CELLS, rows, o->cell, o->view, &o->views);
    for (int j = 0; cells != NULL && j < NV_CELLS; j++)
        o->cells[j] = Py_NewRef(PyList_GET_ITEM(cells, j));
    return cells;
}

/* the output columns of `rows` rows in `o` (the list of cells returned, holding its own references), or
 * NULL with an exception set; what was made is left in `o` for the caller's cleanup. The cells are
 * new bytes objects, or alloc(rows)'s buffers where `alloc` is not NULL (nv_given). */
static PyObject *nv_alloc(nv_out *o, Py_ssize_t rows, PyObject *alloc) {
    PyObject *cells = alloc == NULL ? PyList_New(NV_CELLS) : nv_given(o, rows, alloc);
    o->types = PyBytes_FromStringAndSize(NULL, 4 * rows);
    o->names = PyBytes_FromStringAndSize(NULL, 4 * rows);
    o->decimals = PyBytes_FromStringAndSize(NULL, 2 * rows);
    o->bad = PyBytes_FromStringAndSize(NULL, rows);
    if (cells == NULL || o->types == NULL || o->names == NULL || o->decimals == NULL || o->bad == NULL) {
        Py_XDECREF(cells);
        return NULL;
    }
    for (int j = 0; j < NV_CELLS && alloc == NULL; j++) {
        if ((o->cells[j] = PyBytes_FromStringAndSize(NULL, 8 * rows)) == NULL) {
            Py_DECREF(cells);
            return NULL;
        }
        Py_INCREF(o->cells[j]);
        PyList_SET_ITEM(cells, j, o->cells[j]);
        o->cell[j] = PyBytes_AS_STRING(o->cells[j]);
    }
    return cells;
}

/* What nv_alloc made (and the cells' list) let go, with the two string tables: every reader's cleanup. */
static void nv_free(nv_out *o, PyObject *cells, bytes_table *types, bytes_table *names) {
    for (Py_ssize_t j = 0; j < o->views; j++)
        PyBuffer_Release(&o->view[j]);
    for (int j = 0; j < NV_CELLS; j++)
        Py_XDECREF(o->cells[j]);
    Py_XDECREF(cells);
    Py_XDECREF(o->types);
    Py_XDECREF(o->names);
    Py_XDECREF(o->decimals);
    Py_XDECREF(o->bad);
    bt_free(types);
    bt_free(names);
}

/* Row `row` marked not read: bad 1, label and name codes -1, decimals 0, and (where `values`) its values 0 */
static void nv_blank(nv_out *o, Py_ssize_t row, int values) {
    ((unsigned char *)PyBytes_AS_STRING(o->bad))[row] = 1;
    ((int32_t *)PyBytes_AS_STRING(o->types))[row] = ((int32_t *)PyBytes_AS_STRING(o->names))[row] = -1;
    unsigned char *dec = (unsigned char *)PyBytes_AS_STRING(o->decimals) + 2 * row;
    dec[0] = dec[1] = 0;
    for (int j = 0; j < NV_CELLS && values; j++)
        memset(o->cell[j] + 8 * row, 0, 8);
}

/* Row `row`'s values read from the line p[0:n] (NULL: not ASCII) into `o`: 1, or 0 where it is not a plain
 * row (nv_blank'ed; a row read is marked by nv_codes) */
static int nv_values(const unsigned char *p, Py_ssize_t n, const int *exps, Py_ssize_t row, nv_out *o, nv_row *r) {
    if (p == NULL || !nv_split(p, n, r)) {
        nv_blank(o, row, 1);
        return 0;
    }
    for (int j = 0; j < NV_CELLS; j++) {
        char *slot = o->cell[j] + 8 * row;
        if (j == NV_CALLS) {
            int64_t v = (int64_t)r->cells[j].m; /* at most 18 digits, no '.' */
            memcpy(slot, &v, 8);
        } else {
            double v;
            if (!cell_value(p, &r->cells[j], exps[j], &v)) {
                nv_blank(o, row, 1);
                return 0;
            }
            memcpy(slot, &v, 8);
        }
    }
    return 1;
}

/* Row `row`'s label and name codes t and m set (a row read whole: not bad; nv_blank'ed where t or m is
 * below -1, not ASCII): 0, or -1 where t or m is. */
static int nv_codes(nv_out *o, Py_ssize_t row, const nv_row *r, int64_t t, int64_t m) {
    if (t == -1 || m == -1)
        return -1;
    if (t < 0 || m < 0) { /* (a label or name not ASCII: not read, its values kept) */
        nv_blank(o, row, 0);
        return 0;
    }
    ((int32_t *)PyBytes_AS_STRING(o->types))[row] = (int32_t)t;
    ((int32_t *)PyBytes_AS_STRING(o->names))[row] = (int32_t)m;
    unsigned char *dec = (unsigned char *)PyBytes_AS_STRING(o->decimals) + 2 * row;
    dec[0] = (unsigned char)r->decimals[1]; /* Time's and Avg's decimals: a block's printed step */
    dec[1] = (unsigned char)r->decimals[3];
    ((unsigned char *)PyBytes_AS_STRING(o->bad))[row] = 0;
    return 0;
}

/* Row `row` (base[at:at+n]) read into `o`: 0 done (its bad byte set where it is not a plain row), -1 error. */
static int nv_read_row(const unsigned char *base, Py_ssize_t at, Py_ssize_t n, const int *exps, Py_ssize_t row,
                       nv_out *o, bytes_table *types, bytes_table *names) {
    nv_row r;
    if (!nv_values(base + at, n, exps, row, o, &r))
        return 0;
    int64_t t = name_code(base, at + r.type, r.type_n, types), m = t < 0 ? t : name_code(base, at + r.name, r.name_n, names);
    return nv_codes(o, row, &r, t, m);
}

static int64_t bt_code_held(bytes_table *t, const unsigned char *s, Py_ssize_t n);

/* Row `row`, the line p[0:n] (NULL: a line that is not ASCII, not read), read into `o` as nv_read_row
 * reads it: 0 done, -1 error. */
static int nv_read_line(const unsigned char *p, Py_ssize_t n, const int *exps, Py_ssize_t row, nv_out *o,
                        bytes_table *types, bytes_table *names) {
    nv_row r;
    if (!nv_values(p, n, exps, row, o, &r))
        return 0;
    int64_t t = bt_code_held(types, p + r.type, r.type_n), m = t < 0 ? t : bt_code_held(names, p + r.name, r.name_n);
    return nv_codes(o, row, &r, t, m);
}

static PyObject *nvprof(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer buf;
    int exps[NV_CELLS] = {0};
    if (!PyArg_ParseTuple(args, "y*(iiii)", &buf, &exps[1], &exps[3], &exps[4], &exps[5]))
        return NULL;
    const unsigned char *p = (const unsigned char *)buf.buf;
    Py_ssize_t rows = 0, len = buf.len;
    PyObject *out = NULL, *cells = NULL;
    nv_out o = {{NULL}, NULL, NULL, NULL, NULL};
    bytes_table types, names;
    int ready = bt_init(&types, 8) | bt_init(&names, 256);
    for (int j = 0; j < NV_CELLS; j++)
        if (exps[j] < -22 || exps[j] > 22) {
            PyErr_SetString(PyExc_ValueError, "exponents: -22 to 22");
            goto done;
        }
    if (ready < 0 || (len && p[len - 1] != '\n')) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "data: whole lines, each ending with a newline");
        goto done;
    }
    for (const unsigned char *q = p; (q = memchr(q, '\n', (size_t)(p + len - q))) != NULL; q++)
        rows++;
    if ((cells = nv_alloc(&o, rows, NULL)) == NULL)
        goto done;
    for (Py_ssize_t row = 0, i = 0; row < rows; row++) {
        Py_ssize_t z = (Py_ssize_t)((const unsigned char *)memchr(p + i, '\n', (size_t)(len - i)) - p);
        if (nv_read_row(p, i, z - i, exps, row, &o, &types, &names) < 0)
            goto done;
        i = z + 1;
    }
    out = Py_BuildValue("(OOOOOOO)", cells, o.types, types.strs, o.names, names.strs, o.decimals, o.bad);
done:
    nv_free(&o, cells, &types, &names);
    PyBuffer_Release(&buf);
    return out;
}

/* bt_code of the string s[0:n] held by a str that lives as long as the table (the lines of a parse):
 * its slot keeps the string's address (no one buffer under every string). */
static int64_t bt_code_held(bytes_table *t, const unsigned char *s, Py_ssize_t n) {
    uint64_t h = bytes_hash(s, n);
    if (2 * (t->used + 1) > t->cap && bt_grow(t) < 0)
        return -1;
    Py_ssize_t j = (Py_ssize_t)(h & (uint64_t)(t->cap - 1));
    for (; t->slots[j].hash; j = (j + 1) & (t->cap - 1)) {
        bt_slot *o = t->slots + j;
        if (o->hash == h && o->len == n && memcmp((const void *)(intptr_t)o->at, s, (size_t)n) == 0)
            return o->code;
    }
    if (t->used >= INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "more than 2**31 distinct names");
        return -1;
    }
    PyObject *u = PyUnicode_New(n, 127); /* (the line is ASCII: nv_odd refused any other byte) */
    if (u == NULL)
        return -1;
    memcpy(PyUnicode_DATA(u), s, (size_t)n);
    int bad = PyList_Append(t->strs, u);
    Py_DECREF(u);
    if (bad < 0)
        return -1;
    t->slots[j] = (bt_slot){(Py_ssize_t)(intptr_t)s, n, h, t->used};
    return t->used++;
}

/* nvprof_lines(lines, tables, exps): nvprof() of the rows lines[h + 2 : e] of each (h, e) in
 * `tables` (a list of int pairs), read from the lines themselves (no text joined and encoded): the
 * same results, a line that is not ASCII a row not read (its UTF-8 bytes are not printable ASCII). */
static PyObject *nvprof_lines(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *lines, *tables;
    int exps[NV_CELLS] = {0};
    if (!PyArg_ParseTuple(args, "O!O!(iiii)", &PyList_Type, &lines, &PyList_Type, &tables, &exps[1], &exps[3],
                          &exps[4], &exps[5]))
        return NULL;
    Py_ssize_t nt = PyList_GET_SIZE(tables), nl = PyList_GET_SIZE(lines), rows = 0;
    PyObject *out = NULL, *cells = NULL;
    nv_out o = {{NULL}, NULL, NULL, NULL, NULL};
    bytes_table types, names;
    int ready = bt_init(&types, 8) | bt_init(&names, 256);
    Py_ssize_t *bounds = PyMem_Malloc(2 * (size_t)(nt ? nt : 1) * sizeof(Py_ssize_t));
    if (ready < 0 || bounds == NULL) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto done;
    }
    for (int j = 0; j < NV_CELLS; j++)
        if (exps[j] < -22 || exps[j] > 22) {
            PyErr_SetString(PyExc_ValueError, "exponents: -22 to 22");
            goto done;
        }
    for (Py_ssize_t k = 0; k < nt; k++) {
        PyObject *pair = PyList_GET_ITEM(tables, k);
        Py_ssize_t h, e;
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 ||
            (h = PyLong_AsSsize_t(PyTuple_GET_ITEM(pair, 0))) == -1 ||
            (e = PyLong_AsSsize_t(PyTuple_GET_ITEM(pair, 1))) == -1 || h < 0 || e < h + 2 || e > nl) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "tables: (h, e) pairs, 0 <= h, h + 2 <= e <= len(lines)");
            goto done;
        }
        bounds[2 * k] = h + 2;
        bounds[2 * k + 1] = e;
        rows += e - h - 2;
    }
    if ((cells = nv_alloc(&o, rows, NULL)) == NULL)
        goto done;
    Py_ssize_t row = 0;
    for (Py_ssize_t k = 0; k < nt; k++)
        for (Py_ssize_t i = bounds[2 * k]; i < bounds[2 * k + 1]; i++, row++) {
            PyObject *s = PyList_GET_ITEM(lines, i);
            if (!PyUnicode_Check(s)) {
                PyErr_SetString(PyExc_TypeError, "lines: a list of str");
                goto done;
            }
            const unsigned char *p = PyUnicode_IS_ASCII(s) ? PyUnicode_1BYTE_DATA(s) : NULL;
            if (nv_read_line(p, PyUnicode_GET_LENGTH(s), exps, row, &o, &types, &names) < 0)
                goto done;
        }
    out = Py_BuildValue("(OOOOOOO)", cells, o.types, types.strs, o.names, names.strs, o.decimals, o.bad);
done:
    nv_free(&o, cells, &types, &names);
    PyMem_Free(bounds);
    return out;
}

/* The digits [0-9]{1,18} at p[*i:n] read into *v (*i past them): 1, or 0 where there are none or more than 18 */
static int nv_digits(const unsigned char *p, Py_ssize_t n, Py_ssize_t *i, long long *v) {
    Py_ssize_t a = *i;
    long long x = 0;
    while (*i < n && p[*i] >= '0' && p[*i] <= '9')
        x = x * 10 + (p[(*i)++] - '0');
    *v = x;
    return *i > a && *i - a <= 18;
}

/* Whether p[a:b] holds `key` */
static int nv_holds(const unsigned char *p, Py_ssize_t a, Py_ssize_t b, const char *key) {
    size_t m = strlen(key);
    for (Py_ssize_t i = a; i + (Py_ssize_t)m <= b; i++)
        if (p[i] == (unsigned char)key[0] && memcmp(p + i, key, m) == 0)
            return 1;
    return 0;
}

#define NV_START "== NVPROF is profiling process "
#define NV_COMMAND ", command: "
#define NV_RESULT "== Profiling result:"

/* A start line p[0:n] as sweep._plain reads it (ASCII): 1 with its prefix PID, process PID and
 * command (p[*ca:*cb], blanks around it left out); 0 where it is not such a line. */
static int nv_start_line(const unsigned char *p, Py_ssize_t n, long long *prefix, long long *pid, Py_ssize_t *ca,
                         Py_ssize_t *cb) {
    Py_ssize_t i = 2, ls = (Py_ssize_t)strlen(NV_START), lc = (Py_ssize_t)strlen(NV_COMMAND);
    if (n < 2 || p[0] != '=' || p[1] != '=' || !nv_digits(p, n, &i, prefix))
        return 0;
    if (n - i < ls || memcmp(p + i, NV_START, (size_t)ls) != 0)
        return 0;
    i += ls;
    if (!nv_digits(p, n, &i, pid) || n - i < lc || memcmp(p + i, NV_COMMAND, (size_t)lc) != 0)
        return 0;
    i += lc;
    for (Py_ssize_t j = i; j < n; j++) /* nothing text.clean or normalize acts on: [^&<*#>|\r], a '\\' not before a
                                           '%' (a Windows path's: clean's LaTeX rules need a '&' or a '\\' first) */
        if ((p[j] == '\\' && j + 1 < n && p[j + 1] == '%') || p[j] == '&' || p[j] == '<' || p[j] == '*' ||
            p[j] == '#' || p[j] == '>' || p[j] == '|' || p[j] == '\r')
            return 0;
    if (nv_holds(p, i, n, "\",") || nv_holds(p, i, n, "CPU profiling result") ||
        nv_holds(p, i, n, "Time(%),Time,Calls,"))
        return 0; /* keys of the readers asked before the start's: the engine's */
    Py_ssize_t a = i, b = n;
    while (a < b && Py_UNICODE_ISSPACE(p[a]))
        a++;
    while (b > a && Py_UNICODE_ISSPACE(p[b - 1]))
        b--;
    *ca = a;
    *cb = b;
    return 1;
}

/* A result line p[0:n] as sweep._plain reads it: 1 with its prefix PID, else 0 */
static int nv_result_line(const unsigned char *p, Py_ssize_t n, long long *prefix) {
    Py_ssize_t i = 2, lr = (Py_ssize_t)strlen(NV_RESULT);
    return n >= 2 && p[0] == '=' && p[1] == '=' && nv_digits(p, n, &i, prefix) && n - i == lr &&
           memcmp(p + i, NV_RESULT, (size_t)lr) == 0;
}

/* The ASCII text of lines[k] (a str), its length at *n; NULL where it is not ASCII or not a str */
static const unsigned char *nv_ascii(PyObject *lines, Py_ssize_t k, Py_ssize_t *n) {
    PyObject *s = PyList_GET_ITEM(lines, k);
    if (!PyUnicode_CheckExact(s) || !PyUnicode_IS_ASCII(s))
        return NULL;
    *n = PyUnicode_GET_LENGTH(s);
    return PyUnicode_1BYTE_DATA(s);
}

/* nvprof_starts(lines, heads): sweep._plain_many of the start and result lines two and one lines
 * before each header index in `heads` (a list of int), up to the first pair that is not plain:
 * (the start lines' prefix PIDs, their processes' PIDs, their commands, the last result line's
 * prefix PID) -- the PIDs as ints, the lists as long as the plain pairs (a command the same str
 * object as the one before where it is the same text); None where a line before that pair is not
 * ASCII (sweep._plain_many's own reading then). */
static PyObject *nvprof_starts(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *lines, *heads, *prefixes = NULL, *pids = NULL, *commands = NULL, *out = NULL, *last_cmd = NULL;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &lines, &PyList_Type, &heads))
        return NULL;
    Py_ssize_t nh = PyList_GET_SIZE(heads), nl = PyList_GET_SIZE(lines);
    long long last = -1;
    const unsigned char *lp = NULL;
    Py_ssize_t ln = 0;
    if ((prefixes = PyList_New(0)) == NULL || (pids = PyList_New(0)) == NULL || (commands = PyList_New(0)) == NULL)
        goto done;
    for (Py_ssize_t k = 0; k < nh; k++) {
        Py_ssize_t h = PyLong_AsSsize_t(PyList_GET_ITEM(heads, k)), sn, rn, ca, cb;
        if (h == -1 && PyErr_Occurred())
            goto done;
        if (h < 2 || h > nl) {
            PyErr_SetString(PyExc_ValueError, "heads: 2 <= h <= len(lines)");
            goto done;
        }
        const unsigned char *sp = nv_ascii(lines, h - 2, &sn), *rp = nv_ascii(lines, h - 1, &rn);
        if (sp == NULL || rp == NULL) {
            Py_INCREF(Py_None);
            out = Py_None;
            goto done;
        }
        long long spid, pid, rpid;
        if (!nv_start_line(sp, sn, &spid, &pid, &ca, &cb) || !nv_result_line(rp, rn, &rpid))
            break;
        PyObject *a = PyLong_FromLongLong(spid), *b = PyLong_FromLongLong(pid), *c;
        if (last_cmd != NULL && cb - ca == ln && memcmp(sp + ca, lp, (size_t)ln) == 0) {
            c = last_cmd;
            Py_INCREF(c);
        } else {
            c = PyUnicode_New(cb - ca, 127);
            if (c != NULL)
                memcpy(PyUnicode_DATA(c), sp + ca, (size_t)(cb - ca));
            last_cmd = c;
            lp = sp + ca;
            ln = cb - ca;
        }
        int bad = a == NULL || b == NULL || c == NULL || PyList_Append(prefixes, a) < 0 || PyList_Append(pids, b) < 0 ||
                  PyList_Append(commands, c) < 0;
        Py_XDECREF(a);
        Py_XDECREF(b);
        Py_XDECREF(c);
        if (bad)
            goto done;
        last = rpid;
    }
    out = Py_BuildValue("(OOOL)", prefixes, pids, commands, last);
done:
    Py_XDECREF(prefixes);
    Py_XDECREF(pids);
    Py_XDECREF(commands);
    return out;
}

/* A line that starts and ends with a quote (two characters at least): a row of csv_batch.extent's. */
static int nv_quoted(PyObject *s) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    return n > 1 && PyUnicode_READ_CHAR(s, 0) == '"' && PyUnicode_READ_CHAR(s, n - 1) == '"';
}

static int nv_push(PyObject **buf, Py_ssize_t *used, int64_t value) {
    Py_ssize_t size = PyBytes_GET_SIZE(*buf);
    if (*used + 8 > size && _PyBytes_Resize(buf, 2 * size + 64) < 0)
        return -1;
    memcpy(PyBytes_AS_STRING(*buf) + *used, &value, 8);
    *used += 8;
    return 0;
}

static PyObject *nvprof_tables(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *lines, *header, *heads = NULL, *ends = NULL, *out = NULL;
    Py_ssize_t i, nh = 0, ne = 0;
    if (!PyArg_ParseTuple(args, "O!nU", &PyList_Type, &lines, &i, &header))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(lines), width = PyUnicode_GET_LENGTH(header);
    for (Py_ssize_t k = 0; k < n; k++)
        if (!PyUnicode_Check(PyList_GET_ITEM(lines, k))) {
            PyErr_SetString(PyExc_TypeError, "lines: a list of str");
            return NULL;
        }
    if ((heads = PyBytes_FromStringAndSize(NULL, 0)) == NULL || (ends = PyBytes_FromStringAndSize(NULL, 0)) == NULL)
        goto done;
    for (Py_ssize_t h = i < 0 ? 0 : i; h < n; h++) {
        PyObject *s = PyList_GET_ITEM(lines, h);
        if (PyUnicode_GET_LENGTH(s) != width || PyUnicode_Compare(s, header) != 0)
            continue;
        Py_ssize_t j = h + 2;
        while (j < n && nv_quoted(PyList_GET_ITEM(lines, j)))
            j++;
        if (j == h + 2)
            continue;
        if (nv_push(&heads, &nh, h) < 0 || nv_push(&ends, &ne, j) < 0)
            goto done;
    }
    if (_PyBytes_Resize(&heads, nh) < 0 || _PyBytes_Resize(&ends, ne) < 0)
        goto done;
    out = Py_BuildValue("(OO)", heads, ends);
done:
    Py_XDECREF(heads);
    Py_XDECREF(ends);
    return out;
}

/* nvprof_found(lines, i, header): nvprof_tables's tables as csv_batch._found takes them: (pairs,
 * units, after) -- pairs a list of (h, e) tuples; units the line after every header where it is the
 * same text for all of them, else None; after the lines that follow each table's rows (where there
 * is one: the last table may end the lines), the same str objects as in `lines`. */
static PyObject *nvprof_found(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *lines, *header, *pairs = NULL, *after = NULL, *units = NULL, *out = NULL;
    Py_ssize_t i;
    if (!PyArg_ParseTuple(args, "O!nU", &PyList_Type, &lines, &i, &header))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(lines), width = PyUnicode_GET_LENGTH(header);
    for (Py_ssize_t k = 0; k < n; k++)
        if (!PyUnicode_Check(PyList_GET_ITEM(lines, k))) {
            PyErr_SetString(PyExc_TypeError, "lines: a list of str");
            return NULL;
        }
    int same = 1;
    if ((pairs = PyList_New(0)) == NULL || (after = PyList_New(0)) == NULL)
        goto done;
    for (Py_ssize_t h = i < 0 ? 0 : i; h < n; h++) {
        PyObject *s = PyList_GET_ITEM(lines, h);
        if (PyUnicode_GET_LENGTH(s) != width || PyUnicode_Compare(s, header) != 0)
            continue;
        Py_ssize_t j = h + 2;
        while (j < n && nv_quoted(PyList_GET_ITEM(lines, j)))
            j++;
        if (j == h + 2)
            continue;
        PyObject *u = PyList_GET_ITEM(lines, h + 1);
        if (units == NULL)
            units = u;
        else if (same && u != units) {
            int eq = PyUnicode_Compare(u, units);
            if (eq == -1 && PyErr_Occurred())
                goto done;
            same = eq == 0;
        }
        PyObject *pair = Py_BuildValue("(nn)", h, j);
        if (pair == NULL || PyList_Append(pairs, pair) < 0) {
            Py_XDECREF(pair);
            goto done;
        }
        Py_DECREF(pair);
        if (j < n && PyList_Append(after, PyList_GET_ITEM(lines, j)) < 0)
            goto done;
    }
    out = Py_BuildValue("(OOO)", pairs, same && units != NULL ? units : Py_None, after);
done:
    Py_XDECREF(pairs);
    Py_XDECREF(after);
    return out;
}

/* nvprof_sizes(tables): each (h, e) table's rows (e - h - 2) and the first's place among all of
 * theirs, two lists (csv_batch._sizes). */
static PyObject *nvprof_sizes(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *tables, *sizes = NULL, *firsts = NULL, *out = NULL;
    if (!PyArg_ParseTuple(args, "O!", &PyList_Type, &tables))
        return NULL;
    Py_ssize_t nt = PyList_GET_SIZE(tables), at = 0;
    if ((sizes = PyList_New(nt)) == NULL || (firsts = PyList_New(nt)) == NULL)
        goto done;
    for (Py_ssize_t k = 0; k < nt; k++) {
        PyObject *pair = PyList_GET_ITEM(tables, k);
        Py_ssize_t h, e;
        if (!(PyTuple_Check(pair) || PyList_Check(pair)) || PySequence_Fast_GET_SIZE(pair) != 2 ||
            ((h = PyLong_AsSsize_t(PySequence_Fast_GET_ITEM(pair, 0))) == -1 && PyErr_Occurred()) ||
            ((e = PyLong_AsSsize_t(PySequence_Fast_GET_ITEM(pair, 1))) == -1 && PyErr_Occurred())) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "tables: (h, e) pairs");
            goto done;
        }
        PyObject *a = PyLong_FromSsize_t(e - h - 2), *b = PyLong_FromSsize_t(at);
        if (a == NULL || b == NULL) {
            Py_XDECREF(a);
            Py_XDECREF(b);
            goto done;
        }
        PyList_SET_ITEM(sizes, k, a);
        PyList_SET_ITEM(firsts, k, b);
        at += e - h - 2;
    }
    out = Py_BuildValue("(OO)", sizes, firsts);
done:
    Py_XDECREF(sizes);
    Py_XDECREF(firsts);
    return out;
}

/* ---- nvprof_sweep: a machine-written `nvprof --csv` sweep read in one pass over its bytes ---- */

typedef struct {
    int64_t *v;
    Py_ssize_t n, cap;
} nv_vec;

/* x's room made at least cap values (where it has less): 0, or -1 with MemoryError. A caller that knows
 * about how many it will push makes the room once (not doubled from 1,024: each doubling a copy and new
 * pages). */
static int nv_vec_reserve(nv_vec *x, Py_ssize_t cap) {
    if (cap <= x->cap)
        return 0;
    int64_t *v = PyMem_Realloc(x->v, (size_t)cap * sizeof(int64_t));
    if (v == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    x->v = v;
    x->cap = cap;
    return 0;
}

static inline int nv_vec_push(nv_vec *x, int64_t a) {
    if (x->n == x->cap && nv_vec_reserve(x, x->cap ? 2 * x->cap : 1024) < 0)
        return -1;
    x->v[x->n++] = a;
    return 0;
}

/* The index of the newline ending the line at p[i:len], -1 where the data ends first */
static Py_ssize_t nv_eol(const unsigned char *p, Py_ssize_t i, Py_ssize_t len) {
    const unsigned char *q = memchr(p + i, '\n', (size_t)(len - i));
    return q == NULL ? -1 : (Py_ssize_t)(q - p);
}

/* A start line p[0:n] of the sweep's shape: its PID printed once in the prefix and once after
 * "process" (the same, no leading zero), the command [A-Za-z0-9._/-] words between single blanks; a
 * Windows path's '\\' (not before a '%') and drive's ':' (before a '\\' or '/': no context key's) too */
static int nv_sweep_start(const unsigned char *p, Py_ssize_t n, long long *pid, Py_ssize_t *ca, Py_ssize_t *cb) {
    long long prefix;
    if (n < 3 || p[2] == '0' || !nv_start_line(p, n, &prefix, pid, ca, cb) || prefix != *pid || *ca >= *cb ||
        *cb != n || p[*ca - 1] != ' ')
        return 0;
    for (Py_ssize_t k = *ca; k < *cb; k++) {
        unsigned char c = p[k];
        unsigned char next = k + 1 < *cb ? p[k + 1] : '\n';
        int word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                   c == '_' || c == '/' || c == '-' || (c == '\\' && next != '%') ||
                   (c == ':' && (next == '\\' || next == '/'));
        if (!word && !(c == ' ' && p[k + 1] != ' '))
            return 0;
    }
    return 1;
}

typedef struct {
    const unsigned char *p, *header, *units;
    Py_ssize_t len, header_n, units_n;
    int last;
} nv_sweep_in;

/* Whether line [a, z) is `want` [0, m) */
static int nv_line_is(const unsigned char *p, Py_ssize_t a, Py_ssize_t z, const unsigned char *want, Py_ssize_t m) {
    return z - a == m && memcmp(p + a, want, (size_t)m) == 0;
}

/* One profile at in->p[i:]: start, result, header and units lines, then rows (lines one after the
 * other: the first's offset in *first, how many in *count). The index after its last row; 0 where the
 * data ends before it is known whole (not the last chunk); -1 where it is not of the sweep's shape. */
static Py_ssize_t nv_profile(const nv_sweep_in *in, Py_ssize_t i, long long *pid, Py_ssize_t *ca, Py_ssize_t *cb,
                             Py_ssize_t *first, Py_ssize_t *count) {
    const unsigned char *p = in->p;
    Py_ssize_t z = nv_eol(p, i, in->len), z1, z2, z3;
    long long rpid;
    if (z < 0)
        return in->last ? -1 : 0;
    if (!nv_sweep_start(p + i, z - i, pid, ca, cb))
        return -1;
    *ca += i;
    *cb += i;
    if ((z1 = nv_eol(p, z + 1, in->len)) < 0 || (z2 = nv_eol(p, z1 + 1, in->len)) < 0 ||
        (z3 = nv_eol(p, z2 + 1, in->len)) < 0)
        return in->last ? -1 : 0;
    if (!nv_result_line(p + z + 1, z1 - z - 1, &rpid) || rpid != *pid ||
        !nv_line_is(p, z1 + 1, z2, in->header, in->header_n) || !nv_line_is(p, z2 + 1, z3, in->units, in->units_n))
        return -1;
    Py_ssize_t at = z3 + 1;
    *first = at, *count = 0;
    while (at < in->len && p[at] == '"') {
        if ((z = nv_eol(p, at, in->len)) < 0)
            return in->last ? -1 : 0;
        ++*count;
        at = z + 1;
    }
    if (!*count)
        return at < in->len || in->last ? -1 : 0;
    if (at < in->len) /* not the last chunk: whole where the line after its rows is there whole (a start line?) */
        return in->last || nv_eol(p, at, in->len) >= 0 ? at : 0;
    return in->last ? at : 0;
}

#define NV_PROF 5 /* a profile's values in pass 1's vector: PID, command offset and length, rows, first row's offset */

/* The profiles of in->p from 0 on (pass 1): per profile its PID, command offset and length, rows
 * and its first row's offset (the rows are lines one after the other: pass 2 finds each again, no
 * offset kept a row), their rows counted in *rows. The index after the last whole profile, -1 where
 * one is not of the sweep's shape (or an error is set). */
static Py_ssize_t nv_profiles(const nv_sweep_in *in, nv_vec *profs, Py_ssize_t *rows) {
    Py_ssize_t i = 0;
    *rows = 0;
    while (i < in->len) {
        Py_ssize_t ca, cb, first, count;
        long long pid;
        Py_ssize_t next = nv_profile(in, i, &pid, &ca, &cb, &first, &count);
        if (next < 0)
            return -1;
        if (next == 0)
            break;
        if (nv_vec_push(profs, pid) < 0 || nv_vec_push(profs, ca) < 0 || nv_vec_push(profs, cb - ca) < 0 ||
            nv_vec_push(profs, count) < 0 || nv_vec_push(profs, first) < 0)
            return -1;
        *rows += count;
        i = next;
    }
    return i;
}

/* The profiles' PIDs (int64), command codes (int32) and row counts (int64) as bytes, the commands
 * numbered in `cmds`; NULL with an error set */
static PyObject *nv_profile_columns(const unsigned char *p, const nv_vec *profs, bytes_table *cmds) {
    Py_ssize_t np = profs->n / NV_PROF;
    PyObject *pids = PyBytes_FromStringAndSize(NULL, 8 * np), *codes = PyBytes_FromStringAndSize(NULL, 4 * np),
             *counts = PyBytes_FromStringAndSize(NULL, 8 * np), *out = NULL;
    if (pids == NULL || codes == NULL || counts == NULL)
        goto done;
    for (Py_ssize_t k = 0; k < np; k++) {
        const int64_t *f = profs->v + NV_PROF * k;
        int64_t c = bt_code(cmds, p, (Py_ssize_t)f[1], (Py_ssize_t)f[2]);
        if (c < 0) {
            if (c == -2)
                PyErr_SetString(PyExc_ValueError, "a command not ASCII");
            goto done;
        }
        ((int64_t *)PyBytes_AS_STRING(pids))[k] = f[0];
        ((int32_t *)PyBytes_AS_STRING(codes))[k] = (int32_t)c;
        ((int64_t *)PyBytes_AS_STRING(counts))[k] = f[3];
    }
    out = Py_BuildValue("(OOO)", pids, codes, counts);
done:
    Py_XDECREF(pids);
    Py_XDECREF(codes);
    Py_XDECREF(counts);
    return out;
}

typedef struct {
    Py_ssize_t at, n;
    int64_t code; /* -1: none yet */
} nv_seen;

#define NV_SEEN 64 /* the rows of a profile whose label and name are first compared with the last profile's */

/* name_code of p[a:a+n], where it is the string `seen` holds (the one at the same place in the
 * profile before) without a hash; `seen` updated */
static int64_t nv_code_seen(bytes_table *t, const unsigned char *p, Py_ssize_t a, Py_ssize_t n, nv_seen *seen) {
    if (seen != NULL && seen->code >= 0 && seen->n == n && memcmp(p + seen->at, p + a, (size_t)n) == 0)
        return seen->code;
    int64_t code = name_code(p, a, n, t);
    if (seen != NULL && code >= 0)
        *seen = (nv_seen){a, n, code};
    return code;
}

/* The rows (pass 2) read as nvprof() reads them: (cells, type codes, types, name codes, names,
 * decimals), or None where one is not a plain row; NULL with an error set */
static PyObject *nv_sweep_rows(const unsigned char *p, Py_ssize_t len, const nv_vec *profs, Py_ssize_t n,
                               const int *exps, PyObject *alloc) {
    Py_ssize_t r = 0;
    PyObject *cells = NULL, *out = NULL;
    nv_out o = {{NULL}, NULL, NULL, NULL, NULL};
    bytes_table types, names;
    nv_seen seen[2 * NV_SEEN];
    for (int k = 0; k < 2 * NV_SEEN; k++)
        seen[k].code = -1;
    if ((bt_init(&types, 8) | bt_init(&names, 256)) < 0 || (cells = nv_alloc(&o, n, alloc)) == NULL)
        goto done;
    for (Py_ssize_t k = 0; k < profs->n / NV_PROF; k++) {
        Py_ssize_t at = (Py_ssize_t)profs->v[NV_PROF * k + 4], z;
        for (int64_t j = 0; j < profs->v[NV_PROF * k + 3]; j++, r++, at = z + 1) {
            nv_row row;
            z = nv_eol(p, at, len); /* (there: pass 1 saw it) */
            if (!nv_values(p + at, z - at, exps, r, &o, &row)) {
                out = Py_NewRef(Py_None);
                goto done;
            }
            nv_seen *ts = j < NV_SEEN ? seen + j : NULL, *ns = j < NV_SEEN ? seen + NV_SEEN + j : NULL;
            int64_t t = nv_code_seen(&types, p, at + row.type, row.type_n, ts);
            int64_t m = t < 0 ? t : nv_code_seen(&names, p, at + row.name, row.name_n, ns);
            if (nv_codes(&o, r, &row, t, m) < 0)
                goto done;
            if (PyBytes_AS_STRING(o.bad)[r]) {
                out = Py_NewRef(Py_None);
                goto done;
            }
        }
    }
    out = Py_BuildValue("(OOOOOO)", cells, o.types, types.strs, o.names, names.strs, o.decimals);
done:
    nv_free(&o, cells, &types, &names);
    return out;
}

/* nvprof_sweep(data, header, units, (time, avg, min, max exponents), last): the whole profiles at
 * the start of `data` (a chunk of a file: `last` where it is the file's end), each exactly
 *   ==PID== NVPROF is profiling process PID, command: COMMAND
 *   ==PID== Profiling result:
 *   HEADER
 *   UNITS
 *   one row or more (lines starting with '"', each a plain row: nv_split)
 * read in two passes over the bytes, no line made a str: (end, (pids, command codes, row counts),
 * commands, (cells, type codes, types, name codes, names, decimals)) -- end the index after the
 * last whole profile (in a chunk that is not the last: one followed by a start line of that shape,
 * read whole), the columns as nvprof() gives them -- or None where a profile (or what follows the
 * last whole one, in the last chunk) is not of that shape or a row not plain. */
static PyObject *nvprof_sweep(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer buf, hb, ub;
    int exps[NV_CELLS] = {0}, last;
    PyObject *alloc = Py_None;
    if (!PyArg_ParseTuple(args, "y*y*y*(iiii)p|O", &buf, &hb, &ub, &exps[1], &exps[3], &exps[4], &exps[5], &last,
                          &alloc))
        return NULL;
    nv_sweep_in in = {buf.buf, hb.buf, ub.buf, buf.len, hb.len, ub.len, last};
    nv_vec profs = {NULL, 0, 0};
    Py_ssize_t rows = 0;
    PyObject *out = NULL, *per = NULL, *cells = NULL;
    bytes_table cmds;
    if (bt_init(&cmds, 8) < 0)
        goto done;
    for (int j = 0; j < NV_CELLS; j++)
        if (exps[j] < -22 || exps[j] > 22) {
            PyErr_SetString(PyExc_ValueError, "exponents: -22 to 22");
            goto done;
        }
    Py_ssize_t end = nv_profiles(&in, &profs, &rows);
    if (end < 0 || (last && end != in.len)) {
        if (!PyErr_Occurred())
            out = Py_NewRef(Py_None);
        goto done;
    }
    if ((per = nv_profile_columns(in.p, &profs, &cmds)) == NULL || (cells = nv_sweep_rows(in.p, in.len, &profs, rows, exps, alloc == Py_None ? NULL : alloc)) == NULL)
        goto done;
    out = cells == Py_None ? Py_NewRef(Py_None) : Py_BuildValue("(nOOO)", end, per, cmds.strs, cells);
done:
    Py_XDECREF(per);
    Py_XDECREF(cells);
    bt_free(&cmds);
    PyMem_Free(profs.v);
    PyBuffer_Release(&buf);
    PyBuffer_Release(&hb);
    PyBuffer_Release(&ub);
    return out;
}

/* nvprof_take(pool, codes): [pool[c] for c in codes] (codes: int64), the same objects */
static PyObject *nvprof_take(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *pool, *out = NULL;
    Py_buffer cb;
    if (!PyArg_ParseTuple(args, "O!y*", &PyList_Type, &pool, &cb))
        return NULL;
    Py_ssize_t n = cb.len / (Py_ssize_t)sizeof(int64_t), m = PyList_GET_SIZE(pool);
    const int64_t *codes = cb.buf;
    for (Py_ssize_t i = 0; i < n; i++)
        if (codes[i] < 0 || codes[i] >= m) {
            PyErr_SetString(PyExc_IndexError, "nvprof_take: a code out of the pool");
            goto done;
        }
    if ((out = PyList_New(n)) == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = PyList_GET_ITEM(pool, codes[i]);
        Py_INCREF(v);
        PyList_SET_ITEM(out, i, v);
    }
done:
    PyBuffer_Release(&cb);
    return out;
}

/* nvprof_runs(values, sizes): each values[k] sizes[k] times in a row (sizes: int64, >= 0), the same objects */
static PyObject *nvprof_runs(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *values, *out = NULL;
    Py_buffer sb;
    if (!PyArg_ParseTuple(args, "O!y*", &PyList_Type, &values, &sb))
        return NULL;
    Py_ssize_t k = sb.len / (Py_ssize_t)sizeof(int64_t), n = 0;
    const int64_t *sizes = sb.buf;
    if (k != PyList_GET_SIZE(values)) {
        PyErr_SetString(PyExc_ValueError, "nvprof_runs: a size a value");
        goto done;
    }
    for (Py_ssize_t j = 0; j < k; j++) {
        if (sizes[j] < 0 || sizes[j] > PY_SSIZE_T_MAX / 16 - n) {
            PyErr_SetString(PyExc_ValueError, "nvprof_runs: sizes from 0");
            goto done;
        }
        n += (Py_ssize_t)sizes[j];
    }
    if ((out = PyList_New(n)) == NULL)
        goto done;
    for (Py_ssize_t j = 0, i = 0; j < k; j++) {
        PyObject *v = PyList_GET_ITEM(values, j);
        for (int64_t r = 0; r < sizes[j]; r++, i++) {
            Py_INCREF(v);
            PyList_SET_ITEM(out, i, v);
        }
    }
done:
    PyBuffer_Release(&sb);
    return out;
}

/* ---- nsys_sweep: a plain `nsys stats --format csv` sweep's chunk checked and read in one pass ---- */

typedef struct {
    const unsigned char *p, *head; /* head: the start every table's header line has */
    Py_ssize_t n, hn, ncells, max_rows;
    unsigned long long whole;
    PyObject *reports; /* a tuple of bytes: the report names read so */
    int pct, time, calls, avg;
    /* the second kind of table (a memory-size report's: no Time(%)), none where hn2 is 0: its header's
     * start, its cells, which are whole, and each cell's column among the first kind's (dest2) */
    const unsigned char *head2;
    Py_ssize_t hn2, ncells2;
    unsigned long long whole2;
    signed char dest2[64];
    /* the third kind (an NVTX report's: the first kind's cells, then a Style cell of letters before the
     * name), none where hn3 is 0: the start of its header (checked before `head`, which it starts with) */
    const unsigned char *head3;
    Py_ssize_t hn3;
    /* the reports whose tables are noted, not read (a tuple of bytes; NULL: none): such a report's table
     * before a run's Generating line or at the chunk's end is stepped over (ns_unread_table) */
    PyObject *unread;
    struct ns_heads_ *noted; /* the not-read tables' headers found good so far (ns_unread_known) */
    struct ns_paths_ *paths; /* the paths of Processing lines taken so far (ns_report_lines) */
    struct ns_names_ *names; /* name cells taken so far (ns_row) */
    int gap_ranges; /* the gaps given as ranges of the data (ns_gap_ranges), not their text joined */
    const needles_t *nd; /* needles looked for in the gaps as ns_shape walks them (NULL: none), */
    int *found;          /* and whether one is in them */
    PyObject *alloc;     /* alloc(rows): the cell columns to write into (ncells writable buffers), NULL: new bytes */
} ns_in;

/* The last database path a Processing line's checks took (p[db_at : db_at + db_len]) and the last folder
 * of a script path before its reports folder (p[dir_at : dir_at + dir_len], all path bytes, dir_win
 * where a Windows path's among them; len 0: none yet). A run's lines name one database and every line
 * one folder: a line with the same bytes there is not checked byte by byte again (the checks look at
 * those bytes alone). */
#define NS_TAILS 16 /* Processing lines' tails kept (ns_tail_seen): a run's reports, each one's tail */

/* A Processing line's tail taken before: "] with [SCRIPT]... \n" at p[at : at + len] (the newline too),
 * the script's end and the report's index (ns_report's: -2 a report not read) it gave */
typedef struct {
    Py_ssize_t at, len, script_end, report;
} ns_tail;

typedef struct ns_paths_ {
    Py_ssize_t db_at, db_len, dir_at, dir_len;
    int dir_win, tails, next;
    ns_tail tail[NS_TAILS];
} ns_paths;

#define NS_TAB 8 /* int64 a table in ns_shape's `tabs`: header, rows start, rows end, rows, report, kind,
                  * the lines before the header and before the run's Generating line */

#define NS_HEADS 8 /* distinct header lines a chunk may hold (a sweep's reports: kernels, API, OS, memory ...) */

typedef struct ns_heads_ {
    Py_ssize_t at[NS_HEADS], len[NS_HEADS]; /* each distinct header line's first place and length */
    int n;
} ns_heads;

/* The header line p[i:z] among the distinct ones seen (added where new): 1, 0 where there are too many */
static int ns_head_seen(const ns_in *in, ns_heads *h, Py_ssize_t i, Py_ssize_t z) {
    for (int k = h->n - 1; k >= 0; k--)
        if (h->len[k] == z - i && memcmp(in->p + h->at[k], in->p + i, (size_t)(z - i)) == 0)
            return 1;
    if (h->n == NS_HEADS)
        return 0;
    h->at[h->n] = i;
    h->len[h->n++] = z - i;
    return 1;
}

/* The index of the lowest set bit of x (not 0) */
static inline int ns_ctz(unsigned x) {
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctz(x);
#else
    int k = 0;
    while (!(x & 1u))
        x >>= 1, k++;
    return k;
#endif
}

/* The bytes of a path: [A-Za-z0-9._/-] (a table of 256, made once); 2 also set for those of a report's
 * name, [a-z0-9_]; 4 alone for those a Windows path holds besides ('\\', ':', ' ', '(', ')', '~': "C:\\Program
 * Files (x86)\\...", "C:\\PROGRA~1\\...") */
static unsigned char NS_PATH_CHAR[256];

static void ns_path_chars(void) {
    for (int c = 0; c < 256; c++)
        NS_PATH_CHAR[c] = (unsigned char)(((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                                           c == '.' || c == '_' || c == '/' || c == '-') |
                                          (((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_') << 1) |
                                          ((c == '\\' || c == ':' || c == ' ' || c == '(' || c == ')' || c == '~') << 2));
}

/* The end of the path [A-Za-z0-9._/-]* at p[i:n]: sixteen bytes a step where they are there (a byte
 * of the path: a letter -- itself or 0x20 to it between 'a' and 'z' --, '-' to '9', or '_'; compared
 * as signed bytes, so that no byte from 0x80 up is one), the rest byte by byte */
static Py_ssize_t ns_path(const unsigned char *p, Py_ssize_t i, Py_ssize_t n) {
#if defined(__SSE2__)
    const __m128i case_bit = _mm_set1_epi8(0x20), a1 = _mm_set1_epi8('a' - 1), z1 = _mm_set1_epi8('z' + 1),
                  lo1 = _mm_set1_epi8('-' - 1), hi1 = _mm_set1_epi8('9' + 1), under = _mm_set1_epi8('_');
    for (; i + 16 <= n; i += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(p + i)), l = _mm_or_si128(x, case_bit);
        __m128i ok = _mm_or_si128(_mm_and_si128(_mm_cmpgt_epi8(l, a1), _mm_cmplt_epi8(l, z1)),
                                  _mm_or_si128(_mm_and_si128(_mm_cmpgt_epi8(x, lo1), _mm_cmplt_epi8(x, hi1)),
                                               _mm_cmpeq_epi8(x, under)));
        unsigned bad = ~(unsigned)_mm_movemask_epi8(ok) & 0xFFFFu;
        if (bad)
            return i + ns_ctz(bad);
    }
#endif
    while (i < n && (NS_PATH_CHAR[p[i]] & 1))
        i++;
    return i;
}

/* The end of the path at p[i:n] as ns_path's with a Windows path's bytes too (NS_PATH_CHAR's 4); *win set
 * where it holds one */
static Py_ssize_t ns_any_path(const unsigned char *p, Py_ssize_t i, Py_ssize_t n, int *win) {
    Py_ssize_t e = ns_path(p, i, n);
    while (e < n && (NS_PATH_CHAR[p[e]] & 4)) {
        *win = 1;
        e = ns_path(p, e + 1, n);
    }
    return e;
}

/* What a path with a Windows path's bytes (ns_any_path) may not hold: two blanks, a blank at either end,
 * or a word one of nsys's readers reacts to on a line (a run's or a report's line, a legacy title) --
 * the words of a not-read table's header (NS_NOT_A_HEADER) less its ", " and "/reports/" (a path holds no
 * comma; ns_reports_at looks for "reports" between separators) */
static const char *const NS_NOT_IN_PATH[] = {"Statistics", "Summary", "Generating", "Saving report", "Running",
                                             "Executing", "Processing", "SKIPPED", "Exporting", "Exported"};

#define NS_NOT_IN_PATHS (sizeof NS_NOT_IN_PATH / sizeof *NS_NOT_IN_PATH)
static uint16_t NS_PATH_WORD[256]; /* per byte, a bit for each word of NS_NOT_IN_PATH that starts with it */
static size_t NS_PATH_WORD_LEN[NS_NOT_IN_PATHS];

static void ns_path_words(void) {
    for (size_t w = 0; w < NS_NOT_IN_PATHS; w++) {
        NS_PATH_WORD[(unsigned char)NS_NOT_IN_PATH[w][0]] |= (uint16_t)(1u << w);
        NS_PATH_WORD_LEN[w] = strlen(NS_NOT_IN_PATH[w]);
    }
}

static int ns_win_path_ok(const unsigned char *p, Py_ssize_t a, Py_ssize_t e) {
    if (e == a || p[a] == ' ' || p[e - 1] == ' ')
        return 0;
    for (Py_ssize_t q = a; q < e; q++) {
        unsigned bits = NS_PATH_WORD[p[q]];
        if (p[q] == ' ' && p[q + 1] == ' ') /* (q + 1 < e: p[e - 1] is not a blank) */
            return 0;
        for (; bits; bits &= bits - 1) {
            unsigned w = (unsigned)ns_ctz(bits);
            if ((size_t)(e - q) >= NS_PATH_WORD_LEN[w] && memcmp(p + q, NS_NOT_IN_PATH[w], NS_PATH_WORD_LEN[w]) == 0)
                return 0;
        }
    }
    return 1;
}

/* Whether "reports" between two separators ('/' or '\\') is in p[a:e] */
static int ns_reports_at(const unsigned char *p, Py_ssize_t a, Py_ssize_t e) {
    for (Py_ssize_t q = a; q + 9 <= e; q++)
        if ((p[q] == '/' || p[q] == '\\') && (p[q + 8] == '/' || p[q + 8] == '\\') && memcmp(p + q + 1, "reports", 7) == 0)
            return 1;
    return 0;
}

/* Whether the text `s` is at p[*i:n] (then *i moved past it) */
static int ns_lit(const ns_in *in, Py_ssize_t *i, const char *s) {
    Py_ssize_t m = (Py_ssize_t)strlen(s);
    if (in->n - *i < m || memcmp(in->p + *i, s, (size_t)m) != 0)
        return 0;
    *i += m;
    return 1;
}

/* Whether a run's "Generating SQLite file PATH from PATH" line is at *i (then *i moved past it): plain
 * paths, or Windows ones (ns_any_path's, ns_win_path_ok: the line's text after the file is all path
 * bytes, " from " within it) */
static int ns_run_line(const ns_in *in, Py_ssize_t *i) {
    Py_ssize_t k = *i, e, a;
    int win = 0;
    if (!ns_lit(in, &k, "Generating SQLite file "))
        return 0;
    a = k;
    k = e = ns_path(in->p, a, in->n);
    if (e == a || !ns_lit(in, &k, " from ") || (e = ns_path(in->p, k, in->n)) == k || e >= in->n || in->p[e] != '\n') {
        e = ns_any_path(in->p, a, in->n, &win);
        if (!win || e >= in->n || in->p[e] != '\n' || !ns_win_path_ok(in->p, a, e))
            return 0;
        Py_ssize_t f = a + 1; /* " from " after the first byte, a byte after it at least */
        while (f + 6 < e && memcmp(in->p + f, " from ", 6) != 0)
            f++;
        if (f + 6 >= e)
            return 0;
    }
    *i = e + 1;
    return 1;
}

/* The index in in->reports of the name R of the script path p[a:e], PREFIX/reports/R.py (PREFIX not
 * empty, R [a-z0-9_]+: dx12_gpu_marker_sum; '\\' or '/' around reports; *prefix_end: where PREFIX ends);
 * -1 where it is not such a path, -2 where R is not one of them */
static Py_ssize_t ns_report(const ns_in *in, Py_ssize_t a, Py_ssize_t e, Py_ssize_t *prefix_end) {
    const unsigned char *p = in->p;
    if (e - a < 3 || memcmp(p + e - 3, ".py", 3) != 0)
        return -1;
    Py_ssize_t s = e - 3;
    while (s > a && (NS_PATH_CHAR[p[s - 1]] & 2))
        s--;
    if (s == e - 3 || s - 9 <= a || !ns_reports_at(p, s - 9, s))
        return -1;
    *prefix_end = s - 9;
    for (Py_ssize_t r = 0; r < PyTuple_GET_SIZE(in->reports); r++) {
        PyObject *name = PyTuple_GET_ITEM(in->reports, r);
        if (PyBytes_GET_SIZE(name) == e - 3 - s && memcmp(PyBytes_AS_STRING(name), p + s, (size_t)(e - 3 - s)) == 0)
            return r;
    }
    return -2;
}

/* The index in in->unread of the report named p[s:z] (-1 where it is not one of them) */
static Py_ssize_t ns_unread_index(const ns_in *in, Py_ssize_t s, Py_ssize_t z) {
    for (Py_ssize_t r = 0; in->unread != NULL && r < PyTuple_GET_SIZE(in->unread); r++) {
        PyObject *name = PyTuple_GET_ITEM(in->unread, r);
        if (PyBytes_GET_SIZE(name) == z - s && memcmp(PyBytes_AS_STRING(name), in->p + s, (size_t)(z - s)) == 0)
            return r;
    }
    return -1;
}

/* What a not-read table's header may not hold (nsys_csv_sweep._NOT_A_HEADER: what nsys's readers would
 * take it for before their note, or what they would not note it for) */
static const char *const NS_NOT_A_HEADER[] = {", ", "  ", "Statistics", "Summary", "Generating", "Saving report",
                                              "Running ", "Executing", "Processing", "/reports/", "SKIPPED",
                                              "Exporting ", "Exported "};
#define NS_NOT_A_HEADERS (sizeof NS_NOT_A_HEADER / sizeof *NS_NOT_A_HEADER)
/* What a not-read table's row may not hold (a run's or a report's line: what the stream cuts at) */
static const char *const NS_NOT_A_ROW[] = {"Generating ", "Processing ["};

/* Per byte, a bit for each word of NS_NOT_A_HEADER (the low 16 bits) and of NS_NOT_A_ROW (from bit 16)
 * that starts with it, NS_HEAD_CHAR where it may be in a not-read table's header ([A-Za-z0-9 ()_./,-]);
 * the words' lengths (made once): a line searched for all of them in one pass */
#define NS_HEAD_CHAR (1u << 31)
static uint32_t NS_WORD_START[256];
static size_t NS_WORD_LEN[18];

static void ns_word_starts(void) {
    for (size_t w = 0; w < NS_NOT_A_HEADERS; w++) {
        NS_WORD_START[(unsigned char)NS_NOT_A_HEADER[w][0]] |= 1u << w;
        NS_WORD_LEN[w] = strlen(NS_NOT_A_HEADER[w]);
    }
    for (size_t w = 0; w < 2; w++) {
        NS_WORD_START[(unsigned char)NS_NOT_A_ROW[w][0]] |= 1u << (16 + w);
        NS_WORD_LEN[16 + w] = strlen(NS_NOT_A_ROW[w]);
    }
    for (int c = 0; c < 256; c++)
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr(" ()_./-,", c) != NULL)
            NS_WORD_START[c] |= c ? NS_HEAD_CHAR : 0;
}

/* Whether one of the words of `bits` (NS_WORD_START's) starts at p[q:z] */
static inline int ns_word_at(const unsigned char *p, Py_ssize_t q, Py_ssize_t z, uint32_t bits) {
    for (; bits; bits &= bits - 1) {
        unsigned w = (unsigned)ns_ctz(bits);
        const char *s = w < 16 ? NS_NOT_A_HEADER[w] : NS_NOT_A_ROW[w - 16];
        if ((size_t)(z - q) >= NS_WORD_LEN[w] && memcmp(p + q, s, NS_WORD_LEN[w]) == 0)
            return 1;
    }
    return 0;
}

/* The header line p[a:z] of a not-read report's table as nsys's readers note it: [A-Za-z0-9(] then
 * [A-Za-z0-9 ()_./,-], a comma or more, none of NS_NOT_A_HEADER */
static int ns_unread_header(const unsigned char *p, Py_ssize_t a, Py_ssize_t z) {
    int commas = 0;
    if (a == z || !((NS_WORD_START[p[a]] & NS_HEAD_CHAR) && p[a] != ' ' && p[a] != ')' && p[a] != '_' &&
                    p[a] != '.' && p[a] != '/' && p[a] != '-' && p[a] != ','))
        return 0;
    for (Py_ssize_t q = a; q < z; q++) {
        uint32_t t = NS_WORD_START[p[q]];
        if (!(t & NS_HEAD_CHAR) || ((t & 0xFFFFu) && ns_word_at(p, q, z, t & 0xFFFFu)))
            return 0;
        commas += p[q] == ',';
    }
    return commas > 0;
}

/* Whether the row p[k:z] of a not-read table is one: printable ASCII, no '%', a comma, none of
 * NS_NOT_A_ROW; sixteen bytes a step where p[:n] holds them (the bytes past z masked) */
static int ns_unread_row(const unsigned char *p, Py_ssize_t k, Py_ssize_t z, Py_ssize_t n) {
    int comma = 0;
#if defined(__SSE2__)
    const __m128i space = _mm_set1_epi8(0x20), del = _mm_set1_epi8(0x7f), pct = _mm_set1_epi8('%'),
                  g = _mm_set1_epi8('G'), pp = _mm_set1_epi8('P'), c = _mm_set1_epi8(',');
    for (; k < z && k + 16 <= n; k += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(p + k));
        __m128i bad = _mm_or_si128(_mm_or_si128(_mm_cmplt_epi8(x, space), _mm_cmpeq_epi8(x, del)),
                                   _mm_or_si128(_mm_cmpeq_epi8(x, pct),
                                                _mm_or_si128(_mm_cmpeq_epi8(x, g), _mm_cmpeq_epi8(x, pp))));
        unsigned keep = z - k >= 16 ? 0xFFFFu : (1u << (z - k)) - 1u, b = (unsigned)_mm_movemask_epi8(bad) & keep;
        comma |= ((unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, c)) & keep) != 0;
        for (; b; b &= b - 1) { /* 'G' or 'P' starting no word of NS_NOT_A_ROW pass */
            Py_ssize_t q = k + ns_ctz(b);
            uint32_t starts = NS_WORD_START[p[q]] & 0x30000u;
            if (p[q] != 'G' && p[q] != 'P')
                return 0;
            if (ns_word_at(p, q, z, starts))
                return 0;
        }
    }
#endif
    for (; k < z; k++) {
        uint32_t starts = NS_WORD_START[p[k]] & 0x30000u;
        if (p[k] < 0x20 || p[k] >= 0x7f || p[k] == '%' || (starts && ns_word_at(p, k, z, starts)))
            return 0;
        comma |= p[k] == ',';
    }
    return comma;
}

/* Whether p[a:z] is a not-read table's header (ns_unread_header): looked for first among those found so
 * (a sweep's runs repeat a few), added to them where it is one and there is room */
static int ns_unread_known(const ns_in *in, Py_ssize_t a, Py_ssize_t z) {
    ns_heads *h = in->noted;
    for (int k = 0; k < h->n; k++)
        if (h->len[k] == z - a && memcmp(in->p + h->at[k], in->p + a, (size_t)(z - a)) == 0)
            return 1;
    if (!ns_unread_header(in->p, a, z))
        return 0;
    if (h->n < NS_HEADS)
        h->at[h->n] = a, h->len[h->n++] = z - a;
    return 1;
}

/* A not-read report's table at p[k:] (a blank line before it or not): its header (ns_unread_header), rows
 * of a comma each (printable ASCII, no '%', no run's or report's line), a blank line. The position after
 * that blank line (*head its header's start, *lines the table's lines), -1 where it is not so. */
static Py_ssize_t ns_unread_table(const ns_in *in, Py_ssize_t k, Py_ssize_t *head, Py_ssize_t *lines) {
    const unsigned char *p = in->p;
    if (k < in->n && p[k] == '\n')
        k++;
    Py_ssize_t z = nv_eol(p, k, in->n);
    if (z < 0 || !ns_unread_known(in, k, z))
        return -1;
    *head = k, *lines = 1;
    for (k = z + 1; k < in->n && p[k] != '\n'; k = z + 1, ++*lines)
        if ((z = nv_eol(p, k, in->n)) < 0 || !ns_unread_row(p, k, z, in->n))
            return -1;
    return k < in->n ? k + 1 : -1;
}

/* Whether p[k:] starts with the len bytes at p[at] (len > 0) */
static int ns_same_at(const ns_in *in, Py_ssize_t k, Py_ssize_t at, Py_ssize_t len) {
    return len > 0 && k + len < in->n && memcmp(in->p + k, in->p + at, (size_t)len) == 0;
}

/* The end of a Processing line's database path at p[k:] (ns_any_path's), k where it is not one the
 * readers take (none; "reports" between separators in it; a Windows path ns_win_path_ok refuses) */
static Py_ssize_t ns_db_path(const ns_in *in, Py_ssize_t k) {
    ns_paths *seen = in->paths;
    if (ns_same_at(in, k, seen->db_at, seen->db_len) && !(NS_PATH_CHAR[in->p[k + seen->db_len]] & 5))
        return k + seen->db_len; /* the bytes of the last one taken, and no more path bytes */
    int win = 0;
    Py_ssize_t e = ns_any_path(in->p, k, in->n, &win);
    if (e == k || ns_reports_at(in->p, k, e) || (win && !ns_win_path_ok(in->p, k, e)))
        return k;
    seen->db_at = k, seen->db_len = e - k;
    return e;
}

/* The end of a Processing line's script path at p[a:] (ns_any_path's; *win where it holds a Windows
 * path's bytes), from the end of the last folder taken (ns_paths) where the path starts with its bytes */
static Py_ssize_t ns_script_path(const ns_in *in, Py_ssize_t a, int *win, int *dir_seen) {
    ns_paths *seen = in->paths;
    *dir_seen = ns_same_at(in, a, seen->dir_at, seen->dir_len);
    if (!*dir_seen)
        return ns_any_path(in->p, a, in->n, win);
    Py_ssize_t e = ns_any_path(in->p, a + seen->dir_len, in->n, win);
    *win |= seen->dir_win;
    return e;
}

/* Whether the script's folder p[a:prefix_end] (before its reports folder) is held as a path: a Windows
 * one checked (script_win), the last one taken (dir_seen, the same length) not checked again */
static int ns_script_dir(const ns_in *in, Py_ssize_t a, Py_ssize_t prefix_end, int script_win, int dir_seen) {
    ns_paths *seen = in->paths;
    if (dir_seen && prefix_end - a == seen->dir_len)
        return 1;
    int prefix_win = 0;
    if (script_win && (ns_any_path(in->p, a, prefix_end, &prefix_win) != prefix_end ||
                       (prefix_win && !ns_win_path_ok(in->p, a, prefix_end))))
        return 0;
    seen->dir_at = a, seen->dir_len = prefix_end - a, seen->dir_win = prefix_win;
    return 1;
}

/* A Processing line's tail at p[k:] ("] with [SCRIPT]..." and a blank or not, then its newline) read:
 * the index after its newline, the script's end in *script_end and its report (ns_report's) in *report;
 * -1 where it is not one the readers take. Kept (ns_paths' tails) for a line with the same bytes. */
static Py_ssize_t ns_script_tail(const ns_in *in, Py_ssize_t k, Py_ssize_t *script_end, Py_ssize_t *report) {
    Py_ssize_t from = k, e, prefix_end = 0;
    int script_win = 0, dir_seen = 0;
    if (!ns_lit(in, &k, "] with [") || (e = ns_script_path(in, k, &script_win, &dir_seen)) == k)
        return -1;
    Py_ssize_t a = k, r = ns_report(in, a, e, &prefix_end);
    k = e;
    if (r == -1 || !ns_lit(in, &k, "]...") || !ns_script_dir(in, a, prefix_end, script_win, dir_seen))
        return -1;
    ns_lit(in, &k, " ");
    if (!ns_lit(in, &k, "\n"))
        return -1;
    ns_paths *seen = in->paths;
    seen->tail[seen->next] = (ns_tail){from, k - from, e, r};
    seen->next = (seen->next + 1) % NS_TAILS;
    seen->tails += seen->tails < NS_TAILS;
    *script_end = e, *report = r;
    return k;
}

/* The tail taken before (ns_script_tail) whose bytes, newline and all, are those at p[k:]; NULL where none.
 * Every check a tail passed looks at its bytes alone (the paths' caches only spare looks: ns_paths). */
static const ns_tail *ns_tail_seen(const ns_in *in, Py_ssize_t k) {
    const ns_paths *seen = in->paths;
    if (!seen->tails)
        return NULL;
    const unsigned char *q = memchr(in->p + k, '\n', (size_t)(in->n - k));
    if (q == NULL)
        return NULL;
    Py_ssize_t len = (Py_ssize_t)(q - in->p) - k + 1;
    for (int t = 0; t < seen->tails; t++)
        if (seen->tail[t].len == len && memcmp(in->p + k, in->p + seen->tail[t].at, (size_t)len) == 0)
            return &seen->tail[t];
    return NULL;
}

/* A "Processing [PATH] with [SCRIPT]..." line (a blank after the dots or not: nsys 2025 prints one)
 * and a blank line after it or not, at *i (then *i moved past them): its report's index (ns_report;
 * -1 where not such lines, the first PATH holds "/reports/" or the report is not one read so). Where
 * a "SKIPPED: ..." line follows it (a report with nothing to show: any report's name) and a blank
 * line, *i is moved past them and *skipped set. */
static Py_ssize_t ns_report_lines(const ns_in *in, Py_ssize_t *i, int *skipped, Py_ssize_t *unread) {
    Py_ssize_t k = *i, e, r;
    if (!ns_lit(in, &k, "Processing [") || (e = ns_db_path(in, k)) == k)
        return -1;
    const ns_tail *seen = ns_tail_seen(in, e);
    if (seen != NULL) /* the same bytes as a tail taken before: what they gave then */
        r = seen->report, k = e + seen->len, e += seen->script_end - seen->at;
    else if ((k = ns_script_tail(in, e, &e, &r)) < 0)
        return -1;
    if (ns_lit(in, &k, "SKIPPED: ")) {
        Py_ssize_t z = nv_eol(in->p, k, in->n);
        if (z < 0 || z + 1 >= in->n || in->p[z + 1] != '\n')
            return -1;
        for (Py_ssize_t q = k; q < z; q++)
            if (in->p[q] < 0x20 || in->p[q] >= 0x7f)
                return -1;
        *i = z + 2;
        *skipped = 1;
        return -1;
    }
    if (r == -2 && in->unread != NULL) { /* a report noted, not read: its table stepped over (unread[0:3]) */
        Py_ssize_t s = e - 4, end;
        while (in->p[s - 1] != '/' && in->p[s - 1] != '\\')
            s--;
        if ((unread[2] = ns_unread_index(in, s, e - 3)) < 0 || (end = ns_unread_table(in, k, unread, unread + 1)) < 0)
            return -1;
        *i = end;
        *skipped = 1;
        return -3;
    }
    if (r < 0)
        return -1;
    ns_lit(in, &k, "\n");
    *i = k;
    return r;
}

/* Which kind of header line is at p[i:]: 2 one starting with in->head3, 0 with in->head, 1 with
 * in->head2, -1 none of them */
static int ns_kind(const ns_in *in, Py_ssize_t i) {
    Py_ssize_t left = in->n - i;
    if (in->hn3 > 0 && left > in->hn3 && memcmp(in->p + i, in->head3, (size_t)in->hn3) == 0)
        return 2;
    if (left > in->hn && memcmp(in->p + i, in->head, (size_t)in->hn) == 0)
        return 0;
    if (in->hn2 > 0 && left > in->hn2 && memcmp(in->p + i, in->head2, (size_t)in->hn2) == 0)
        return 1;
    return -1;
}

/* Whether a needle of in->nd is in the gap p[a:b] (ns_gap_ranges' bounds), looked for while its bytes are at
 * hand (walked just now) and until one is found: *in->found set */
static inline void ns_gap_look(const ns_in *in, Py_ssize_t a, Py_ssize_t b) {
    if (in->nd != NULL && !*in->found && find_in(in->nd, in->p + a, b - a, in->n - a))
        *in->found = 1;
}

/* The newlines in p[a:b] */
static Py_ssize_t ns_lines(const unsigned char *p, Py_ssize_t a, Py_ssize_t b) {
    Py_ssize_t count = 0;
    for (const unsigned char *q = p + a; (q = memchr(q, '\n', (size_t)(p + b - q))) != NULL; q++)
        count++;
    return count;
}

/* The chunk's shape: runs of (a Generating line for a run's first table; Processing and SKIPPED
 * lines and a blank of reports with nothing to show) Processing line, blank or not, a header line
 * starting with in->head, in->head2 or in->head3 (at most NS_HEADS distinct ones: `heads`), rows (lines
 * starting with a digit: 1 to in->max_rows - 1), blank -- the first table a run's, the chunk ending
 * with the last blank. Per table NS_TAB int64 pushed to `tabs`: the header line's start, the rows'
 * start and end, the rows, the report, its kind (ns_kind), the newlines before its header line and
 * before its run's Generating line (-1 where it does not start a run); `news` whether it starts a run;
 * *lines the newlines in the chunk. 1 where it is so, 0 where
 * not, -1 with an error set. */
static int ns_shape(const ns_in *in, nv_vec *tabs, nv_vec *news, Py_ssize_t *rows, ns_heads *heads,
                    Py_ssize_t *lines, nv_vec *unr) {
    const unsigned char *p = in->p;
    Py_ssize_t i = 0, n = in->n, line = 0, mark = 0, from = 0; /* line: the newlines in p[:mark]; from: a gap's start */
    while (i < n) {
        int fresh = 0, skipped = 1, noted = 0;
        Py_ssize_t rep = -1, run = -1, unread[3];
        while (skipped) { /* reports with nothing to show or not read (a run's last ones), a run's Generating line */
            Py_ssize_t at = i;
            if (!fresh && ns_run_line(in, &i)) {
                fresh = 1;
                run = line + ns_lines(p, mark, at);
                continue;
            }
            skipped = 0;
            rep = ns_report_lines(in, &i, &skipped, unread);
            if (rep == -3) { /* (its header's line, its last line, the report) */
                Py_ssize_t h = line + ns_lines(p, mark, unread[0]);
                if (fresh || nv_vec_push(unr, h) || nv_vec_push(unr, h + unread[1] - 1) || nv_vec_push(unr, unread[2]))
                    return fresh ? 0 : -1; /* (after a run's Generating line, before its first table: the readers') */
                line = h + unread[1] + 1, mark = i; /* (its lines and the blank line after them counted) */
                noted = 1;
            }
        }
        if (i == n && tabs->n && !fresh) /* the last run's last reports had nothing to show or were not read */
            break;
        if (noted && !fresh)
            return 0; /* a report not read between two tables of a run: left to the readers */
        int kind = ns_kind(in, i);
        if (rep < 0 || (!tabs->n && !fresh) || kind < 0)
            return 0;
        Py_ssize_t z = nv_eol(p, i, n);
        if (z < 0 || !ns_head_seen(in, heads, i, z))
            return 0;
        Py_ssize_t b = z + 1, e = b, count = 0;
        while (e < n && p[e] >= '0' && p[e] <= '9') {
            Py_ssize_t z = nv_eol(p, e, n);
            if (z < 0)
                return 0;
            e = z + 1;
            count++;
        }
        if (count == 0 || count >= in->max_rows || e >= n || p[e] != '\n')
            return 0;
        line += ns_lines(p, mark, i); /* the header's */
        if (nv_vec_push(tabs, i) || nv_vec_push(tabs, b) || nv_vec_push(tabs, e) || nv_vec_push(tabs, count) ||
            nv_vec_push(tabs, rep) || nv_vec_push(tabs, kind) || nv_vec_push(tabs, line) || nv_vec_push(tabs, run) ||
            nv_vec_push(news, fresh))
            return -1;
        *rows += count;
        ns_gap_look(in, from, i);
        from = e;
        i = mark = e + 1;
        line += count + 2; /* the header, the rows, the blank line */
    }
    if (unr->n > 0)
        ns_gap_look(in, from, n); /* (what follows the last table: a gap where a report not read is there) */
    *lines = line + ns_lines(p, mark, n);
    return tabs->n > 0;
}

#if defined(__SSE2__)
/* A bit for each of the sixteen bytes at q that may not be in a name (below 0x20 as signed bytes, so
 * 0x80 up too; 0x7f, '&', '\\') or is one of the two in `also` */
static inline int ns_bad16(const unsigned char *q, __m128i also1, __m128i also2) {
    const __m128i space = _mm_set1_epi8(0x20), del = _mm_set1_epi8(0x7f), amp = _mm_set1_epi8('&'),
                  bs = _mm_set1_epi8('\\');
    __m128i x = _mm_loadu_si128((const __m128i *)q);
    __m128i bad = _mm_or_si128(_mm_or_si128(_mm_cmplt_epi8(x, space), _mm_cmpeq_epi8(x, del)),
                               _mm_or_si128(_mm_cmpeq_epi8(x, amp), _mm_cmpeq_epi8(x, bs)));
    return _mm_movemask_epi8(_mm_or_si128(bad, _mm_or_si128(_mm_cmpeq_epi8(x, also1), _mm_cmpeq_epi8(x, also2))));
}
#endif

/* The first byte at or after p[s] (p[:end] readable) that may not be in a name: not printable ASCII, '&',
 * '\\', `x1` or `x2` (a name of a row the readers take never holds the first: control characters -- its
 * line's newline among them --, non-ASCII, bytescan._NEVER), sixteen bytes a step; -1 where none is */
static Py_ssize_t ns_first_bad(const unsigned char *p, Py_ssize_t s, Py_ssize_t end, unsigned char x1,
                               unsigned char x2) {
    Py_ssize_t k = s;
#if defined(__SSE2__)
    const __m128i also1 = _mm_set1_epi8((char)x1), also2 = _mm_set1_epi8((char)x2);
    for (; k + 16 <= end; k += 16) {
        int m = ns_bad16(p + k, also1, also2);
        if (m)
            return k + ns_ctz((unsigned)m);
    }
#endif
    for (; k < end; k++)
        if (p[k] < 0x20 || p[k] >= 0x7f || p[k] == '&' || p[k] == '\\' || p[k] == x1 || p[k] == x2)
            return k;
    return -1;
}

/* The name of a row starting at p[a] (p[:end] readable) and the row's end, in one pass over its bytes:
 * 1 where it is a plain name -- not empty, no comma or quote, or one "..." with no quote inside, then
 * the row's newline -- (its bytes, the quotes left out, at *name, *name_n; the newline's index at *z),
 * else 0. The newline is the first byte past the name a name may not hold: the row is not searched for
 * it first. */
static int ns_name_end(const unsigned char *p, Py_ssize_t a, Py_ssize_t end, Py_ssize_t *name, Py_ssize_t *name_n,
                       Py_ssize_t *z) {
    if (a < end && p[a] == '"') {
        Py_ssize_t q = ns_first_bad(p, a + 1, end, '"', '"');
        if (q < a + 2 || p[q] != '"' || q + 1 >= end || p[q + 1] != '\n')
            return 0;
        *name = a + 1, *name_n = q - a - 1, *z = q + 1;
        return 1;
    }
    Py_ssize_t q = ns_first_bad(p, a, end, '"', ',');
    if (q <= a || p[q] != '\n')
        return 0;
    *name = a, *name_n = q - a, *z = q;
    return 1;
}

/* A row's number cells p[0:n] (its newline not included) split as split_cells splits them and read as
 * cell_value reads them, at once: each cell's value into dst[j] + 8 * row (an int64 where `whole` has its
 * bit, else a double) and v[j]. Its status as split_cells gives it (1 also where a cell's value is not
 * a finite double), *at the index after the last cell's comma. */
static unsigned char ns_values(const unsigned char *p, Py_ssize_t n, Py_ssize_t ncells, unsigned long long whole,
                               char *const *dst, Py_ssize_t row, double *v, Py_ssize_t *at) {
    Py_ssize_t i = 0;
    unsigned char status = 0;
    for (Py_ssize_t j = 0; j < ncells; j++) {
        Py_ssize_t a = i, d1, d2;
        unsigned long long m;
        int dot;
        if (!split_cell(p, n, &i, &m, &d1, &d2, &dot))
            return 1;
        char *slot = dst[j] + 8 * row;
        if ((whole >> j) & 1ULL) {
            if (dot || d1 > 18)
                return 1;
            int64_t w = (int64_t)m;
            memcpy(slot, &w, 8);
            v[j] = (double)w;
        } else {
            double x;
            if (dot)
                status |= (d1 <= 3 && p[a] != '0' && d2 == 3) ? 2 : 4;
            if (d2 == 0) /* (a whole number: m itself, exact, no division to wait for) */
                x = (double)m;
            else if (d1 + d2 <= 15) /* (cell_value's fast path: m and 10**d2 exact, one rounding) */
                x = (double)m / POW10[d2];
            else if (!cell_scaled(p + a, i - a, 0, &x) || !isfinite(x))
                return 1;
            memcpy(slot, &x, 8);
            v[j] = x;
        }
        i++; /* the comma */
    }
    *at = i;
    return status;
}

/* A third kind's row p[0:n] after its number cells (p[*at]): a cell of letters (its Style), *at moved
 * after its comma; 0 where not so */
static int ns_style(const unsigned char *p, Py_ssize_t n, Py_ssize_t *at) {
    Py_ssize_t k = *at;
    while (k < n && ((p[k] >= 'A' && p[k] <= 'Z') || (p[k] >= 'a' && p[k] <= 'z')))
        k++;
    if (k == *at || k >= n || p[k] != ',')
        return 0;
    *at = k + 1;
    return 1;
}

/* Name cells taken before, 256 slots (ns_name_slot): a cell's bytes p[at : at + len] (its quotes too; the
 * row's newline after them) and its name's code. A row whose name cell holds the same bytes, then its
 * newline, has that name and code: ns_name_end's verdict and bt_code's code look at those bytes alone
 * (len 0: a slot not used yet). */
typedef struct {
    Py_ssize_t at, len;
    int64_t code;
} ns_name_seen;

typedef struct ns_names_ {
    ns_name_seen slot[256];
} ns_names;

/* The slot of the name cell at p[a:] (its bytes up to the row's newline, found here: *z) by its length,
 * its first eight bytes (those past its end zero) and its last eight: names of one template that differ
 * in their middle alone share one (and each take it from the other: read whole again, no error); NULL
 * where no newline follows or eight bytes are not there */
static inline ns_name_seen *ns_name_slot(const ns_in *in, Py_ssize_t a, Py_ssize_t *z) {
    const unsigned char *q = a + 8 <= in->n ? memchr(in->p + a, '\n', (size_t)(in->n - a)) : NULL;
    if (q == NULL)
        return NULL;
    Py_ssize_t len = (Py_ssize_t)(q - in->p) - a;
    uint64_t first, last = 0;
    memcpy(&first, in->p + a, 8);
    if (len < 8)
        first &= (1ULL << (8 * len)) - 1;
    else
        memcpy(&last, q - 8, 8);
    *z = (Py_ssize_t)(q - in->p);
    uint64_t h = (first * 0x9E3779B97F4A7C15ULL) ^ (last * 0xff51afd7ed558ccdULL) ^ ((uint64_t)len << 32);
    return &in->names->slot[(h * 0xc4ceb9fe1a85ec53ULL) >> 56];
}

/* Whether the name cell p[a:z] holds the bytes of the one in `seen` */
static inline int ns_name_seen_at(const ns_in *in, const ns_name_seen *seen, Py_ssize_t a, Py_ssize_t z) {
    return seen != NULL && seen->len == z - a && seen->len > 0 && memcmp(in->p + a, in->p + seen->at, (size_t)seen->len) == 0;
}

/* Row `row` (p[i:*z], *z its newline, found here; e the table's end) of a table of kind `kind` (ns_kind)
 * read into the columns as columns() reads it (dst: the column of each of its cells), its status or-ed
 * into *st: 1 read, 0 not plain or a value nsys_batch._values_ok would not take (not finite; for the first
 * and third kinds Time(%) over 100 or the total not within 1% of calls x average), -1 error. A second
 * kind's row: its cells into the columns in->dest2 names, Time(%) NaN (not printed); a third kind's: its
 * Style cell left out. (A row not read leaves what it wrote in the columns: the chunk is not taken.) */
static int ns_row(const ns_in *in, int kind, Py_ssize_t i, Py_ssize_t e, Py_ssize_t *z, Py_ssize_t row,
                  char *const *dst, int32_t *codes, bytes_table *t, unsigned char *st) {
    double v[64];
    Py_ssize_t at = 0, name = 0, name_n = 0, ncells = kind == 1 ? in->ncells2 : in->ncells;
    unsigned long long whole = kind == 1 ? in->whole2 : in->whole;
    /* (the cells split up to the table's end, in->p[e] its blank line: a cell stops at its row's newline) */
    unsigned char s = ns_values(in->p + i, e - i, ncells, whole, dst, row, v, &at);
    if ((s & 1) || (kind == 2 && !ns_style(in->p + i, e - i, &at)))
        return 0;
    Py_ssize_t nl = 0;
    ns_name_seen *seen = ns_name_slot(in, i + at, &nl);
    int hit = ns_name_seen_at(in, seen, i + at, nl);
    if (hit)
        *z = nl;
    else if (!ns_name_end(in->p, i + at, in->n, &name, &name_n, z))
        return 0;
    *st |= s;
    if (kind == 1) {
        double none = NAN;
        memcpy(dst[in->ncells2] + 8 * row, &none, 8); /* (Time(%)'s column) */
    } else {
        double tt = v[in->time];
        if (v[in->pct] > 100.0 || !(fabs(tt - v[in->calls] * v[in->avg]) <= 0.01 * tt))
            return 0;
    }
    int64_t code = hit ? seen->code : name_code(in->p, name, name_n, t);
    if (code < 0)
        return code == -2 ? 0 : -1;
    if (!hit && seen != NULL)
        *seen = (ns_name_seen){i + at, *z - (i + at), code};
    codes[row] = (int32_t)code;
    return 1;
}

/* The rows of the tables `tabs` (ns_shape's) read into the columns: 1, 0 where one is not read so or
 * a table's status is one nsys_batch._kept does not keep (undecided cells, no decimal cell), -1 error */
static int ns_rows(const ns_in *in, const nv_vec *tabs, char *const *base, int32_t *codes, bytes_table *t) {
    char *dst[2][65]; /* each kind's cells' columns: the first and third kinds' in order, the second's by
                       * dest2, then its Time(%)'s */
    for (Py_ssize_t j = 0; j < in->ncells; j++)
        dst[0][j] = base[j];
    for (Py_ssize_t j = 0; j < in->ncells2; j++)
        dst[1][j] = base[in->dest2[j]];
    dst[1][in->ncells2] = base[in->pct];
    Py_ssize_t row = 0;
    for (Py_ssize_t k = 0; k < tabs->n; k += NS_TAB) {
        unsigned char st = 0;
        int kind = (int)tabs->v[k + 5];
        for (Py_ssize_t i = tabs->v[k + 1], e = tabs->v[k + 2], z = 0; i < e; row++) {
            int got = ns_row(in, kind, i, e, &z, row, dst[kind == 1], codes, t, &st);
            if (got <= 0)
                return got;
            i = z + 1;
        }
        if ((st & 2) && !(st & 4))
            return 0;
    }
    return 1;
}

/* What lies before each table (from the chunk's start or the previous table's rows' end to its header
 * line), joined by NULs, then a NUL and what follows the last table where a report not read is there */
static PyObject *ns_gaps(const ns_in *in, const nv_vec *tabs, int tail) {
    Py_ssize_t size = 0, from = 0;
    for (Py_ssize_t k = 0; k < tabs->n; k += NS_TAB) {
        size += tabs->v[k] - from + (k > 0);
        from = tabs->v[k + 2];
    }
    if (tail)
        size += 1 + in->n - from;
    PyObject *out = PyBytes_FromStringAndSize(NULL, size);
    if (out == NULL)
        return NULL;
    char *o = PyBytes_AS_STRING(out);
    from = 0;
    for (Py_ssize_t k = 0; k < tabs->n; k += NS_TAB) {
        if (k > 0)
            *o++ = '\0';
        memcpy(o, in->p + from, (size_t)(tabs->v[k] - from));
        o += tabs->v[k] - from;
        from = tabs->v[k + 2];
    }
    if (tail) {
        *o++ = '\0';
        memcpy(o, in->p + from, (size_t)(in->n - from));
    }
    return out;
}

/* ns_gaps' gaps as ranges of the data, not copied: per gap (from the chunk's start or the previous table's
 * rows' end to its header line) its start and end, then what follows the last table where `tail` (a report
 * not read is there), as bytes of int64 pairs */
static PyObject *ns_gap_ranges(const ns_in *in, const nv_vec *tabs, int tail) {
    Py_ssize_t count = tabs->n / NS_TAB + (tail != 0), from = 0, g = 0;
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(16 * count));
    if (out == NULL)
        return NULL;
    int64_t *o = (int64_t *)PyBytes_AS_STRING(out);
    for (Py_ssize_t k = 0; k < tabs->n; k += NS_TAB) {
        o[g++] = from, o[g++] = tabs->v[k];
        from = tabs->v[k + 2];
    }
    if (tail)
        o[g++] = from, o[g++] = in->n;
    return out;
}

/* Per table (rows, report, starts a run, kind, the lines before its header, before its run's Generating
 * line or -1): bytes of int64 */
static PyObject *ns_tables(const nv_vec *tabs, const nv_vec *news) {
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(6 * news->n * sizeof(int64_t)));
    if (out == NULL)
        return NULL;
    int64_t *o = (int64_t *)PyBytes_AS_STRING(out);
    for (Py_ssize_t k = 0; k < news->n; k++, o += 6) {
        const int64_t *t = tabs->v + NS_TAB * k;
        o[0] = t[3], o[1] = t[4], o[2] = news->v[k], o[3] = t[5], o[4] = t[6], o[5] = t[7];
    }
    return out;
}

/* The distinct header lines (ns_shape's), in order of first appearance: a tuple of bytes */
static PyObject *ns_head_lines(const ns_in *in, const ns_heads *h) {
    PyObject *out = PyTuple_New(h->n);
    for (int k = 0; out != NULL && k < h->n; k++) {
        PyObject *line = PyBytes_FromStringAndSize((const char *)in->p + h->at[k], h->len[k]);
        if (line == NULL) {
            Py_CLEAR(out);
            break;
        }
        PyTuple_SET_ITEM(out, k, line);
    }
    return out;
}

/* The cell columns of `rows` rows (a list, a new reference; NULL with an error set), where each one's values
 * go in base[j]: new bytes objects, or in->alloc(rows)'s writable buffers of 8 x rows bytes (their views in
 * views[0:*nviews], for the caller to release) */
static PyObject *ns_cells(const ns_in *in, Py_ssize_t rows, char **base, Py_buffer *views, Py_ssize_t *nviews) {
    if (in->alloc != NULL)
        return given_cells(in->alloc, in->ncells, rows, base, views, nviews);
    PyObject *cells = PyList_New(in->ncells);
    for (Py_ssize_t j = 0; cells != NULL && j < in->ncells; j++) {
        PyObject *col = PyBytes_FromStringAndSize(NULL, 8 * rows);
        if (col == NULL) {
            Py_CLEAR(cells);
            break;
        }
        PyList_SET_ITEM(cells, j, col);
        base[j] = PyBytes_AS_STRING(col);
    }
    return cells;
}

/* nsys_sweep's columns, its shape found (ns_shape): (tables, cells, codes, names, gaps, headers, newlines,
 * not-read tables: per table its header's and last line's newlines before them and its report's index in
 * `unread`, bytes of int64), None where a row is not read so, NULL with an error set */
static PyObject *ns_read(const ns_in *in, const nv_vec *tabs, const nv_vec *news, Py_ssize_t rows,
                         const ns_heads *heads, Py_ssize_t newlines, const nv_vec *unr, PyObject *found) {
    PyObject *out = NULL, *cells = NULL, *codes = PyBytes_FromStringAndSize(NULL, 4 * rows);
    PyObject *tables = NULL, *gaps = NULL, *lines = NULL, *noted = NULL;
    bytes_table t;
    char *base[64];
    Py_buffer views[64];
    Py_ssize_t nviews = 0;
    if (bt_init(&t, 256) < 0 || codes == NULL || (cells = ns_cells(in, rows, base, views, &nviews)) == NULL)
        goto done;
    int got = ns_rows(in, tabs, base, (int32_t *)PyBytes_AS_STRING(codes), &t);
    if (got <= 0) {
        if (got == 0) {
            Py_INCREF(Py_None);
            out = Py_None;
        }
        goto done;
    }
    if ((tables = ns_tables(tabs, news)) != NULL && (gaps = (in->gap_ranges ? ns_gap_ranges : ns_gaps)(in, tabs, unr->n > 0)) != NULL &&
        (lines = ns_head_lines(in, heads)) != NULL &&
        (noted = PyBytes_FromStringAndSize((const char *)unr->v, (Py_ssize_t)(unr->n * sizeof(int64_t)))) != NULL)
        out = found == NULL ? Py_BuildValue("(OOOOOOnO)", tables, cells, codes, t.strs, gaps, lines, newlines, noted)
                            : Py_BuildValue("(OOOOOOnOO)", tables, cells, codes, t.strs, gaps, lines, newlines, noted, found);
done:
    for (Py_ssize_t j = 0; j < nviews; j++)
        PyBuffer_Release(&views[j]);
    Py_XDECREF(noted);
    Py_XDECREF(cells);
    Py_XDECREF(codes);
    Py_XDECREF(tables);
    Py_XDECREF(gaps);
    Py_XDECREF(lines);
    bt_free(&t);
    return out;
}

/* The second kind's layout (head2, ncells2, whole2, dest2: a byte a cell, its column among the first
 * kind's cells) checked into `in`: 0, -1 with an error set */
static int ns_second(ns_in *in, Py_buffer *h2, Py_buffer *d2) {
    in->head2 = h2->buf, in->hn2 = h2->buf == NULL ? 0 : h2->len;
    if (in->hn2 == 0)
        return 0;
    int ok = in->ncells2 >= 1 && in->ncells2 <= 64 && d2->len == in->ncells2;
    for (Py_ssize_t j = 0; ok && j < in->ncells2; j++) {
        in->dest2[j] = ((const signed char *)d2->buf)[j];
        ok = in->dest2[j] >= 0 && in->dest2[j] < in->ncells && in->dest2[j] != in->pct;
    }
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "nsys_sweep: 1 to 64 cells of the second kind, each a column not Time(%)'s");
        return -1;
    }
    return 0;
}

/* nsys_sweep's arguments in `in` checked (the cells and their four indices, a head, the second kind's
 * layout: ns_second, the reports and the not-read ones tuples of bytes): 0, -1 with an error set */
static int ns_checked(ns_in *in, Py_buffer *h2, Py_buffer *d2) {
    int idx_bad = in->pct < 0 || in->time < 0 || in->calls < 0 || in->avg < 0 || in->pct >= in->ncells ||
                  in->time >= in->ncells || in->calls >= in->ncells || in->avg >= in->ncells;
    if (in->ncells < 1 || in->ncells > 64 || idx_bad || in->hn == 0) {
        PyErr_SetString(PyExc_ValueError, "nsys_sweep: 1 to 64 cells, the four indices among them, a head");
        return -1;
    }
    if (ns_second(in, h2, d2) < 0)
        return -1;
    for (Py_ssize_t r = 0; r < PyTuple_GET_SIZE(in->reports); r++)
        if (!PyBytes_Check(PyTuple_GET_ITEM(in->reports, r))) {
            PyErr_SetString(PyExc_TypeError, "nsys_sweep: reports a tuple of bytes");
            return -1;
        }
    for (Py_ssize_t r = 0; in->unread != NULL && r < PyTuple_GET_SIZE(in->unread); r++)
        if (!PyBytes_Check(PyTuple_GET_ITEM(in->unread, r))) {
            PyErr_SetString(PyExc_TypeError, "nsys_sweep: unread a tuple of bytes");
            return -1;
        }
    return 0;
}

/* needles_read of `needles` where it is a tuple; -1 with TypeError where not */
static int ns_needles(PyObject *needles, needles_t *nd) {
    if (PyTuple_Check(needles))
        return needles_read(needles, nd);
    PyErr_SetString(PyExc_TypeError, "needles: a tuple of str, or None");
    return -1;
}

/* nsys_sweep(data, head, reports, ncells, whole, (pct, time, calls, avg), max_rows[, head2, ncells2, whole2,
 * dest2, head3, unread, gap_ranges, needles, alloc]): see the module's docstring */
static PyObject *nsys_sweep(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer buf, hd, h2 = {0}, d2 = {0}, h3 = {0};
    PyObject *needles = NULL, *alloc = NULL;
    ns_in in;
    in.ncells2 = 0, in.whole2 = 0, in.unread = NULL, in.gap_ranges = 0;
    if (!PyArg_ParseTuple(args, "y*y*O!nK(iiii)n|y*nKy*y*O!pOO", &buf, &hd, &PyTuple_Type, &in.reports, &in.ncells,
                          &in.whole, &in.pct, &in.time, &in.calls, &in.avg, &in.max_rows, &h2, &in.ncells2,
                          &in.whole2, &d2, &h3, &PyTuple_Type, &in.unread, &in.gap_ranges, &needles, &alloc))
        return NULL;
    needles = needles == Py_None ? NULL : needles, in.alloc = alloc == Py_None ? NULL : alloc;
    needles_t nd;
    int found = 0, looked = needles == NULL ? 0 : ns_needles(needles, &nd); /* (0: needles find_any leaves to Python) */
    in.nd = looked > 0 ? &nd : NULL, in.found = &found;
    in.head3 = h3.buf, in.hn3 = h3.buf == NULL ? 0 : h3.len;
    in.p = buf.buf, in.n = buf.len, in.head = hd.buf, in.hn = hd.len;
    PyObject *out = NULL;
    nv_vec tabs = {NULL, 0, 0}, news = {NULL, 0, 0}, unr = {NULL, 0, 0};
    ns_heads heads = {{0}, {0}, 0}, noted = {{0}, {0}, 0};
    ns_paths paths = {0, 0, 0, 0, 0, 0, 0, {{0, 0, 0, 0}}};
    ns_names *names = PyMem_Calloc(1, sizeof(ns_names));
    Py_ssize_t rows = 0;
    in.noted = &noted, in.paths = &paths, in.names = names;
    if (names == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (looked < 0 || ns_checked(&in, &h2, &d2) < 0)
        goto done;
    Py_ssize_t newlines = 0, most = in.n / 96 + 16; /* (a table: a Processing line, a header, a row, blanks) */
    if (nv_vec_reserve(&tabs, 8 * most) < 0 || nv_vec_reserve(&news, most) < 0)
        goto done;
    int shape = ns_shape(&in, &tabs, &news, &rows, &heads, &newlines, &unr);
    if (shape <= 0) {
        if (shape == 0) {
            Py_INCREF(Py_None);
            out = Py_None;
        }
        goto done;
    }
    out = ns_read(&in, &tabs, &news, rows, &heads, newlines, &unr,
                  needles == NULL ? NULL : looked > 0 ? (found ? Py_True : Py_False) : Py_None);
done:
    PyMem_Free(names);
    PyMem_Free(tabs.v);
    PyMem_Free(news.v);
    PyMem_Free(unr.v);
    PyBuffer_Release(&buf);
    PyBuffer_Release(&hd);
    if (h2.obj != NULL)
        PyBuffer_Release(&h2);
    if (d2.obj != NULL)
        PyBuffer_Release(&d2);
    if (h3.obj != NULL)
        PyBuffer_Release(&h3);
    return out;
}

static Py_ssize_t put_i64(char *w, int64_t v) {
    static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                "8081828384858687888990919293949596979899";
    char tmp[24];
    Py_ssize_t k = 0, n = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    for (; u >= 100; u /= 100) { /* two digits a step, the low one first (tmp is read backwards) */
        tmp[k++] = pairs[2 * (u % 100) + 1];
        tmp[k++] = pairs[2 * (u % 100)];
    }
    do {
        tmp[k++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        w[n++] = '-';
    while (k)
        w[n++] = tmp[--k];
    return n;
}

static PyObject *ascii_str(const char *s, Py_ssize_t n) {
    PyObject *u = PyUnicode_New(n, 127);
    if (u != NULL)
        memcpy(PyUnicode_1BYTE_DATA(u), s, (size_t)n);
    return u;
}

static int all_ascii(PyObject *s) {
    return PyUnicode_Check(s) && PyUnicode_IS_ASCII(s);
}

/* merged_notes' groups: group g's profile number + prof[g], section sec[g], lines lo[g]-hi[g], its
 * tables' first lines heads[first[g] : first[g] + count[g]] (n groups, nh heads) */
typedef struct {
    long long number;
    const int64_t *prof, *sec, *lo, *hi, *heads, *first, *count;
    Py_ssize_t n, nh;
} mn_in;

/* The groups' arrays b[0:7] checked into *in (a value a group in each but the heads, each section among
 * nn names, each group's tables among the heads): the most tables of one group, -1 with an error set */
static Py_ssize_t mn_groups(mn_in *in, const Py_buffer *b, Py_ssize_t nn) {
    in->n = b[0].len / 8, in->nh = b[4].len / 8;
    in->prof = b[0].buf, in->sec = b[1].buf, in->lo = b[2].buf, in->hi = b[3].buf, in->heads = b[4].buf,
    in->first = b[5].buf, in->count = b[6].buf;
    for (int j = 1; j < 7; j++)
        if (j != 4 && b[j].len / 8 != in->n) {
            PyErr_SetString(PyExc_ValueError, "merged_notes: one value a group in each array");
            return -1;
        }
    Py_ssize_t most = 0;
    for (Py_ssize_t g = 0; g < in->n; g++) {
        if (in->sec[g] < 0 || in->sec[g] >= nn || in->first[g] < 0 || in->count[g] < 1 ||
            in->first[g] > in->nh - in->count[g]) {
            PyErr_SetString(PyExc_ValueError, "merged_notes: a section or a table out of range");
            return -1;
        }
        if (in->count[g] > most)
            most = (Py_ssize_t)in->count[g];
    }
    return most;
}

/* The longest name's length where every name and the tail are ASCII, else -1 */
static Py_ssize_t mn_longest(PyObject *names, PyObject *tail) {
    if (!all_ascii(tail))
        return -1;
    Py_ssize_t longest = 0;
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(names); j++) {
        PyObject *s = PyTuple_GET_ITEM(names, j);
        if (!all_ascii(s))
            return -1;
        if (PyUnicode_GET_LENGTH(s) > longest)
            longest = PyUnicode_GET_LENGTH(s);
    }
    return longest;
}

/* Group g's note written at w ("profile P, SECTION table, " then its text: "lines LO-HI: merged from K
 * source tables (starting at lines H1, H2, ...)" + tail, ASCII): its length, *at where its text starts */
static Py_ssize_t mn_note(const mn_in *in, Py_ssize_t g, PyObject *name, PyObject *tail, char *w, Py_ssize_t *at) {
    static const char pre[] = "profile ", mid[] = " table, ", lines[] = "lines ";
    static const char merged[] = ": merged from ", src[] = " source tables (starting at lines ";
    Py_ssize_t sl = PyUnicode_GET_LENGTH(name), tl = PyUnicode_GET_LENGTH(tail), k = 0;
    memcpy(w, pre, sizeof pre - 1), k = sizeof pre - 1;
    k += put_i64(w + k, (int64_t)in->number + in->prof[g]);
    w[k++] = ',', w[k++] = ' ';
    memcpy(w + k, PyUnicode_1BYTE_DATA(name), (size_t)sl), k += sl;
    memcpy(w + k, mid, sizeof mid - 1), k += sizeof mid - 1;
    *at = k;
    memcpy(w + k, lines, sizeof lines - 1), k += sizeof lines - 1;
    k += put_i64(w + k, in->lo[g]);
    w[k++] = '-';
    k += put_i64(w + k, in->hi[g]);
    memcpy(w + k, merged, sizeof merged - 1), k += sizeof merged - 1;
    k += put_i64(w + k, in->count[g]);
    memcpy(w + k, src, sizeof src - 1), k += sizeof src - 1;
    for (int64_t t = 0; t < in->count[g]; t++) {
        if (t)
            w[k++] = ',', w[k++] = ' ';
        k += put_i64(w + k, in->heads[in->first[g] + t]);
    }
    w[k++] = ')';
    memcpy(w + k, PyUnicode_1BYTE_DATA(tail), (size_t)tl), k += tl;
    return k;
}

/* The note w[0:k] (its text from `at`) as notes[g], and by[(p, name)] = [its text]: 0, -1 with an error set */
static int mn_keyed(PyObject *notes, PyObject *by, Py_ssize_t g, long long p, PyObject *name, const char *w,
                    Py_ssize_t k, Py_ssize_t at) {
    PyObject *note = ascii_str(w, k), *text = ascii_str(w + at, k - at), *one = NULL, *key = NULL;
    PyObject *pv = PyLong_FromLongLong(p);
    int bad = note == NULL || text == NULL || pv == NULL || (one = PyList_New(1)) == NULL ||
              (key = PyTuple_Pack(2, pv, name)) == NULL;
    if (!bad) {
        PyList_SET_ITEM(notes, g, note), note = NULL;
        PyList_SET_ITEM(one, 0, text), text = NULL;
        PyObject_GC_UnTrack(one); /* str only: no cycle goes through it, and 6,000 lists kept would
                                   * have the collector walk every object anew every parse or two */
        bad = PyDict_SetItem(by, key, one) < 0;
    }
    Py_XDECREF(note), Py_XDECREF(text), Py_XDECREF(one), Py_XDECREF(key), Py_XDECREF(pv);
    return bad ? -1 : 0;
}

/* merged_notes(number, profiles, sections, names, lo, hi, heads, firsts, counts, tail): the notes of the
 * ranked groups merged from several tables (profconv.parse.dialects.nsys_csv_sweep._merged), made in
 * one pass: group g (profile number + profiles[g], section names[sections[g]], its lines lo[g]-hi[g],
 * its tables' first lines heads[firsts[g] : firsts[g] + counts[g]]) says
 *   "lines LO-HI: merged from K source tables (starting at lines H1, H2, ...)" + tail;
 * gives (notes, by_table): notes each "profile P, SECTION table, " + its text (core.table_note), in
 * order; by_table {(P, SECTION): [text]} in the same order (each list untracked by the cyclic garbage
 * collector: it holds one str). None where two groups share a key or a
 * name or the tail is not ASCII (the caller's Python then). All arrays int64. With the optional `keyed`
 * false, by_table is None and two groups of one key are not looked for (the caller's
 * profconv.parse.group_notes.GroupNotes gives the texts by key from the notes). */
static PyObject *merged_notes(PyObject *Py_UNUSED(self), PyObject *args) {
    mn_in in;
    PyObject *names, *tail, *out = NULL, *notes = NULL, *by = NULL;
    Py_buffer b[7] = {{0}};
    char *w = NULL;
    int keyed = 1;
    if (!PyArg_ParseTuple(args, "Ly*y*O!y*y*y*y*y*U|p", &in.number, &b[0], &b[1], &PyTuple_Type, &names, &b[2],
                          &b[3], &b[4], &b[5], &b[6], &tail, &keyed))
        return NULL;
    Py_ssize_t most = mn_groups(&in, b, PyTuple_GET_SIZE(names)); /* (the most tables of a group) */
    if (most < 0)
        goto done;
    Py_ssize_t longest = mn_longest(names, tail);
    if (longest < 0)
        goto none;
    Py_ssize_t cap = 160 + longest + PyUnicode_GET_LENGTH(tail) + most * 22;
    if ((w = PyMem_Malloc((size_t)cap)) == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if ((notes = PyList_New(in.n)) == NULL || (keyed && (by = PyDict_New()) == NULL))
        goto done;
    for (Py_ssize_t g = 0; g < in.n; g++) {
        PyObject *name = PyTuple_GET_ITEM(names, in.sec[g]);
        Py_ssize_t at, k = mn_note(&in, g, name, tail, w, &at);
        if (keyed) {
            if (mn_keyed(notes, by, g, in.number + in.prof[g], name, w, k, at) < 0)
                goto done;
            continue;
        }
        PyObject *note = ascii_str(w, k);
        if (note == NULL)
            goto done;
        PyList_SET_ITEM(notes, g, note);
    }
    if (!keyed) {
        out = PyTuple_Pack(2, notes, Py_None);
        goto done;
    }
    if (PyDict_GET_SIZE(by) != in.n)
        goto none;
    out = PyTuple_Pack(2, notes, by);
    goto done;
none:
    out = Py_NewRef(Py_None);
done:
    Py_XDECREF(notes);
    Py_XDECREF(by);
    PyMem_Free(w);
    for (int j = 0; j < 7; j++)
        if (b[j].obj != NULL)
            PyBuffer_Release(&b[j]);
    return out;
}

/* line_notes(spans, texts): "lines A-B: " + texts[K] for each (A, B, K) of spans (bytes of int64, three a
 * note), in order -- the notes on the tables nsys's readers do not read (a unified-memory app's um_*
 * reports: three a run); None where a text is not ASCII (the caller's Python then) */
static PyObject *line_notes(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer b = {0};
    PyObject *texts, *out = NULL;
    char *w = NULL;
    if (!PyArg_ParseTuple(args, "y*O!", &b, &PyTuple_Type, &texts))
        return NULL;
    Py_ssize_t n = b.len / 24, nt = PyTuple_GET_SIZE(texts), longest = 0;
    const int64_t *v = b.buf;
    if (b.len % 24) {
        PyErr_SetString(PyExc_ValueError, "line_notes: three int64 a note");
        goto done;
    }
    for (Py_ssize_t j = 0; j < nt; j++) {
        PyObject *t = PyTuple_GET_ITEM(texts, j);
        if (!all_ascii(t)) {
            out = Py_NewRef(Py_None);
            goto done;
        }
        if (PyUnicode_GET_LENGTH(t) > longest)
            longest = PyUnicode_GET_LENGTH(t);
    }
    for (Py_ssize_t g = 0; g < n; g++)
        if (v[3 * g + 2] < 0 || v[3 * g + 2] >= nt) {
            PyErr_SetString(PyExc_ValueError, "line_notes: a text out of range");
            goto done;
        }
    if ((w = PyMem_Malloc((size_t)(longest + 64))) == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if ((out = PyList_New(n)) == NULL)
        goto done;
    for (Py_ssize_t g = 0; g < n; g++) {
        PyObject *t = PyTuple_GET_ITEM(texts, v[3 * g + 2]), *note;
        Py_ssize_t k = 6, tl = PyUnicode_GET_LENGTH(t);
        memcpy(w, "lines ", 6);
        k += put_i64(w + k, v[3 * g]);
        w[k++] = '-';
        k += put_i64(w + k, v[3 * g + 1]);
        w[k++] = ':', w[k++] = ' ';
        memcpy(w + k, PyUnicode_1BYTE_DATA(t), (size_t)tl);
        if ((note = ascii_str(w, k + tl)) == NULL) {
            Py_CLEAR(out);
            goto done;
        }
        PyList_SET_ITEM(out, g, note);
    }
done:
    PyMem_Free(w);
    PyBuffer_Release(&b);
    return out;
}

static PyMethodDef methods[] = {
    {"status", status, METH_VARARGS,
     "status(data, bounds, ncells, whole) -> one status byte per row of the ranges data[b:e] (bounds: bytes of "
     "int64 pairs) as a row of a plain summary table (1: not one, 2: an undecided cell, 4: a decimal cell)"},
    {"columns", columns, METH_VARARGS,
     "columns(data, bounds, ncells, whole[, rows]) -> (cells, codes, names, status) of the plain summary rows of the ranges "
     "(rows: how many they hold, where the caller knows: not counted first), "
     "or None where one is not read so"},
    {"nvprof", nvprof, METH_VARARGS,
     "nvprof(data, (time, avg, min, max exponents)) -> (cells, type codes, types, name codes, names, decimals, bad) "
     "of nvprof --csv summary rows (each ending with a newline)"},
    {"nvprof_lines", nvprof_lines, METH_VARARGS,
     "nvprof_lines(lines, tables, (time, avg, min, max exponents)) -> nvprof()'s result for the rows "
     "lines[h + 2 : e] of each (h, e) in tables, read from the lines (no text joined)"},
    {"nvprof_starts", nvprof_starts, METH_VARARGS,
     "nvprof_starts(lines, heads) -> (prefix PIDs, PIDs, commands, the last result line's PID) of the plain start "
     "and result lines before each header (sweep._plain_many), or None where one is not ASCII"},
    {"nvprof_found", nvprof_found, METH_VARARGS,
     "nvprof_found(lines, i, header) -> (pairs, units, after): nvprof_tables's tables as (h, e) tuples, the units "
     "line where it is the same for all (else None), the lines after their rows"},
    {"nvprof_sizes", nvprof_sizes, METH_VARARGS,
     "nvprof_sizes(tables) -> (sizes, firsts): each (h, e) table's rows and the first's place among all of theirs"},
    {"nvprof_tables", nvprof_tables, METH_VARARGS,
     "nvprof_tables(lines, i, header) -> (heads, ends): bytes of int64, each index h >= i where lines[h] == header "
     "with quoted lines from h + 2 on, and the index after them"},
    {"nvprof_sweep", nvprof_sweep, METH_VARARGS,
     "nvprof_sweep(data, header, units, (time, avg, min, max exponents), last[, alloc]) -> (end, (pids, command codes, "
     "row counts), commands, nvprof()'s columns less the bad bytes) of the whole profiles of a plain nvprof --csv sweep "
     "at the start of data, or None where one is not of that shape; the cells written into alloc(rows)'s six buffers "
     "where given"},
    {"nvprof_take", nvprof_take, METH_VARARGS, "nvprof_take(pool, codes) -> [pool[c] for c in codes] (codes: int64)"},
    {"nvprof_runs", nvprof_runs, METH_VARARGS,
     "nvprof_runs(values, sizes) -> each values[k] sizes[k] times in a row (sizes: int64)"},
    {"nsys_sweep", nsys_sweep, METH_VARARGS,
     "nsys_sweep(data, head, reports, ncells, whole, (pct, time, calls, avg), max_rows[, head2, ncells2, whole2, "
     "dest2, head3, unread, gap_ranges, needles, alloc]) -> (tables, cells, codes, names, gaps, headers, newlines, noted[, found]) of "
     "a plain nsys stats "
     "--format csv sweep's chunk (tables: bytes of int64, (rows, report, starts a run, kind, lines before the header, "
     "before the run's first line or -1) a table; headers: the distinct header lines, each starting with head, head2 or "
     "head3; noted: bytes of int64, (lines before the header, before the last line, index in unread) a table of a "
     "report not read; found: whether one of the needles is in the gaps, None where find_any leaves them to Python), or "
     "None where it is not of that shape"},
    {"merged_notes", merged_notes, METH_VARARGS,
     "merged_notes(number, profiles, sections, names, lo, hi, heads, firsts, counts, tail[, keyed]) -> (notes, by_table) of "
     "the ranked groups merged from several tables (int64 arrays; by_table None where keyed is false), or None where two "
     "share a key (keyed) or a text is not ASCII"},
    {"line_notes", line_notes, METH_VARARGS,
     "line_notes(spans, texts) -> ['lines A-B: ' + texts[K] for each (A, B, K) of spans (bytes of int64)], or None "
     "where a text is not ASCII"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_summarycells", "The cells of a sweep's many small summary tables, read in C.", -1,
    methods,
};

PyMODINIT_FUNC PyInit__summarycells(void) {
    ns_path_chars();
    ns_path_words();
    ns_word_starts();
    PyObject *m = PyModule_Create(&module);
    /* the kinds of table nsys_sweep reads (plain summaries, memory sizes, NVTX ranges): callers check for
     * them (an older build reads fewer) */
    if (m != NULL && PyModule_AddIntConstant(m, "NSYS_SWEEP_GAP_RANGES", 1) < 0)
        Py_CLEAR(m);
    if (m != NULL && PyModule_AddIntConstant(m, "NSYS_SWEEP_NEEDLES", 1) < 0)
        Py_CLEAR(m);
    if (m != NULL && PyModule_AddIntConstant(m, "NVPROF_SWEEP_ALLOC", 1) < 0) /* nvprof_sweep's and nsys_sweep's alloc */
        Py_CLEAR(m);
    if (m != NULL && PyModule_AddIntConstant(m, "NSYS_SWEEP_KINDS", 4) < 0)
        Py_CLEAR(m);
    return m;
}
