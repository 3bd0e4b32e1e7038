/* profconv.parse._rowscan: the plain rows of an nvprof summary table, read in C.

scan(lines, k, limit) reads lines[k:k+limit] (a list of str) while each line is a row that
profconv.parse.dialects.nvprof._FAST_ROW matches,

    ^\s*(?:==\d+==\s*)?(?:(GPU activities|API calls|OpenACC \((?:excl|incl)\))\s*:)?\s+
    (\d{1,3}\.\d\d)%\s+N\s+(\d{1,18})\s+N\s+N\s+N\s+(\S.*)$
    N = (\d{1,15}(?:\.\d{1,12})?)(s|ms|us|ns)

that holds no markup (nvprof._needs_clean) and whose Time(%) is at most 100, and returns

    (count, stop, segments, pct_at)

count: the rows read (lines[k:k+count]); stop: 0 where the line after them is no such row (or the
range ended), 1 where it matched but holds markup or a share above 100, 2 where the scan reached a
line it leaves to the regex (a str that is not ASCII, or not a str): the caller reads the run again
with the regex path, which gives the same result there by definition; pct_at: the index of the
first name holding '%' (-1: none). Where no row is kept (count 0, or stop 2) it returns (count,
stop) alone. segments: the rows cut where a label names another section than the rows before
(GPU activities, API calls, OpenACC), each

    (label, a, names, calls, pct, total_ns, avg_ns, min_ns, max_ns)

label: the label of row a (None: the first segment's rows carry none), a: its first row's index in
the run, names: right-stripped as str.rstrip does, calls: ints, the five times as array('d') (pct
as printed, times in ns).

Every number is the one the pure-Python path makes: the text float() is given there (the digits
and the unit's exponent: '2.2027' 'ms' -> '2.2027e6') converted as float() converts it (Clinger's
fast path where it is exact: digits making an integer below 2**53 times or divided by an exact power
of ten, one rounding; else PyOS_string_to_double, which is what float() calls); calls as int() does (at most 18 digits: a long long). Only ASCII lines are read
here, where the regex's \s is Py_UNICODE_ISSPACE (\t \n \v \f \r \x1c-\x1f and space), \d is 0-9
and '.' anything but '\n'. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

static PyObject *array_type;      /* array.array */
static PyObject *typecode_d;      /* 'd' */
static PyObject *label_str[4];    /* 'GPU activities', 'API calls', 'OpenACC (excl)', 'OpenACC (incl)' */
static const int SECTION[4] = {0, 1, 2, 2};  /* nvprof.LABEL_SECTIONS: gpu, api, openacc, openacc */
static const char *const LABELS[4] = {"GPU activities", "API calls", "OpenACC (excl)", "OpenACC (incl)"};
static const size_t LABEL_LEN[4] = {14, 9, 14, 14};
static unsigned char SPACE[128];  /* Py_UNICODE_ISSPACE of each ASCII character */

#if PY_VERSION_HEX < 0x030C0000
#define READY(o) PyUnicode_READY(o)
#else
#define READY(o) 0  /* every str is ready from 3.12 on (PyUnicode_READY is deprecated) */
#endif
#define IS_SPACE(c) (SPACE[(unsigned char)(c)])
#define IS_DIGIT(c) ((c) >= '0' && (c) <= '9')

typedef struct {
    Py_ssize_t a, b;  /* the number's text: s[a:b]; its unit s[b:u] */
    Py_ssize_t u;
    const char *exp;
    size_t exp_len;  /* the unit's exponent: "e9", "e6", "e3", "" */
} num_t;

typedef struct {
    int label;        /* -1: none, else an index into LABELS */
    Py_ssize_t pa, pb;  /* Time(%) text */
    num_t t[4];       /* Time, Avg, Min, Max */
    Py_ssize_t ca, cb;  /* Calls text */
    Py_ssize_t na, nb;  /* the name, right-stripped */
    Py_ssize_t ne;      /* where the name's group ends (before the stripping) */
} row_t;

static Py_ssize_t skip_space(const char *s, Py_ssize_t i, Py_ssize_t n)
{
    while (i < n && IS_SPACE(s[i]))
        i++;
    return i;
}

static Py_ssize_t skip_digits(const char *s, Py_ssize_t i, Py_ssize_t n)
{
    while (i < n && IS_DIGIT(s[i]))
        i++;
    return i;
}

/* N followed by \s+: returns the index after the whitespace, or -1 */
static Py_ssize_t match_time(const char *s, Py_ssize_t i, Py_ssize_t n, num_t *out)
{
    Py_ssize_t j = skip_digits(s, i, n);
    if (j == i || j - i > 15)
        return -1;
    out->a = i;
    if (j < n && s[j] == '.') {
        Py_ssize_t f = skip_digits(s, j + 1, n);
        /* \.\d{1,12} then a unit: with no digit, or more than 12, nothing matches (a unit
           cannot start at '.' or at a digit) */
        if (f == j + 1 || f - (j + 1) > 12)
            return -1;
        j = f;
    }
    out->b = j;
    if (j >= n)
        return -1;
    switch (s[j]) {
    case 's':
        out->exp = "e9";
        out->exp_len = 2;
        j += 1;
        break;
    case 'm':
    case 'u':
    case 'n':
        if (j + 1 >= n || s[j + 1] != 's')
            return -1;
        out->exp = s[j] == 'm' ? "e6" : s[j] == 'u' ? "e3" : "";
        out->exp_len = s[j] == 'n' ? 0 : 2;
        j += 2;
        break;
    default:
        return -1;
    }
    out->u = j;
    Py_ssize_t w = skip_space(s, j, n);
    return w > j ? w : -1;
}

/* _FAST_ROW.match(s) for an ASCII line: 1 with the groups in *r, 0 when it does not match */
static int match_row(const char *s, Py_ssize_t n, row_t *r)
{
    Py_ssize_t i = skip_space(s, 0, n), w;
    int ws = i > 0;  /* whether whitespace is just behind i (for the \s+ before Time(%)) */
    if (i + 1 < n && s[i] == '=' && s[i + 1] == '=') {
        Py_ssize_t d = skip_digits(s, i + 2, n);
        if (d == i + 2 || d + 1 >= n || s[d] != '=' || s[d + 1] != '=')
            return 0;  /* '==' and no PID marker: the optional group and \s+ cannot start here */
        i = d + 2;
        w = skip_space(s, i, n);
        ws = w > i;
        i = w;
    }
    r->label = -1;
    for (int l = 0; l < 4; l++) {
        size_t len = LABEL_LEN[l];
        if (i < n && s[i] == LABELS[l][0] && (size_t)(n - i) >= len && memcmp(s + i, LABELS[l], len) == 0) {
            Py_ssize_t c = skip_space(s, i + (Py_ssize_t)len, n);
            if (c >= n || s[c] != ':')
                return 0;
            r->label = l;
            i = c + 1;
            w = skip_space(s, i, n);
            ws = w > i;
            i = w;
            break;
        }
    }
    if (!ws)
        return 0;
    /* (\d{1,3}\.\d\d)%\s+ */
    Py_ssize_t d = skip_digits(s, i, n);
    if (d == i || d - i > 3 || d + 3 >= n || s[d] != '.' || !IS_DIGIT(s[d + 1]) || !IS_DIGIT(s[d + 2])
        || s[d + 3] != '%')
        return 0;
    r->pa = i;
    r->pb = d + 3;
    i = d + 4;
    w = skip_space(s, i, n);
    if (w == i)
        return 0;
    i = match_time(s, w, n, &r->t[0]);
    if (i < 0)
        return 0;
    /* (\d{1,18})\s+ */
    d = skip_digits(s, i, n);
    if (d == i || d - i > 18)
        return 0;
    r->ca = i;
    r->cb = d;
    w = skip_space(s, d, n);
    if (w == d)
        return 0;
    i = w;
    for (int t = 1; t < 4; t++) {
        i = match_time(s, i, n, &r->t[t]);
        if (i < 0)
            return 0;
    }
    /* (\S.*)$ : the last \s+ took every space, so s[i] is \S unless the line ended; '.' stops at
       '\n', and $ holds there only when that '\n' ends the line */
    if (i >= n)
        return 0;
    const char *nl = memchr(s + i, '\n', (size_t)(n - i));
    Py_ssize_t end = n;
    if (nl != NULL) {
        end = nl - s;
        if (end != n - 1)
            return 0;
    }
    r->ne = end;
    while (end > i && IS_SPACE(s[end - 1]))
        end--;
    r->na = i;
    r->nb = end;
    return 1;
}

static int tag_at(const char *s, Py_ssize_t n, Py_ssize_t q)
{
    static const char *const TAGS[6] = {"b>", "strong>", "code>", "em>", "i>", "tt>"};
    static const size_t TAG_LEN[6] = {2, 7, 5, 3, 2, 3};
    for (int t = 0; t < 6; t++) {
        size_t len = TAG_LEN[t];
        if ((size_t)(n - q) >= len && memcmp(s + q, TAGS[t], len) == 0)
            return 1;
    }
    return 0;
}

/* nvprof._needs_clean for an ASCII line (the dashes it also looks for are not ASCII); memchr
   looks for each character (many bytes at a time) */
static int needs_clean(const char *s, Py_ssize_t n)
{
    size_t len = (size_t)n;
    if (memchr(s, '|', len) || memchr(s, '&', len) || memchr(s, '\t', len))
        return 1;
    for (const char *p = memchr(s, '*', len); p != NULL; p = memchr(p + 1, '*', len - (size_t)(p + 1 - s))) {
        Py_ssize_t i = p - s;  /* '**' or '\\*' */
        if ((i + 1 < n && s[i + 1] == '*') || (i > 0 && s[i - 1] == '\\'))
            return 1;
    }
    for (const char *p = memchr(s, '<', len); p != NULL; p = memchr(p + 1, '<', len - (size_t)(p + 1 - s))) {
        Py_ssize_t q = p - s + 1;  /* </?(?:b|strong|code|em|i|tt)> */
        if (tag_at(s, n, q) || (q < n && s[q] == '/' && tag_at(s, n, q + 1)))
            return 1;
    }
    return 0;
}

static const double POW10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                  1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* float(text + exp), as float() converts it; -1.0 with an exception set on failure. The text is
   digits with at most one '.' (the row pattern's N). Where those digits make an integer below
   2**53 and the power of ten left is within 10**22, one multiplication or division of two exact
   doubles is the correctly rounded value (Clinger's fast path): float()'s, which rounds correctly
   too. Otherwise Python's own conversion of the text. */
static int to_double(const char *s, Py_ssize_t a, Py_ssize_t b, const char *exp, size_t el, double *out)
{
    unsigned long long m = 0;
    int frac = 0, seen = 0, digits = 0;
    for (Py_ssize_t k = a; k < b; k++) {
        if (s[k] == '.') {
            seen = 1;
            continue;
        }
        m = m * 10 + (unsigned long long)(s[k] - '0');
        frac += seen;
        digits++;
    }
    int e10 = (el == 0 ? 0 : exp[1] - '0') - frac;
    if (digits <= 15 && e10 >= -22 && e10 <= 22) {
        *out = e10 >= 0 ? (double)m * POW10[e10] : (double)m / POW10[-e10];
        return 0;
    }
    char buf[48];
    size_t len = (size_t)(b - a);
    if (len + el + 1 > sizeof buf) {
        PyErr_SetString(PyExc_SystemError, "_rowscan: a number longer than the row pattern allows");
        return -1;
    }
    memcpy(buf, s + a, len);
    memcpy(buf + len, exp, el + 1);
    char *end = NULL;
    double x = PyOS_string_to_double(buf, &end, NULL);
    if (x == -1.0 && PyErr_Occurred())
        return -1;
    if (end != buf + len + el) {
        PyErr_SetString(PyExc_SystemError, "_rowscan: a number the row pattern allows was not read whole");
        return -1;
    }
    *out = x;
    return 0;
}

typedef struct {
    double *v;          /* 5 columns of cap values each */
    signed char *label; /* each row's label (-1: none) */
    Py_ssize_t cap;
} cols_t;

static int grow(cols_t *c, Py_ssize_t need)
{
    if (need <= c->cap)
        return 0;
    Py_ssize_t cap = c->cap ? c->cap : 64;
    while (cap < need)
        cap *= 2;
    double *v = PyMem_Malloc(sizeof(double) * 5 * (size_t)cap);
    signed char *label = PyMem_Malloc((size_t)cap);
    if (v == NULL || label == NULL) {
        PyMem_Free(v);
        PyMem_Free(label);
        PyErr_NoMemory();
        return -1;
    }
    if (c->cap) {
        for (int k = 0; k < 5; k++)
            memcpy(v + k * cap, c->v + k * c->cap, sizeof(double) * (size_t)c->cap);
        memcpy(label, c->label, (size_t)c->cap);
    }
    PyMem_Free(c->v);
    PyMem_Free(c->label);
    c->v = v;
    c->label = label;
    c->cap = cap;
    return 0;
}

/* rows [a, b) of the run as one segment: (label, a, names, calls, pct, total, avg, min, max) */
static PyObject *segment(PyObject *names, PyObject *calls, PyObject *all, Py_ssize_t count, int label,
                         Py_ssize_t a, Py_ssize_t b)
{
    PyObject *seg = PyTuple_New(9), *o;
    if (seg == NULL)
        return NULL;
    PyTuple_SET_ITEM(seg, 0, Py_NewRef(label >= 0 ? label_str[label] : Py_None));
    if ((o = PyLong_FromSsize_t(a)) == NULL)
        goto fail;
    PyTuple_SET_ITEM(seg, 1, o);
    int whole = a == 0 && b == count;  /* the run's own lists: no copy */
    if ((o = whole ? Py_NewRef(names) : PyList_GetSlice(names, a, b)) == NULL)
        goto fail;
    PyTuple_SET_ITEM(seg, 2, o);
    if ((o = whole ? Py_NewRef(calls) : PyList_GetSlice(calls, a, b)) == NULL)
        goto fail;
    PyTuple_SET_ITEM(seg, 3, o);
    for (int t = 0; t < 5; t++) {
        if ((o = PySequence_GetSlice(all, t * count + a, t * count + b)) == NULL)
            goto fail;
        PyTuple_SET_ITEM(seg, 4 + t, o);
    }
    return seg;
fail:
    Py_DECREF(seg);  /* the items not set are NULL: tuple dealloc skips them */
    return NULL;
}

static PyObject *scan(PyObject *self, PyObject *args)
{
    PyObject *lines;
    Py_ssize_t k, limit;
    if (!PyArg_ParseTuple(args, "O!nn:scan", &PyList_Type, &lines, &k, &limit))
        return NULL;
    if (k < 0 || limit < 0) {
        PyErr_SetString(PyExc_ValueError, "scan: k and limit must not be negative");
        return NULL;
    }
    PyObject *names = PyList_New(0), *calls = PyList_New(0), *all = NULL, *segments = NULL;
    PyObject *result = NULL;
    cols_t c = {NULL, NULL, 0};
    Py_ssize_t count = 0, pct_at = -1;
    int stop = 0;
    if (names == NULL || calls == NULL)
        goto done;
    Py_INCREF(lines);
    for (Py_ssize_t x = k; x - k < limit; x++) {
        /* the list's size is read again each time: the allocations below could run a collection */
        if (x >= PyList_GET_SIZE(lines))
            break;
        PyObject *item = PyList_GET_ITEM(lines, x);
        if (!PyUnicode_Check(item)) {
            stop = 2;
            break;
        }
        if (READY(item) < 0) {
            Py_DECREF(lines);
            goto done;
        }
        if (!PyUnicode_IS_ASCII(item)) {
            stop = 2;
            break;
        }
        Py_INCREF(item);
        const char *s = (const char *)PyUnicode_DATA(item);
        Py_ssize_t n = PyUnicode_GET_LENGTH(item);
        row_t r;
        double v[5];
        if (!match_row(s, n, &r)) {
            Py_DECREF(item);
            break;
        }
        if (needs_clean(s, n)) {
            Py_DECREF(item);
            stop = 1;
            break;
        }
        if (to_double(s, r.pa, r.pb, "", 0, &v[0]) < 0)
            goto fail_item;
        if (v[0] > 100.0) {
            Py_DECREF(item);
            stop = 1;
            break;
        }
        for (int t = 0; t < 4; t++)
            if (to_double(s, r.t[t].a, r.t[t].b, r.t[t].exp, r.t[t].exp_len, &v[t + 1]) < 0)
                goto fail_item;
        long long nc = 0;
        for (Py_ssize_t p = r.ca; p < r.cb; p++)
            nc = nc * 10 + (s[p] - '0');  /* at most 18 digits: below 2**63 */
        if (grow(&c, count + 1) < 0)
            goto fail_item;
        PyObject *name = PyUnicode_Substring(item, r.na, r.nb);
        if (name == NULL)
            goto fail_item;
        int err = PyList_Append(names, name);
        Py_DECREF(name);
        if (err < 0)
            goto fail_item;
        PyObject *ncalls = PyLong_FromLongLong(nc);
        if (ncalls == NULL)
            goto fail_item;
        err = PyList_Append(calls, ncalls);
        Py_DECREF(ncalls);
        if (err < 0)
            goto fail_item;
        c.label[count] = (signed char)r.label;
        if (pct_at < 0 && memchr(s + r.na, '%', (size_t)(r.nb - r.na)) != NULL)
            pct_at = count;
        for (int t = 0; t < 5; t++)
            c.v[t * c.cap + count] = v[t];
        count++;
        Py_DECREF(item);
        continue;
    fail_item:
        Py_DECREF(item);
        Py_DECREF(lines);
        goto done;
    }
    Py_DECREF(lines);
    if (count == 0 || stop == 2) {  /* nothing the caller keeps */
        result = Py_BuildValue("(ni)", count, stop);
        goto done;
    }
    {
        /* the five columns as one array of doubles, each segment's a slice of it */
        PyObject *raw = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)sizeof(double) * 5 * count);
        if (raw == NULL)
            goto done;
        for (int t = 0; t < 5; t++)
            memcpy(PyBytes_AS_STRING(raw) + sizeof(double) * (size_t)(t * count), c.v + t * c.cap,
                   sizeof(double) * (size_t)count);
        all = PyObject_CallFunctionObjArgs(array_type, typecode_d, raw, NULL);
        Py_DECREF(raw);
        if (all == NULL || (segments = PyList_New(0)) == NULL)
            goto done;
        /* a segment ends where a label names another section (the first: unknown without a label) */
        Py_ssize_t a = 0;
        int cur = c.label[0] >= 0 ? SECTION[c.label[0]] : -1;
        for (Py_ssize_t x = 1; x <= count; x++) {
            if (x < count && (c.label[x] < 0 || SECTION[c.label[x]] == cur))
                continue;
            PyObject *seg = segment(names, calls, all, count, c.label[a], a, x);
            if (seg == NULL)
                goto done;
            int err = PyList_Append(segments, seg);
            Py_DECREF(seg);
            if (err < 0)
                goto done;
            if (x < count) {
                a = x;
                cur = SECTION[c.label[x]];
            }
        }
        result = Py_BuildValue("(niOn)", count, stop, segments, pct_at);
    }
done:
    PyMem_Free(c.v);
    PyMem_Free(c.label);
    Py_XDECREF(names);
    Py_XDECREF(calls);
    Py_XDECREF(all);
    Py_XDECREF(segments);
    return result;
}

static PyObject *match(PyObject *self, PyObject *arg)
{
    /* _FAST_ROW.match(line).groups() for an ASCII str (None where it does not match); for the
       tests, which compare it with the regex */
    if (!PyUnicode_Check(arg) || READY(arg) < 0 || !PyUnicode_IS_ASCII(arg)) {
        PyErr_SetString(PyExc_ValueError, "match: an ASCII str");
        return NULL;
    }
    const char *s = (const char *)PyUnicode_DATA(arg);
    row_t r;
    if (!match_row(s, PyUnicode_GET_LENGTH(arg), &r))
        Py_RETURN_NONE;
    PyObject *g[12];
    g[0] = r.label >= 0 ? Py_NewRef(label_str[r.label]) : Py_NewRef(Py_None);
    g[1] = PyUnicode_Substring(arg, r.pa, r.pb);
    g[4] = PyUnicode_Substring(arg, r.ca, r.cb);
    static const int at[4] = {2, 5, 7, 9};
    for (int t = 0; t < 4; t++) {
        g[at[t]] = PyUnicode_Substring(arg, r.t[t].a, r.t[t].b);
        g[at[t] + 1] = PyUnicode_Substring(arg, r.t[t].b, r.t[t].u);
    }
    g[11] = PyUnicode_Substring(arg, r.na, r.ne);
    PyObject *out = PyTuple_New(12);
    for (int x = 0; x < 12; x++) {
        if (g[x] == NULL || out == NULL) {
            for (int y = 0; y < 12; y++)
                Py_XDECREF(g[y]);
            Py_XDECREF(out);
            return NULL;
        }
    }
    for (int x = 0; x < 12; x++)
        PyTuple_SET_ITEM(out, x, g[x]);
    return out;
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS,
     "scan(lines, k, limit) -> (count, stop, segments, pct_at):\n"
     "the plain nvprof summary rows of lines[k:k+limit] (see the module's source)."},
    {"match", match, METH_O, "match(line): _FAST_ROW.match(line).groups() for an ASCII str, or None (tests)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_rowscan",
                                    "The plain rows of an nvprof summary table, read in C.", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__rowscan(void)
{
    for (int ch = 0; ch < 128; ch++)
        SPACE[ch] = Py_UNICODE_ISSPACE(ch) ? 1 : 0;
    PyObject *arraymod = PyImport_ImportModule("array");
    if (arraymod == NULL)
        return NULL;
    array_type = PyObject_GetAttrString(arraymod, "array");
    Py_DECREF(arraymod);
    if (array_type == NULL)
        return NULL;
    typecode_d = PyUnicode_InternFromString("d");
    if (typecode_d == NULL)
        return NULL;
    for (int l = 0; l < 4; l++) {
        label_str[l] = PyUnicode_InternFromString(LABELS[l]);
        if (label_str[l] == NULL)
            return NULL;
    }
    return PyModule_Create(&module);
}
