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
 * slower. `frame` walks a line once to find its blocks and count their events and stats; `fill_block`
 * then decodes one block into the line's event columns (allocated once, by the caller) and fresh stat
 * columns. The GIL is released while bytes are walked, so two threads fill two blocks at once.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define EVENTS_TAG 0x22

enum { K_NONE = 0, K_DOUBLE = 2, K_UINT64 = 3, K_INT64 = 4, K_STR = 5, K_BYTES = 6, K_REF = 7 };

typedef struct {
    int64_t *metadata_id, *offset_ps, *duration_ps;
    int32_t *owner;
    int64_t *stat_id, *text_start, *text_end;
    int8_t *kind;
    uint64_t *bits;
    Py_ssize_t stat_capacity; /* rows of the stat columns: a walk that would pass it fails */
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
            if (cols && *k >= cols->stat_capacity) return 0;
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

/* frame(line, pos, limit, stat_limit) -> None | (block starts, events, stats, stop)
 * The blocks of the consecutive events from `pos` (each as `walk` cuts them), the first three as
 * bytes of native int64, and where the events stop. */
static PyObject *frame(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos, limit, stat_limit;
    if (!PyArg_ParseTuple(args, "y*nnn", &view, &pos, &limit, &stat_limit)) return NULL;
    if (pos < 0 || pos > view.len || limit < 1 || stat_limit < 1) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "position or limits out of range");
        return NULL;
    }
    const uint8_t *b = (const uint8_t *)view.buf;
    Py_ssize_t size = view.len, capacity = 64, count = 0;
    int64_t *table = PyMem_RawMalloc(3 * capacity * sizeof(int64_t));
    int ok = table != NULL;
    Py_BEGIN_ALLOW_THREADS
    while (ok) {
        Py_ssize_t events, stats, stop;
        if (!walk(b, size, pos, limit, stat_limit, NULL, &events, &stats, &stop)) {
            ok = 0;
            break;
        }
        if (events == 0) break;
        if (count == capacity) {
            int64_t *grown = PyMem_RawRealloc(table, 6 * capacity * sizeof(int64_t));
            if (!grown) {
                ok = 0;
                break;
            }
            table = grown;
            capacity *= 2;
        }
        table[3 * count] = pos;
        table[3 * count + 1] = events;
        table[3 * count + 2] = stats;
        count += 1;
        pos = stop;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    if (table == NULL) return PyErr_NoMemory();
    if (!ok) {
        PyMem_RawFree(table);
        Py_RETURN_NONE;
    }
    char *data[3];
    PyObject *out[3];
    for (int i = 0; i < 3; i++) {
        out[i] = column(count, 8, &data[i]);
        if (!out[i]) {
            for (int j = 0; j < i; j++) Py_DECREF(out[j]);
            PyMem_RawFree(table);
            return NULL;
        }
        for (Py_ssize_t k = 0; k < count; k++) ((int64_t *)data[i])[k] = table[3 * k + i];
    }
    PyMem_RawFree(table);
    return Py_BuildValue("(NNNn)", out[0], out[1], out[2], pos);
}

/* fill_block(line, pos, events, stats, stat_limit, metadata_id, offset_ps, duration_ps, row)
 *   -> (owner, stat_id, kind, bits, text_start, text_end)
 * Decodes the block `frame` found at `pos` (`events` events, `stats` stats): the event fields into
 * rows [row, row + events) of the three writable int64 buffers, the stats into fresh bytearrays
 * (owner int32 counted from `row`, stat_id int64, kind int8, bits uint64, text spans int64). */
static PyObject *fill_block(PyObject *self, PyObject *args) {
    Py_buffer view, meta, offset, duration;
    Py_ssize_t pos, events, stats, stat_limit, row;
    if (!PyArg_ParseTuple(args, "y*nnnnw*w*w*n", &view, &pos, &events, &stats, &stat_limit, &meta, &offset,
                          &duration, &row))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t rows = meta.len / 8;
    if (pos < 0 || pos > view.len || events < 1 || stats < 0 || stat_limit < 1 || row < 0 ||
        offset.len / 8 != rows || duration.len / 8 != rows || row > rows - events ||
        row + events > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "block or buffers out of range");
        goto done;
    }
    char *data[6];
    PyObject *out[6] = {NULL};
    size_t widths[6] = {4, 8, 1, 8, 8, 8};
    for (int i = 0; i < 6; i++) {
        out[i] = column(stats, widths[i], &data[i]);
        if (!out[i]) {
            for (int j = 0; j < i; j++) Py_DECREF(out[j]);
            goto done;
        }
    }
    Columns cols = {
        .metadata_id = (int64_t *)meta.buf + row,
        .offset_ps = (int64_t *)offset.buf + row,
        .duration_ps = (int64_t *)duration.buf + row,
        .owner = (int32_t *)data[0],
        .stat_id = (int64_t *)data[1],
        .kind = (int8_t *)data[2],
        .bits = (uint64_t *)data[3],
        .text_start = (int64_t *)data[4],
        .text_end = (int64_t *)data[5],
        .stat_capacity = stats,
    };
    Py_ssize_t got_events = 0, got_stats = 0, stop = 0;
    int ok;
    /* one walk: the event count is its limit and the stat columns' capacity is checked before each
     * stat, so a block `frame` did not cut fails here instead of writing past a buffer */
    Py_BEGIN_ALLOW_THREADS
    ok = walk((const uint8_t *)view.buf, view.len, pos, events, stat_limit, &cols, &got_events, &got_stats,
              &stop);
    ok = ok && got_events == events && got_stats == stats;
    Py_END_ALLOW_THREADS
    if (!ok) {
        for (int i = 0; i < 6; i++) Py_DECREF(out[i]);
        PyErr_SetString(PyExc_ValueError, "the block is not the one frame() found at this position");
        goto done;
    }
    if (row) { /* owners count from the line's first event */
        int32_t *owner = (int32_t *)data[0];
        for (Py_ssize_t k = 0; k < stats; k++) owner[k] += (int32_t)row;
    }
    result = Py_BuildValue("(NNNNNN)", out[0], out[1], out[2], out[3], out[4], out[5]);
done:
    PyBuffer_Release(&view);
    PyBuffer_Release(&meta);
    PyBuffer_Release(&offset);
    PyBuffer_Release(&duration);
    return result;
}

static PyMethodDef methods[] = {
    {"frame", frame, METH_VARARGS,
     "frame(line, pos, limit, stat_limit): the blocks of consecutive XLine events from byte `pos` "
     "(at most `limit` events each, none more once `stat_limit` stats are in) as (starts, events, "
     "stats, stop), or None when anything is unusual."},
    {"fill_block", fill_block, METH_VARARGS,
     "fill_block(line, pos, events, stats, stat_limit, metadata_id, offset_ps, duration_ps, row): "
     "one framed block decoded into the event buffers at `row`; returns its stat columns."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_wire", NULL, -1, methods};

PyMODINIT_FUNC PyInit__wire(void) { return PyModule_Create(&module); }
