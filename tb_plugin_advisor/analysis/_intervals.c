/* Interval unions in one pass: intervals.py's `_blocks`, `merge` and `covered` without numpy's
 * four whole-array passes each. The breakdown unions millions of events a time slice at a time and
 * measures them in its steps, and these steps were most of its time.
 *
 * Optional, like readers/xplane/_wire.c: setup.py builds it when a compiler is there, and intervals.py
 * keeps its numpy versions, which give the same blocks (tests compare the two).
 * Inputs are native int64 buffers; outputs are bytearrays of int64, one for starts, one for ends.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    int64_t *starts, *ends;
    Py_ssize_t count;
    int open;
    int64_t start, end;
} Blocks;

/* Feed intervals in ascending start order: one that starts after the open block's end opens a new
 * block; one that starts at or before it extends it (touching intervals join, as in intervals.py). */
static inline void feed(Blocks *out, int64_t start, int64_t end) {
    if (out->open && start <= out->end) {
        if (end > out->end) out->end = end;
        return;
    }
    if (out->open) {
        out->starts[out->count] = out->start;
        out->ends[out->count] = out->end;
        out->count += 1;
    }
    out->open = 1;
    out->start = start;
    out->end = end;
}

static inline void close_blocks(Blocks *out) {
    if (out->open) {
        out->starts[out->count] = out->start;
        out->ends[out->count] = out->end;
        out->count += 1;
        out->open = 0;
    }
}

static int int64_buffer(PyObject *object, Py_buffer *view) {
    if (PyObject_GetBuffer(object, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return 0;
    if (view->itemsize != 8 || view->format == NULL || (strcmp(view->format, "q") && strcmp(view->format, "l") &&
                                                        strcmp(view->format, "<q") && strcmp(view->format, "<l") &&
                                                        strcmp(view->format, "=q") && strcmp(view->format, "=l"))) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_TypeError, "expected a contiguous int64 buffer");
        return 0;
    }
    return 1;
}

static PyObject *result(PyObject *starts, PyObject *ends, Py_ssize_t count) {
    if (PyByteArray_Resize(starts, count * 8) < 0 || PyByteArray_Resize(ends, count * 8) < 0) {
        Py_DECREF(starts);
        Py_DECREF(ends);
        return NULL;
    }
    return Py_BuildValue("(NN)", starts, ends);
}

/* blocks(starts, ends) -> (block starts, block ends): intervals sorted by start → disjoint blocks. */
static PyObject *blocks(PyObject *self, PyObject *args) {
    PyObject *s_obj, *e_obj;
    Py_buffer s, e;
    if (!PyArg_ParseTuple(args, "OO", &s_obj, &e_obj)) return NULL;
    if (!int64_buffer(s_obj, &s)) return NULL;
    if (!int64_buffer(e_obj, &e)) {
        PyBuffer_Release(&s);
        return NULL;
    }
    Py_ssize_t n = s.len / 8;
    PyObject *out_s = NULL, *out_e = NULL;
    if (e.len / 8 != n) {
        PyErr_SetString(PyExc_ValueError, "starts and ends differ in length");
        goto fail;
    }
    out_s = PyByteArray_FromStringAndSize(NULL, n * 8);
    out_e = PyByteArray_FromStringAndSize(NULL, n * 8);
    if (!out_s || !out_e) goto fail;
    Blocks out = {(int64_t *)PyByteArray_AS_STRING(out_s), (int64_t *)PyByteArray_AS_STRING(out_e), 0, 0, 0, 0};
    const int64_t *starts = s.buf, *ends = e.buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) feed(&out, starts[i], ends[i]);
    close_blocks(&out);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&s);
    PyBuffer_Release(&e);
    return result(out_s, out_e, out.count);
fail:
    Py_XDECREF(out_s);
    Py_XDECREF(out_e);
    PyBuffer_Release(&s);
    PyBuffer_Release(&e);
    return NULL;
}

/* Four int64 buffers read as two pairs of equal lengths (the starts and ends of two sets; of blocks
 * and of windows): their views and each pair's length. 0, with an exception set and no view held,
 * where an argument is not such a buffer or a pair's lengths differ. */
static int two_pairs(PyObject *args, Py_buffer views[4], Py_ssize_t *n, Py_ssize_t *m) {
    PyObject *objects[4];
    int got = 0;
    if (!PyArg_ParseTuple(args, "OOOO", &objects[0], &objects[1], &objects[2], &objects[3])) return 0;
    for (; got < 4; got++)
        if (!int64_buffer(objects[got], &views[got])) goto fail;
    *n = views[0].len / 8;
    *m = views[2].len / 8;
    if (views[1].len / 8 == *n && views[3].len / 8 == *m) return 1;
    PyErr_SetString(PyExc_ValueError, "starts and ends differ in length");
fail:
    for (int k = 0; k < got; k++) PyBuffer_Release(&views[k]);
    return 0;
}

/* merge(a_starts, a_ends, b_starts, b_ends) -> blocks of the union of two merged sets. */
static PyObject *merge(PyObject *self, PyObject *args) {
    Py_buffer views[4];
    Py_ssize_t n, m;
    PyObject *out_s = NULL, *out_e = NULL;
    if (!two_pairs(args, views, &n, &m)) return NULL;
    out_s = PyByteArray_FromStringAndSize(NULL, (n + m) * 8);
    out_e = PyByteArray_FromStringAndSize(NULL, (n + m) * 8);
    if (!out_s || !out_e) goto fail;
    Blocks out = {(int64_t *)PyByteArray_AS_STRING(out_s), (int64_t *)PyByteArray_AS_STRING(out_e), 0, 0, 0, 0};
    const int64_t *as = views[0].buf, *ae = views[1].buf, *bs = views[2].buf, *be = views[3].buf;
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t i = 0, j = 0;
    while (i < n || j < m) {
        if (j >= m || (i < n && as[i] <= bs[j])) {
            feed(&out, as[i], ae[i]);
            i++;
        } else {
            feed(&out, bs[j], be[j]);
            j++;
        }
    }
    close_blocks(&out);
    Py_END_ALLOW_THREADS
    for (int k = 0; k < 4; k++) PyBuffer_Release(&views[k]);
    return result(out_s, out_e, out.count);
fail:
    Py_XDECREF(out_s);
    Py_XDECREF(out_e);
    for (int k = 0; k < 4; k++) PyBuffer_Release(&views[k]);
    return NULL;
}

/* A duration column as the model keeps it: int32 where every duration fits, else int64. */
static int duration_buffer(PyObject *object, Py_buffer *view) {
    if (PyObject_GetBuffer(object, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return 0;
    const char *f = view->format == NULL ? "" : view->format;
    if (*f == '<' || *f == '=') f++;
    int ok = (view->itemsize == 8 && (!strcmp(f, "q") || !strcmp(f, "l"))) ||
             (view->itemsize == 4 && (!strcmp(f, "i") || (!strcmp(f, "l") && sizeof(long) == 4)));
    if (!ok) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_TypeError, "expected a contiguous int32 or int64 buffer of durations");
        return 0;
    }
    return 1;
}

static int int8_buffer(PyObject *object, Py_buffer *view) {
    if (PyObject_GetBuffer(object, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return 0;
    if (view->itemsize != 1 || view->format == NULL || strcmp(view->format, "b")) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_TypeError, "expected a contiguous int8 buffer of codes");
        return 0;
    }
    return 1;
}

#define MAX_LEVELS 64

/* level_blocks(starts, durations, codes, rows_before, first, last, a, b, levels, every)
 *   -> ([(block starts, block ends) per level], (block starts, block ends) of all levels, or None)
 *
 * One slice of the breakdown's timeline for one start-sorted event column: the events `rows_before`
 * (ascending rows, all before `first`: long events that reach into the slice) then rows first..last-1,
 * each clipped to [a, b), empty ones and those with a negative code left out; the events of each code
 * 0..levels-1 merged into disjoint blocks, and (when `every`) the events of all codes. What
 * breakdown.py's numpy path does with a gather, a mask and a union per code, in one pass. */
static PyObject *level_blocks(PyObject *self, PyObject *args) {
    PyObject *s_obj, *d_obj, *c_obj, *r_obj;
    Py_ssize_t first, last;
    long long a, b;
    int levels, every;
    if (!PyArg_ParseTuple(args, "OOOOnnLLip", &s_obj, &d_obj, &c_obj, &r_obj, &first, &last, &a, &b,
                          &levels, &every))
        return NULL;
    if (levels < 1 || levels > MAX_LEVELS) {
        PyErr_SetString(PyExc_ValueError, "levels out of range");
        return NULL;
    }
    Py_buffer views[4];
    int got = 0;
    PyObject *outputs[2 * (MAX_LEVELS + 1)] = {NULL};
    PyObject *listed = NULL;
    if (!int64_buffer(s_obj, &views[0])) goto fail;
    got = 1;
    if (!duration_buffer(d_obj, &views[1])) goto fail;
    got = 2;
    if (!int8_buffer(c_obj, &views[2])) goto fail;
    got = 3;
    if (!int64_buffer(r_obj, &views[3])) goto fail;
    got = 4;
    Py_ssize_t n = views[0].len / 8, n_before = views[3].len / 8;
    int wide = views[1].itemsize == 8;
    if (views[1].len / views[1].itemsize != n || views[2].len != n || first < 0 || last > n || first > last) {
        PyErr_SetString(PyExc_ValueError, "columns differ in length or rows out of range");
        goto fail;
    }
    const int64_t *starts = views[0].buf, *before = views[3].buf;
    const int8_t *codes = views[2].buf;
    for (Py_ssize_t k = 0; k < n_before; k++)
        if (before[k] < 0 || before[k] >= first) {
            PyErr_SetString(PyExc_ValueError, "rows_before must lie before first");
            goto fail;
        }
    /* pass 1: events per level (the most blocks each can have) */
    Py_ssize_t counts[MAX_LEVELS + 1] = {0};
    for (Py_ssize_t k = 0; k < n_before; k++) {
        int code = codes[before[k]];
        if (code >= 0 && code < levels) counts[code]++;
    }
    for (Py_ssize_t i = first; i < last; i++) {
        int code = codes[i];
        if (code >= 0 && code < levels) counts[code]++;
    }
    Py_ssize_t all = 0;
    for (int k = 0; k < levels; k++) all += counts[k];
    counts[levels] = every ? all : 0;
    int outs = levels + 1;
    Blocks blocks[MAX_LEVELS + 1];
    for (int k = 0; k < outs; k++) {
        outputs[2 * k] = PyByteArray_FromStringAndSize(NULL, counts[k] * 8);
        outputs[2 * k + 1] = PyByteArray_FromStringAndSize(NULL, counts[k] * 8);
        if (!outputs[2 * k] || !outputs[2 * k + 1]) goto fail;
        blocks[k] = (Blocks){(int64_t *)PyByteArray_AS_STRING(outputs[2 * k]),
                             (int64_t *)PyByteArray_AS_STRING(outputs[2 * k + 1]), 0, 0, 0, 0};
    }
    const int32_t *narrow_d = views[1].buf;
    const int64_t *wide_d = views[1].buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t k = 0; k < n_before + (last - first); k++) {
        Py_ssize_t i = k < n_before ? before[k] : first + (k - n_before);
        int code = codes[i];
        if (code < 0 || code >= levels) continue;
        int64_t start = starts[i];
        int64_t end = start + (wide ? wide_d[i] : (int64_t)narrow_d[i]);
        if (start < a) start = a;
        if (end > b) end = b;
        if (end <= start) continue;
        feed(&blocks[code], start, end);
        if (every) feed(&blocks[levels], start, end);
    }
    for (int k = 0; k < outs; k++) close_blocks(&blocks[k]);
    Py_END_ALLOW_THREADS
    for (int k = 0; k < 4; k++) PyBuffer_Release(&views[k]);
    got = 0;
    listed = PyList_New(levels);
    if (!listed) goto fail;
    for (int k = 0; k < outs; k++) {
        if (PyByteArray_Resize(outputs[2 * k], blocks[k].count * 8) < 0 ||
            PyByteArray_Resize(outputs[2 * k + 1], blocks[k].count * 8) < 0)
            goto fail;
    }
    for (int k = 0; k < levels; k++) {
        PyObject *pair = PyTuple_Pack(2, outputs[2 * k], outputs[2 * k + 1]);
        if (!pair) goto fail;
        PyList_SET_ITEM(listed, k, pair);
    }
    PyObject *whole = Py_None;
    if (every)
        whole = PyTuple_Pack(2, outputs[2 * levels], outputs[2 * levels + 1]);
    else
        Py_INCREF(Py_None);
    if (!whole) goto fail;
    for (int k = 0; k < 2 * outs; k++) Py_DECREF(outputs[k]);
    return Py_BuildValue("(NN)", listed, whole);
fail:
    Py_XDECREF(listed);
    for (int k = 0; k < 2 * (MAX_LEVELS + 1); k++) Py_XDECREF(outputs[k]);
    for (int k = 0; k < got; k++) PyBuffer_Release(&views[k]);
    return NULL;
}

/* Covered length in (-inf, t) of disjoint blocks sorted by start, whose lengths before block k sum to
 * prefix[k]: the blocks before the last one starting at or before t whole, and that one up to t,
 * clipped as np.clip clips (intervals.py _measure_up_to). Sums wrap as numpy's int64 sums do. */
static inline uint64_t measure_up_to(const int64_t *starts, const int64_t *ends, const uint64_t *prefix,
                                     Py_ssize_t n, int64_t t) {
    Py_ssize_t lo = 0, hi = n;
    while (lo < hi) { /* the first block starting after t */
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (starts[mid] <= t) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0) return 0;
    Py_ssize_t k = lo - 1;
    int64_t inside = (int64_t)((uint64_t)t - (uint64_t)starts[k]);
    int64_t length = (int64_t)((uint64_t)ends[k] - (uint64_t)starts[k]);
    if (inside < 0) inside = 0;
    if (inside > length) inside = length;
    return prefix[k] + (uint64_t)inside;
}

/* covered(starts, ends, lo, hi) -> per window [lo[i], hi[i]), the length of the blocks inside it
 * (int64 bytearray). One pass sums the blocks' lengths; numpy took four whole-array passes, each
 * time the breakdown measured a priority level's claimed time in a slice's steps. */
static PyObject *covered(PyObject *self, PyObject *args) {
    Py_buffer views[4];
    Py_ssize_t n, w;
    PyObject *out = NULL;
    uint64_t *prefix = NULL;
    if (!two_pairs(args, views, &n, &w)) return NULL;
    out = PyByteArray_FromStringAndSize(NULL, w * 8);
    prefix = PyMem_RawMalloc((size_t)(n + 1) * sizeof(uint64_t));
    if (!out || !prefix) {
        if (!prefix) PyErr_NoMemory();
        goto fail;
    }
    const int64_t *starts = views[0].buf, *ends = views[1].buf, *lo = views[2].buf, *hi = views[3].buf;
    int64_t *lengths = (int64_t *)PyByteArray_AS_STRING(out);
    Py_BEGIN_ALLOW_THREADS
    prefix[0] = 0;
    for (Py_ssize_t k = 0; k < n; k++) prefix[k + 1] = prefix[k] + ((uint64_t)ends[k] - (uint64_t)starts[k]);
    for (Py_ssize_t i = 0; i < w; i++)
        lengths[i] = (int64_t)(measure_up_to(starts, ends, prefix, n, hi[i]) -
                               measure_up_to(starts, ends, prefix, n, lo[i]));
    Py_END_ALLOW_THREADS
    PyMem_RawFree(prefix);
    for (int k = 0; k < 4; k++) PyBuffer_Release(&views[k]);
    return out;
fail:
    PyMem_RawFree(prefix);
    Py_XDECREF(out);
    for (int k = 0; k < 4; k++) PyBuffer_Release(&views[k]);
    return NULL;
}

static PyMethodDef methods[] = {
    {"blocks", blocks, METH_VARARGS,
     "blocks(starts, ends): intervals sorted by start merged into disjoint blocks (int64 bytearrays)."},
    {"merge", merge, METH_VARARGS,
     "merge(a_starts, a_ends, b_starts, b_ends): the blocks of the union of two disjoint sorted sets."},
    {"level_blocks", level_blocks, METH_VARARGS,
     "level_blocks(starts, durations, codes, rows_before, first, last, a, b, levels, every): one slice's "
     "blocks per code and of all codes (intervals.py level_blocks)."},
    {"covered", covered, METH_VARARGS,
     "covered(starts, ends, lo, hi): per window, the length of the disjoint sorted blocks inside it "
     "(int64 bytearray; intervals.py covered)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_intervals", NULL, -1, methods};

PyMODINIT_FUNC PyInit__intervals(void) { return PyModule_Create(&module); }
