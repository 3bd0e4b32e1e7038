/* profconv.parse._kahan: the per-section work of profconv.parse.shares.share_rows in C.
 *
 * rank(section, profile, table, time_pct, total_ns, timed, threshold[, share, cumulative]) takes the
 * columns of the rows (sequences of one value per row) and gives (share, cumulative, in_top,
 * share_basis, notable): the four share columns as lists and the ranked sections worth a note
 * (several source tables, or ranked by Time(%)) as (profile, section, [row, ...]) in the order they
 * first appear. Where `share` and `cumulative` are given (writable buffers of one double a row, each
 * NaN: profconv.parse.shares passes arrays of doubles), those two columns are written there and
 * returned instead of lists: the same values, no float object a row.
 *
 * Every number is the pure-Python path's to the bit: the sums are Kahan-compensated exactly as
 * shares._kahan (pandas' groupby sum) takes them, in the same order, with no fused multiply-add
 * (setup.py builds with -ffp-contract=off), and the consistency test, the shares, the stable
 * descending sort and the cumulative shares are the same expressions in the same order. Rows whose
 * Time(%) or Time is not a Python float, or whose table is not an int or None, are the Python
 * path's: rank then returns None and the caller runs it (what Python does with such a value is
 * Python's to say). tests/test_native_kahan.py compares both paths bit for bit.
 *
 * rank_blocks(starts, time_pct, total_ns, threshold, share, cumulative[, merged[, top]]) is rank() of rows
 * whose (profile, section) groups are each one run of rows of one source table (a machine-written
 * nvprof --csv sweep: profconv.parse.dialects.nvprof.csv_sweep), or of several marked `merged` (an nsys
 * run's kernel and memory-operation tables: dialects/nsys_csv_sweep.py), given as the runs' first
 * rows: no group looked up, no list of sections, profiles or tables read; None where rank() would
 * note a group (tests/test_parse_nvprof_csv_sweep.py and tests/test_parse_nsys_csv_sweep.py compare
 * it with rank()).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_teddy.h"

#define PCT_TOLERANCE 5.0
#define RANK_SKIP 2  /* rank_blocks: a block not ranked (a section without times) */
#define RANK_CHECK 3 /* rank_blocks: a block only checked (ranked later as part of a merged group) */

/* pandas' compensated sum (shares._kahan): NaN skipped; a NaN compensation (an infinity) reset */
typedef struct {
    double total, comp;
} kahan_t;

/* one step of the compensated sum, a NaN added too (rank's running shares: the Python loop skips nothing);
 * the new total */
static inline double kahan_add_all(kahan_t *k, double v) {
    double y = v - k->comp;
    double t = k->total + y;
    double c = t - k->total;
    c = c - y;
    if (c != c)
        c = 0.0;
    k->comp = c;
    k->total = t;
    return t;
}

static inline void kahan_add(kahan_t *k, double v) {
    if (v != v)
        return;
    kahan_add_all(k, v);
}

typedef struct {
    PyObject *profile, *section; /* borrowed from the columns */
    Py_ssize_t count, start;     /* members: order[start : start + count] */
} group_t;

/* NAME(idx, tmp, n, key): a stable merge sort of idx[0:n] by key[idx] (equal keys keep their
 * order; tmp: n entries of scratch), where BEFORE(a, b) says that key a goes before key b. */
#define STABLE_SORT(NAME, KEY_T, BEFORE)                                                          \
    static void NAME(Py_ssize_t *idx, Py_ssize_t *tmp, Py_ssize_t n, const KEY_T *key) {          \
        if (n < 2)                                                                                \
            return;                                                                               \
        if (n <= 16) { /* insertion sort: an element moves only past keys it goes before */       \
            for (Py_ssize_t i = 1; i < n; i++) {                                                  \
                Py_ssize_t x = idx[i];                                                            \
                KEY_T kx = key[x];                                                                \
                Py_ssize_t j = i;                                                                 \
                while (j > 0 && BEFORE(kx, key[idx[j - 1]])) {                                    \
                    idx[j] = idx[j - 1];                                                          \
                    j--;                                                                          \
                }                                                                                 \
                idx[j] = x;                                                                       \
            }                                                                                     \
            return;                                                                               \
        }                                                                                         \
        Py_ssize_t h = n / 2;                                                                     \
        NAME(idx, tmp, h, key);                                                                   \
        NAME(idx + h, tmp, n - h, key);                                                           \
        Py_ssize_t a = 0, b = h, o = 0;                                                           \
        while (a < h && b < n) {                                                                  \
            if (BEFORE(key[idx[b]], key[idx[a]]))                                                 \
                tmp[o++] = idx[b++];                                                              \
            else                                                                                  \
                tmp[o++] = idx[a++];                                                              \
        }                                                                                         \
        while (a < h)                                                                             \
            tmp[o++] = idx[a++];                                                                  \
        while (b < n)                                                                             \
            tmp[o++] = idx[b++];                                                                  \
        memcpy(idx, tmp, n * sizeof(Py_ssize_t));                                                 \
    }

#define GREATER(a, b) ((a) > (b))
#define LESS(a, b) ((a) < (b))
/* sort_desc: by a double key, descending (the shares' ranking); sort_tab: by source table, ascending */
STABLE_SORT(sort_desc, double, GREATER)
STABLE_SORT(sort_tab, long long, LESS)

/* A list of n references to `v` */
static PyObject *filled(Py_ssize_t n, PyObject *v) {
    PyObject *out = PyList_New(n);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_INCREF(v);
        PyList_SET_ITEM(out, i, v);
    }
    return out;
}

/* A column of doubles: a list or tuple of Python floats (borrowed items), or an array('d') (its
 * buffer: indexing it in Python gives the same floats). 0: read; -1: something else (a NumPy array,
 * whose items are NumPy scalars: the caller leaves the column to Python). */
typedef struct {
    PyObject *fast;    /* list or tuple */
    Py_buffer view;    /* or a buffer */
    int has_view;
    Py_ssize_t n;
} dcol_t;

static int dcol_open(PyObject *obj, dcol_t *c) {
    c->fast = NULL;
    c->has_view = 0;
    if (PyList_CheckExact(obj) || PyTuple_CheckExact(obj)) {
        c->fast = obj;
        c->n = PySequence_Fast_GET_SIZE(obj);
        return 0;
    }
    if (strcmp(Py_TYPE(obj)->tp_name, "array.array") != 0 || !PyObject_CheckBuffer(obj))
        return -1;
    if (PyObject_GetBuffer(obj, &c->view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) {
        PyErr_Clear();
        return -1;
    }
    c->has_view = 1;
    if (c->view.format == NULL || strcmp(c->view.format, "d") != 0 || c->view.itemsize != sizeof(double)) {
        PyBuffer_Release(&c->view);
        c->has_view = 0;
        return -1;
    }
    c->n = c->view.len / (Py_ssize_t)sizeof(double);
    return 0;
}

static void dcol_close(dcol_t *c) {
    if (c->has_view)
        PyBuffer_Release(&c->view);
    c->has_view = 0;
}

/* the i-th double; 0, or -1 where it is not a Python float */
static inline int dcol_get(const dcol_t *c, Py_ssize_t i, double *out) {
    if (c->fast != NULL) {
        PyObject *v = PySequence_Fast_ITEMS(c->fast)[i];
        if (!PyFloat_CheckExact(v))
            return -1;
        *out = PyFloat_AS_DOUBLE(v);
        return 0;
    }
    *out = ((const double *)c->view.buf)[i];
    return 0;
}

/* A share column given as a writable buffer of n doubles (its view opened: 0; -1 with an error set) */
static int open_doubles(PyObject *obj, Py_buffer *view, Py_ssize_t n) {
    if (PyObject_GetBuffer(obj, view, PyBUF_WRITABLE | PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0)
        return -1;
    if (view->format == NULL || strcmp(view->format, "d") != 0 || view->len != n * (Py_ssize_t)sizeof(double)) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_ValueError, "rank: share and cumulative: writable doubles, one a row");
        return -1;
    }
    return 0;
}

/* Row i of a share column set to v: in its buffer (`d`), else in its list of floats; -1 on an error */
static int set_double(PyObject *col, double *d, Py_ssize_t i, double v) {
    if (d != NULL) {
        d[i] = v;
        return 0;
    }
    PyObject *f = PyFloat_FromDouble(v);
    if (f == NULL)
        return -1;
    PyObject *old = PyList_GET_ITEM(col, i);
    PyList_SET_ITEM(col, i, f);
    Py_DECREF(old);
    return 0;
}

/* The group of (profile pr, section s) among groups[0:n] while every profile so far was an int and
 * none came back after a later one: the newest profile's groups are groups[*from:n]; -1 where it
 * has none yet (a new group), -2 where pr is not an int above or at the newest (the caller's dict
 * then), -3 with an error set. */
static Py_ssize_t newest_group(const group_t *groups, Py_ssize_t n, long long *newest, Py_ssize_t *from, PyObject *pr,
                               PyObject *s) {
    if (!PyLong_CheckExact(pr))
        return -2;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(pr, &overflow);
    if (overflow || (v == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return -2;
    }
    if (v > *newest) {
        *newest = v;
        *from = n;
        return -1;
    }
    if (v < *newest)
        return -2;
    for (Py_ssize_t g = *from; g < n; g++) {
        int eq = groups[g].section == s ? 1 : PyObject_RichCompareBool(groups[g].section, s, Py_EQ);
        if (eq < 0)
            return -3;
        if (eq)
            return g;
    }
    return -1;
}

/* index[(profile, section)] = g: 0, or -1 with an error set */
static int index_group(PyObject *index, PyObject *profile, PyObject *section, Py_ssize_t g) {
    PyObject *k = PyTuple_Pack(2, profile, section), *v = PyLong_FromSsize_t(g);
    int r = k == NULL || v == NULL ? -1 : PyDict_SetItem(index, k, v);
    Py_XDECREF(k);
    Py_XDECREF(v);
    return r;
}

/* rank's state: its arguments, the columns it opened, its scratch and its outputs, all released by
 * rank_free (what is not made yet is NULL, or its flag 0) */
typedef struct {
    PyObject *section_o, *profile_o, *table_o, *pct_o, *tot_o, *timed; /* the arguments */
    double threshold, below;
    PyObject *share_o, *cum_o;
    Py_buffer share_v, cum_v;
    int share_open, cum_open;
    double *share_d, *cum_d;
    PyObject *section, *profile, *table; /* the columns as lists or tuples */
    dcol_t pcol, tcol;
    int pct_open, tot_open;
    Py_ssize_t n;
    PyObject *index, *share, *cum, *top, *basis, *notable;
    PyObject *nan, *s_pct, *s_tot;
    Py_ssize_t *gid, *order, *tmp;
    double *p, *t, *key, *sh;
    long long *tab;
    group_t *groups;
    Py_ssize_t ngroups, cap;
    int use_index;          /* the groups looked up in `index` (else among the newest profile's) */
    long long newest;       /* the newest int profile so far, its groups groups[newest_from:ngroups] */
    Py_ssize_t newest_from;
    int fallback;
} rank_t;

/* The columns opened: section, profile and table as lists or tuples, time_pct and total_ns as columns of
 * doubles; 0, or -1 with an error set or (a column of something else) the fallback */
static int rank_open(rank_t *r) {
    r->section = PySequence_Fast(r->section_o, "section: not a sequence");
    r->profile = r->section ? PySequence_Fast(r->profile_o, "profile: not a sequence") : NULL;
    r->table = r->profile ? PySequence_Fast(r->table_o, "table: not a sequence") : NULL;
    if (r->table == NULL)
        return -1;
    if (dcol_open(r->pct_o, &r->pcol) < 0) {
        r->fallback = 1;
        return -1;
    }
    r->pct_open = 1;
    if (dcol_open(r->tot_o, &r->tcol) < 0) {
        r->fallback = 1;
        return -1;
    }
    r->tot_open = 1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(r->section);
    r->n = n;
    if (PySequence_Fast_GET_SIZE(r->profile) != n || PySequence_Fast_GET_SIZE(r->table) != n || r->pcol.n != n ||
        r->tcol.n != n) {
        PyErr_SetString(PyExc_ValueError, "rank: columns of different lengths");
        return -1;
    }
    return 0;
}

/* rank's scratch, one entry a row, the share columns' buffers where they are given, and the dict of
 * groups; 0, or -1 with an error set */
static int rank_alloc(rank_t *r) {
    Py_ssize_t n = r->n, alloc = n ? n : 1;
    r->gid = PyMem_Malloc(alloc * sizeof(Py_ssize_t));
    r->order = PyMem_Malloc(alloc * sizeof(Py_ssize_t));
    r->tmp = PyMem_Malloc(alloc * sizeof(Py_ssize_t));
    r->p = PyMem_Malloc(alloc * sizeof(double));
    r->t = PyMem_Malloc(alloc * sizeof(double));
    r->key = PyMem_Malloc(alloc * sizeof(double));
    if (r->share_o != NULL && r->cum_o != NULL) { /* the shares written in place: no scratch for them either */
        if (open_doubles(r->share_o, &r->share_v, n) < 0)
            return -1;
        r->share_open = 1;
        if (open_doubles(r->cum_o, &r->cum_v, n) < 0)
            return -1;
        r->cum_open = 1;
        r->share_d = (double *)r->share_v.buf;
        r->cum_d = (double *)r->cum_v.buf;
    }
    r->sh = r->share_d != NULL ? r->share_d : PyMem_Malloc(alloc * sizeof(double));
    r->tab = PyMem_Malloc(alloc * sizeof(long long));
    r->index = PyDict_New();
    if (!r->gid || !r->order || !r->tmp || !r->p || !r->t || !r->key || !r->sh || !r->tab || !r->index) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* A new group (profile pr, section s, no members yet) after the others, in the dict where it is in use:
 * its index, or -1 with an error set */
static Py_ssize_t rank_new_group(rank_t *r, PyObject *pr, PyObject *s) {
    if (r->ngroups == r->cap) {
        Py_ssize_t nc = r->cap ? 2 * r->cap : 64;
        group_t *ng = PyMem_Realloc(r->groups, nc * sizeof(group_t));
        if (ng == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        r->groups = ng;
        r->cap = nc;
    }
    group_t *gr = &r->groups[r->ngroups];
    gr->profile = pr;
    gr->section = s;
    gr->count = 0;
    if (r->use_index && index_group(r->index, pr, s, r->ngroups) < 0)
        return -1;
    return r->ngroups++;
}

/* The group of (profile pr, section s), a new one where there is none yet: its index, or -1 with an
 * error set */
static Py_ssize_t rank_find_group(rank_t *r, PyObject *pr, PyObject *s) {
    Py_ssize_t g = r->use_index ? -1 : newest_group(r->groups, r->ngroups, &r->newest, &r->newest_from, pr, s);
    if (g == -3)
        return -1;
    if (g == -2) { /* a profile that is not the newest int: every group in the dict from now on */
        r->use_index = 1;
        for (Py_ssize_t k = 0; k < r->ngroups; k++)
            if (index_group(r->index, r->groups[k].profile, r->groups[k].section, k) < 0)
                return -1;
        g = -1;
    }
    if (r->use_index) {
        PyObject *k = PyTuple_Pack(2, pr, s);
        if (k == NULL)
            return -1;
        PyObject *v = PyDict_GetItemWithError(r->index, k);
        Py_DECREF(k);
        if (v == NULL && PyErr_Occurred())
            return -1;
        g = v == NULL ? -1 : PyLong_AsSsize_t(v);
    }
    if (g < 0) /* a new group */
        g = rank_new_group(r, pr, s);
    return g;
}

/* Row i's Time(%), Time and source table (c; None as -1) into p, t and tab: 0, or -1 where one is a value
 * only Python may take */
static inline int row_values(const dcol_t *pcol, const dcol_t *tcol, PyObject *c, Py_ssize_t i, double *p,
                             double *t, long long *tab) {
    if (dcol_get(pcol, i, &p[i]) < 0 || dcol_get(tcol, i, &t[i]) < 0)
        return -1; /* an int, a NumPy scalar, None...: what Python makes of it is Python's */
    if (c == Py_None) {
        tab[i] = -1;
    } else if (PyLong_CheckExact(c)) {
        int overflow = 0;
        tab[i] = PyLong_AsLongLongAndOverflow(c, &overflow);
        if (overflow || (tab[i] == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return -1;
        }
    } else {
        return -1;
    }
    return 0;
}

/* 1. the timed rows, their (profile, section) group (first appearance order) and values; while
 * the profiles are ints that only rise, a row's group is looked for among the newest profile's
 * groups alone (no key made and hashed), else in a dict by (profile, section). 0, or -1 with an
 * error set or the fallback */
static int rank_group_rows(rank_t *r) {
    PyObject **sec_v = PySequence_Fast_ITEMS(r->section), **prof_v = PySequence_Fast_ITEMS(r->profile);
    PyObject **tab_v = PySequence_Fast_ITEMS(r->table);
    PyObject *timed = r->timed, *last_sec = NULL, *last_prof = NULL;
    Py_ssize_t n = r->n, *gid = r->gid, last_gid = -1;
    double *p = r->p, *t = r->t;
    long long *tab = r->tab;
    group_t *last = NULL; /* groups[last_gid] (the groups move only where one is added) */
    int last_timed = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *s = sec_v[i];
        if (s != last_sec) {
            int k = PySequence_Contains(timed, s);
            if (k < 0)
                return -1;
            last_sec = s;
            last_timed = k;
            last_prof = NULL; /* a new section: look the group up */
        }
        if (!last_timed) {
            gid[i] = -1;
            continue;
        }
        PyObject *pr = prof_v[i];
        if (pr != last_prof) {
            last_gid = rank_find_group(r, pr, s);
            if (last_gid < 0)
                return -1;
            last = &r->groups[last_gid];
            last_prof = pr;
        }
        gid[i] = last_gid;
        last->count++;
        if (row_values(&r->pcol, &r->tcol, tab_v[i], i, p, t, tab) < 0) {
            r->fallback = 1;
            return -1;
        }
    }
    return 0;
}

/* 2. each group's members in row order */
static void rank_order(rank_t *r) {
    group_t *groups = r->groups;
    Py_ssize_t off = 0, *gid = r->gid, *order = r->order;
    for (Py_ssize_t g = 0; g < r->ngroups; g++) {
        groups[g].start = off;
        off += groups[g].count;
        groups[g].count = 0;
    }
    for (Py_ssize_t i = 0; i < r->n; i++) {
        Py_ssize_t g = gid[i];
        if (g >= 0)
            order[groups[g].start + groups[g].count++] = i;
    }
}

/* 3. outputs, missing where a row is not ranked; 0, or -1 with an error set */
static int rank_outputs(rank_t *r) {
    r->nan = PyFloat_FromDouble(Py_NAN);
    r->s_pct = PyUnicode_InternFromString("time_pct");
    r->s_tot = PyUnicode_InternFromString("total_ns");
    if (!r->nan || !r->s_pct || !r->s_tot)
        return -1;
    if (r->share_d != NULL) {
        r->share = r->share_o;
        r->cum = r->cum_o;
        Py_INCREF(r->share);
        Py_INCREF(r->cum);
    } else {
        r->share = filled(r->n, r->nan);
        r->cum = filled(r->n, r->nan);
    }
    r->top = filled(r->n, Py_None);
    r->basis = filled(r->n, Py_None);
    r->notable = PyList_New(0);
    if (!r->share || !r->cum || !r->top || !r->basis || !r->notable)
        return -1;
    r->below = r->threshold - 1e-12;
    return 0;
}

/* Whether the rows bt[a:b] of one source table contradict their Time(%): where two or more have both
 * values, some row's time as a share of theirs (scaled to their Time(%) sum) off its Time(%) by more
 * than PCT_TOLERANCE */
static inline int table_contradicts(const double *p, const double *t, const Py_ssize_t *bt, Py_ssize_t a,
                                    Py_ssize_t b) {
    kahan_t ts = {0.0, 0.0}, ps = {0.0, 0.0};
    Py_ssize_t nboth = 0;
    for (Py_ssize_t j = a; j < b; j++) {
        Py_ssize_t i = bt[j];
        if (p[i] == p[i] && t[i] == t[i]) {
            nboth++;
            kahan_add(&ts, t[i]);
            kahan_add(&ps, p[i]);
        }
    }
    double tsum = ts.total, psum = ps.total;
    if (nboth >= 2 && tsum > 0 && psum >= 50.0) {
        for (Py_ssize_t j = a; j < b; j++) {
            Py_ssize_t i = bt[j];
            if (!(p[i] == p[i] && t[i] == t[i]))
                continue;
            double implied = 100.0 * t[i];
            implied = implied / tsum;
            double scale = psum / 100.0;
            implied = implied * scale;
            if (fabs(p[i] - implied) > PCT_TOLERANCE)
                return 1;
        }
    }
    return 0;
}

/* The consistency test per source table (None counts as -1), in row order within a table, of a group's
 * cnt members m: whether a table contradicts its Time(%), and its number of tables in *n_tables (bt: the
 * members sorted by table, scratch: the sort's) */
static int group_tables(const rank_t *r, const Py_ssize_t *m, Py_ssize_t *bt, Py_ssize_t *scratch,
                             Py_ssize_t cnt, Py_ssize_t *n_tables) {
    const long long *tab = r->tab;
    memcpy(bt, m, cnt * sizeof(Py_ssize_t));
    sort_tab(bt, scratch, cnt, tab);
    int any_bad = 0;
    Py_ssize_t tables = 0;
    for (Py_ssize_t a = 0; a < cnt;) {
        Py_ssize_t b = a + 1;
        while (b < cnt && tab[bt[b]] == tab[bt[a]])
            b++;
        tables++;
        if (!any_bad)
            any_bad = table_contradicts(r->p, r->t, bt, a, b);
        a = b;
    }
    *n_tables = tables;
    return any_bad;
}

/* Whether a group (its cnt members m) is ranked by Time(%): it has no times, or it is one source table
 * whose times contradict (any_bad) two or more printed Time(%) */
static inline int ranked_by_pct(const double *p, const double *t, const Py_ssize_t *m, Py_ssize_t cnt,
                                Py_ssize_t n_tables, int any_bad) {
    int has_time = 0;
    Py_ssize_t n_pct = 0;
    for (Py_ssize_t j = 0; j < cnt; j++) {
        Py_ssize_t i = m[j];
        if (t[i] == t[i])
            has_time = 1;
        if (p[i] == p[i])
            n_pct++;
    }
    return !has_time || (n_tables <= 1 && n_pct >= 2 && any_bad);
}

/* A group's keys (its Time(%) where by_pct, else its times; NaN as 0), its shares of their sum (in the
 * share list where there is one) and its share_basis; 0, or -1 with an error set */
static int group_shares(rank_t *r, const Py_ssize_t *m, Py_ssize_t cnt, int by_pct) {
    const double *src = by_pct ? r->p : r->t;
    double *key = r->key, *sh = r->sh;
    kahan_t ks = {0.0, 0.0};
    for (Py_ssize_t j = 0; j < cnt; j++) {
        Py_ssize_t i = m[j];
        double v = src[i];
        key[i] = v == v ? v : 0.0;
        kahan_add(&ks, key[i]);
    }
    double total = ks.total;
    PyObject *how = by_pct ? r->s_pct : r->s_tot, *share = r->share, *basis = r->basis;
    int in_place = r->share_d != NULL;
    for (Py_ssize_t j = 0; j < cnt; j++) {
        Py_ssize_t i = m[j];
        sh[i] = total > 0 ? key[i] / total : 0.0;
        if (!in_place && set_double(share, NULL, i, sh[i]) < 0)
            return -1;
        PyObject *old = PyList_GET_ITEM(basis, i);
        Py_INCREF(how);
        PyList_SET_ITEM(basis, i, how);
        Py_DECREF(old);
    }
    return 0;
}

/* A group's cumulative shares down its keys' stable descending order, and its in_top (bt: the members
 * sorted, scratch: the sort's); 0, or -1 with an error set */
static int group_cumulative(rank_t *r, const Py_ssize_t *m, Py_ssize_t *bt, Py_ssize_t *scratch, Py_ssize_t cnt) {
    /* stable: file order among equal keys */
    memcpy(bt, m, cnt * sizeof(Py_ssize_t));
    sort_desc(bt, scratch, cnt, r->key);
    const double *sh = r->sh;
    double below = r->below, *cum_d = r->cum_d;
    PyObject *cum = r->cum, *top = r->top;
    kahan_t acc = {0.0, 0.0};
    for (Py_ssize_t j = 0; j < cnt; j++) {
        Py_ssize_t i = bt[j];
        double s = kahan_add_all(&acc, sh[i]);
        if (set_double(cum, cum_d, i, s) < 0)
            return -1;
        PyObject *b = ((s - sh[i]) < below && sh[i] > 0) ? Py_True : Py_False;
        Py_INCREF(b);
        PyObject *old = PyList_GET_ITEM(top, i);
        PyList_SET_ITEM(top, i, b);
        Py_DECREF(old);
    }
    return 0;
}

/* A group noted: (profile, section, [row, ...]) of its members m appended to notable; 0, or -1 with an
 * error set */
static int group_note(rank_t *r, const group_t *gr, const Py_ssize_t *m) {
    Py_ssize_t cnt = gr->count;
    PyObject *rows = PyList_New(cnt);
    if (rows == NULL)
        return -1;
    for (Py_ssize_t j = 0; j < cnt; j++) {
        PyObject *v = PyLong_FromSsize_t(m[j]);
        if (v == NULL) {
            Py_DECREF(rows);
            return -1;
        }
        PyList_SET_ITEM(rows, j, v);
    }
    PyObject *item = Py_BuildValue("(OON)", gr->profile, gr->section, rows);
    if (item == NULL || PyList_Append(r->notable, item) < 0) {
        Py_XDECREF(item);
        return -1;
    }
    Py_DECREF(item);
    return 0;
}

/* Group g ranked: its shares, share_basis, cumulative shares and in_top set, and it noted where it has
 * several source tables or is ranked by Time(%); 0, or -1 with an error set */
static int rank_group(rank_t *r, Py_ssize_t g) {
    const group_t *gr = &r->groups[g];
    Py_ssize_t *m = r->order + gr->start, cnt = gr->count;
    Py_ssize_t *bt = r->tmp + gr->start;      /* a scratch slice of the group's own size */
    Py_ssize_t *scratch = r->gid + gr->start; /* gid is done with: its slice is merge scratch */
    Py_ssize_t n_tables;
    int any_bad = group_tables(r, m, bt, scratch, cnt, &n_tables);
    int by_pct = ranked_by_pct(r->p, r->t, m, cnt, n_tables, any_bad);
    if (group_shares(r, m, cnt, by_pct) < 0 || group_cumulative(r, m, bt, scratch, cnt) < 0)
        return -1;
    if ((n_tables > 1 || by_pct) && group_note(r, gr, m) < 0)
        return -1;
    return 0;
}

/* rank's steps in turn: its result, or NULL where one fails (an error set, or the fallback) */
static PyObject *rank_run(rank_t *r) {
    if (rank_open(r) < 0 || rank_alloc(r) < 0 || rank_group_rows(r) < 0)
        return NULL;
    rank_order(r);
    if (rank_outputs(r) < 0)
        return NULL;
    for (Py_ssize_t g = 0; g < r->ngroups; g++)
        if (rank_group(r, g) < 0)
            return NULL;
    return PyTuple_Pack(5, r->share, r->cum, r->top, r->basis, r->notable);
}

/* rank's result (None for the fallback where no error is set), all that r holds released */
static PyObject *rank_free(rank_t *r, PyObject *result) {
    if (r->fallback && result == NULL && !PyErr_Occurred()) {
        result = Py_None;
        Py_INCREF(result);
    }
    Py_XDECREF(r->section);
    Py_XDECREF(r->profile);
    Py_XDECREF(r->table);
    if (r->pct_open)
        dcol_close(&r->pcol);
    if (r->tot_open)
        dcol_close(&r->tcol);
    Py_XDECREF(r->index);
    Py_XDECREF(r->share);
    Py_XDECREF(r->cum);
    Py_XDECREF(r->top);
    Py_XDECREF(r->basis);
    Py_XDECREF(r->notable);
    Py_XDECREF(r->nan);
    Py_XDECREF(r->s_pct);
    Py_XDECREF(r->s_tot);
    PyMem_Free(r->gid);
    PyMem_Free(r->order);
    PyMem_Free(r->tmp);
    PyMem_Free(r->p);
    PyMem_Free(r->t);
    PyMem_Free(r->key);
    if (r->sh != r->share_d)
        PyMem_Free(r->sh);
    if (r->share_open)
        PyBuffer_Release(&r->share_v);
    if (r->cum_open)
        PyBuffer_Release(&r->cum_v);
    PyMem_Free(r->tab);
    PyMem_Free(r->groups);
    return result;
}

static PyObject *rank(PyObject *self, PyObject *args) {
    rank_t r;
    memset(&r, 0, sizeof r);
    r.newest = LLONG_MIN;
    if (!PyArg_ParseTuple(args, "OOOOOOd|OO:rank", &r.section_o, &r.profile_o, &r.table_o, &r.pct_o, &r.tot_o,
                          &r.timed, &r.threshold, &r.share_o, &r.cum_o))
        return NULL;
    return rank_free(&r, rank_run(&r));
}

/* rank_blocks' in_top: a list (a bool a row written, the item it held let go), or a writable buffer of a
 * byte a row (0 False, 1 True written; a row not ranked keeps its byte: 2 for None, colviews.Coded's) */
typedef struct {
    PyObject *list;
    unsigned char *codes;
} top_t;

static inline void top_set(const top_t *top, Py_ssize_t i, int in) {
    if (top->codes != NULL) {
        top->codes[i] = (unsigned char)in;
        return;
    }
    PyObject *was = PyList_GET_ITEM(top->list, i), *now = in ? Py_True : Py_False;
    Py_INCREF(now);
    PyList_SET_ITEM(top->list, i, now);
    Py_DECREF(was);
}

/* One group of rank_blocks (rows a .. b - 1, one source table, or several where `merged`): whether
 * rank() would note it (ranked by Time(%): it has no times, or it is one table whose times contradict
 * its printed Time(%)) -- its shares not set then -- else its shares, cumulative shares and in_top set
 * as rank() sets them (`key`, `idx`, `tmp`: scratch) */
static int rank_block(const double *p, const double *t, Py_ssize_t a, Py_ssize_t b, int merged, double below,
                      double *sh, double *cum, const top_t *top, double *key, Py_ssize_t *idx, Py_ssize_t *tmp) {
    int check_only = merged == RANK_CHECK;
    merged = merged == 1;
    Py_ssize_t cnt = b - a, nboth = 0, n_pct = 0;
    int any_bad = 0, has_time = 0;
    kahan_t ts = {0.0, 0.0}, ps = {0.0, 0.0};
    for (Py_ssize_t i = a; i < b; i++) {
        has_time |= t[i] == t[i];
        n_pct += p[i] == p[i];
        if (p[i] == p[i] && t[i] == t[i]) {
            nboth++;
            kahan_add(&ts, t[i]);
            kahan_add(&ps, p[i]);
        }
    }
    double tsum = ts.total, psum = ps.total;
    if (!merged && nboth >= 2 && tsum > 0 && psum >= 50.0)
        for (Py_ssize_t i = a; i < b && !any_bad; i++) {
            if (!(p[i] == p[i] && t[i] == t[i]))
                continue;
            double implied = 100.0 * t[i];
            implied = implied / tsum;
            double scale = psum / 100.0;
            implied = implied * scale;
            any_bad = fabs(p[i] - implied) > PCT_TOLERANCE;
        }
    if (!has_time || (n_pct >= 2 && any_bad))
        return 1;
    if (check_only)
        return 0;
    double total = tsum;
    if (nboth == cnt) { /* every row's time and Time(%) there: the sum of the keys is tsum, the same values
                         * added in the same order */
        memcpy(key, t + a, (size_t)cnt * sizeof(double));
    } else {
        kahan_t ks = {0.0, 0.0};
        for (Py_ssize_t i = a; i < b; i++) {
            key[i - a] = t[i] == t[i] ? t[i] : 0.0;
            kahan_add(&ks, key[i - a]);
        }
        total = ks.total;
    }
    for (Py_ssize_t j = 0; j < cnt; j++) {
        sh[a + j] = total > 0 ? key[j] / total : 0.0;
        idx[j] = j;
    }
    sort_desc(idx, tmp, cnt, key); /* (the block's own positions: its scratch the size of the biggest block) */
    kahan_t acc = {0.0, 0.0};
    for (Py_ssize_t j = 0; j < cnt; j++) {
        Py_ssize_t i = a + idx[j];
        double s = kahan_add_all(&acc, sh[i]);
        cum[i] = s;
        top_set(top, i, (s - sh[i]) < below && sh[i] > 0);
    }
    return 0;
}

/* rank_blocks' arguments checked: the biggest block's rows (1 where none), or -1 with ValueError set */
static Py_ssize_t blocks_checked(const Py_buffer *sb, const Py_buffer *pb, const Py_buffer *tb, const Py_buffer *shb,
                                 const Py_buffer *cb, const Py_buffer *mb, Py_ssize_t tops) {
    Py_ssize_t n = pb->len / (Py_ssize_t)sizeof(double), nb = sb->len / (Py_ssize_t)sizeof(int64_t), most = 1;
    const int64_t *starts = sb->buf;
    int ok = tb->len == pb->len && shb->len == pb->len && cb->len == pb->len && (nb ? starts[0] == 0 : n == 0) &&
             (mb->buf == NULL || mb->len == nb) && (tops < 0 || tops == n);
    for (Py_ssize_t k = 0; ok && k < nb; k++) {
        Py_ssize_t end = k + 1 < nb ? (Py_ssize_t)starts[k + 1] : n;
        ok = starts[k] < end;
        most = ok && end - (Py_ssize_t)starts[k] > most ? end - (Py_ssize_t)starts[k] : most;
    }
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "rank_blocks: starts rising from 0 below the rows; columns and top of one "
                                          "length; merged a byte a group");
        return -1;
    }
    return most;
}

/* rank_blocks' `top` given (a list, or a writable buffer: its view in *tv) into *top: its length, -1 where none
 * was given, -2 with TypeError set where it is neither */
static Py_ssize_t top_given(PyObject *given, top_t *top, Py_buffer *tv) {
    if (given == NULL)
        return -1;
    if (PyList_Check(given)) {
        top->list = given;
        return PyList_GET_SIZE(given);
    }
    if (PyObject_GetBuffer(given, tv, PyBUF_WRITABLE) < 0) {
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError, "rank_blocks: top a list or a writable buffer of a byte a row");
        return -2;
    }
    top->codes = tv->buf;
    return tv->len;
}

/* rank_blocks(starts, time_pct, total_ns, threshold, share, cumulative[, merged[, top]]): rank() of rows whose
 * (profile, section) groups are each one run of rows of one source table, every section timed --
 * group k rows starts[k] .. starts[k + 1] - 1 (starts: int64, the first 0), the columns buffers of
 * doubles (share and cumulative written) -- giving in_top (a list; share_basis is "total_ns"
 * throughout), or None where rank() would note a group (ranked by Time(%)). `merged` (bytes, one a
 * group): group k is the rows of several source tables where merged[k] is 1 (ranked by their
 * times whatever their Time(%), as rank() ranks such a group), rows not ranked where it is 2 (RANK_SKIP:
 * a section without times, nsys's memory sizes: their share, cumulative and in_top left as they are),
 * checked but not ranked where it is 3 (RANK_CHECK: a block a later call ranks as part of a merged group;
 * None where rank() would note it alone, its rows left as they are).
 * `top` (a list, one item a row; or a writable buffer of a byte a row: 0 False, 1 True, a row not ranked
 * keeping its byte: RANK_TOP_CODES says a build takes one): in_top written into it (the rows not ranked
 * keep theirs) and it given back, rather than a new list of None -- a second call over the groups of a
 * first call's blocks ranks only the merged ones, the others RANK_SKIP and kept as the first call ranked them.
 * The same expressions in the same order as rank()'s (tests compare both). */
static PyObject *rank_blocks(PyObject *self, PyObject *args) {
    Py_buffer sb, pb, tb, shb, cb, mb = {0}, tv = {0};
    double threshold;
    PyObject *given = NULL, *made = NULL, *out = NULL;
    if (!PyArg_ParseTuple(args, "y*y*y*dw*w*|y*O:rank_blocks", &sb, &pb, &tb, &threshold, &shb, &cb, &mb, &given))
        return NULL;
    const unsigned char *merged = mb.buf;
    Py_ssize_t n = pb.len / (Py_ssize_t)sizeof(double), nb = sb.len / (Py_ssize_t)sizeof(int64_t);
    const int64_t *starts = sb.buf;
    top_t top = {NULL, NULL};
    double *key = NULL;
    Py_ssize_t *idx = NULL, *tmp = NULL, tops = top_given(given, &top, &tv);
    Py_ssize_t most = tops == -2 ? -1 : blocks_checked(&sb, &pb, &tb, &shb, &cb, &mb, tops);
    if (most < 0)
        goto done;
    /* scratch the size of the biggest block (a sweep's: a few rows), not of all rows: no new pages a call */
    key = PyMem_Malloc((size_t)most * sizeof(double));
    idx = PyMem_Malloc((size_t)most * sizeof(Py_ssize_t)), tmp = PyMem_Malloc((size_t)most * sizeof(Py_ssize_t));
    if (key == NULL || idx == NULL || tmp == NULL || (tops < 0 && (top.list = made = filled(n, Py_None)) == NULL)) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t k = 0; k < nb; k++)
        if ((merged == NULL || merged[k] != RANK_SKIP) &&
            rank_block(pb.buf, tb.buf, (Py_ssize_t)starts[k], k + 1 < nb ? (Py_ssize_t)starts[k + 1] : n,
                       merged != NULL ? merged[k] : 0, threshold - 1e-12, shb.buf, cb.buf, &top, key, idx, tmp)) {
            out = Py_NewRef(Py_None);
            goto done;
        }
    out = Py_NewRef(made != NULL ? made : given);
done:
    Py_XDECREF(made);
    PyMem_Free(key);
    PyMem_Free(idx);
    PyMem_Free(tmp);
    PyBuffer_Release(&sb);
    PyBuffer_Release(&pb);
    PyBuffer_Release(&tb);
    PyBuffer_Release(&shb);
    PyBuffer_Release(&cb);
    if (mb.obj != NULL)
        PyBuffer_Release(&mb);
    if (tv.obj != NULL)
        PyBuffer_Release(&tv);
    return out;
}

/* plausible(total_ns, calls, avg_ns): True where every row's printed total is within 1% of calls x
 * average, as core._any_inconsistent's first test takes it (`c is not None and abs(t - c * a) <=
 * 0.01 * t`, the int calls made a double as Python's float multiplication makes it); False where
 * some row is not, or is not plainly a float/int row: core's Python test then looks at each. */
static PyObject *plausible(PyObject *self, PyObject *args) {
    PyObject *tot_o, *calls_o, *avg_o;
    if (!PyArg_ParseTuple(args, "OOO:plausible", &tot_o, &calls_o, &avg_o))
        return NULL;
    if (!PyList_CheckExact(calls_o) && !PyTuple_CheckExact(calls_o))
        Py_RETURN_FALSE;
    dcol_t tot, avg;
    if (dcol_open(tot_o, &tot) < 0)
        Py_RETURN_FALSE;
    if (dcol_open(avg_o, &avg) < 0) {
        dcol_close(&tot);
        Py_RETURN_FALSE;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(calls_o);
    PyObject **calls = PySequence_Fast_ITEMS(calls_o);
    int ok = tot.n == n && avg.n == n;
    for (Py_ssize_t i = 0; ok && i < n; i++) {
        double t, a;
        PyObject *c = calls[i];
        if (!PyLong_CheckExact(c) || dcol_get(&tot, i, &t) < 0 || dcol_get(&avg, i, &a) < 0) {
            ok = 0;
            break;
        }
        double cd = PyLong_AsDouble(c);
        if (cd == -1.0 && PyErr_Occurred()) { /* beyond a double: Python's own test says what */
            PyErr_Clear();
            ok = 0;
            break;
        }
        double prod = cd * a;
        double diff = t - prod;
        double bound = 0.01 * t;
        if (!(fabs(diff) <= bound))
            ok = 0;
    }
    dcol_close(&tot);
    dcol_close(&avg);
    return PyBool_FromLong(ok);
}

/* Whether a needle of nd is in one of the nr ranges r (int64 pairs a, b: t[a:b]) of t[0:n], each looked in on
 * its own: 1 or 0, -1 with an error set where a range is outside the text */
static int find_in_ranges(const needles_t *nd, const unsigned char *t, Py_ssize_t n, const int64_t *r,
                          Py_ssize_t nr) {
    for (Py_ssize_t k = 0; k < nr; k++) {
        if (r[2 * k] < 0 || r[2 * k] > r[2 * k + 1] || r[2 * k + 1] > n) {
            PyErr_SetString(PyExc_ValueError, "find_any: a range outside the text");
            return -1;
        }
        if (find_in(nd, t + r[2 * k], (Py_ssize_t)(r[2 * k + 1] - r[2 * k]), n - (Py_ssize_t)r[2 * k]))
            return 1;
    }
    return 0;
}

/* find_any(text, needles[, ranges]): whether any of the needles (a tuple of ASCII str of 2 characters or
 * more, 64 at most) is in text (a str, or bytes: their ASCII bytes looked for), as `any(m in text for
 * m in needles)` says, by one pass over the text
 * (32 places a step where the CPU has AVX2, else a place a step: its two bytes looked up in the
 * needles' first two); None where the text is not of one byte a character or a needle is not such
 * a str (the caller asks Python). With `ranges` (bytes of int64 pairs, each 0 <= a <= b <= len), text
 * may be any buffer of bytes and each text[a:b] is looked in on its own, as the ranges joined by a byte
 * no needle holds would be (a sweep's gaps between its tables, not copied out of the chunk first). */
static PyObject *find_any(PyObject *self, PyObject *args) {
    PyObject *text, *needles, *out = NULL;
    Py_buffer rb = {0}, tb = {0};
    if (!PyArg_ParseTuple(args, "OO!|y*:find_any", &text, &PyTuple_Type, &needles, &rb))
        return NULL;
    const unsigned char *t;
    Py_ssize_t n;
    if (rb.obj != NULL) {
        if (rb.len % 16 || PyObject_GetBuffer(text, &tb, PyBUF_SIMPLE) < 0) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "find_any: ranges int64 pairs");
            goto done;
        }
        t = tb.buf, n = tb.len;
    } else if (PyBytes_Check(text)) {
        t = (const unsigned char *)PyBytes_AS_STRING(text), n = PyBytes_GET_SIZE(text);
    } else if (PyUnicode_Check(text)) {
#if PY_VERSION_HEX < 0x030C0000
        if (PyUnicode_READY(text) < 0)
            goto done;
#endif
        if (PyUnicode_KIND(text) != PyUnicode_1BYTE_KIND) {
            out = Py_NewRef(Py_None);
            goto done;
        }
        t = PyUnicode_1BYTE_DATA(text), n = PyUnicode_GET_LENGTH(text);
    } else {
        PyErr_SetString(PyExc_TypeError, "find_any: text a str or bytes");
        goto done;
    }
    needles_t nd;
    int ok = needles_read(needles, &nd);
    if (ok <= 0) {
        if (ok == 0)
            out = Py_NewRef(Py_None);
        goto done;
    }
    if (PyTuple_GET_SIZE(needles) == 0) {
        out = Py_NewRef(Py_False);
        goto done;
    }
    if (rb.obj == NULL) {
        out = PyBool_FromLong(find_in(&nd, t, n, n));
        goto done;
    }
    int found = find_in_ranges(&nd, t, n, rb.buf, rb.len / 16);
    if (found >= 0)
        out = Py_NewRef(found ? Py_True : Py_False);
done:
    if (tb.obj != NULL)
        PyBuffer_Release(&tb);
    if (rb.obj != NULL)
        PyBuffer_Release(&rb);
    return out;
}

static PyMethodDef methods[] = {
    {"find_any", find_any, METH_VARARGS,
     "find_any(text, needles[, ranges]) -> whether any needle is in text (one pass; with ranges, in each of "
     "those of text), or None (ask Python)"},
    {"plausible", plausible, METH_VARARGS,
     "plausible(total_ns, calls, avg_ns) -> True where every row's total is within 1% of calls x average "
     "(core._any_inconsistent's first test), else False (look at each row)"},
    {"rank", rank, METH_VARARGS,
     "rank(section, profile, table, time_pct, total_ns, timed, threshold[, share, cumulative]) -> (share, cumulative, in_top, "
     "share_basis, notable) or None (values only Python may take: run the Python path)"},
    {"rank_blocks", rank_blocks, METH_VARARGS,
     "rank_blocks(starts, time_pct, total_ns, threshold, share, cumulative[, merged[, top]]) -> in_top, or None: "
     "rank() of rows whose groups are runs of one table, or of several where merged (a byte a group) says so (share, "
     "cumulative and top, where given, written)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_kahan", "share_rows' per-section work (profconv.parse.shares), bit for bit.", -1,
    methods,
};

PyMODINIT_FUNC PyInit__kahan(void) {
    PyObject *m = PyModule_Create(&module);
    /* rank_blocks leaves a group whose `merged` byte is RANK_SKIP unranked: callers check for it */
    if (m != NULL && PyModule_AddIntConstant(m, "RANK_SKIP", RANK_SKIP) < 0)
        Py_CLEAR(m);
    /* rank_blocks writes in_top into a buffer of a byte a row where given one (callers check for it) */
    if (m != NULL && PyModule_AddIntConstant(m, "RANK_TOP_CODES", 1) < 0)
        Py_CLEAR(m);
    /* rank_blocks only checks a group whose `merged` byte is RANK_CHECK (callers check for it) */
    if (m != NULL && PyModule_AddIntConstant(m, "RANK_CHECK", RANK_CHECK) < 0)
        Py_CLEAR(m);
    /* find_any takes bytes too (callers check for it: an older build takes str only) */
    if (m != NULL && PyModule_AddIntConstant(m, "FIND_ANY_RANGES", 1) < 0)
        Py_CLEAR(m);
    if (m != NULL && PyModule_AddIntConstant(m, "FIND_ANY_BYTES", 1) < 0)
        Py_CLEAR(m);
    /* rank_blocks takes a `top` list to write into (callers check for it: an older build does not) */
    if (m != NULL && PyModule_AddIntConstant(m, "RANK_TOP_GIVEN", 1) < 0)
        Py_CLEAR(m);
    return m;
}
