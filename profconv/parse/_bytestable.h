/* Byte strings numbered by content, shared by _bytescan.c (a trace's base names) and _summarycells.c
 * (a sweep's names): an open-addressing table of (offset, length, hash) -> code over one buffer, codes
 * in order of first appearance, each distinct string made a str once and appended to `strs` (so
 * strs[code] is its text). No str is made for a string met before. */
#ifndef PROFCONV_BYTESTABLE_H
#define PROFCONV_BYTESTABLE_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    Py_ssize_t at, len;
    uint64_t hash;
    int64_t code;
} bt_slot;

typedef struct {
    bt_slot *slots;
    Py_ssize_t cap, used, first; /* first: the capacity of the first allocation (a power of two) */
    PyObject *strs;
} bytes_table;

/* 0 with t ready (an empty list in strs), -1 with an error set. */
static int bt_init(bytes_table *t, Py_ssize_t first) {
    *t = (bytes_table){NULL, 0, 0, first, PyList_New(0)};
    return t->strs == NULL ? -1 : 0;
}

static void bt_free(bytes_table *t) {
    Py_CLEAR(t->strs);
    PyMem_Free(t->slots);
    t->slots = NULL;
}

static uint64_t bytes_hash(const unsigned char *p, Py_ssize_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)n, w;
    Py_ssize_t k = 0;
    for (; k + 8 <= n; k += 8) { /* eight bytes a step */
        memcpy(&w, p + k, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
    }
    w = 0;
    memcpy(&w, p + k, (size_t)(n - k));
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 29;
    return h | 1; /* 0: an empty slot */
}

static int bt_grow(bytes_table *t) {
    Py_ssize_t cap = t->cap ? t->cap * 2 : t->first;
    bt_slot *slots = PyMem_Calloc((size_t)cap, sizeof(bt_slot));
    if (slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t k = 0; k < t->cap; k++) {
        bt_slot *o = t->slots + k;
        if (!o->hash)
            continue;
        Py_ssize_t j = (Py_ssize_t)(o->hash & (uint64_t)(cap - 1));
        while (slots[j].hash)
            j = (j + 1) & (cap - 1);
        slots[j] = *o;
    }
    PyMem_Free(t->slots);
    t->slots = slots;
    t->cap = cap;
    return 0;
}

/* The code of p[a:a+n] (p the buffer every offset in t is into): -1 with an error set, -2 where the
 * string is new and not ASCII (nothing added). */
static int64_t bt_code(bytes_table *t, const unsigned char *p, Py_ssize_t a, Py_ssize_t n) {
    uint64_t h = bytes_hash(p + a, n);
    if (2 * (t->used + 1) > t->cap && bt_grow(t) < 0)
        return -1;
    Py_ssize_t j = (Py_ssize_t)(h & (uint64_t)(t->cap - 1));
    for (; t->slots[j].hash; j = (j + 1) & (t->cap - 1)) {
        bt_slot *o = t->slots + j;
        if (o->hash == h && o->len == n && memcmp(p + o->at, p + a, (size_t)n) == 0)
            return o->code;
    }
    for (Py_ssize_t k = 0; k < n; k++)
        if (p[a + k] >= 0x80)
            return -2;
    PyObject *s = PyUnicode_New(n, 127);
    if (s == NULL)
        return -1;
    memcpy(PyUnicode_DATA(s), p + a, (size_t)n);
    int bad = PyList_Append(t->strs, s);
    Py_DECREF(s);
    if (bad < 0)
        return -1;
    t->slots[j] = (bt_slot){a, n, h, t->used};
    return t->used++;
}

#endif
