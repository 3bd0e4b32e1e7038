/* profconv.parse._rowjoin: rows of text joined from columns, with no Python object per row.
 *
 * join(n, pieces, rowsep) gives the n rows joined by `rowsep` (bytes), each row the concatenation
 * of one cell of every piece, in order. A piece is
 *   bytes                 the same text in every row (a constant column, a separator, a key);
 *   (0, text)             one cell a row, the cells one after the other in `text` separated by ','
 *                         (msgspec's encoding of a list of numbers, without its brackets);
 *   (1, values, table)    the cell of row i is table[values[i]] (values: a list; table: a dict
 *                         from each distinct value to its text, bytes);
 *   (2, cells)            the cell of row i is cells[i] (a list of bytes);
 *   (3, text, values)     as (0, text), for a CSV column of floats: a cell msgspec writes otherwise
 *                         than float.__repr__ (an exponent, 'null', below 1e-4: '0.0000...') is
 *                         repr(values[i]) instead, '' for NaN (DataFrame.to_csv's empty cell);
 *   (4, values)           the cell of row i is values[i] as msgspec's JSON writes a str (quoted,
 *                         '"' '\\' and control characters escaped as msgspec escapes them, the rest
 *                         UTF-8) or None (null); any other value: TypeError.
 * write(n, pieces, rowsep, write, rows) hands the same bytes to `write` (a callable taking bytes) a
 * few `rows` at a time (the separator before a chunk's first row with it), from one buffer that is
 * reused: a big output is never held whole, and no fresh memory is touched for each chunk.
 * A piece that does not hold n cells, a value that is not in its table, a cell that is not bytes:
 * ValueError / KeyError / TypeError, as the pure-Python twin (profconv.render.rowjoin) raises.
 * The bytes are the twin's, byte for byte (tests/test_render_rowjoin.py).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

typedef struct {
    int kind; /* -1 literal, 0..4 as above */
    const char *lit;
    Py_ssize_t litlen;
    const char *text; /* kinds 0 and 3: the cells, and where the next one starts */
    Py_ssize_t textlen, pos;
    PyObject *values; /* kinds 1, 3: a list; kind 2: the list of cells */
    PyObject *table;
    PyObject *last, *last_cell; /* kind 1: the value looked up last and its cell (runs of one value) */
} piece_t;

typedef struct {
    char *buf;
    Py_ssize_t len, cap;
} out_t;

static int out_grow(out_t *o, const char *s, Py_ssize_t k);

static inline int out_put(out_t *o, const char *s, Py_ssize_t k) {
    if (o->len + k <= o->cap) {
        memcpy(o->buf + o->len, s, k);
        o->len += k;
        return 0;
    }
    return out_grow(o, s, k);
}

static int out_grow(out_t *o, const char *s, Py_ssize_t k) {
    {
        Py_ssize_t cap = o->cap ? o->cap : 1 << 16;
        while (cap < o->len + k)
            cap *= 2;
        char *b = PyMem_Realloc(o->buf, cap);
        if (b == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        o->buf = b;
        o->cap = cap;
    }
    memcpy(o->buf + o->len, s, k);
    o->len += k;
    return 0;
}

static int cell_error(void) {
    PyErr_SetString(PyExc_ValueError, "a column piece does not hold one cell a row");
    return -1;
}

/* the next ','-separated cell of a text piece: [*a, *a + *k) */
static int next_cell(piece_t *p, Py_ssize_t *a, Py_ssize_t *k, int last) {
    if (p->pos > p->textlen)
        return cell_error();
    const char *s = p->text + p->pos;
    const char *comma = memchr(s, ',', p->textlen - p->pos);
    Py_ssize_t end = comma ? comma - p->text : p->textlen;
    if ((comma != NULL) == last) /* the last row's cell ends the text; the others end at a ',' */
        return cell_error();
    *a = p->pos;
    *k = end - p->pos;
    p->pos = end + 1;
    return 0;
}

/* msgspec's text for a float that float.__repr__ writes otherwise (see the module docstring) */
static int odd_float(const char *s, Py_ssize_t k) {
    if (k && (s[0] == 'n' || memchr(s, 'e', k) != NULL))
        return 1;
    if (k && s[0] == '-') {
        s++;
        k--;
    }
    return k >= 6 && memcmp(s, "0.0000", 6) == 0;
}

static int put_repr(out_t *o, PyObject *v) {
    double x = PyFloat_AsDouble(v);
    if (x == -1.0 && PyErr_Occurred())
        return -1;
    if (x != x)
        return 0; /* NaN: an empty cell */
    char *r = PyOS_double_to_string(x, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
    if (r == NULL)
        return -1;
    int rc = out_put(o, r, (Py_ssize_t)strlen(r));
    PyMem_Free(r);
    return rc;
}

/* msgspec's JSON text of a str (or null for None) */
static int put_json_str(out_t *o, PyObject *v) {
    static const char hex[] = "0123456789abcdef";
    if (v == Py_None)
        return out_put(o, "null", 4);
    if (!PyUnicode_Check(v)) {
        PyErr_SetString(PyExc_TypeError, "a JSON text cell is not a str");
        return -1;
    }
    Py_ssize_t k;
    const char *s = PyUnicode_AsUTF8AndSize(v, &k);
    if (s == NULL)
        return -1;
    if (out_put(o, "\"", 1) < 0)
        return -1;
    Py_ssize_t a = 0;
    for (Py_ssize_t i = 0; i < k; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        char esc[6] = {'\\', 0, '0', '0', 0, 0};
        Py_ssize_t n = 2;
        switch (c) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\b': esc[1] = 'b'; break;
        case '\t': esc[1] = 't'; break;
        case '\n': esc[1] = 'n'; break;
        case '\f': esc[1] = 'f'; break;
        case '\r': esc[1] = 'r'; break;
        default:
            esc[1] = 'u';
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            n = 6;
        }
        if (out_put(o, s + a, i - a) < 0 || out_put(o, esc, n) < 0)
            return -1;
        a = i + 1;
    }
    if (out_put(o, s + a, k - a) < 0)
        return -1;
    return out_put(o, "\"", 1);
}

static int put_bytes(out_t *o, PyObject *b) {
    if (!PyBytes_Check(b)) {
        PyErr_SetString(PyExc_TypeError, "a cell is not bytes");
        return -1;
    }
    return out_put(o, PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b));
}

static int put_cell(out_t *o, piece_t *p, Py_ssize_t i, int last) {
    Py_ssize_t a, k;
    switch (p->kind) {
    case -1:
        return out_put(o, p->lit, p->litlen);
    case 0:
        if (next_cell(p, &a, &k, last) < 0)
            return -1;
        return out_put(o, p->text + a, k);
    case 1: {
        PyObject *v = PyList_GET_ITEM(p->values, i);
        if (v != p->last || p->last_cell == NULL) { /* borrowed: the list and the table hold them */
            PyObject *cell = PyDict_GetItemWithError(p->table, v);
            if (cell == NULL) {
                if (!PyErr_Occurred())
                    PyErr_SetObject(PyExc_KeyError, v);
                return -1;
            }
            p->last = v;
            p->last_cell = cell;
        }
        return put_bytes(o, p->last_cell);
    }
    case 2:
        return put_bytes(o, PyList_GET_ITEM(p->values, i));
    case 4:
        return put_json_str(o, PyList_GET_ITEM(p->values, i));
    default:
        if (next_cell(p, &a, &k, last) < 0)
            return -1;
        if (odd_float(p->text + a, k))
            return put_repr(o, PyList_GET_ITEM(p->values, i));
        return out_put(o, p->text + a, k);
    }
}

static int read_piece(PyObject *item, Py_ssize_t n, piece_t *p) {
    memset(p, 0, sizeof(*p));
    if (PyBytes_Check(item)) {
        p->kind = -1;
        p->lit = PyBytes_AS_STRING(item);
        p->litlen = PyBytes_GET_SIZE(item);
        return 0;
    }
    if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) < 2 || !PyLong_Check(PyTuple_GET_ITEM(item, 0))) {
        PyErr_SetString(PyExc_TypeError, "a piece is bytes or (kind, ...)");
        return -1;
    }
    p->kind = (int)PyLong_AsLong(PyTuple_GET_ITEM(item, 0));
    Py_ssize_t want = p->kind == 1 || p->kind == 3 ? 3 : 2;
    if (p->kind < 0 || p->kind > 4 || PyTuple_GET_SIZE(item) != want) {
        PyErr_SetString(PyExc_TypeError, "a piece of an unknown kind");
        return -1;
    }
    PyObject *second = PyTuple_GET_ITEM(item, 1);
    if (p->kind == 0 || p->kind == 3) {
        if (!PyBytes_Check(second)) {
            PyErr_SetString(PyExc_TypeError, "a text piece's cells are bytes");
            return -1;
        }
        p->text = PyBytes_AS_STRING(second);
        p->textlen = PyBytes_GET_SIZE(second);
        if (n == 0 && p->textlen)
            return cell_error();
    }
    if (p->kind >= 1) {
        PyObject *values = p->kind == 3 ? PyTuple_GET_ITEM(item, 2) : second;
        if (!PyList_Check(values)) {
            PyErr_SetString(PyExc_TypeError, "a piece's values are a list");
            return -1;
        }
        if (PyList_GET_SIZE(values) != n)
            return cell_error();
        p->values = values;
    }
    if (p->kind == 1) {
        p->table = PyTuple_GET_ITEM(item, 2);
        if (!PyDict_Check(p->table)) {
            PyErr_SetString(PyExc_TypeError, "a piece's table is a dict");
            return -1;
        }
    }
    return 0;
}

static int read_pieces(PyObject *pieces, Py_ssize_t n, piece_t **out) {
    Py_ssize_t np = PyList_GET_SIZE(pieces);
    piece_t *ps = PyMem_Calloc(np ? np : 1, sizeof(piece_t));
    if (ps == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *out = ps;
    for (Py_ssize_t j = 0; j < np; j++)
        if (read_piece(PyList_GET_ITEM(pieces, j), n, &ps[j]) < 0)
            return -1;
    return 0;
}

/* rows lo:hi (the separator before each but the very first row) */
static int put_rows(out_t *o, piece_t *ps, Py_ssize_t np, Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t n,
                    const Py_buffer *sep) {
    for (Py_ssize_t i = lo; i < hi; i++) {
        if (i && out_put(o, sep->buf, sep->len) < 0)
            return -1;
        for (Py_ssize_t j = 0; j < np; j++)
            if (put_cell(o, &ps[j], i, i == n - 1) < 0)
                return -1;
    }
    return 0;
}

static PyObject *join(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_ssize_t n;
    PyObject *pieces;
    Py_buffer sep;
    if (!PyArg_ParseTuple(args, "nO!y*", &n, &PyList_Type, &pieces, &sep))
        return NULL;
    PyObject *result = NULL;
    piece_t *ps = NULL;
    out_t o = {NULL, 0, 0};
    if (read_pieces(pieces, n, &ps) == 0 && put_rows(&o, ps, PyList_GET_SIZE(pieces), 0, n, n, &sep) == 0)
        result = PyBytes_FromStringAndSize(o.buf ? o.buf : "", o.len);
    PyMem_Free(o.buf);
    PyMem_Free(ps);
    PyBuffer_Release(&sep);
    return result;
}

static PyObject *write_rows(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_ssize_t n, rows;
    PyObject *pieces, *write;
    Py_buffer sep;
    if (!PyArg_ParseTuple(args, "nO!y*On", &n, &PyList_Type, &pieces, &sep, &write, &rows))
        return NULL;
    PyObject *result = NULL;
    piece_t *ps = NULL;
    out_t o = {NULL, 0, 0};
    if (rows < 1) {
        PyErr_SetString(PyExc_ValueError, "rows must be at least 1");
        goto done;
    }
    if (read_pieces(pieces, n, &ps) < 0)
        goto done;
    for (Py_ssize_t lo = 0; lo < n; lo += rows) {
        o.len = 0;
        if (put_rows(&o, ps, PyList_GET_SIZE(pieces), lo, lo + rows < n ? lo + rows : n, n, &sep) < 0)
            goto done;
        PyObject *chunk = PyBytes_FromStringAndSize(o.buf, o.len);
        if (chunk == NULL)
            goto done;
        PyObject *r = PyObject_CallOneArg(write, chunk);
        Py_DECREF(chunk);
        if (r == NULL)
            goto done;
        Py_DECREF(r);
    }
    result = Py_NewRef(Py_None);
done:
    PyMem_Free(o.buf);
    PyMem_Free(ps);
    PyBuffer_Release(&sep);
    return result;
}

static PyMethodDef methods[] = {
    {"join", join, METH_VARARGS, "join(n, pieces, rowsep) -> bytes: n rows of the pieces' cells, joined."},
    {"write", write_rows, METH_VARARGS, "write(n, pieces, rowsep, write, rows): join's bytes to write(), rows at a time."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_rowjoin", NULL, -1, methods};

PyMODINIT_FUNC PyInit__rowjoin(void) { return PyModule_Create(&module); }
