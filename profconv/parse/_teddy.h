/* Looking for any of up to 64 needles (ASCII, two bytes or more) in a text by one pass: the needles' first
 * two bytes looked up 32 places a step where the CPU has AVX2 (Hyperscan's "Teddy"), each place that
 * passes checked by its first eight bytes, then memcmp. Shared by _kahan.c (find_any) and _summarycells.c
 * (nsys_sweep: the gaps between a sweep's tables looked in as it walks them). */
#ifndef PROFCONV_TEDDY_H
#define PROFCONV_TEDDY_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

/* find_any's needles: each needle's text and length, and for each byte the needles that start with
 * it (first) or whose second byte it is (second): first[x] & second[y], the needles starting with
 * "xy"; lo0/hi0/lo1/hi1: the same by the low and high half of each byte, 8 groups of needles (a
 * needle's group: its index mod 8), the SIMD pass's first look (a superset of the starts). */
typedef struct {
    const unsigned char *needle[64];
    Py_ssize_t len[64];
    uint64_t head[64], mask[64]; /* a needle's first eight bytes or fewer as eight, and which they are */
    uint64_t first[256], second[256];
    unsigned char lo0[16], hi0[16], lo1[16], hi1[16];
} needles_t;

#if defined(__GNUC__) || defined(__clang__)
#define LOWEST_BIT(x) __builtin_ctzll(x)
#else
static int lowest_bit(uint64_t x) { /* x != 0 */
    int k = 0;
    while (!(x & 1)) {
        x >>= 1;
        k++;
    }
    return k;
}
#define LOWEST_BIT(x) lowest_bit(x)
#endif

/* Whether a needle starts at t[i] (i + 1 < n): where eight bytes are there, a needle whose first eight do
 * not match them is passed over without memcmp (a sweep's "Processing" against "Profiling result", its
 * "cuda_gpu_kern_sum" against "gputime": a line's first two bytes and a needle's alike, not its third) */
static inline int needle_at(const needles_t *nd, const unsigned char *t, Py_ssize_t n, Py_ssize_t i) {
    uint64_t m = nd->first[t[i]] & nd->second[t[i + 1]], w = 0;
    if (!m)
        return 0;
    int eight = n - i >= 8;
    if (eight)
        memcpy(&w, t + i, 8);
    while (m) {
        int j = LOWEST_BIT(m);
        m &= m - 1;
        if (nd->len[j] > n - i || (eight && ((w ^ nd->head[j]) & nd->mask[j])))
            continue;
        if ((eight && nd->len[j] <= 8) || memcmp(t + i, nd->needle[j], (size_t)nd->len[j]) == 0)
            return 1;
    }
    return 0;
}

/* Whether a needle starts at t[i] for some i >= from, a byte at a time */
static int find_from(const needles_t *nd, const unsigned char *t, Py_ssize_t n, Py_ssize_t from) {
    for (Py_ssize_t i = from; i + 1 < n; i++)
        if ((nd->first[t[i]] & nd->second[t[i + 1]]) && needle_at(nd, t, n, i))
            return 1;
    return 0;
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define FIND_AVX2 1
/* find_from(nd, t, n, 0), 32 places a step: the two bytes at each place looked up by their halves
 * (a byte shuffle a half: Hyperscan's "Teddy"), the places that pass checked by needle_at. */
__attribute__((target("avx2"))) static int find_avx2(const needles_t *nd, const unsigned char *t, Py_ssize_t n,
                                                     Py_ssize_t limit) {
    const __m256i lo0 = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)nd->lo0));
    const __m256i hi0 = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)nd->hi0));
    const __m256i lo1 = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)nd->lo1));
    const __m256i hi1 = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)nd->hi1));
    const __m256i low = _mm256_set1_epi8(0x0f), zero = _mm256_setzero_si256();
    Py_ssize_t i = 0;
    for (; i + 1 < n && i + 33 <= limit; i += 32) { /* (bytes up to `limit` may be read: a short range's too) */
        __m256i a = _mm256_loadu_si256((const __m256i *)(t + i));
        __m256i b = _mm256_loadu_si256((const __m256i *)(t + i + 1));
        __m256i r0 = _mm256_and_si256(_mm256_shuffle_epi8(lo0, _mm256_and_si256(a, low)),
                                      _mm256_shuffle_epi8(hi0, _mm256_and_si256(_mm256_srli_epi16(a, 4), low)));
        __m256i r1 = _mm256_and_si256(_mm256_shuffle_epi8(lo1, _mm256_and_si256(b, low)),
                                      _mm256_shuffle_epi8(hi1, _mm256_and_si256(_mm256_srli_epi16(b, 4), low)));
        uint32_t m = ~(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_and_si256(r0, r1), zero));
        if (i + 32 > n - 1)
            m &= (1u << (n - 1 - i)) - 1; /* the places in t[0:n] a needle can start at */
        while (m) {
            int z = __builtin_ctz(m);
            m &= m - 1;
            if (needle_at(nd, t, n, i + z))
                return 1;
        }
    }
    return find_from(nd, t, n, i);
}
#endif

/* The needles (a tuple) looked up by their first two bytes into *nd: 1, 0 where one is not an ASCII str of 2
 * characters or more or there are more than 64 (the caller asks Python), -1 with an error set */
static int needles_read(PyObject *needles, needles_t *nd) {
    Py_ssize_t k = PyTuple_GET_SIZE(needles);
    if (k > 64)
        return 0;
    memset(nd->first, 0, sizeof nd->first);
    memset(nd->second, 0, sizeof nd->second);
    memset(nd->lo0, 0, sizeof nd->lo0);
    memset(nd->hi0, 0, sizeof nd->hi0);
    memset(nd->lo1, 0, sizeof nd->lo1);
    memset(nd->hi1, 0, sizeof nd->hi1);
    for (Py_ssize_t j = 0; j < k; j++) {
        PyObject *m = PyTuple_GET_ITEM(needles, j);
        if (!PyUnicode_CheckExact(m))
            return 0;
#if PY_VERSION_HEX < 0x030C0000
        if (PyUnicode_READY(m) < 0)
            return -1;
#endif
        if (!PyUnicode_IS_ASCII(m) || PyUnicode_GET_LENGTH(m) < 2)
            return 0;
        const unsigned char *c = PyUnicode_1BYTE_DATA(m);
        nd->needle[j] = c;
        nd->len[j] = PyUnicode_GET_LENGTH(m);
        size_t h = nd->len[j] < 8 ? (size_t)nd->len[j] : 8; /* (as memcpy lays them: either byte order) */
        nd->head[j] = nd->mask[j] = 0;
        memcpy(&nd->head[j], c, h);
        memset(&nd->mask[j], 0xff, h);
        nd->first[c[0]] |= (uint64_t)1 << j;
        nd->second[c[1]] |= (uint64_t)1 << j;
        unsigned char group = (unsigned char)(1u << (j & 7));
        nd->lo0[c[0] & 15] |= group;
        nd->hi0[c[0] >> 4] |= group;
        nd->lo1[c[1] & 15] |= group;
        nd->hi1[c[1] >> 4] |= group;
    }
    return 1;
}

/* Whether a needle of nd is in t[0:n], where t[0:limit] (limit >= n) may be read */
static int find_in(const needles_t *nd, const unsigned char *t, Py_ssize_t n, Py_ssize_t limit) {
#ifdef FIND_AVX2
    static int avx2 = -1;
    if (avx2 < 0) {
        __builtin_cpu_init();
        avx2 = __builtin_cpu_supports("avx2") ? 1 : 0;
    }
    if (avx2)
        return find_avx2(nd, t, n, limit);
#endif
    (void)limit;
    return find_from(nd, t, n, 0);
}

#endif
