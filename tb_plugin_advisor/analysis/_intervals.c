/* Interval unions in one pass (issue 12): intervals.py's `_blocks` and `merge` without numpy's
 * four whole-array passes each. The breakdown unions millions of events a time slice at a time and
 * these two steps were most of its time.
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

/* merge(a_starts, a_ends, b_starts, b_ends) -> blocks of the union of two merged sets. */
static PyObject *merge(PyObject *self, PyObject *args) {
    PyObject *objects[4];
    Py_buffer views[4];
    int got = 0;
    PyObject *out_s = NULL, *out_e = NULL;
    if (!PyArg_ParseTuple(args, "OOOO", &objects[0], &objects[1], &objects[2], &objects[3])) return NULL;
    for (; got < 4; got++)
        if (!int64_buffer(objects[got], &views[got])) goto fail;
    Py_ssize_t n = views[0].len / 8, m = views[2].len / 8;
    if (views[1].len / 8 != n || views[3].len / 8 != m) {
        PyErr_SetString(PyExc_ValueError, "starts and ends differ in length");
        goto fail;
    }
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
    for (int k = 0; k < got; k++) PyBuffer_Release(&views[k]);
    return NULL;
}

static PyMethodDef methods[] = {
    {"blocks", blocks, METH_VARARGS,
     "blocks(starts, ends): intervals sorted by start merged into disjoint blocks (int64 bytearrays)."},
    {"merge", merge, METH_VARARGS,
     "merge(a_starts, a_ends, b_starts, b_ends): the blocks of the union of two disjoint sorted sets."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_intervals", NULL, -1, methods};

PyMODINIT_FUNC PyInit__intervals(void) { return PyModule_Create(&module); }
