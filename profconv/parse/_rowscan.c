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
#include <stdint.h>
#include <math.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
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
    unsigned long long m;  /* its digits as one integer (to_double's; of use where digits <= 15) */
    int frac, digits;      /* how many of them after the '.', in all */
} num_t;

/* digits from s[i] on, added to *m (m * 10 + digit, as to_double reads them): the index after them */
static inline Py_ssize_t take_digits(const char *s, Py_ssize_t i, Py_ssize_t n, unsigned long long *m)
{
    unsigned long long v = *m;
    for (; i < n && IS_DIGIT(s[i]); i++)
        v = v * 10 + (unsigned long long)(s[i] - '0');
    *m = v;
    return i;
}

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
    out->m = 0;
    Py_ssize_t j = take_digits(s, i, n, &out->m);
    if (j == i || j - i > 15)
        return -1;
    out->a = i;
    out->frac = 0;
    if (j < n && s[j] == '.') {
        Py_ssize_t f = take_digits(s, j + 1, n, &out->m);
        /* \.\d{1,12} then a unit: with no digit, or more than 12, nothing matches (a unit
           cannot start at '.' or at a digit) */
        if (f == j + 1 || f - (j + 1) > 12)
            return -1;
        out->frac = (int)(f - (j + 1));
        out->digits = (int)(f - i - 1);
        j = f;
    } else {
        out->digits = (int)(j - i);
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

/* the line's optional PID marker and label and the \s+ after them: 1 with the index after those in
   *at (the label in *r), 0 where the line cannot match (no whitespace just before Time(%)) */
static inline int match_lead(const char *s, Py_ssize_t n, row_t *r, Py_ssize_t *at)
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
    *at = i;
    return ws;
}

/* (\S.*)$ from i, where the last \s+ ended: 1 with the name in *r, 0 when it does not match */
static inline int match_name(const char *s, Py_ssize_t i, Py_ssize_t n, row_t *r)
{
    /* the last \s+ took every space, so s[i] is \S unless the line ended; '.' stops at '\n', and $
       holds there only when that '\n' ends the line */
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

/* _FAST_ROW.match(s) for an ASCII line: 1 with the groups in *r, 0 when it does not match */
static int match_row(const char *s, Py_ssize_t n, row_t *r)
{
    Py_ssize_t i, w;
    if (!match_lead(s, n, r, &i))
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
    /* (\S.*)$ */
    return match_name(s, i, n, r);
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

/* nvprof._needs_clean's rule of '**' and '\\*' for an ASCII line */
static int needs_clean_star(const char *s, Py_ssize_t n)
{
    size_t len = (size_t)n;
    for (const char *p = memchr(s, '*', len); p != NULL; p = memchr(p + 1, '*', len - (size_t)(p + 1 - s))) {
        Py_ssize_t i = p - s;  /* '**' or '\\*' */
        if ((i + 1 < n && s[i + 1] == '*') || (i > 0 && s[i - 1] == '\\'))
            return 1;
    }
    return 0;
}

/* nvprof._needs_clean for an ASCII line (the dashes it also looks for are not ASCII); memchr
   looks for each character (many bytes at a time) */
static int needs_clean(const char *s, Py_ssize_t n)
{
    size_t len = (size_t)n;
    if (memchr(s, '|', len) || memchr(s, '&', len) || memchr(s, '\t', len) || needs_clean_star(s, n))
        return 1;
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
static int text_double(const char *s, Py_ssize_t a, Py_ssize_t b, const char *exp, size_t el, double *out);

/* to_double of digits read already: m, frac and digits as to_double counts them */
static inline int digits_double(const char *s, Py_ssize_t a, Py_ssize_t b, const char *exp, size_t el,
                                unsigned long long m, int frac, int digits, double *out)
{
    int e10 = (el == 0 ? 0 : exp[1] - '0') - frac;
    if (digits <= 15 && e10 >= -22 && e10 <= 22) {
        *out = e10 >= 0 ? (double)m * POW10[e10] : (double)m / POW10[-e10];
        return 0;
    }
    return text_double(s, a, b, exp, el, out);
}

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
    return digits_double(s, a, b, exp, el, m, frac, digits, out);
}

/* float(text + exp) by Python's own conversion */
static int text_double(const char *s, Py_ssize_t a, Py_ssize_t b, const char *exp, size_t el, double *out)
{
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

/* a matched row's Time(%) and four times as float() gives them, in v: 1, 0 where the Time(%) is
   above 100 (the times not read), -1 with an exception set */
static inline int row_values(const char *s, const row_t *r, double v[5])
{
    if (to_double(s, r->pa, r->pb, "", 0, &v[0]) < 0)
        return -1;
    if (v[0] > 100.0)
        return 0;
    for (int t = 0; t < 4; t++) {
        const num_t *x = &r->t[t];
        if (digits_double(s, x->a, x->b, x->exp, x->exp_len, x->m, x->frac, x->digits, &v[t + 1]) < 0)
            return -1;
    }
    return 1;
}

typedef struct {
    double *v;          /* 5 columns of cap values each */
    signed char *label; /* each row's label (-1: none) */
    Py_ssize_t cap;
    int64_t *code;      /* each row's name's code (profiles: its place among the names met) */
    int64_t *calls;     /* each row's calls (text_sweep: no list of ints) */
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
    int64_t *code = PyMem_Malloc(sizeof(int64_t) * (size_t)cap), *calls = PyMem_Malloc(sizeof(int64_t) * (size_t)cap);
    if (v == NULL || label == NULL || code == NULL || calls == NULL) {
        PyMem_Free(v);
        PyMem_Free(label);
        PyMem_Free(code);
        PyMem_Free(calls);
        PyErr_NoMemory();
        return -1;
    }
    if (c->cap) {
        for (int k = 0; k < 5; k++)
            memcpy(v + k * cap, c->v + k * c->cap, sizeof(double) * (size_t)c->cap);
        memcpy(label, c->label, (size_t)c->cap);
        memcpy(code, c->code, sizeof(int64_t) * (size_t)c->cap);
        memcpy(calls, c->calls, sizeof(int64_t) * (size_t)c->cap);
    }
    PyMem_Free(c->v);
    PyMem_Free(c->label);
    PyMem_Free(c->code);
    PyMem_Free(c->calls);
    c->v = v;
    c->label = label;
    c->code = code;
    c->calls = calls;
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

/* what scan() builds: the run's columns, and from them its result's array and segments (owned) */
typedef struct {
    PyObject *names, *calls, *all, *segments;
    cols_t c;
    Py_ssize_t count, pct_at;
    int stop;
} scan_t;

/* gives back what sc holds (scan's result keeps its own references) */
static void scan_free(scan_t *sc)
{
    PyMem_Free(sc->c.v);
    PyMem_Free(sc->c.label);
    PyMem_Free(sc->c.code);
    PyMem_Free(sc->c.calls);
    Py_XDECREF(sc->names);
    Py_XDECREF(sc->calls);
    Py_XDECREF(sc->all);
    Py_XDECREF(sc->segments);
}

/* an ASCII str of the run (held by the caller): 1 where it is a plain row, appended to the columns, 0
   where the run stops before it (sc->stop set where it matched), -1 on an error */
static inline int scan_row(scan_t *sc, PyObject *item)
{
    const char *s = (const char *)PyUnicode_DATA(item);
    Py_ssize_t n = PyUnicode_GET_LENGTH(item);
    row_t r;
    double v[5];
    if (!match_row(s, n, &r))
        return 0;
    if (needs_clean(s, n)) {
        sc->stop = 1;
        return 0;
    }
    int got = row_values(s, &r, v);
    if (got == 0)
        sc->stop = 1;  /* a share above 100 */
    if (got <= 0)
        return got;
    long long nc = 0;
    for (Py_ssize_t p = r.ca; p < r.cb; p++)
        nc = nc * 10 + (s[p] - '0');  /* at most 18 digits: below 2**63 */
    if (grow(&sc->c, sc->count + 1) < 0)
        return -1;
    PyObject *name = PyUnicode_Substring(item, r.na, r.nb);
    if (name == NULL)
        return -1;
    int err = PyList_Append(sc->names, name);
    Py_DECREF(name);
    if (err < 0)
        return -1;
    PyObject *ncalls = PyLong_FromLongLong(nc);
    if (ncalls == NULL)
        return -1;
    err = PyList_Append(sc->calls, ncalls);
    Py_DECREF(ncalls);
    if (err < 0)
        return -1;
    sc->c.label[sc->count] = (signed char)r.label;
    if (sc->pct_at < 0 && memchr(s + r.na, '%', (size_t)(r.nb - r.na)) != NULL)
        sc->pct_at = sc->count;
    for (int t = 0; t < 5; t++)
        sc->c.v[t * sc->c.cap + sc->count] = v[t];
    sc->count++;
    return 1;
}

/* the rows of lines[k:k+limit] while each is a plain row, in sc; 0, or -1 on an error */
static inline int scan_rows(scan_t *sc, PyObject *lines, Py_ssize_t k, Py_ssize_t limit)
{
    Py_INCREF(lines);
    for (Py_ssize_t x = k; x - k < limit; x++) {
        /* the list's size is read again each time: the allocations below could run a collection */
        if (x >= PyList_GET_SIZE(lines))
            break;
        PyObject *item = PyList_GET_ITEM(lines, x);
        if (!PyUnicode_Check(item)) {
            sc->stop = 2;
            break;
        }
        if (READY(item) < 0) {
            Py_DECREF(lines);
            return -1;
        }
        if (!PyUnicode_IS_ASCII(item)) {
            sc->stop = 2;
            break;
        }
        Py_INCREF(item);
        int got = scan_row(sc, item);
        Py_DECREF(item);
        if (got <= 0) {
            Py_DECREF(lines);
            return got;
        }
    }
    Py_DECREF(lines);
    return 0;
}

/* the five columns as one array of doubles (sc->all), each segment's a slice of it; 0, or -1 on an
   error */
static inline int scan_array(scan_t *sc)
{
    Py_ssize_t count = sc->count;
    PyObject *raw = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)sizeof(double) * 5 * count);
    if (raw == NULL)
        return -1;
    for (int t = 0; t < 5; t++)
        memcpy(PyBytes_AS_STRING(raw) + sizeof(double) * (size_t)(t * count), sc->c.v + t * sc->c.cap,
               sizeof(double) * (size_t)count);
    sc->all = PyObject_CallFunctionObjArgs(array_type, typecode_d, raw, NULL);
    Py_DECREF(raw);
    return sc->all == NULL ? -1 : 0;
}

/* the run's rows cut into segments (sc->segments, see above); 0, or -1 on an error */
static inline int scan_segments(scan_t *sc)
{
    const signed char *label = sc->c.label;
    Py_ssize_t count = sc->count;
    if ((sc->segments = PyList_New(0)) == NULL)
        return -1;
    /* a segment ends where a label names another section (the first: unknown without a label) */
    Py_ssize_t a = 0;
    int cur = label[0] >= 0 ? SECTION[label[0]] : -1;
    for (Py_ssize_t x = 1; x <= count; x++) {
        if (x < count && (label[x] < 0 || SECTION[label[x]] == cur))
            continue;
        PyObject *seg = segment(sc->names, sc->calls, sc->all, count, label[a], a, x);
        if (seg == NULL)
            return -1;
        int err = PyList_Append(sc->segments, seg);
        Py_DECREF(seg);
        if (err < 0)
            return -1;
        if (x < count) {
            a = x;
            cur = SECTION[label[x]];
        }
    }
    return 0;
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
    PyObject *result = NULL;
    scan_t sc = {NULL, NULL, NULL, NULL, {NULL, NULL, 0, NULL, NULL}, 0, -1, 0};
    sc.names = PyList_New(0);
    sc.calls = PyList_New(0);
    if (sc.names != NULL && sc.calls != NULL && scan_rows(&sc, lines, k, limit) == 0) {
        if (sc.count == 0 || sc.stop == 2)  /* nothing the caller keeps */
            result = Py_BuildValue("(ni)", sc.count, sc.stop);
        else if (scan_array(&sc) == 0 && scan_segments(&sc) == 0)
            result = Py_BuildValue("(niOn)", sc.count, sc.stop, sc.segments, sc.pct_at);
    }
    scan_free(&sc);
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


/* ---------------------------------------------------------------- profiles(lines, i, limit)

Summary-only nvprof profiles from lines[i], each

    [==PID== ]NVPROF is profiling process PID, command: CMD
    program output (lines with none of the engine's keywords, nothing that looks like data)
    [==PID== ]Profiling application: CMD
    [==PID== ]Profiling result:
    [==PID== ]  Type  Time(%)  Time  Calls  Avg  Min  Max  Name
    plain rows (as scan reads them), one run per section (GPU activities, API calls, OpenACC)

where the next such start line follows the rows, read while each is so (text_sweep.py's checks on
the lines it may take: a line that holds anything else, or is not ASCII, stops the batch there;
the Python checks decide that profile). Returns

    (j, profiles, names, calls, pct, total_ns, avg_ns, min_ns, max_ns)

j: the index of the first start line not read (i: none read); the rows of every profile read as
columns (names, calls, five array('d')); per profile a tuple

    (s, a, r, h, k, first, pid, command, app_command, s_pid, a_pid, r_pid, h_pid, segments)

s, a, r, h: the start, application, result and header lines' indices; k: its first row's index;
first: that row's index in the columns; pid: the start line's PID; the commands stripped; the PID
prefixes' numbers (None: no prefix); segments: (section, a, b) per section (0 gpu, 1 api, 2
openacc), rows k + a .. k + b - 1. A name met again in one call is the same str (a sweep repeats its
kernels' names); at most `limit` lines' profiles are read a call (the caller calls again). */

typedef struct {
    const char *s;
    Py_ssize_t n;
    int plain;  /* a line of text_sweep's chunk, every byte of which split_plain passed */
} text_t;

/* the lines profiles() reads: a list of str, or (text_sweep) a buffer's lines, line x at
   buf[at[x] : at[x + 1] - 1] (its '\n' left out) */
typedef struct {
    PyObject *list;        /* NULL: the buffer's */
    const char *buf;
    const Py_ssize_t *at;  /* n + 1 offsets */
    Py_ssize_t n;          /* how many lines */
    int past;              /* set where a line past the last was asked for (a chunk read on) */
    int eof_ok;            /* the buffer is the text's end: a profile's rows may end it */
    long long first_line;  /* the file's number of line 0 (text_sweep's results) */
    Py_ssize_t stop;       /* text_sweep: the last line a profile's next start may be at */
} src_t;

/* line x as ASCII text; 0 where it is not there, not a str or not ASCII, -1 on an error */
static int line_at(src_t *src, Py_ssize_t x, text_t *t)
{
    if (x >= src->n) {
        src->past = 1;
        return 0;
    }
    if (src->list == NULL) {
        t->s = src->buf + src->at[x];
        t->n = src->at[x + 1] - src->at[x] - 1;
        t->plain = 1;
        return 1;
    }
    PyObject *item = PyList_GET_ITEM(src->list, x);
    if (!PyUnicode_Check(item))
        return 0;
    if (READY(item) < 0)
        return -1;
    if (!PyUnicode_IS_ASCII(item))
        return 0;
    t->s = (const char *)PyUnicode_DATA(item);
    t->n = PyUnicode_GET_LENGTH(item);
    t->plain = 0;
    return 1;
}

/* no control character or DEL (the only \s left is ' ') and none of what text.clean or normalize acts on;
 * a '\\' (a Windows path's) only after the line's first other character and not before a '%' (clean's
 * LaTeX rules start a line with it or need a '&', normalize's percent is '\\%') */
static int plain_text(const text_t *t)
{
    if (t->plain)  /* split_plain left nothing else of the above in the line: no control character, DEL,
                      '&', '<', '#', '>' or '|', a '\\' only where allowed here; a '*' only after its first */
        return memchr(t->s, '*', (size_t)t->n) == NULL;
    int lead = 1;
    for (Py_ssize_t k = 0; k < t->n; k++) {
        unsigned char c = (unsigned char)t->s[k];
        if (c < 0x20 || c == 0x7f || c == '&' || c == '<' || c == '*' || c == '#' || c == '>' || c == '|'
            || (c == '\\' && (lead || (k + 1 < t->n && t->s[k + 1] == '%'))))
            return 0;
        if (c != ' ')
            lead = 0;
    }
    return 1;
}

static int has(const text_t *t, Py_ssize_t from, const char *needle)
{
    size_t len = strlen(needle);
    const char *p = t->s + from, *end = t->s + t->n;
    while (p < end && (size_t)(end - p) >= len && (p = memchr(p, needle[0], (size_t)(end - p) - len + 1)) != NULL) {
        if (memcmp(p, needle, len) == 0)
            return 1;
        p++;
    }
    return 0;
}

/* needles a line must not hold (text_sweep): by each byte, the needles starting with it (a bit each),
   and by each byte, those whose second byte it is (every one of a single byte: `one`) */
typedef struct {
    const char *s[64];
    Py_ssize_t n[64];
    uint64_t first[256];
    uint64_t second[256];
    uint64_t one;
} needles_t;

static void needle_add(needles_t *nd, int w, const char *s, Py_ssize_t n)
{
    uint64_t bit = (uint64_t)1 << w;
    nd->s[w] = s;
    nd->n[w] = n;
    nd->first[(unsigned char)s[0]] |= bit;
    if (n > 1) {
        nd->second[(unsigned char)s[1]] |= bit;
        return;
    }
    nd->one |= bit;
    for (int ch = 0; ch < 256; ch++)
        nd->second[ch] |= bit;
}

static int has_needle(const text_t *t, const needles_t *nd)
{
    if (nd == NULL)
        return 0;
    const unsigned char *s = (const unsigned char *)t->s;
    for (Py_ssize_t k = 0; k < t->n; k++) {
        uint64_t m = nd->first[s[k]];
        if (m == 0)
            continue;
        m &= k + 1 < t->n ? nd->second[s[k + 1]] : nd->one;  /* (the needles that may start at k) */
        for (; m; m &= m - 1) {
            int w = __builtin_ctzll(m);
            if (t->n - k >= nd->n[w] && memcmp(t->s + k, nd->s[w], (size_t)nd->n[w]) == 0)
                return 1;
        }
    }
    return 0;
}

static int starts(const text_t *t, Py_ssize_t at, const char *word)
{
    size_t len = strlen(word);
    return (size_t)(t->n - at) >= len && memcmp(t->s + at, word, len) == 0;
}

/* _PREFIX (^\s*(?:==(\d+)==|={8})\s?) on a plain line: where the body starts; *pid its digits'
   number (-1: no PID), *pre whether there is a prefix; -1 where the digits are 19 or more */
static Py_ssize_t prefix(const text_t *t, long long *pid, int *pre)
{
    Py_ssize_t i = 0, n = t->n;
    const char *s = t->s;
    *pid = -1;
    *pre = 0;
    while (i < n && s[i] == ' ')
        i++;
    if (i + 1 < n && s[i] == '=' && s[i + 1] == '=') {
        Py_ssize_t d = skip_digits(s, i + 2, n);
        if (d > i + 2 && d + 1 < n && s[d] == '=' && s[d + 1] == '=') {
            if (d - (i + 2) > 18)
                return -1;
            long long v = 0;
            for (Py_ssize_t k = i + 2; k < d; k++)
                v = v * 10 + (s[k] - '0');
            *pid = v;
            *pre = 1;
            i = d + 2;
        } else if (n - i >= 8 && memcmp(s + i, "========", 8) == 0) {
            *pre = 1;
            i += 8;
        } else {
            return 0;  /* no prefix: the body is the whole line */
        }
        return i < n && s[i] == ' ' ? i + 1 : i;
    }
    return 0;
}

static Py_ssize_t strip_end(const char *s, Py_ssize_t a, Py_ssize_t b)
{
    while (b > a && s[b - 1] == ' ')
        b--;
    return b;
}

typedef struct {
    Py_ssize_t x;            /* the line's index */
    long long pid, pre_pid;  /* the start pattern's PID; the prefix's (-1: none) */
    Py_ssize_t ca, cb;       /* the command, stripped */
} start_t;

/* text_sweep._start on a plain line: 1 where it is a start line the sweep takes */
static int start_line(src_t *lines, Py_ssize_t x, start_t *st)
{
    text_t t;
    int pre, got = line_at(lines, x, &t);
    if (got <= 0)
        return got;
    if (!plain_text(&t) || memchr(t.s, '%', (size_t)t.n) != NULL)
        return 0;
    Py_ssize_t b = prefix(&t, &st->pre_pid, &pre);
    static const char W[] = "NVPROF is profiling process ";
    if (b < 0 || !starts(&t, b, W) || has(&t, b, "CPU profiling result") || has(&t, b, "\",")
        || has(&t, b, "Time(%),Time,Calls,"))
        return 0;
    Py_ssize_t d0 = b + (Py_ssize_t)strlen(W), d = skip_digits(t.s, d0, t.n);
    if (d == d0 || d - d0 > 18 || !starts(&t, d, ", command: "))
        return 0;
    long long v = 0;
    for (Py_ssize_t k = d0; k < d; k++)
        v = v * 10 + (t.s[k] - '0');
    Py_ssize_t ca = d + 11;
    while (ca < t.n && t.s[ca] == ' ')
        ca++;
    st->x = x;
    st->pid = v;
    st->ca = ca;
    st->cb = strip_end(t.s, ca, t.n);
    return 1;
}

/* program output the context's quick test sends to stray, where looks_like_data is false: no
   prefix, no keyword, no '%', no token that starts as a number and ends as a time does */
static const char *const KEYWORDS[] = {"Time", "NVPROF", "NVTX", "Profiling", "CPU profiling", "API calls",
                                       "Invocations", "Kernel: ", "Unified Memory", "Start", "\"",
                                       "GPU activities", "OpenACC"};
static needles_t KEYWORD_NEEDLES;  /* KEYWORDS (module init) */

static int output_line(const text_t *t)
{
    long long pid;
    int pre;
    if (!plain_text(t) || memchr(t->s, '%', (size_t)t->n) != NULL || prefix(t, &pid, &pre) != 0 || pre
        || has_needle(t, &KEYWORD_NEEDLES))
        return 0;
    for (Py_ssize_t k = 0; k < t->n;) {
        while (k < t->n && t->s[k] == ' ')
            k++;
        Py_ssize_t e = k;
        while (e < t->n && t->s[e] != ' ')
            e++;
        if (e > k && (IS_DIGIT(t->s[k]) || t->s[k] == '.' || t->s[k] == '+')
            && (t->s[e - 1] == 's' || t->s[e - 1] == 'u'))
            return 0;
        k = e;
    }
    return 1;
}

/* the application line (its command), the result line and the plain header after it: 1 where
   each is what the sweep takes */
static int marker_lines(src_t *lines, Py_ssize_t a, long long pids[3], Py_ssize_t cmd[2])
{
    text_t t;
    int pre;
    static const char *const HEADER[8] = {"Type", "Time(%)", "Time", "Calls", "Avg", "Min", "Max", "Name"};
    if (line_at(lines, a, &t) <= 0 || !plain_text(&t))
        return 0;
    Py_ssize_t b = prefix(&t, &pids[0], &pre);
    static const char W[] = "Profiling application: ";
    if (b < 0 || !starts(&t, b, W) || has(&t, b, "CPU profiling result") || has(&t, b, "\",")
        || has(&t, b, "Time(%),Time,Calls,") || has(&t, b, "NVPROF is profiling process "))
        return 0;
    cmd[0] = b + (Py_ssize_t)strlen(W);
    while (cmd[0] < t.n && t.s[cmd[0]] == ' ')
        cmd[0]++;
    cmd[1] = strip_end(t.s, cmd[0], t.n);
    if (line_at(lines, a + 1, &t) <= 0 || !plain_text(&t) || (b = prefix(&t, &pids[1], &pre)) < 0)
        return 0;
    while (b < t.n && t.s[b] == ' ')
        b++;
    if (!starts(&t, b, "Profiling result"))
        return 0;
    b += 16;
    b += b < t.n && t.s[b] == ':';
    while (b < t.n && t.s[b] == ' ')
        b++;
    if (b != t.n || line_at(lines, a + 2, &t) <= 0 || !plain_text(&t) || (b = prefix(&t, &pids[2], &pre)) < 0)
        return 0;
    for (int w = 0; w < 8; w++) {
        Py_ssize_t e = b;
        while (e < t.n && t.s[e] == ' ')
            e++;
        if (w > 0 && e == b)
            return 0;
        if (!starts(&t, e, HEADER[w]))
            return 0;
        b = e + (Py_ssize_t)strlen(HEADER[w]);
        if (b < t.n && t.s[b] != ' ')
            return 0;
    }
    while (b < t.n && t.s[b] == ' ')
        b++;
    return b == t.n;
}



/* names met in one call, each one str (a sweep repeats its kernels' names profile after profile:
   one object per distinct name, its hash computed once wherever it is looked up later) */
typedef struct {
    PyObject **slot;  /* owned references */
    uint64_t *hash;
    size_t cap, used;
    Py_ssize_t *code; /* each slot's place in `pool` */
    PyObject *pool;   /* the names in the order met (a list), or NULL: not kept */
} names_t;

static uint64_t fnv1a(const char *s, Py_ssize_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (Py_ssize_t k = 0; k < n; k++)
        h = (h ^ (unsigned char)s[k]) * 1099511628211ULL;
    return h;
}

static int names_grow(names_t *nt)
{
    size_t cap = nt->cap ? 2 * nt->cap : 64;
    PyObject **slot = PyMem_Calloc(cap, sizeof(PyObject *));
    uint64_t *hash = PyMem_Calloc(cap, sizeof(uint64_t));
    Py_ssize_t *code = PyMem_Calloc(cap, sizeof(Py_ssize_t));
    if (slot == NULL || hash == NULL || code == NULL) {
        PyMem_Free(slot);
        PyMem_Free(hash);
        PyMem_Free(code);
        PyErr_NoMemory();
        return -1;
    }
    for (size_t k = 0; k < nt->cap; k++) {
        if (nt->slot[k] == NULL)
            continue;
        size_t i = (size_t)nt->hash[k] & (cap - 1);
        while (slot[i] != NULL)
            i = (i + 1) & (cap - 1);
        slot[i] = nt->slot[k];
        hash[i] = nt->hash[k];
        code[i] = nt->code[k];
    }
    PyMem_Free(nt->slot);
    PyMem_Free(nt->hash);
    PyMem_Free(nt->code);
    nt->slot = slot;
    nt->hash = hash;
    nt->code = code;
    nt->cap = cap;
    return 0;
}

/* a new reference to the str of s[:n] (ASCII); *code its place among the names met */
static PyObject *name_of(names_t *nt, const char *s, Py_ssize_t n, Py_ssize_t *code)
{
    if (2 * (nt->used + 1) > nt->cap && names_grow(nt) < 0)
        return NULL;
    uint64_t h = fnv1a(s, n);
    size_t i = (size_t)h & (nt->cap - 1);
    for (; nt->slot[i] != NULL; i = (i + 1) & (nt->cap - 1)) {
        PyObject *o = nt->slot[i];
        if (nt->hash[i] == h && PyUnicode_GET_LENGTH(o) == n && memcmp(PyUnicode_DATA(o), s, (size_t)n) == 0) {
            *code = nt->code[i];
            return Py_NewRef(o);
        }
    }
    PyObject *o = PyUnicode_FromStringAndSize(s, n);
    if (o == NULL)
        return NULL;
    if (nt->pool != NULL && PyList_Append(nt->pool, o) < 0) {
        Py_DECREF(o);
        return NULL;
    }
    nt->slot[i] = Py_NewRef(o);
    nt->hash[i] = h;
    nt->code[i] = *code = (Py_ssize_t)nt->used;
    nt->used++;
    return o;
}

static void names_free(names_t *nt)
{
    for (size_t k = 0; k < nt->cap; k++)
        Py_XDECREF(nt->slot[k]);
    PyMem_Free(nt->slot);
    PyMem_Free(nt->hash);
    PyMem_Free(nt->code);
    Py_XDECREF(nt->pool);
}

/* _API_CALL.fullmatch (cu(?:da)?[A-Z][A-Za-z0-9_]*): a CUDA API call's name */
static int api_call(const char *s, Py_ssize_t n)
{
    if (n < 3 || s[0] != 'c' || s[1] != 'u')
        return 0;
    for (int da = 1; da >= 0; da--) {
        Py_ssize_t p = 2 + 2 * da;
        if (da && !(n > 4 && s[2] == 'd' && s[3] == 'a'))
            continue;
        if (p >= n || s[p] < 'A' || s[p] > 'Z')
            continue;
        Py_ssize_t q = p + 1;
        while (q < n && (IS_DIGIT(s[q]) || (s[q] >= 'A' && s[q] <= 'Z') || (s[q] >= 'a' && s[q] <= 'z') || s[q] == '_'))
            q++;
        if (q == n)
            return 1;
    }
    return 0;
}

/* common._name_continues, or 1 where a '<' or '>' would need names.brackets_open (the Python
   checks decide those) */
static int name_continues(const char *s, Py_ssize_t n)
{
    if (n == 0 || (n == 4 && memcmp(s, "void", 4) == 0) || s[n - 1] == ','
        || (n >= 2 && s[n - 2] == ':' && s[n - 1] == ':') || (n >= 5 && memcmp(s + n - 5, " void", 5) == 0))
        return 1;
    Py_ssize_t open = 0, close = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        char ch = s[k];
        if (ch == '<' || ch == '>')
            return 1;
        open += ch == '(' || ch == '[';
        close += ch == ')' || ch == ']';
    }
    return open > close;
}

static PyObject *pid_or_none(long long v)
{
    return v < 0 ? Py_NewRef(Py_None) : PyLong_FromLongLong(v);
}

typedef struct {
    int code[4];
    Py_ssize_t a[4], b[4];
    int n;
} segs_t;

/* a segment ends where a label names another section (scan's rule); the first without a label is the
   result line's 'gpu'. Row x of the profile (its label `label`) in *sg, a segment started where it
   starts one (*cur its section): 0 where that section had one before or it would be the fifth, else 1 */
static inline int row_section(segs_t *sg, int *cur, int label, Py_ssize_t x)
{
    if (*cur == -2 || (label >= 0 && SECTION[label] != *cur)) {
        *cur = label >= 0 ? SECTION[label] : -1;
        int code = *cur < 0 ? 0 : *cur, bad = 0;
        for (int q = 0; q < sg->n; q++)
            bad |= sg->code[q] == code;
        if (bad || sg->n == 4)
            return 0;
        sg->code[sg->n] = code;
        sg->a[sg->n] = x;
        sg->n++;
    }
    return 1;
}

/* a row of the line t (its groups r, its numbers v) appended to the columns, and to names and calls
   where names is not NULL; 0, or -1 on an error */
static inline int append_row(const text_t *t, const row_t *r, const double v[5], PyObject *names, PyObject *calls,
                             cols_t *c, Py_ssize_t *count, names_t *nt)
{
    long long nc = 0;
    for (Py_ssize_t p = r->ca; p < r->cb; p++)
        nc = nc * 10 + (t->s[p] - '0');
    if (grow(c, *count + 1) < 0)
        return -1;
    Py_ssize_t code = 0;
    PyObject *name = name_of(nt, t->s + r->na, r->nb - r->na, &code);
    if (name == NULL)
        return -1;
    if (names != NULL) {  /* (text_sweep: the codes and calls columns alone) */
        PyObject *ncalls = PyLong_FromLongLong(nc);
        int err = ncalls == NULL || PyList_Append(names, name) < 0 || PyList_Append(calls, ncalls) < 0;
        Py_XDECREF(ncalls);
        if (err) {
            Py_DECREF(name);
            return -1;
        }
    }
    Py_DECREF(name);
    for (int q = 0; q < 5; q++)
        c->v[q * c->cap + *count] = v[q];
    c->code[*count] = code;
    c->calls[*count] = nc;
    (*count)++;
    return 0;
}

/* a profile's rows from index k: appended to the columns; the index after them, -1 where the
   run is none the sweep takes whole (the columns left as they were), -2 on an error */
static Py_ssize_t profile_rows(src_t *lines, Py_ssize_t k, PyObject *names, PyObject *calls, cols_t *c,
                               Py_ssize_t *count, segs_t *sg, names_t *nt)
{
    Py_ssize_t e = k, mark = *count;
    int cur = -2, bad = 0;
    const char *last = NULL;
    Py_ssize_t last_n = 0;
    sg->n = 0;
    for (;; e++) {
        text_t t;
        int g = line_at(lines, e, &t);
        if (g < 0)
            return -2;
        row_t r;
        if (g == 0 || !match_row(t.s, t.n, &r)) {
            /* not ASCII (or past the end: no start line follows, but at the end of text_sweep's last chunk) */
            bad = g == 0 && !(lines->eof_ok && e == lines->n);
            break;
        }
        double v[5];
        /* (a line split_plain passed holds no '|', '&', '\t' or '<': only the '*' rules can hold) */
        if ((t.plain ? needs_clean_star(t.s, t.n) : needs_clean(t.s, t.n))
            || memchr(t.s + r.na, '%', (size_t)(r.nb - r.na)) != NULL) {
            bad = 1;
            break;
        }
        int got = row_values(t.s, &r, v);
        if (got < 0)
            return -2;
        if (got == 0 || !row_section(sg, &cur, r.label, e - k)
            || (sg->code[sg->n - 1] == 0 && api_call(t.s + r.na, r.nb - r.na))) {
            bad = 1;
            break;
        }
        if (append_row(&t, &r, v, names, calls, c, count, nt) < 0)
            return -2;
        last = t.s + r.na;
        last_n = r.nb - r.na;
        sg->b[sg->n - 1] = e - k + 1;
    }
    if (bad || e == k || name_continues(last, last_n)) {
        if (names != NULL && (PyList_SetSlice(names, mark, PY_SSIZE_T_MAX, NULL) < 0
                              || PyList_SetSlice(calls, mark, PY_SSIZE_T_MAX, NULL) < 0))
            return -2;
        *count = mark;
        return -1;
    }
    return e;
}

/* the profile's tuple (see above) */
static PyObject *profile_tuple(src_t *lines, const start_t *st, Py_ssize_t a, Py_ssize_t k, Py_ssize_t first,
                               const long long pids[3], const Py_ssize_t cmd[2], const segs_t *sg)
{
    text_t t, at;
    if (line_at(lines, st->x, &t) <= 0 || line_at(lines, a, &at) <= 0) {
        PyErr_SetString(PyExc_SystemError, "_rowscan.profiles: a line read before changed");
        return NULL;
    }
    PyObject *segs = PyTuple_New(sg->n);
    if (segs == NULL)
        return NULL;
    for (int q = 0; q < sg->n; q++) {
        PyObject *one = Py_BuildValue("(inn)", sg->code[q], sg->a[q], sg->b[q]);
        if (one == NULL) {
            Py_DECREF(segs);
            return NULL;
        }
        PyTuple_SET_ITEM(segs, q, one);
    }
    return Py_BuildValue("(nnnnnnLs#s#NNNNN)", st->x, a, a + 1, a + 2, k, first, st->pid, t.s + st->ca,
                         st->cb - st->ca, at.s + cmd[0], cmd[1] - cmd[0], pid_or_none(st->pre_pid),
                         pid_or_none(pids[0]), pid_or_none(pids[1]), pid_or_none(pids[2]), segs);
}

static PyObject *columns_result(Py_ssize_t j, PyObject *metas, PyObject *names, PyObject *calls, const cols_t *c,
                                Py_ssize_t count)
{
    PyObject *out = PyTuple_New(9);
    if (out == NULL)
        return NULL;
    PyTuple_SET_ITEM(out, 0, PyLong_FromSsize_t(j));
    PyTuple_SET_ITEM(out, 1, Py_NewRef(metas));
    PyTuple_SET_ITEM(out, 2, Py_NewRef(names));
    PyTuple_SET_ITEM(out, 3, Py_NewRef(calls));
    for (int q = 0; q < 5; q++) {
        PyObject *raw = PyBytes_FromStringAndSize(c->v ? (const char *)(c->v + q * c->cap) : "",
                                                  (Py_ssize_t)sizeof(double) * count);
        PyObject *arr = raw ? PyObject_CallFunctionObjArgs(array_type, typecode_d, raw, NULL) : NULL;
        Py_XDECREF(raw);
        if (arr == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, 4 + q, arr);
    }
    if (PyTuple_GET_ITEM(out, 0) == NULL) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

typedef struct {
    Py_ssize_t x;       /* the application line's index */
    Py_ssize_t k;       /* the first row's */
    Py_ssize_t e;       /* the index after the rows */
    long long pids[3];  /* the application, result and header lines' PID prefixes */
    Py_ssize_t cmd[2];  /* the application's command */
    segs_t sg;
} prof_t;

static int needles_init(needles_t *nd, PyObject *tuple)
{
    memset(nd, 0, sizeof *nd);
    Py_ssize_t m = PyTuple_GET_SIZE(tuple);
    if (m > 64) {
        PyErr_SetString(PyExc_ValueError, "text_sweep: at most 64 needles");
        return -1;
    }
    for (Py_ssize_t w = 0; w < m; w++) {
        PyObject *o = PyTuple_GET_ITEM(tuple, w);
        if (!PyBytes_Check(o) || PyBytes_GET_SIZE(o) < 1) {
            PyErr_SetString(PyExc_TypeError, "text_sweep: needles are bytes, not empty");
            return -1;
        }
        needle_add(nd, (int)w, PyBytes_AS_STRING(o), PyBytes_GET_SIZE(o));
    }
    return 0;
}

/* text_sweep's own rule on top of the sweep's: the start, application and result lines' PID prefix
   there and the start's PID, the header's that or none (nvprof prints none there) */
static int same_pids(const start_t *st, const prof_t *p)
{
    return st->pre_pid == st->pid && p->pids[0] == st->pid && p->pids[1] == st->pid
           && (p->pids[2] == st->pid || p->pids[2] < 0);
}

/* the profile from the start line st, its rows appended to the columns: 1 where it is taken and the
   next start line follows it (*nx), 2 where its rows end text_sweep's last chunk, 0 where it is not
   taken (the columns left as they were), -1 on an error. nd: text_sweep's needles (NULL: profiles) */
static int one_profile(src_t *lines, const start_t *st, start_t *nx, PyObject *names, PyObject *calls, cols_t *c,
                       Py_ssize_t *count, names_t *nt, const needles_t *nd, prof_t *p)
{
    text_t t;
    Py_ssize_t x = st->x + 1, first = *count;
    int g;
    lines->past = 0;
    while ((g = line_at(lines, x, &t)) == 1 && !has(&t, 0, "Profiling application: ") && output_line(&t)
           && !has_needle(&t, nd))
        x++;
    if (g < 0)
        return -1;
    if (g == 0 || !has(&t, 0, "Profiling application: ") || has_needle(&t, nd) || !marker_lines(lines, x, p->pids, p->cmd)
        || (nd != NULL && !same_pids(st, p)))
        return 0;
    p->x = x;
    p->k = x + 3;
    p->e = profile_rows(lines, p->k, names, calls, c, count, &p->sg, nt);
    if (p->e < 0)
        return p->e == -2 ? -1 : 0;
    if (lines->eof_ok && p->e == lines->n)
        return 2;
    int got = start_line(lines, p->e, nx);
    /* the line after the next start: no row there (the bulk reader would keep the last row back) */
    g = got == 1 ? line_at(lines, p->e + 1, &t) : 0;
    if (got < 0 || g < 0)
        return -1;
    if (got == 0 || (p->e + 1 < lines->n && (g == 0 || memchr(t.s, '%', (size_t)t.n) != NULL))
        || (nd != NULL && lines->past)) {
        if (names != NULL && (PyList_SetSlice(names, first, PY_SSIZE_T_MAX, NULL) < 0 ||
                              PyList_SetSlice(calls, first, PY_SSIZE_T_MAX, NULL) < 0))
            return -1;
        *count = first;
        return 0;
    }
    return 1;
}

static PyObject *profiles(PyObject *self, PyObject *args)
{
    PyObject *list;
    Py_ssize_t i, limit;
    if (!PyArg_ParseTuple(args, "O!nn:profiles", &PyList_Type, &list, &i, &limit))
        return NULL;
    if (i < 0 || limit < 0) {
        PyErr_SetString(PyExc_ValueError, "profiles: i and limit must not be negative");
        return NULL;
    }
    PyObject *names = PyList_New(0), *calls = PyList_New(0), *metas = PyList_New(0), *result = NULL;
    cols_t c = {NULL, NULL, 0, NULL, NULL};
    names_t nt = {NULL, NULL, 0, 0, NULL, NULL};
    Py_ssize_t count = 0, j = i;
    start_t st, nx;
    Py_INCREF(list);
    src_t src = {list, NULL, NULL, PyList_GET_SIZE(list), 0, 0, 1, PY_SSIZE_T_MAX};
    src_t *lines = &src;
    if (names == NULL || calls == NULL || metas == NULL)
        goto done;
    int got = start_line(lines, i, &st);
    while (got == 1) {
        prof_t p;
        Py_ssize_t first = count;
        got = one_profile(lines, &st, &nx, names, calls, &c, &count, &nt, NULL, &p);
        if (got != 1)
            break;
        PyObject *one = profile_tuple(lines, &st, p.x, p.k, first, p.pids, p.cmd, &p.sg);
        if (one == NULL || PyList_Append(metas, one) < 0) {
            Py_XDECREF(one);
            goto done;
        }
        Py_DECREF(one);
        st = nx;
        j = p.e;
        if (p.e - i >= limit)
            break;
    }
    if (got < 0)
        goto done;
    result = j == i ? Py_NewRef(Py_None) : columns_result(j, metas, names, calls, &c, count);
done:
    Py_DECREF(list);
    PyMem_Free(c.v);
    PyMem_Free(c.label);
    PyMem_Free(c.code);
    PyMem_Free(c.calls);
    names_free(&nt);
    Py_XDECREF(names);
    Py_XDECREF(calls);
    Py_XDECREF(metas);
    return result;
}

/* ---------------------------------------------------------------- text_sweep(data, needles, last, line, margin)

The profiles profiles() reads, read from a chunk of a file's bytes (no line made a str), from its
first line on, each with a PID prefix on its start, application, result and header lines that is
the start line's PID, none of the needles in its start line, program output or application line
(profconv.parse.dialects.nvprof.text_columns: the other dialects' markers and the context's
keywords), every byte of the chunk printable ASCII or '\n' and none of what the text's normalize
rewrites ('>', '#', '<', '\\', '|', '&'; '--', '//' or '*' first in a line; an empty line, a line
ending in ' '). In a
chunk that is not the file's last (`last` false) the profiles whose next start line is `margin`
lines or more before the chunk's end (and the line after it is in the chunk: where a stream's
window that is the chunk is cut); in the last, every profile, the last one's rows ending the chunk
(which ends with '\n'). Returns

    (end, lines, profiles, blocks, row lines, codes, calls, pool, commands, pct, total, avg, min, max)

end: the byte after the last profile read (0: none; read on); lines: the lines before it; profiles:
int64 (start line, last row's line, rows, pid, command code) per profile; blocks: int64 (first row,
rows, section, its line) per section of each profile, in order; row lines: int64 per row (line
numbers: the file's, the chunk's first line being `line`);
codes: int64 per row, its name's place in pool; calls: int64 per row; pool, commands: the names and
commands met (a profile's: the start line's, else the application line's), each str once; the
five times as profiles() gives them; or None where a profile (or a byte) is not of that shape, or
the core would not leave a block's rows as they are (plain_block): the readers then. */

static unsigned char BYTE_CLASS[256];  /* 0: plain, 1: one text_sweep leaves to the readers, 2: '\n', 3: '-', '/', '*',
                                          4: '\\' */

typedef struct {
    Py_ssize_t *v;
    Py_ssize_t m, cap;
} offs_t;

/* byte i of the chunk, one that is not plain (BYTE_CLASS): 1 where the chunk may still be read
   (a line's end recorded, or a lone '-' or '/'), 0 where not, -1 on an error */
static int special(const char *p, Py_ssize_t len, Py_ssize_t i, offs_t *o)
{
    unsigned char k = BYTE_CLASS[(unsigned char)p[i]];
    if (k == 4) {  /* a Windows path's '\\': not first in its line (after blanks: clean's LaTeX rules), not before a '%' */
        Py_ssize_t a = o->v[o->m - 1];
        while (a < i && p[a] == ' ')
            a++;
        return a != i && !(i + 1 < len && p[i + 1] == '%');
    }
    if (k == 3) {  /* '--', '//' or '*' first in its line (after blanks): a comment prefix, a C comment's star */
        Py_ssize_t a = o->v[o->m - 1];
        while (a < i && p[a] == ' ')
            a++;
        return !(a == i && (p[i] == '*' || (i + 1 < len && p[i + 1] == p[i])));
    }
    if (k != 2)
        return k == 0;
    if (i == o->v[o->m - 1] || p[i - 1] == ' ')
        return 0;  /* an empty line, a line ending in a blank */
    if (o->m == o->cap) {
        Py_ssize_t *w = PyMem_Realloc(o->v, sizeof(Py_ssize_t) * (size_t)(2 * o->cap));
        if (w == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        o->v = w;
        o->cap *= 2;
    }
    o->v[o->m++] = i + 1;
    return 1;
}

/* the chunk's lines (each ending with '\n'; the bytes after the last left out) as offsets; 1 where every
   byte is plain, 0 where not, -1 on an error. 16 bytes a step where SSE2 is there: the bytes that are
   not letters, digits, blanks or plain punctuation found by a few comparisons, each then looked at. */
static int split_plain(const char *p, Py_ssize_t len, Py_ssize_t **at, Py_ssize_t *n)
{
    offs_t o = {PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(len / 24 + 16)), 1, len / 24 + 16};
    if (o.v == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    o.v[0] = 0;
    int ok = 1;
    Py_ssize_t i = 0;
#if defined(__SSE2__)
    const __m128i low = _mm_set1_epi8(0x20), del = _mm_set1_epi8(0x7f);
    static const char MARKS[] = "><#\\*|&-/";  /* (BYTE_CLASS 1 and 3) */
    __m128i marks[sizeof MARKS - 1];
    for (size_t q = 0; q < sizeof MARKS - 1; q++)
        marks[q] = _mm_set1_epi8(MARKS[q]);
    for (; ok > 0 && i + 16 <= len; i += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(p + i));
        __m128i hit = _mm_or_si128(_mm_cmplt_epi8(x, low), _mm_cmpeq_epi8(x, del));  /* (>= 0x80: negative) */
        for (size_t q = 0; q < sizeof MARKS - 1; q++)
            hit = _mm_or_si128(hit, _mm_cmpeq_epi8(x, marks[q]));
        for (unsigned m = (unsigned)_mm_movemask_epi8(hit); m && ok > 0; m &= m - 1)
            ok = special(p, len, i + __builtin_ctz(m), &o);
    }
#endif
    for (; ok > 0 && i < len; i++)
        if (BYTE_CLASS[(unsigned char)p[i]])
            ok = special(p, len, i, &o);
    if (ok < 0) {
        PyMem_Free(o.v);
        return -1;
    }
    *at = o.v;
    *n = o.m - 1;
    return ok;
}

typedef struct {
    int64_t *v;
    Py_ssize_t n, cap;
} i64s_t;

static int push(i64s_t *x, const int64_t *vals, int k)
{
    if (x->n + k > x->cap) {
        Py_ssize_t cap = x->cap ? 2 * x->cap : 1024;
        int64_t *v = PyMem_Realloc(x->v, sizeof(int64_t) * (size_t)cap);
        if (v == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        x->v = v;
        x->cap = cap;
    }
    memcpy(x->v + x->n, vals, sizeof(int64_t) * (size_t)k);
    x->n += k;
    return 0;
}

/* whether the core leaves the rows [a, b) of one block as they are (no note, no row dropped): every
   number finite, every total within 1% of calls x average (core._any_inconsistent's first test), the
   Time(%) clearly adding up to 100 (core._Ranges.not_clear, its margin covering any order of summing) */
static int plain_block(const cols_t *c, Py_ssize_t a, Py_ssize_t b)
{
    const double *pct = c->v, *tot = c->v + c->cap, *avg = c->v + 2 * c->cap;
    double sum = 0.0;
    for (Py_ssize_t i = a; i < b; i++) {
        for (int q = 0; q < 5; q++)
            if (!isfinite(c->v[q * c->cap + i]))
                return 0;
        if (!(fabs(tot[i] - (double)c->calls[i] * avg[i]) <= 0.01 * tot[i]))
            return 0;
        sum += pct[i];
    }
    return fabs(sum - 100.0) < fmax(1.5, 0.01 * (double)(b - a)) - 1e-6;
}

/* a profile text_sweep read: its columns and its blocks'; 0 where the core would not leave its rows as
   they are, -1 on an error */
static int keep_profile(src_t *lines, const start_t *st, const prof_t *p, Py_ssize_t first, const cols_t *c,
                        Py_ssize_t count, names_t *cmds, i64s_t *out)
{
    for (int q = 0; q < p->sg.n; q++)
        if (!plain_block(c, first + p->sg.a[q], first + p->sg.b[q]))
            return 0;
    text_t t;
    Py_ssize_t code = 0;
    PyObject *cmd;
    if (st->cb > st->ca) {
        line_at(lines, st->x, &t);
        cmd = name_of(cmds, t.s + st->ca, st->cb - st->ca, &code);
    } else {
        line_at(lines, p->x, &t);
        cmd = name_of(cmds, t.s + p->cmd[0], p->cmd[1] - p->cmd[0], &code);
    }
    if (cmd == NULL)
        return -1;
    Py_DECREF(cmd);
    int64_t base = lines->first_line, one[5] = {base + st->x, base + p->e - 1, count - first, st->pid, code};
    if (push(&out[0], one, 5) < 0)
        return -1;
    for (int q = 0; q < p->sg.n; q++) {
        int64_t b[4] = {first + p->sg.a[q], p->sg.b[q] - p->sg.a[q], p->sg.code[q], base + p->k + p->sg.a[q]};
        if (push(&out[1], b, 4) < 0)
            return -1;
    }
    for (Py_ssize_t x = p->k; x < p->e; x++) {
        int64_t at = base + x;
        if (push(&out[2], &at, 1) < 0)
            return -1;
    }
    return 1;
}

/* text_sweep's profiles from the chunk's first line: the index of the line after the last read, -1
   where one is not of the shape, -2 on an error */
static Py_ssize_t sweep_lines(src_t *lines, const needles_t *nd, cols_t *c, Py_ssize_t *count, names_t *nt,
                              names_t *cmds, i64s_t *out)
{
    start_t st, nx;
    Py_ssize_t j = 0;
    int got = start_line(lines, 0, &st);
    if (got == 1 && has_needle(&(text_t){lines->buf, lines->at[1] - 1}, nd))
        got = 0;
    while (got == 1) {
        prof_t p;
        Py_ssize_t first = *count;
        got = one_profile(lines, &st, &nx, NULL, NULL, c, count, nt, nd, &p);
        if (got < 0)
            return -2;
        if (got == 0)
            return lines->past && !lines->eof_ok ? j : -1;
        if (got == 1 && nx.x > lines->stop) {  /* (the stream's window is cut before it) */
            *count = first;
            return j;
        }
        int kept = keep_profile(lines, &st, &p, first, c, *count, cmds, out);
        if (kept <= 0)
            return kept - 1;
        j = p.e;
        if (got == 2)
            return j;
        text_t t;
        line_at(lines, nx.x, &t);
        if (has_needle(&t, nd))
            return -1;
        st = nx;
    }
    return got < 0 ? -2 : (lines->past && !lines->eof_ok ? j : -1);
}

static PyObject *i64_of(const int64_t *v, Py_ssize_t n)
{
    return PyBytes_FromStringAndSize(v ? (const char *)v : "", (Py_ssize_t)sizeof(int64_t) * n);
}

/* text_sweep's result (see above), the lines' offsets `at` */
static PyObject *sweep_result(const Py_ssize_t *at, Py_ssize_t j, const i64s_t *ints, const cols_t *c,
                              Py_ssize_t count, PyObject *pool, PyObject *commands)
{
    PyObject *out = PyTuple_New(14);
    if (out == NULL)
        return NULL;
    PyTuple_SET_ITEM(out, 0, PyLong_FromSsize_t(at[j]));
    PyTuple_SET_ITEM(out, 1, PyLong_FromSsize_t(j));
    PyTuple_SET_ITEM(out, 2, i64_of(ints[0].v, ints[0].n));
    PyTuple_SET_ITEM(out, 3, i64_of(ints[1].v, ints[1].n));
    PyTuple_SET_ITEM(out, 4, i64_of(ints[2].v, ints[2].n));
    PyTuple_SET_ITEM(out, 5, i64_of(c->code, count));
    PyTuple_SET_ITEM(out, 6, i64_of(c->calls, count));
    PyTuple_SET_ITEM(out, 7, Py_NewRef(pool));
    PyTuple_SET_ITEM(out, 8, Py_NewRef(commands));
    for (int q = 0; q < 5; q++) {
        PyObject *raw = PyBytes_FromStringAndSize(c->v ? (const char *)(c->v + q * c->cap) : "",
                                                  (Py_ssize_t)sizeof(double) * count);
        PyObject *arr = raw ? PyObject_CallFunctionObjArgs(array_type, typecode_d, raw, NULL) : NULL;
        Py_XDECREF(raw);
        PyTuple_SET_ITEM(out, 9 + q, arr);
    }
    for (int q = 0; q < 14; q++)
        if (PyTuple_GET_ITEM(out, q) == NULL) {
            Py_DECREF(out);
            return NULL;
        }
    return out;
}

static PyObject *text_sweep(PyObject *self, PyObject *args)
{
    Py_buffer buf;
    PyObject *needles, *result = NULL;
    int last;
    cols_t c = {NULL, NULL, 0, NULL, NULL};
    names_t nt = {NULL, NULL, 0, 0, NULL, PyList_New(0)}, cmds = {NULL, NULL, 0, 0, NULL, PyList_New(0)};
    i64s_t ints[3] = {{NULL, 0, 0}, {NULL, 0, 0}, {NULL, 0, 0}};  /* profiles, blocks, the rows' lines */
    Py_ssize_t *at = NULL, n = 0, count = 0;
    long long first_line;
    Py_ssize_t margin;
    needles_t nd;
    if (!PyArg_ParseTuple(args, "y*O!pLn:text_sweep", &buf, &PyTuple_Type, &needles, &last, &first_line, &margin)) {
        buf.obj = NULL;
        goto done;
    }
    if (nt.pool == NULL || cmds.pool == NULL || needles_init(&nd, needles) < 0)
        goto done;
    const char *p = buf.buf;
    int plain = split_plain(p, buf.len, &at, &n);
    if (plain < 0)
        goto done;
    if (!plain || (last && buf.len && p[buf.len - 1] != '\n')) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    src_t src = {NULL, p, at, n, 0, last, first_line, last ? n : n - margin - 1};
    Py_ssize_t j = sweep_lines(&src, &nd, &c, &count, &nt, &cmds, ints);
    if (j == -2)
        goto done;
    result = j == -1 ? Py_NewRef(Py_None) : sweep_result(at, j, ints, &c, count, nt.pool, cmds.pool);
done:
    if (buf.obj != NULL)
        PyBuffer_Release(&buf);
    PyMem_Free(at);
    PyMem_Free(c.v);
    PyMem_Free(c.label);
    PyMem_Free(c.code);
    PyMem_Free(c.calls);
    for (int q = 0; q < 3; q++)
        PyMem_Free(ints[q].v);
    names_free(&nt);
    names_free(&cmds);
    return result;
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS,
     "scan(lines, k, limit) -> (count, stop, segments, pct_at):\n"
     "the plain nvprof summary rows of lines[k:k+limit] (see the module's source)."},
    {"profiles", profiles, METH_VARARGS,
     "profiles(lines, i, limit) -> (j, profiles, names, calls, pct, total, avg, min, max) or None:\n"
     "summary-only nvprof profiles from lines[i] read in one go (see the module's source)."},
    {"text_sweep", text_sweep, METH_VARARGS,
     "text_sweep(data, needles, last, line, margin) -> (end, lines, profiles, blocks, row lines, codes, calls, pool, commands, "
     "pct, total, avg, min, max) or None:\n"
     "profiles()'s profiles read from a chunk of a file's bytes (see the module's source)."},
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
    for (int ch = 0; ch < 256; ch++)
        BYTE_CLASS[ch] = ch < 0x20 || ch > 0x7e || strchr("><#\\|&", ch) != NULL ? 1 : 0;
    BYTE_CLASS['\n'] = 2;
    BYTE_CLASS['-'] = BYTE_CLASS['/'] = BYTE_CLASS['*'] = 3;
    BYTE_CLASS['\\'] = 4;
    for (size_t w = 0; w < sizeof KEYWORDS / sizeof *KEYWORDS; w++)
        needle_add(&KEYWORD_NEEDLES, (int)w, KEYWORDS[w], (Py_ssize_t)strlen(KEYWORDS[w]));
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
