/* One block of an XLine's events, decoded in one pass into column buffers (issue 12).
 *
 * The numpy decoder in event_columns.py makes one whole-array pass per field position; this walks
 * the bytes once. It accepts a strict subset of what the numpy decoder accepts and decodes it to the
 * same values: whatever it does not expect (a multi-byte tag, a field of the schema with another
 * wire type, num_occurrences, a varint over 64 bits or past its message) makes it return None and
 * the caller uses the numpy decoder, which makes the same call or hands the line to the protobuf
 * runtime. So this file never decides what a valid profile means.
 *
 * Optional: setup.py builds it when a compiler is there; without it the package works the same,
 * slower. The GIL is released while the bytes are walked, so two threads decode two blocks at once.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define EVENTS_TAG 0x22

enum { K_NONE = 0, K_DOUBLE = 2, K_UINT64 = 3, K_INT64 = 4, K_STR = 5, K_BYTES = 6, K_REF = 7 };

typedef struct {
    int64_t *metadata_id, *offset_ps, *duration_ps, *event_end;
    int32_t *owner;
    int64_t *stat_id, *text_start, *text_end;
    int8_t *kind;
    uint64_t *bits;
} Columns;

/* A varint of at most 64 bits ending before `end`; 0 when it is longer or runs past `end`. */
static inline int read_varint(const uint8_t *b, Py_ssize_t *pos, Py_ssize_t end, uint64_t *out) {
    uint64_t value = 0;
    Py_ssize_t p = *pos;
    for (int shift = 0; shift < 64; shift += 7) {
        if (p >= end) return 0;
        uint8_t byte = b[p++];
        if (shift == 63 && byte > 1) return 0; /* bits beyond 64: the numpy decoder's call */
        value |= (uint64_t)(byte & 0x7F) << shift;
        if (!(byte & 0x80)) {
            *pos = p;
            *out = value;
            return 1;
        }
    }
    return 0;
}

/* Skip the value of a field the decoders ignore (fields 8-15 of a stat, 6-15 of an event). */
static inline int skip_value(const uint8_t *b, Py_ssize_t *pos, Py_ssize_t end, int wire) {
    uint64_t value;
    switch (wire) {
    case 0:
        return read_varint(b, pos, end, &value);
    case 1:
        if (end - *pos < 8) return 0;
        *pos += 8;
        return 1;
    case 5:
        if (end - *pos < 4) return 0;
        *pos += 4;
        return 1;
    case 2:
        if (!read_varint(b, pos, end, &value) || value > (uint64_t)(end - *pos)) return 0;
        *pos += (Py_ssize_t)value;
        return 1;
    default:
        return 0;
    }
}

/* One XStat in [pos, end); with `cols` NULL it is only checked. */
static int one_stat(const uint8_t *b, Py_ssize_t pos, Py_ssize_t end, Columns *cols, Py_ssize_t k) {
    while (pos < end) {
        uint8_t tag = b[pos++];
        uint64_t value;
        if (tag & 0x80) return 0;
        int field = tag >> 3, wire = tag & 7;
        if (tag == 0x11) { /* double_value */
            if (end - pos < 8) return 0;
            if (cols) {
                memcpy(&cols->bits[k], b + pos, 8);
                cols->kind[k] = K_DOUBLE;
            }
            pos += 8;
        } else if (tag == 0x08 || tag == 0x18 || tag == 0x20 || tag == 0x38) {
            if (!read_varint(b, &pos, end, &value)) return 0;
            if (!cols) continue;
            if (tag == 0x08) {
                cols->stat_id[k] = (int64_t)value;
            } else {
                cols->bits[k] = value;
                cols->kind[k] = tag == 0x18 ? K_UINT64 : tag == 0x20 ? K_INT64 : K_REF;
            }
        } else if (tag == 0x2A || tag == 0x32) { /* str_value, bytes_value */
            if (!read_varint(b, &pos, end, &value) || value > (uint64_t)(end - pos)) return 0;
            if (cols) {
                cols->kind[k] = tag == 0x2A ? K_STR : K_BYTES;
                cols->text_start[k] = pos;
                cols->text_end[k] = pos + (Py_ssize_t)value;
            }
            pos += (Py_ssize_t)value;
        } else if (field >= 8 && field <= 15) {
            if (!skip_value(b, &pos, end, wire)) return 0;
        } else {
            return 0;
        }
    }
    return 1;
}

/* One XEvent in [pos, end): its fields into row `row`, its stats from stat index `*k` on. */
static int event(const uint8_t *b, Py_ssize_t pos, Py_ssize_t end, Columns *cols, Py_ssize_t row,
                 Py_ssize_t *k) {
    while (pos < end) {
        uint8_t tag = b[pos++];
        uint64_t value;
        if (tag & 0x80) return 0;
        int field = tag >> 3, wire = tag & 7;
        if (tag == 0x08 || tag == 0x10 || tag == 0x18) {
            if (!read_varint(b, &pos, end, &value)) return 0;
            if (cols) {
                int64_t *column = tag == 0x08 ? cols->metadata_id : tag == 0x10 ? cols->offset_ps : cols->duration_ps;
                column[row] = (int64_t)value;
            }
        } else if (tag == 0x22) {
            if (!read_varint(b, &pos, end, &value) || value > (uint64_t)(end - pos)) return 0;
            if (cols) {
                cols->owner[*k] = (int32_t)row;
                cols->stat_id[*k] = 0;
                cols->kind[*k] = K_NONE;
                cols->bits[*k] = 0;
                cols->text_start[*k] = 0;
                cols->text_end[*k] = 0;
            }
            if (!one_stat(b, pos, pos + (Py_ssize_t)value, cols, *k)) return 0;
            *k += 1;
            pos += (Py_ssize_t)value;
        } else if (field >= 6 && field <= 15) {
            if (!skip_value(b, &pos, end, wire)) return 0;
        } else {
            return 0;
        }
    }
    return 1;
}

/* Events from `pos` while they follow each other, at most `limit`, and no further event once
 * `stat_limit` stats are reached (a block's columns stay small whatever the events hold): counted
 * (cols NULL) or decoded. Returns 0 when something is unusual; sets the event and stat counts and
 * where the run stopped. */
static int walk(const uint8_t *b, Py_ssize_t size, Py_ssize_t pos, Py_ssize_t limit,
                Py_ssize_t stat_limit, Columns *cols, Py_ssize_t *events, Py_ssize_t *stats,
                Py_ssize_t *stop) {
    Py_ssize_t row = 0, k = 0;
    while (row < limit && k < stat_limit && pos < size && b[pos] == EVENTS_TAG) {
        uint64_t length;
        pos += 1;
        if (!read_varint(b, &pos, size, &length) || length > (uint64_t)(size - pos)) return 0;
        if (row >= INT32_MAX) return 0;
        if (cols) {
            cols->metadata_id[row] = cols->offset_ps[row] = cols->duration_ps[row] = 0;
        }
        if (!event(b, pos, pos + (Py_ssize_t)length, cols, row, &k)) return 0;
        pos += (Py_ssize_t)length;
        if (cols) cols->event_end[row] = pos;
        row += 1;
    }
    *events = row;
    *stats = k;
    *stop = pos;
    return 1;
}

static PyObject *column(Py_ssize_t count, size_t width, char **data) {
    PyObject *bytes = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)(count * width));
    if (bytes) *data = PyByteArray_AS_STRING(bytes);
    return bytes;
}

/* decode_block(line, pos, limit, stat_limit) -> None | (stop, metadata_id, offset_ps, duration_ps, event_end,
 *                                          owner, stat_id, kind, bits, text_start, text_end)
 * Each column is a bytearray of native-endian int64 (owner int32, kind int8, bits uint64). */
static PyObject *decode_block(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos, limit, stat_limit, events = 0, stats = 0, stop = 0;
    if (!PyArg_ParseTuple(args, "y*nnn", &view, &pos, &limit, &stat_limit)) return NULL;
    const uint8_t *b = (const uint8_t *)view.buf;
    Py_ssize_t size = view.len;
    int ok;
    if (pos < 0 || pos > size || limit < 0 || stat_limit < 1) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "position or limit out of range");
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    ok = walk(b, size, pos, limit, stat_limit, NULL, &events, &stats, &stop);
    Py_END_ALLOW_THREADS
    if (!ok) {
        PyBuffer_Release(&view);
        Py_RETURN_NONE;
    }
    Columns cols;
    char *data[10];
    PyObject *out[10];
    Py_ssize_t counts[10] = {events, events, events, events, stats, stats, stats, stats, stats, stats};
    size_t widths[10] = {8, 8, 8, 8, 4, 8, 1, 8, 8, 8};
    for (int i = 0; i < 10; i++) {
        out[i] = column(counts[i], widths[i], &data[i]);
        if (!out[i]) {
            for (int j = 0; j < i; j++) Py_DECREF(out[j]);
            PyBuffer_Release(&view);
            return NULL;
        }
    }
    cols.metadata_id = (int64_t *)data[0];
    cols.offset_ps = (int64_t *)data[1];
    cols.duration_ps = (int64_t *)data[2];
    cols.event_end = (int64_t *)data[3];
    cols.owner = (int32_t *)data[4];
    cols.stat_id = (int64_t *)data[5];
    cols.kind = (int8_t *)data[6];
    cols.bits = (uint64_t *)data[7];
    cols.text_start = (int64_t *)data[8];
    cols.text_end = (int64_t *)data[9];
    Py_ssize_t events2 = 0, stats2 = 0, stop2 = 0;
    Py_BEGIN_ALLOW_THREADS
    ok = walk(b, size, pos, limit, stat_limit, &cols, &events2, &stats2, &stop2);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    if (!ok || events2 != events || stats2 != stats || stop2 != stop) { /* cannot happen: same walk */
        for (int i = 0; i < 10; i++) Py_DECREF(out[i]);
        PyErr_SetString(PyExc_RuntimeError, "the second walk of a line disagreed with the first");
        return NULL;
    }
    return Py_BuildValue("(nNNNNNNNNNN)", stop, out[0], out[1], out[2], out[3], out[4], out[5], out[6],
                         out[7], out[8], out[9]);
}

static PyMethodDef methods[] = {
    {"decode_block", decode_block, METH_VARARGS,
     "decode_block(line, pos, limit, stat_limit): up to `limit` consecutive XLine events from byte "
     "`pos` (none more once `stat_limit` stats are in) as column bytearrays, or None when anything "
     "is unusual."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_wire", NULL, -1, methods};

PyMODINIT_FUNC PyInit__wire(void) { return PyModule_Create(&module); }
