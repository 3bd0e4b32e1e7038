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
 *   (5, column, lo, style) the cell of row i is the float column[lo + i] (a list of floats, or a
 *                         buffer of doubles: array('d'), a NumPy float64 array) as the shortest text
 *                         that reads back as the same double: style 0 as msgspec's JSON writes it
 *                         (null where not finite), style 1 as float.__repr__ writes it (CSV: ''
 *                         for NaN); any other value: TypeError;
 *   (6, column, lo)       the cell of row i is the int column[lo + i] (a list of ints of 64 bits, or
 *                         a buffer of signed integers: array('q'), ...) as int.__str__ writes it;
 *   (7, values)           the cell of row i is values[i] as the csv module writes a str (quoted
 *                         where it holds , " CR or LF, '"' doubled; UTF-8, surrogateescape) or None
 *                         (''); any other value: TypeError.
 *   (8, values, times, first, inner, style)
 *                         the cell of row i is values[((first + i) // times) % len(values)] written
 *                         as a piece of kind `inner` (4, 5 with `style`, 6 or 7) writes it: a
 *                         colviews Repeated's slice (each value `times` rows in a row) or Tiled's
 *                         (times 1, the values over and over), each value's text made once.
 * The texts of kinds 4 and 7 are kept for the values seen lately (256, by address): a name
 * repeated along a trace, a metric name along an ncu page, is escaped once.
 * write(n, pieces, rowsep, write, rows[, lend]) hands the same bytes to `write` (a callable taking
 * bytes) a few `rows` at a time (the separator before a chunk's first row with it), from one buffer
 * that is reused: a big output is never held whole, and no fresh memory is touched for each chunk.
 * With lend true each chunk is a memoryview of that buffer (no copy), released when write returns:
 * for a write that does not keep what it is given (a file's).
 * A piece that does not hold n cells, a value that is not in its table, a cell that is not bytes:
 * ValueError / KeyError / TypeError, as the pure-Python twin (profconv.render.rowjoin) raises;
 * every piece is checked before the first row is written.
 * scan(column, lo, hi) -> (kind, same): what rows lo:hi of a column hold (1 floats, 2 ints of 64
 * bits, 3 str or None, 0 anything else) and whether every value is written as the first is.
 * format_double(x, style) -> bytes: one double as a kind-5 cell.
 * The bytes are the twin's, byte for byte (tests/test_render_rowjoin.py).
 *
 * The shortest text of a double: the digits are those of the shortest decimal in the interval of
 * reals that read back as the double (its bounds in when its mantissa is even), the one nearest
 * to the double among those (ties to an even last digit): the decimal that Ulf Adams' Ryu (PLDI
 * 2018) and David Gay's dtoa (mode 0, what repr uses) give. Written for this module: the interval
 * and the double scaled by a power of ten are held exactly in 128-bit integers, which covers the
 * doubles from 2^-67 to 2^54 (and every integer below 1e16); the others go through
 * PyOS_double_to_string, whose digits are repr's by definition. An integer below 1e16 is its own
 * digits; below 2^40 a decimal of 1 to 3 places is tried next (what profilers print): x * 1000
 * rounded, kept where dividing it by 1000 (a correctly rounded division, as reading the decimal
 * is) gives x back, its trailing zeros dropped. Digits are made 8 at a time (a multiply splits the
 * lanes of one word), written in place with no buffer on the stack.
 *
 * The rows: each piece is one column with the literals before it (the last one with those after it
 * too), written row by row into one buffer: a number's cell formatted in place (the room for it
 * reserved once), the literals copied 32 bytes at a time from padded copies (no call per cell).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <float.h>
#include <math.h>

#if defined(__SSE2__) && defined(__x86_64__)
#include <emmintrin.h>
#endif

#if defined(__GNUC__) || defined(__clang__)
#define INLINE inline __attribute__((always_inline))
#define NOINLINE __attribute__((noinline))
#else
#define INLINE inline
#define NOINLINE
#endif

typedef struct {
    int kind; /* -1 literal, 0..4 as above */
    const char *lit;
    Py_ssize_t litlen;
    const char *text; /* kinds 0 and 3: the cells, and where the next one starts */
    Py_ssize_t textlen, pos;
    PyObject *values; /* kinds 1, 3: a list; kind 2: the list of cells */
    PyObject *table;
    PyObject *seen[16], *cell[16]; /* kind 1: values looked up lately (by address) and their cells */
    Py_ssize_t lo;              /* kinds 5, 6: the column's first row */
    int style;                  /* kind 5: 0 JSON, 1 CSV */
    int num;                    /* kinds 5, 6: 0 a list, else the buffer's item kind (NUM_*) */
    Py_buffer view;             /* kinds 5, 6 over a buffer (held while the piece is used) */
    struct texts *texts;        /* kinds 4, 7: the texts of the values seen lately */
    char *cyc;                  /* kind 8: the values' texts, one after the other */
    Py_ssize_t *cycoff;         /* kind 8: where each starts (and the end) */
    Py_ssize_t ncyc, times, ci, left; /* kind 8: values, rows each, the current one and its rows left */
} piece_t;

typedef struct {
    char *buf;
    Py_ssize_t len, cap;
} out_t;

static int out_grow(out_t *o, const char *s, Py_ssize_t k);

static inline int out_put(out_t *o, const char *s, Py_ssize_t k) {
    if (o->len + k > o->cap)
        return out_grow(o, s, k);
    char *d = o->buf + o->len;
    if (k >= 8 && k <= 16) { /* most cells and keys: two moves, no call */
        memcpy(d, s, 8);
        memcpy(d + k - 8, s + k - 8, 8);
    } else if (k >= 4 && k < 8) {
        memcpy(d, s, 4);
        memcpy(d + k - 4, s + k - 4, 4);
    } else
        memcpy(d, s, k);
    o->len += k;
    return 0;
}

/* room for k more bytes at the end of the output (its buffer made bigger) */
static int grow(out_t *o, Py_ssize_t k) {
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
    return 0;
}

static int out_grow(out_t *o, const char *s, Py_ssize_t k) {
    if (grow(o, k) < 0)
        return -1;
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
#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* whether any of 8 bytes is below 0x20, '"' or '\\' (the exact "has a byte less than / equal to" tests) */
static inline int escape8(uint64_t w) {
    uint64_t q = w ^ (ONES * '"'), b = w ^ (ONES * '\\');
    return (((w - ONES * 0x20) & ~w) | ((q - ONES) & ~q) | ((b - ONES) & ~b)) & HIGHS ? 1 : 0;
}

/* the index of the first byte of s[i, k) that JSON escapes, or k: 16 bytes at a time (SSE2), then 8 */
static Py_ssize_t next_escape(const char *s, Py_ssize_t i, Py_ssize_t k) {
#if defined(__SSE2__) && defined(__x86_64__)
    const __m128i low = _mm_set1_epi8(0x1f), quote = _mm_set1_epi8('"'), back = _mm_set1_epi8('\\');
    for (; i + 16 <= k; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
        __m128i hit = _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(v, low), v), /* below 0x20 */
                                   _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, back)));
        int bits = _mm_movemask_epi8(hit);
        if (bits)
            return i + __builtin_ctz((unsigned)bits);
    }
#endif
    for (; i + 8 <= k; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        if (escape8(w))
            break;
    }
    for (; i < k; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == '"' || c == '\\')
            return i;
    }
    return k;
}

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
    for (Py_ssize_t i = next_escape(s, 0, k); i < k; i = next_escape(s, i + 1, k)) {
        unsigned char c = (unsigned char)s[i];
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

static inline uint64_t has_byte(uint64_t w, unsigned char c) {
    uint64_t x = w ^ (ONES * c);
    return (x - ONES) & ~x & HIGHS;
}

/* whether the csv module quotes these bytes: a ',' '"' CR or LF in them (8 bytes at a time) */
static int csv_quoted(const char *t, Py_ssize_t k) {
    Py_ssize_t i = 0;
    for (; i + 8 <= k; i += 8) {
        uint64_t w;
        memcpy(&w, t + i, 8);
        if (has_byte(w, ',') | has_byte(w, '"') | has_byte(w, '\r') | has_byte(w, '\n'))
            return 1;
    }
    for (; i < k; i++)
        if (t[i] == ',' || t[i] == '"' || t[i] == '\r' || t[i] == '\n')
            return 1;
    return 0;
}

/* UTF-8 bytes t[0, k) as the csv module writes them: as they are, or quoted with '"' doubled */
static int put_csv_bytes(out_t *o, const char *t, Py_ssize_t k) {
    if (!csv_quoted(t, k))
        return out_put(o, t, k);
    Py_ssize_t a = 0;
    int rc = out_put(o, "\"", 1);
    for (const char *q = memchr(t, '"', (size_t)k); q != NULL && rc == 0; q = memchr(q + 1, '"', (size_t)(k - (q + 1 - t)))) {
        rc = out_put(o, t + a, q + 1 - t - a); /* the quote, then itself again */
        a = q - t;
    }
    rc = rc < 0 ? rc : out_put(o, t + a, k - a);
    return rc < 0 ? rc : out_put(o, "\"", 1);
}

/* the csv module's text of a str (QUOTE_MINIMAL; UTF-8, surrogateescape) or None */
static int put_csv_str(out_t *o, PyObject *v) {
    if (v == Py_None)
        return 0;
    if (!PyUnicode_Check(v)) {
        PyErr_SetString(PyExc_TypeError, "a CSV text cell is not a str");
        return -1;
    }
    Py_ssize_t k;
    const char *t = PyUnicode_AsUTF8AndSize(v, &k); /* a str's own UTF-8 (no copy for ASCII) */
    if (t != NULL)
        return put_csv_bytes(o, t, k);
    PyErr_Clear(); /* a lone surrogate: surrogateescape's bytes */
    PyObject *b = PyUnicode_AsEncodedString(v, "utf-8", "surrogateescape");
    if (b == NULL)
        return -1;
    int rc = put_csv_bytes(o, PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b));
    Py_DECREF(b);
    return rc;
}

#define ARENA_MAX (1 << 18)
#define TEXTS 256

/* kinds 4 and 7: the texts written for the values seen lately (by address), in one arena */
struct texts {
    PyObject *seen[TEXTS];
    Py_ssize_t off[TEXTS], len[TEXTS], alen;
    Py_ssize_t looked, found; /* lookups and hits: a piece whose values seldom come again stops keeping */
    char arena[ARENA_MAX];
};

#define KEEP_TRIAL 2048 /* lookups after which a piece that found under an eighth of them keeps no more */

static inline size_t text_slot(PyObject *v) {
    return (size_t)((((uintptr_t)v >> 4) * 0x9E3779B97F4A7C15ULL) >> 56); /* 0..255 */
}

/* a kind-4 or kind-7 cell: its text as written last for this value (by address), else written
 * and kept (the kept texts forgotten once they fill ARENA_MAX bytes) */
static int put_text_cached(out_t *o, piece_t *p, PyObject *v) {
    struct texts *t = p->texts;
    size_t h = text_slot(v);
    if (t != NULL) {
        if (t->seen[h] == v) {
            t->found++, t->looked++;
            return out_put(o, t->arena + t->off[h], t->len[h]);
        }
        if (t->looked >= KEEP_TRIAL && t->found < t->looked / 8) /* names that differ row by row */
            return p->kind == 4 ? put_json_str(o, v) : put_csv_str(o, v);
        t->looked++;
    }
    Py_ssize_t start = o->len;
    if ((p->kind == 4 ? put_json_str(o, v) : put_csv_str(o, v)) < 0)
        return -1;
    Py_ssize_t k = o->len - start;
    if (k > ARENA_MAX / 4)
        return 0;
    if (t == NULL) {
        if ((t = p->texts = PyMem_Malloc(sizeof(struct texts))) == NULL)
            return 0; /* not kept */
        memset(t->seen, 0, sizeof(t->seen));
        t->alen = 0;
        t->looked = 1, t->found = 0;
    }
    if (t->alen + k > ARENA_MAX) {
        t->alen = 0;
        memset(t->seen, 0, sizeof(t->seen));
    }
    memcpy(t->arena + t->alen, o->buf + start, k);
    t->seen[h] = v, t->off[h] = t->alen, t->len[h] = k;
    t->alen += k;
    return 0;
}

static int put_bytes(out_t *o, PyObject *b) {
    if (!PyBytes_Check(b)) {
        PyErr_SetString(PyExc_TypeError, "a cell is not bytes");
        return -1;
    }
    return out_put(o, PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b));
}

/* ---- numbers ---------------------------------------------------------------------------------- */

enum { NUM_LIST = 0, NUM_F64, NUM_I8, NUM_I16, NUM_I32, NUM_I64 };

static const uint64_t POW10[20] = {
    1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL, 100000000ULL,
    1000000000ULL, 10000000000ULL, 100000000000ULL, 1000000000000ULL, 10000000000000ULL,
    100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL, 100000000000000000ULL,
    1000000000000000000ULL, 10000000000000000000ULL};

static const char PAIRS[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* the decimal digits of v (no sign), written backwards ending at `end`: where they start */
static char *u64_digits(uint64_t v, char *end) {
    while (v >= 100) {
        uint64_t q = v / 100;
        end -= 2;
        memcpy(end, PAIRS + 2 * (v - q * 100), 2);
        v = q;
    }
    if (v >= 10) {
        end -= 2;
        memcpy(end, PAIRS + 2 * v, 2);
    } else
        *--end = (char)('0' + v);
    return end;
}

/* an integer-valued double below 1e16: n * 10^p, n without trailing zeros (its own digits are
 * the shortest: any other decimal that short is 1 or more away, and its neighbours are 1 or 2) */
static int shortest_int(uint64_t m, int e, uint64_t *n, int *p) {
    uint64_t v;
    if (e < -52 || e > 1)
        return -1;
    if (e < 0) {
        if (m & ((1ULL << -e) - 1))
            return -1;
        v = m >> -e;
    } else
        v = m << e;
    if (v >= POW10[16])
        return -1;
    *p = 0;
    while (v % 10 == 0) {
        v /= 10;
        ++*p;
    }
    *n = v;
    return 0;
}

#ifdef __SIZEOF_INT128__
typedef unsigned __int128 u128;

/* the interval of reals that read back as m * 2^e (its ends: the midpoints to the neighbours, the
 * lower one a quarter ulp away below a power of two) and the double itself, scaled by 10^j / 2^e:
 * the smallest and largest integers in the interval (a, b; its ends in when m is even), and the
 * double's integer part with its fraction against 1/2 (cmp) and whether that fraction is 0 */
typedef struct {
    uint64_t a, b, fv;
    int cmp, zero;
} scaled_t;

static void scale(uint64_t m, int lower_gap, int s, int j, scaled_t *t) {
    u128 pw = j > 19 ? (u128)POW10[19] * POW10[j - 19] : (u128)POW10[j];
    u128 nv = j > 19 ? (u128)(4 * m) * pw : (u128)(4 * m) * POW10[j]; /* 64 x 64 bits where it can */
    u128 mask = ((u128)1 << s) - 1, half = (u128)1 << (s - 1);
    u128 nl = nv - lower_gap * pw, nu = nv + 2 * pw; /* in quarter ulps: the ends */
    int incl = (m & 1) == 0;                        /* a decimal on an end reads back as the even mantissa */
    t->a = (uint64_t)(nl >> s) + !((nl & mask) == 0 && incl);
    t->b = (uint64_t)(nu >> s) - ((nu & mask) == 0 && !incl);
    t->fv = (uint64_t)(nv >> s);
    t->cmp = (nv & mask) > half ? 1 : (nv & mask) == half ? 0 : -1;
    t->zero = (nv & mask) == 0;
}

/* the same where 4m x 10^j needs more than 128 bits (70 <= s <= 126, j <= 38: doubles from 2^-71
 * down to 2^-124, a sweep's shares of its smallest calls): the products as 192 bits, hi:lo; 10^j
 * and the shift s still fit in 128 bits, so the bits below the shift are lo's */
static void scale_wide(uint64_t m, int lower_gap, int s, int j, scaled_t *t) {
    u128 pw = j > 19 ? (u128)POW10[19] * POW10[j - 19] : (u128)POW10[j];
    uint64_t m4 = 4 * m;
    u128 p0 = (u128)m4 * (uint64_t)pw, p1 = (u128)m4 * (uint64_t)(pw >> 64);
    u128 nv = p0 + (p1 << 64);
    uint64_t nvh = (uint64_t)(p1 >> 64) + (nv < p0);
    u128 dl = (u128)lower_gap * pw, du = 2 * pw; /* below 2^128: pw < 10^38 < 2^127 */
    u128 nl = nv - dl, nu = nv + du;
    uint64_t nlh = nvh - (nl > nv), nuh = nvh + (nu < nv);
    u128 mask = ((u128)1 << s) - 1, half = (u128)1 << (s - 1);
    int incl = (m & 1) == 0;
#define WIDE_SHR(lo, hi) ((uint64_t)(((lo) >> s) | ((u128)(hi) << (128 - s))))
    t->a = WIDE_SHR(nl, nlh) + !((nl & mask) == 0 && incl);
    t->b = WIDE_SHR(nu, nuh) - ((nu & mask) == 0 && !incl);
    t->fv = WIDE_SHR(nv, nvh);
#undef WIDE_SHR
    t->cmp = (nv & mask) > half ? 1 : (nv & mask) == half ? 0 : -1;
    t->zero = (nv & mask) == 0;
}

/* n without its trailing zeros (n > 0): how many there were */
static inline int strip_zeros(uint64_t *n) {
    int z = 0;
    while (*n % 100000000 == 0) {
        *n /= 100000000;
        z += 8;
    }
    if (*n % 10000 == 0)
        *n /= 10000, z += 4;
    if (*n % 100 == 0)
        *n /= 100, z += 2;
    if (*n % 10 == 0)
        *n /= 10, z += 1;
    return z;
}

/* a normal double m * 2^e with -124 <= e <= 1: the shortest decimal n * 10^p in its interval, the
 * nearest to it (ties: even n). At scale 10^j (j from s by a multiply, as Ryu and Schubfach start)
 * the interval is 3 to 40 units wide: it holds at most one multiple of 100 -- where it does, that
 * one, its trailing zeros dropped, is the shortest --, else the multiples of 10 in it (if any) are
 * the shortest and the one nearest the double is taken, else the integer nearest the double */
static int shortest_scaled(uint64_t m, int e, int lower_gap, uint64_t *n, int *p) {
    int s = 2 - e, j = ((s * 78913) >> 18) + 1; /* 10^j > 2^s >= 10^(j-1) */
    scaled_t t;
    if (s < 70)
        scale(m, lower_gap, s, j, &t);
    else
        scale_wide(m, lower_gap, s, j, &t);
    uint64_t c = (t.a + 99) / 100;
    if (c * 100 <= t.b) {
        *n = c;
        *p = 2 - j + strip_zeros(n);
        return 0;
    }
    uint64_t lo = (t.a + 9) / 10, hi = t.b / 10;
    if (lo <= hi) { /* the double / 10 rounded (ties to even), kept in the interval */
        uint64_t q = t.fv / 10, r = t.fv - q * 10;
        q += r > 5 || (r == 5 && (!t.zero || (q & 1)));
        *n = q < lo ? lo : q > hi ? hi : q;
        *p = 1 - j;
        return 0;
    }
    uint64_t v = t.fv + (t.cmp > 0 || (t.cmp == 0 && (t.fv & 1)));
    *n = v < t.a ? t.a : v > t.b ? t.b : v;
    *p = -j;
    return 0;
}
#endif

/* the shortest decimal of a finite x > 0 as n * 10^p; -1 where it is not worked out here */
static int shortest(double x, uint64_t *n, int *p) {
    uint64_t bits;
    memcpy(&bits, &x, sizeof(bits));
    int be = (int)((bits >> 52) & 0x7ff);
    uint64_t frac = bits & ((1ULL << 52) - 1), m = frac | (1ULL << 52);
    int e = be - 1075;
    if (be == 0 || be == 0x7ff)
        return -1;
    if (shortest_int(m, e, n, p) == 0)
        return 0;
#ifdef __SIZEOF_INT128__
    if (e >= -124 && e <= 1)
        return shortest_scaled(m, e, frac == 0 && be > 1 ? 1 : 2, n, p);
#endif
    return -1;
}

/* repr's digits of x > 0 (no trailing zeros) and where the point goes (x = 0.DIGITS * 10^kk):
 * PyOS_double_to_string's text read back */
static int repr_digits(double x, char *digits, int *nd, int *kk) {
    char *r = PyOS_double_to_string(x, 'r', 0, 0, NULL);
    if (r == NULL)
        return -1;
    int k = 0, before = 0, dot = 0, lead = 0;
    const char *c = r;
    for (; *c && *c != 'e'; c++) {
        if (*c == '.') {
            dot = 1;
            continue;
        }
        before += !dot;
        if (k == 0 && *c == '0')
            lead++;
        else if (k < 20)
            digits[k++] = *c;
    }
    *kk = before - lead + (*c == 'e' ? atoi(c + 1) : 0);
    while (k > 1 && digits[k - 1] == '0')
        k--;
    *nd = k;
    PyMem_Free(r);
    return 0;
}

/* room for k more bytes at the end of the output */
static inline int reserve(out_t *o, Py_ssize_t k) {
    return o->len + k <= o->cap ? 0 : grow(o, k);
}

/* how many decimal digits v > 0 has */
static inline int ndigits(uint64_t v) {
#if defined(__GNUC__) || defined(__clang__)
    int t = ((64 - __builtin_clzll(v)) * 1233) >> 12; /* floor(log10(2^bits)) */
    return t - (v < POW10[t]) + 1;
#else
    int d = 1;
    while (d < 20 && v >= POW10[d])
        d++;
    return d;
#endif
}

#if PY_LITTLE_ENDIAN
/* the 8 decimal digits of v < 10^8 (zeros first) as 8 ASCII bytes, the first in the lowest byte:
 * the halves' digits side by side in the lanes of one word, each lane split by a multiply */
static INLINE uint64_t digits8(uint32_t v) {
    uint64_t x = (uint64_t)(v / 10000) | ((uint64_t)(v % 10000) << 32);     /* 2 lanes of 4 digits */
    uint64_t h = ((x * 10486) >> 20) & 0x0000007F0000007FULL;                 /* each lane / 100 */
    x = h | ((x - h * 100) << 16);                                            /* 4 lanes of 2 digits */
    h = ((x * 103) >> 10) & 0x000F000F000F000FULL;                            /* each lane / 10 */
    x = h | ((x - h * 10) << 8);                                              /* 8 lanes of 1 digit */
    return x + 0x3030303030303030ULL;
}

/* the last nd digits of v (1 <= nd <= 20; zeros first where v is shorter) at w: up to 8 bytes past
 * them are written over */
static INLINE void put_digits(char *w, uint64_t v, int nd) {
    uint64_t x, lo = 0, mid = 0;
    if (nd > 16) {
        uint64_t q = v / 10000000000000000ULL;
        lo = v - q * 10000000000000000ULL;
        mid = lo / 100000000, lo -= mid * 100000000;
        v = q;
    } else if (nd > 8) {
        uint64_t q = v / 100000000;
        lo = v - q * 100000000;
        v = q;
    }
    int top = nd > 16 ? nd - 16 : nd > 8 ? nd - 8 : nd; /* the first digits, written first */
    x = digits8((uint32_t)v) >> (8 * (8 - top));
    memcpy(w, &x, 8);
    if (nd > 16) {
        x = digits8((uint32_t)mid);
        memcpy(w + top, &x, 8);
    }
    if (nd > 8) {
        x = digits8((uint32_t)lo);
        memcpy(w + nd - 8, &x, 8);
    }
}
#else
static inline void put_digits(char *w, uint64_t v, int nd) {
    for (char *e = w + nd; e > w; v /= 10)
        *--e = (char)('0' + v % 10);
}
#endif

#define DOUBLE_ROOM 64 /* bytes a double's or an int's text may take at w, with the words written past it */

/* an int as int.__str__ writes it, at w (DOUBLE_ROOM bytes there): its length */
static INLINE int lay_i64(char *w, long long v) {
    uint64_t mag = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    int neg = v < 0, nd = mag ? ndigits(mag) : 1;
    *w = '-';
    put_digits(w + neg, mag, nd);
    return neg + nd;
}

static int put_i64(out_t *o, long long v) {
    if (reserve(o, DOUBLE_ROOM) < 0)
        return -1;
    o->len += lay_i64(o->buf + o->len, v);
    return 0;
}

/* digits d[0, nd) with the point at kk laid out at w as repr (style 1) or msgspec's JSON (0) lay
 * them out in exponent notation (the fixed one where the shortest path did not write it): its length */
static int lay_out(char *w0, const char *d, int nd, int kk, int style) {
    char *w = w0;
    if (kk > -4 - (style == 0) && kk <= 16) {
        if (kk <= 0) {
            *w++ = '0', *w++ = '.';
            for (int i = 0; i < -kk; i++)
                *w++ = '0';
            memcpy(w, d, nd), w += nd;
        } else if (kk >= nd) {
            memcpy(w, d, nd), w += nd;
            for (int i = nd; i < kk; i++)
                *w++ = '0';
            *w++ = '.', *w++ = '0';
        } else {
            memcpy(w, d, kk), w += kk, *w++ = '.';
            memcpy(w, d + kk, nd - kk), w += nd - kk;
        }
        return (int)(w - w0);
    }
    *w++ = d[0];
    if (nd > 1) {
        *w++ = '.';
        memcpy(w, d + 1, nd - 1), w += nd - 1;
    }
    int x = kk - 1;
    *w++ = 'e';
    if (x < 0 || style == 1)
        *w++ = x < 0 ? '-' : '+';
    x = x < 0 ? -x : x;
    if (style == 1 && x < 10)
        *w++ = '0';
    char eb[8], *ee = eb + sizeof(eb), *es = u64_digits((uint64_t)x, ee);
    memcpy(w, es, ee - es), w += ee - es;
    return (int)(w - w0);
}

/* n * 10^p (nd digits, kk = nd + p, -6 < kk < nd) with the point inside or before its digits at w:
 * "ddd.ddd", "0.000ddd": its length */
static inline int lay_point(char *w, uint64_t n, int nd, int kk) {
    if (kk <= 0) {
        memcpy(w, "0.00000", 8);
        put_digits(w + 2 - kk, n, nd);
        return 2 - kk + nd;
    }
    char t[32];
    put_digits(w, n, nd);
    memcpy(t, w + kk, 32); /* the fraction's digits one place on, after the point */
    w[kk] = '.';
    memcpy(w + kk + 1, t, 32);
    return nd + 1;
}

/* "000" to "999", each with how many of its digits are left once its trailing zeros are dropped */
static char DIG3[1000][4];

static void init_dig3(void) {
    for (int i = 0; i < 1000; i++) {
        DIG3[i][0] = (char)('0' + i / 100), DIG3[i][1] = (char)('0' + i / 10 % 10), DIG3[i][2] = (char)('0' + i % 10);
        DIG3[i][3] = (char)(i % 100 == 0 ? 1 : i % 10 == 0 ? 2 : 3);
    }
}

/* x < 2^40 (not an integer) as the decimal of 1 to 3 places that reads back as x, if one does
 * ("ddd.d", "0.005"): its length, else 0. Below 2^40 an ulp is under 1/1000: at most one such
 * decimal reads back as x, x * 1000 rounded is it (its places made 3), and dividing that by 1000
 * (a correctly rounded division, as reading the decimal is) gives x back; its trailing zeros
 * dropped it is the shortest (none with fewer places reads back as x: it would be this one) */
static INLINE int lay_places(char *w, double ax) {
    uint64_t n = (uint64_t)(ax * 1000.0 + 0.5);
    if (n == 0 || (double)n / 1000.0 != ax)
        return 0;
    uint64_t ip = n / 1000;
    unsigned fr = (unsigned)(n - ip * 1000);
    int nip = ip ? ndigits(ip) : 1;
    put_digits(w, ip, nip);
    w[nip] = '.';
    memcpy(w + nip + 1, DIG3[fr], 4);
    return nip + 1 + DIG3[fr][3];
}

/* the text of a finite x > 0 that is not an integer below 1e16, at w: its length (-1: an error) */
static NOINLINE int lay_fraction(char *w, double ax, int style) {
    char digits[26], *d;
    int nd, kk, p;
    uint64_t n;
    if (ax < 1099511627776.0) { /* below 2^40: a decimal of 1 to 3 places, if one reads back as x */
        int k = lay_places(w, ax);
        if (k)
            return k;
    }
    if (shortest(ax, &n, &p) == 0) {
        nd = ndigits(n);
        kk = nd + p;
        if (kk < nd && kk > -4 - (style == 0)) /* the fixed notation of both styles, a point inside */
            return lay_point(w, n, nd, kk);
        d = u64_digits(n, digits + sizeof(digits));
    } else if (repr_digits(ax, d = digits, &nd, &kk) < 0)
        return -1;
    return lay_out(w, d, nd, kk, style);
}

/* one double as a kind-5 cell of the style at w (DOUBLE_ROOM bytes there): its length (-1: an error) */
static INLINE int lay_double(char *w, double x, int style) {
    uint64_t bits;
    memcpy(&bits, &x, sizeof(bits));
    int neg = (int)(bits >> 63);
    double ax = fabs(x);
    *w = '-'; /* kept where x < 0 (NaN: written over or not counted) */
    if (ax < 1e16) {
        uint64_t n = (uint64_t)ax;
        if ((double)n == ax && n != 0) { /* an integer: its digits and ".0" (see shortest_int) */
            int nd = ndigits(n);
            put_digits(w + neg, n, nd);
            memcpy(w + neg + nd, ".0", 2);
            return neg + nd + 2;
        }
        if (ax == 0) {
            memcpy(w + neg, "0.0", 4);
            return neg + 3;
        }
    } else if (!(ax <= DBL_MAX)) { /* NaN, infinities */
        if (style == 0) {
            memcpy(w, "null", 4);
            return 4;
        }
        if (x != x)
            return 0;
        memcpy(w + neg, "inf", 4);
        return neg + 3;
    }
    int k = lay_fraction(w + neg, ax, style);
    return k < 0 ? k : neg + k;
}

/* one double as a kind-5 cell of the style */
static int put_double(out_t *o, double x, int style) {
    if (reserve(o, DOUBLE_ROOM) < 0)
        return -1;
    int k = lay_double(o->buf + o->len, x, style);
    if (k < 0)
        return -1;
    o->len += k;
    return 0;
}

/* the buffer's items: NUM_F64 for doubles, NUM_I* for signed integers, 0 for anything else */
static int num_kind(const Py_buffer *v) {
    const char *f = v->format ? v->format : "B";
    if (*f == '@' || *f == '=' || (*f == '<' && PY_LITTLE_ENDIAN))
        f++;
    if (f[0] == 0 || f[1] != 0 || v->ndim != 1)
        return 0;
    if (f[0] == 'd' && v->itemsize == 8)
        return NUM_F64;
    if (strchr("bhilq", f[0]) == NULL)
        return 0;
    switch (v->itemsize) {
    case 1: return NUM_I8;
    case 2: return NUM_I16;
    case 4: return NUM_I32;
    case 8: return NUM_I64;
    default: return 0;
    }
}

static long long buf_int(const piece_t *p, Py_ssize_t i) {
    const char *b = (const char *)p->view.buf;
    switch (p->num) {
    case NUM_I8: return ((const int8_t *)b)[i];
    case NUM_I16: return ((const int16_t *)b)[i];
    case NUM_I32: return ((const int32_t *)b)[i];
    default: return ((const int64_t *)b)[i];
    }
}

static int num_type_error(int kind) {
    PyErr_SetString(PyExc_TypeError, kind == 5 ? "a float cell is not a float" : "an int cell is not an int of 64 bits");
    return -1;
}

/* row i of a kind-5 or kind-6 piece */
static int put_number(out_t *o, piece_t *p, Py_ssize_t i) {
    if (p->num == NUM_F64)
        return put_double(o, ((const double *)p->view.buf)[p->lo + i], p->style);
    if (p->num)
        return put_i64(o, buf_int(p, p->lo + i));
    PyObject *v = PyList_GET_ITEM(p->values, p->lo + i);
    if (p->kind == 5)
        return PyFloat_CheckExact(v) ? put_double(o, PyFloat_AS_DOUBLE(v), p->style) : num_type_error(5);
    int overflow = 0;
    long long x = PyLong_CheckExact(v) ? PyLong_AsLongLongAndOverflow(v, &overflow) : 0;
    if (!PyLong_CheckExact(v) || overflow)
        return num_type_error(6);
    if (x == -1 && PyErr_Occurred())
        return -1;
    return put_i64(o, x);
}

/* an int that fits in 64 bits (not a bool) */
static int is_i64(PyObject *v) {
    int overflow = 0;
    if (!PyLong_CheckExact(v))
        return 0;
#if PY_VERSION_HEX >= 0x030C0000
    if (PyUnstable_Long_IsCompact((PyLongObject *)v))
        return 1;
#else
    if (Py_SIZE(v) >= -1 && Py_SIZE(v) <= 1) /* one digit of 30 bits at most */
        return 1;
#endif
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (x == -1 && PyErr_Occurred())
        PyErr_Clear();
    return !overflow;
}

/* a kind-5 or kind-6 piece: its column (a list, its values checked here, or a buffer) and first row */
static int read_number_piece(PyObject *item, Py_ssize_t n, piece_t *p) {
    PyObject *col = PyTuple_GET_ITEM(item, 1);
    Py_ssize_t len;
    p->lo = PyLong_AsSsize_t(PyTuple_GET_ITEM(item, 2));
    p->style = p->kind == 5 ? (int)PyLong_AsLong(PyTuple_GET_ITEM(item, 3)) : 0;
    if (PyErr_Occurred())
        return -1;
    if (p->style != 0 && p->style != 1) {
        PyErr_SetString(PyExc_ValueError, "a float piece's style is 0 (JSON) or 1 (CSV)");
        return -1;
    }
    if (PyList_Check(col)) {
        p->values = col;
        len = PyList_GET_SIZE(col);
    } else {
        if (PyObject_GetBuffer(col, &p->view, PyBUF_FORMAT | PyBUF_ND) < 0)
            return -1;
        p->num = num_kind(&p->view);
        if (p->num == 0 || (p->num == NUM_F64) != (p->kind == 5))
            return num_type_error(p->kind);
        len = p->view.len / p->view.itemsize;
    }
    if (p->lo < 0 || n > len - p->lo)
        return cell_error();
    if (p->num)
        return 0;
    for (Py_ssize_t i = 0; i < n; i++) { /* a list's values: checked before any row is written */
        PyObject *v = PyList_GET_ITEM(col, p->lo + i);
        if (p->kind == 5 ? !PyFloat_CheckExact(v) : !is_i64(v))
            return num_type_error(p->kind);
    }
    return 0;
}

static void release_pieces(piece_t *ps, Py_ssize_t np) {
    for (Py_ssize_t j = 0; ps != NULL && j < np; j++) {
        if (ps[j].view.obj != NULL)
            PyBuffer_Release(&ps[j].view);
        PyMem_Free(ps[j].texts);
        PyMem_Free(ps[j].cyc);
        PyMem_Free(ps[j].cycoff);
    }
}

/* one value of a kind-8 piece as a piece of kind `inner` writes it (`tmp`: that piece, for its texts) */
static int put_inner(out_t *o, piece_t *tmp, PyObject *v) {
    switch (tmp->kind) {
    case 5:
        return PyFloat_CheckExact(v) ? put_double(o, PyFloat_AS_DOUBLE(v), tmp->style) : num_type_error(5);
    case 6:
        return is_i64(v) ? put_i64(o, PyLong_AsLongLong(v)) : num_type_error(6);
    default:
        return put_text_cached(o, tmp, v);
    }
}

/* a kind-8 piece: each value's text made once, in order, and the row it starts at */
static int read_cycle_piece(PyObject *item, Py_ssize_t n, piece_t *p) {
    PyObject *values = PyTuple_GET_ITEM(item, 1);
    piece_t tmp;
    memset(&tmp, 0, sizeof(tmp));
    Py_ssize_t first;
    p->times = PyLong_AsSsize_t(PyTuple_GET_ITEM(item, 2));
    first = PyLong_AsSsize_t(PyTuple_GET_ITEM(item, 3));
    tmp.kind = (int)PyLong_AsLong(PyTuple_GET_ITEM(item, 4));
    tmp.style = (int)PyLong_AsLong(PyTuple_GET_ITEM(item, 5));
    if (PyErr_Occurred())
        return -1;
    if (!PyList_Check(values)) {
        PyErr_SetString(PyExc_TypeError, "a piece's values are a list");
        return -1;
    }
    if (tmp.kind < 4 || tmp.kind > 7 || (tmp.kind == 5 && tmp.style != 0 && tmp.style != 1) || p->times < 1 || first < 0) {
        PyErr_SetString(PyExc_ValueError, "a cycle piece's kind is 4 to 7, its style 0 or 1, times at least 1, first not negative");
        return -1;
    }
    p->ncyc = PyList_GET_SIZE(values);
    if (p->ncyc == 0)
        return n ? cell_error() : 0;
    if ((p->cycoff = PyMem_Malloc((p->ncyc + 1) * sizeof(Py_ssize_t))) == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    out_t o = {NULL, 0, 0};
    int rc = 0;
    for (Py_ssize_t k = 0; k < p->ncyc && rc == 0; k++) {
        p->cycoff[k] = o.len;
        rc = put_inner(&o, &tmp, PyList_GET_ITEM(values, k));
    }
    p->cycoff[p->ncyc] = o.len;
    p->cyc = o.buf;
    PyMem_Free(tmp.texts);
    p->ci = (first / p->times) % p->ncyc;
    p->left = p->times - first % p->times;
    return rc;
}

/* row i of a kind-8 piece (rows come in order): the current value's text */
static inline int put_cycle(out_t *o, piece_t *p) {
    Py_ssize_t a = p->cycoff[p->ci], k = p->cycoff[p->ci + 1] - a;
    if (--p->left == 0) {
        p->left = p->times;
        p->ci = p->ci + 1 == p->ncyc ? 0 : p->ci + 1;
    }
    return out_put(o, p->cyc + a, k);
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
        /* borrowed: the list holds its values (no address is reused while it is written), the table their cells */
        PyObject *v = PyList_GET_ITEM(p->values, i);
        size_t h = ((uintptr_t)v >> 4) & 15;
        if (p->seen[h] != v) {
            PyObject *cell = PyDict_GetItemWithError(p->table, v);
            if (cell == NULL) {
                if (!PyErr_Occurred())
                    PyErr_SetObject(PyExc_KeyError, v);
                return -1;
            }
            p->seen[h] = v;
            p->cell[h] = cell;
        }
        return put_bytes(o, p->cell[h]);
    }
    case 2:
        return put_bytes(o, PyList_GET_ITEM(p->values, i));
    case 4:
    case 7:
        return put_text_cached(o, p, PyList_GET_ITEM(p->values, i));
    case 5:
    case 6:
        return put_number(o, p, i);
    case 8:
        return put_cycle(o, p);
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
    Py_ssize_t want = p->kind == 8 ? 6 : p->kind == 5 ? 4 : p->kind == 1 || p->kind == 3 || p->kind == 6 ? 3 : 2;
    if (p->kind < 0 || p->kind > 8 || PyTuple_GET_SIZE(item) != want) {
        PyErr_SetString(PyExc_TypeError, "a piece of an unknown kind");
        return -1;
    }
    if (p->kind == 5 || p->kind == 6)
        return read_number_piece(item, n, p);
    if (p->kind == 8)
        return read_cycle_piece(item, n, p);
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

/* whether two kind-8 pieces are in step: the same number of values, each as many rows, from the same place */
static int in_step(const piece_t *q, const piece_t *r) {
    return q->times == r->times && q->ncyc == r->ncyc && q->ci == r->ci && q->left == r->left;
}

/* pieces ps[a, b) -- literals and kind-8 pieces in step with `ref` -- as one kind-8 piece *m whose
 * k-th text is theirs joined; -1 (nothing made) where there is no memory for it */
static int merge_run(const piece_t *ps, Py_ssize_t a, Py_ssize_t b, const piece_t *ref, piece_t *m) {
    Py_ssize_t total = 0;
    for (Py_ssize_t j = a; j < b; j++)
        total += ps[j].kind == 8 ? ps[j].cycoff[ps[j].ncyc] : ps[j].litlen * ref->ncyc;
    memset(m, 0, sizeof(*m));
    m->kind = 8, m->times = ref->times, m->ncyc = ref->ncyc, m->ci = ref->ci, m->left = ref->left;
    m->cyc = PyMem_Malloc(total ? total : 1);
    m->cycoff = PyMem_Malloc((ref->ncyc + 1) * sizeof(Py_ssize_t));
    if (m->cyc == NULL || m->cycoff == NULL) {
        PyMem_Free(m->cyc);
        PyMem_Free(m->cycoff);
        return -1;
    }
    char *w = m->cyc;
    for (Py_ssize_t k = 0; k < ref->ncyc; k++) {
        m->cycoff[k] = w - m->cyc;
        for (Py_ssize_t j = a; j < b; j++) {
            const piece_t *q = &ps[j];
            Py_ssize_t at = q->kind == 8 ? q->cycoff[k] : 0, len = q->kind == 8 ? q->cycoff[k + 1] - at : q->litlen;
            memcpy(w, q->kind == 8 ? q->cyc + at : q->lit, len);
            w += len;
        }
    }
    m->cycoff[ref->ncyc] = w - m->cyc;
    return 0;
}

/* each run of literals and kind-8 pieces in step (an ncu page's kernel name and short name, each
 * launch's; its metric name and unit, each metric's; the keys between them) made one kind-8 piece:
 * one cell a row instead of a few. The pieces' new count */
static Py_ssize_t fuse(piece_t *ps, Py_ssize_t np) {
    Py_ssize_t w = 0, j = 0;
    while (j < np) {
        const piece_t *ref = NULL;
        Py_ssize_t k = j;
        for (; k < np && (ps[k].kind == -1 || ps[k].kind == 8); k++) {
            if (ps[k].kind == 8 && ref != NULL && !in_step(&ps[k], ref))
                break;
            ref = ref == NULL && ps[k].kind == 8 ? &ps[k] : ref;
        }
        piece_t m;
        if (ref != NULL && k - j >= 2 && merge_run(ps, j, k, ref, &m) == 0) {
            for (; j < k; j++)
                PyMem_Free(ps[j].cyc), PyMem_Free(ps[j].cycoff);
            ps[w++] = m;
            continue;
        }
        k = k > j ? k : j + 1; /* not merged: the run (or the one piece) as it is */
        for (; j < k; j++)
            ps[w++] = ps[j];
    }
    return w;
}

/* the pieces read and checked (their count in *np: fewer where runs were fused) */
static int read_pieces(PyObject *pieces, Py_ssize_t n, piece_t **out, Py_ssize_t *np) {
    *np = PyList_GET_SIZE(pieces);
    piece_t *ps = PyMem_Calloc(*np ? *np : 1, sizeof(piece_t));
    if (ps == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *out = ps;
    for (Py_ssize_t j = 0; j < *np; j++)
        if (read_piece(PyList_GET_ITEM(pieces, j), n, &ps[j]) < 0)
            return -1;
    if (n > 0)
        *np = fuse(ps, *np);
    return 0;
}

/* ---- rows: each piece's cell with the literals before it, row by row -------------------------- */

#define SLACK 64 /* bytes past a literal's end (and the output's) that a copy may read or write */

enum { CELL_ANY = 0, CELL_DOUBLE, CELL_INT }; /* how a column's cells are written: put_cell, or a number in place */

/* one column of the rows: a piece with the literals before it (and after it, for the last one) */
typedef struct {
    piece_t *p;            /* NULL: the literals alone (rows of no piece) */
    char *pre, *post;      /* owned copies of the literals, SLACK bytes more held */
    Py_ssize_t prelen, postlen;
    Py_ssize_t room;       /* bytes reserved before a cell: its literal, a number's text, SLACK */
    int how;               /* CELL_*: a number (kinds 5, 6) written in place */
} col_t;

typedef struct {
    col_t *cols;
    Py_ssize_t ncols;
    char *sep;             /* the row separator (an owned copy, SLACK bytes more held) */
    Py_ssize_t seplen;
} layout_t;

static void release_layout(layout_t *L) {
    for (Py_ssize_t c = 0; L->cols != NULL && c < L->ncols; c++) {
        PyMem_Free(L->cols[c].pre);
        PyMem_Free(L->cols[c].post);
    }
    PyMem_Free(L->cols);
    PyMem_Free(L->sep);
    L->cols = NULL, L->sep = NULL;
}

/* bytes s[0, k) as an owned copy with SLACK bytes more (zeros) */
static int padded(const char *s, Py_ssize_t k, char **out) {
    if ((*out = PyMem_Calloc(k + SLACK, 1)) == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    if (k)
        memcpy(*out, s, k);
    return 0;
}

/* the literals ps[a, b) joined into an owned copy (with SLACK bytes more) */
static int join_lits(const piece_t *ps, Py_ssize_t a, Py_ssize_t b, char **s, Py_ssize_t *k) {
    Py_ssize_t total = 0;
    for (Py_ssize_t j = a; j < b; j++)
        total += ps[j].litlen;
    *k = total;
    if ((*s = PyMem_Calloc(total + SLACK, 1)) == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t j = a, at = 0; j < b; at += ps[j].litlen, j++)
        memcpy(*s + at, ps[j].lit, ps[j].litlen);
    return 0;
}

/* a column's way of writing its cells and the room it reserves for one */
static void col_how(col_t *c) {
    const piece_t *p = c->p;
    c->how = p == NULL ? CELL_ANY : p->kind == 5 ? CELL_DOUBLE : p->kind == 6 ? CELL_INT : CELL_ANY;
    c->room = c->prelen + SLACK + (c->how != CELL_ANY ? DOUBLE_ROOM : 0);
}

/* the pieces as columns: each piece with the literals before it; the literals after the last
 * piece with it (a row of literals only: one column of no piece) */
static int make_layout(piece_t *ps, Py_ssize_t np, const Py_buffer *sep, layout_t *L) {
    memset(L, 0, sizeof(*L));
    Py_ssize_t a = 0;
    if ((L->cols = PyMem_Calloc(np + 1, sizeof(col_t))) == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t j = 0; j < np; j++) {
        if (ps[j].kind == -1)
            continue;
        col_t *c = &L->cols[L->ncols++];
        c->p = &ps[j];
        if (join_lits(ps, a, j, &c->pre, &c->prelen) < 0 || padded("", 0, &c->post) < 0)
            return -1;
        a = j + 1;
    }
    if (L->ncols == 0) { /* rows of literals only */
        L->ncols = 1;
        if (join_lits(ps, 0, np, &L->cols[0].pre, &L->cols[0].prelen) < 0 || padded("", 0, &L->cols[0].post) < 0)
            return -1;
    } else {
        col_t *last = &L->cols[L->ncols - 1];
        PyMem_Free(last->post);
        last->post = NULL;
        if (join_lits(ps, a, np, &last->post, &last->postlen) < 0)
            return -1;
    }
    for (Py_ssize_t c = 0; c < L->ncols; c++)
        col_how(&L->cols[c]);
    L->seplen = sep->len;
    return padded(sep->buf, sep->len, &L->sep);
}

/* k bytes from s to d, 32 at a time (both with SLACK bytes to spare) */
static INLINE void copy_cell(char *d, const char *s, Py_ssize_t k) {
    Py_ssize_t at = 0;
    do {
        memcpy(d + at, s + at, 16);
        memcpy(d + at + 16, s + at + 16, 16);
        at += 32;
    } while (at < k);
}

/* an int of 64 bits (checked when the piece was read) */
static INLINE long long list_i64(PyObject *v) {
#if PY_VERSION_HEX >= 0x030C0000
    if (PyLong_CheckExact(v) && PyUnstable_Long_IsCompact((PyLongObject *)v))
        return (long long)PyUnstable_Long_CompactValue((PyLongObject *)v);
#else
    Py_ssize_t size = Py_SIZE(v);
    if (PyLong_CheckExact(v) && size >= -1 && size <= 1)
        return size * (long long)((PyLongObject *)v)->ob_digit[0];
#endif
    return PyLong_AsLongLong(v);
}

/* row i's number of a CELL_DOUBLE or CELL_INT column at w (DOUBLE_ROOM bytes there): its length */
static INLINE int lay_number(char *w, const col_t *c, Py_ssize_t i) {
    const piece_t *p = c->p;
    Py_ssize_t at = p->lo + i;
    if (c->how == CELL_DOUBLE) {
        if (p->num == NUM_F64)
            return lay_double(w, ((const double *)p->view.buf)[at], p->style);
        PyObject *v = PyList_GET_ITEM(p->values, at);
        return PyFloat_CheckExact(v) ? lay_double(w, PyFloat_AS_DOUBLE(v), p->style) : num_type_error(5);
    }
    if (p->num)
        return lay_i64(w, buf_int(p, at));
    long long x = list_i64(PyList_GET_ITEM(p->values, at));
    return x == -1 && PyErr_Occurred() ? -1 : lay_i64(w, x);
}

/* row i's cell of a column, with its literals */
static INLINE int put_col(out_t *o, const col_t *c, Py_ssize_t i, Py_ssize_t n) {
    if (reserve(o, c->room) < 0)
        return -1;
    char *w = o->buf + o->len;
    copy_cell(w, c->pre, c->prelen);
    w += c->prelen;
    if (c->how != CELL_ANY) {
        int k = lay_number(w, c, i);
        if (k < 0)
            return -1;
        o->len = w + k - o->buf;
    } else {
        o->len = w - o->buf;
        if (c->p != NULL && put_cell(o, c->p, i, i == n - 1) < 0)
            return -1;
    }
    if (c->postlen == 0)
        return 0;
    if (reserve(o, c->postlen + SLACK) < 0)
        return -1;
    copy_cell(o->buf + o->len, c->post, c->postlen);
    o->len += c->postlen;
    return 0;
}

/* rows lo:hi (the separator before each but the very first row) */
static int put_rows(out_t *o, const layout_t *L, Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t n) {
    for (Py_ssize_t i = lo; i < hi; i++) {
        if (i && L->seplen) {
            if (reserve(o, L->seplen + SLACK) < 0)
                return -1;
            copy_cell(o->buf + o->len, L->sep, L->seplen);
            o->len += L->seplen;
        }
        for (Py_ssize_t c = 0; c < L->ncols; c++)
            if (put_col(o, &L->cols[c], i, n) < 0)
                return -1;
    }
    return reserve(o, SLACK); /* the output's bytes past its end written over: its buffer held */
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
    Py_ssize_t np;
    layout_t L = {0};
    if (read_pieces(pieces, n, &ps, &np) == 0 && make_layout(ps, np, &sep, &L) == 0 &&
        put_rows(&o, &L, 0, n, n) == 0)
        result = PyBytes_FromStringAndSize(o.buf ? o.buf : "", o.len);
    PyMem_Free(o.buf);
    release_layout(&L);
    release_pieces(ps, np);
    PyMem_Free(ps);
    PyBuffer_Release(&sep);
    return result;
}

/* one chunk to write(): a bytes copy, or (lend) a memoryview of the buffer released once write()
 * returns, so that a view it kept reads as released, never as the next chunk */
static int hand(PyObject *write, out_t *o, int lend) {
    PyObject *chunk = lend ? PyMemoryView_FromMemory(o->buf ? o->buf : "", o->len, PyBUF_READ)
                           : PyBytes_FromStringAndSize(o->buf, o->len);
    if (chunk == NULL)
        return -1;
    PyObject *r = PyObject_CallOneArg(write, chunk);
    if (lend) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb); /* write's own error, if any, kept over the release */
        PyObject *gone = PyObject_CallMethod(chunk, "release", NULL);
        if (gone == NULL) {
            Py_CLEAR(r);
            Py_XDECREF(type), Py_XDECREF(value), Py_XDECREF(tb);
        } else
            PyErr_Restore(type, value, tb);
        Py_XDECREF(gone);
    }
    Py_DECREF(chunk);
    if (r == NULL)
        return -1;
    Py_DECREF(r);
    return 0;
}

static PyObject *write_rows(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_ssize_t n, rows;
    PyObject *pieces, *write;
    Py_buffer sep;
    int lend = 0;
    if (!PyArg_ParseTuple(args, "nO!y*On|p", &n, &PyList_Type, &pieces, &sep, &write, &rows, &lend))
        return NULL;
    PyObject *result = NULL;
    piece_t *ps = NULL;
    Py_ssize_t np = 0;
    out_t o = {NULL, 0, 0};
    layout_t L = {0};
    if (rows < 1) {
        PyErr_SetString(PyExc_ValueError, "rows must be at least 1");
        goto done;
    }
    if (read_pieces(pieces, n, &ps, &np) < 0 || make_layout(ps, np, &sep, &L) < 0)
        goto done;
    for (Py_ssize_t lo = 0; lo < n; lo += rows) {
        o.len = 0;
        if (put_rows(&o, &L, lo, lo + rows < n ? lo + rows : n, n) < 0 ||
            hand(write, &o, lend) < 0)
            goto done;
    }
    result = Py_NewRef(Py_None);
done:
    PyMem_Free(o.buf);
    release_layout(&L);
    release_pieces(ps, np);
    PyMem_Free(ps);
    PyBuffer_Release(&sep);
    return result;
}

/* ---- scan ------------------------------------------------------------------------------------- */

static int same_double(double a, double b) {
    return (a != a && b != b) || memcmp(&a, &b, sizeof(a)) == 0; /* -0.0 is written otherwise than 0.0 */
}

static int list_class(PyObject *v) {
    if (PyFloat_CheckExact(v))
        return 1;
    if (PyLong_CheckExact(v)) {
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (x == -1 && PyErr_Occurred())
            PyErr_Clear();
        return overflow ? 0 : 2;
    }
    return v == Py_None || PyUnicode_CheckExact(v) ? 3 : 0;
}

static int list_same(PyObject *a, PyObject *b, int cls) {
    if (a == b)
        return 1;
    if (cls == 1)
        return same_double(PyFloat_AS_DOUBLE(a), PyFloat_AS_DOUBLE(b));
    if (cls == 2)
        return PyObject_RichCompareBool(a, b, Py_EQ) == 1;
    return a != Py_None && b != Py_None && PyUnicode_Compare(a, b) == 0;
}

static void scan_list(PyObject *col, Py_ssize_t lo, Py_ssize_t hi, int *cls, int *same) {
    PyObject *first = PyList_GET_ITEM(col, lo);
    PyTypeObject *t = Py_TYPE(first);
    *cls = list_class(first);
    *same = 1;
    for (Py_ssize_t i = lo + 1; i < hi && *cls; i++) {
        PyObject *v = PyList_GET_ITEM(col, i);
        if (v == first)
            continue;
        /* the first's type again: its class but for an int's size; str and None mix as texts */
        if (Py_TYPE(v) == t ? *cls == 2 && !is_i64(v) : list_class(v) != *cls)
            *cls = 0;
        else if (*same && !list_same(first, v, *cls))
            *same = 0;
    }
}

static void scan_buffer(const piece_t *p, Py_ssize_t lo, Py_ssize_t hi, int *cls, int *same) {
    *cls = p->num == NUM_F64 ? 1 : p->num ? 2 : 0;
    *same = 1;
    for (Py_ssize_t i = lo + 1; i < hi && *same && *cls; i++) {
        if (p->num == NUM_F64) {
            const double *d = (const double *)p->view.buf;
            *same = same_double(d[lo], d[i]);
        } else
            *same = buf_int(p, lo) == buf_int(p, i);
    }
}

static PyObject *scan(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *col;
    Py_ssize_t lo, hi;
    int cls = 0, same = 0;
    if (!PyArg_ParseTuple(args, "Onn", &col, &lo, &hi))
        return NULL;
    piece_t p;
    memset(&p, 0, sizeof(p));
    if (PyList_Check(col)) {
        if (lo < 0 || hi > PyList_GET_SIZE(col))
            return cell_error(), NULL;
        if (lo < hi)
            scan_list(col, lo, hi, &cls, &same);
    } else if (PyObject_GetBuffer(col, &p.view, PyBUF_FORMAT | PyBUF_ND) == 0) {
        p.num = num_kind(&p.view);
        if (lo < 0 || (p.view.itemsize && hi > p.view.len / p.view.itemsize)) {
            PyBuffer_Release(&p.view);
            return cell_error(), NULL;
        }
        if (lo < hi)
            scan_buffer(&p, lo, hi, &cls, &same);
        PyBuffer_Release(&p.view);
    } else
        PyErr_Clear(); /* not a list, not a buffer: anything else */
    return Py_BuildValue("(iO)", cls, same && cls ? Py_True : Py_False);
}

static PyObject *format_double(PyObject *Py_UNUSED(self), PyObject *args) {
    double x;
    int style;
    if (!PyArg_ParseTuple(args, "di", &x, &style))
        return NULL;
    out_t o = {NULL, 0, 0};
    PyObject *r = put_double(&o, x, style) < 0 ? NULL : PyBytes_FromStringAndSize(o.buf ? o.buf : "", o.len);
    PyMem_Free(o.buf);
    return r;
}

static PyMethodDef methods[] = {
    {"join", join, METH_VARARGS, "join(n, pieces, rowsep) -> bytes: n rows of the pieces' cells, joined."},
    {"write", write_rows, METH_VARARGS, "write(n, pieces, rowsep, write, rows[, lend]): join's bytes to write(), rows at a time."},
    {"scan", scan, METH_VARARGS, "scan(column, lo, hi) -> (kind, same): what rows lo:hi hold (see the module comment)."},
    {"format_double", format_double, METH_VARARGS, "format_double(x, style) -> bytes: the shortest text of x (0 JSON, 1 repr)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_rowjoin", NULL, -1, methods};

PyMODINIT_FUNC PyInit__rowjoin(void) {
    init_dig3();
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddIntConstant(m, "KINDS", 9) < 0) /* the piece kinds it writes: 0..8 */
        Py_CLEAR(m);
    return m;
}
