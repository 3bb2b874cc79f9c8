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
 * then decodes one block into the line's event columns (allocated once, by the caller) and its stats,
 * grouped as the reader types them. The GIL is released while bytes are walked, so two threads fill
 * two blocks at once.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
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

/* The length of a length-delimited field, which must fit in what is left before `end`. */
static inline int read_length(const uint8_t *b, Py_ssize_t *pos, Py_ssize_t end, Py_ssize_t *length) {
    uint64_t value;
    if (!read_varint(b, pos, end, &value) || value > (uint64_t)(end - *pos)) return 0;
    *length = (Py_ssize_t)value;
    return 1;
}

/* Skip the value of a field the decoders ignore (fields 8-15 of a stat, 6-15 of an event). */
static inline int skip_value(const uint8_t *b, Py_ssize_t *pos, Py_ssize_t end, int wire) {
    uint64_t value;
    Py_ssize_t length;
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
        if (!read_length(b, pos, end, &length)) return 0;
        *pos += length;
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
            Py_ssize_t length;
            if (!read_length(b, &pos, end, &length)) return 0;
            if (cols) {
                cols->kind[k] = tag == 0x2A ? K_STR : K_BYTES;
                cols->text_start[k] = pos;
                cols->text_end[k] = pos + length;
            }
            pos += length;
        } else if (field >= 8 && field <= 15) {
            if (!skip_value(b, &pos, end, wire)) return 0;
        } else {
            return 0;
        }
    }
    return 1;
}

/* One XEvent in [pos, end): its fields into row `row`, its stats from stat index `*k` on. `shallow`
 * (counting only): each stat's bytes are skipped by their length, not checked inside. */
static int event(const uint8_t *b, Py_ssize_t pos, Py_ssize_t end, Columns *cols, Py_ssize_t row,
                 Py_ssize_t *k, int shallow) {
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
            Py_ssize_t length;
            if (!read_length(b, &pos, end, &length)) return 0;
            if (cols && *k >= cols->stat_capacity) return 0;
            if (cols) {
                cols->owner[*k] = (int32_t)row;
                cols->stat_id[*k] = 0;
                cols->kind[*k] = K_NONE;
                cols->bits[*k] = 0;
                cols->text_start[*k] = 0;
                cols->text_end[*k] = 0;
            }
            if (!shallow && !one_stat(b, pos, pos + length, cols, *k)) return 0;
            *k += 1;
            pos += length;
        } else if (field >= 6 && field <= 15) {
            if (!skip_value(b, &pos, end, wire)) return 0;
        } else {
            return 0;
        }
    }
    return 1;
}

/* Does the length at `pos` run past `size` (a window that cuts an event: more bytes would complete
 * it), as opposed to being malformed (a varint over 64 bits)? */
static int truncated_length(const uint8_t *b, Py_ssize_t pos, Py_ssize_t size) {
    uint64_t value;
    Py_ssize_t p = pos;
    if (read_varint(b, &p, size, &value)) return value > (uint64_t)(size - p);
    if (size - pos >= 10) return 0;
    for (Py_ssize_t i = pos; i < size; i++)
        if (!(b[i] & 0x80)) return 0; /* it ended, and was too long */
    return 1;
}

/* Events from `pos` while they follow each other, at most `limit`, and no further event once
 * `stat_limit` stats are reached (a block's columns stay small whatever the events hold): counted
 * (cols NULL) or decoded. Returns 0 when something is unusual; sets the event and stat counts and
 * where the run stopped. With `partial` (a window of a longer line), an event cut by the window's
 * end stops the run at its tag instead of being unusual. `shallow`: see `event` (cols NULL only). */
static int walk(const uint8_t *b, Py_ssize_t size, Py_ssize_t pos, Py_ssize_t limit,
                Py_ssize_t stat_limit, Columns *cols, Py_ssize_t *events, Py_ssize_t *stats,
                Py_ssize_t *stop, int partial, int shallow) {
    Py_ssize_t row = 0, k = 0;
    while (row < limit && k < stat_limit && pos < size && b[pos] == EVENTS_TAG) {
        Py_ssize_t length, at = pos;
        pos += 1;
        if (!read_length(b, &pos, size, &length)) {
            if (partial && truncated_length(b, at + 1, size)) {
                pos = at;
                break;
            }
            return 0;
        }
        if (row >= INT32_MAX) return 0;
        if (cols) {
            cols->metadata_id[row] = cols->offset_ps[row] = cols->duration_ps[row] = 0;
        }
        if (!event(b, pos, pos + length, cols, row, &k, shallow && !cols)) return 0;
        pos += length;
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

/* frame(line, pos, limit, stat_limit, partial=False, shallow=False)
 *     -> None | (block starts, events, stats, stop)
 * The blocks of the consecutive events from `pos` (each as `walk` cuts them), the first three as
 * bytes of native int64, and where the events stop. `partial`: `line` is a window of a longer line,
 * and the events stop before one the window cuts (its tag is `stop`). `shallow`: the stats' insides
 * are not checked (twice as fast); `fill_block` checks them, and a caller must then treat its
 * ValueError as the walker declining the line. */
static PyObject *frame(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos, limit, stat_limit;
    int partial = 0, shallow = 0;
    if (!PyArg_ParseTuple(args, "y*nnn|pp", &view, &pos, &limit, &stat_limit, &partial, &shallow)) return NULL;
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
        if (!walk(b, size, pos, limit, stat_limit, NULL, &events, &stats, &stop, partial, shallow)) {
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

/* A (stat id, value kind) pair of a block and its stats: the reader types each pair's values as
 * one piece, so the stats leave here grouped by pair instead of in file order. */
typedef struct {
    int64_t id;
    int64_t kind;
    int64_t count;
} Group;

/* Groups in ascending (stat id, kind) order, as the numpy decoder orders them. */
static int compare_groups(const void *a, const void *b) {
    const Group *x = a, *y = b;
    if (x->id != y->id) return (x->id > y->id) - (x->id < y->id);
    return (x->kind > y->kind) - (x->kind < y->kind);
}

static inline uint64_t group_hash(int64_t id, int8_t kind) {
    return ((uint64_t)id * 0x9E3779B97F4A7C15ULL) ^ (uint64_t)kind;
}

/* Stats [0, n) of `cols` grouped by (id, kind): the groups in ascending order into *groups_out (malloc'd),
 * each group's stats in file order into the four output columns. Returns 0 when out of memory. */
static int group_stats(const Columns *cols, Py_ssize_t n, int32_t *owner, uint64_t *bits, int64_t *text_start,
                       int64_t *text_end, Group **groups_out, Py_ssize_t *group_count) {
    Py_ssize_t capacity = 64, used = 0;
    Py_ssize_t *slots = PyMem_RawMalloc(capacity * sizeof(Py_ssize_t)); /* -1 or index into groups */
    Group *groups = PyMem_RawMalloc(capacity * sizeof(Group));
    int32_t *group_of = PyMem_RawMalloc((n ? n : 1) * sizeof(int32_t));
    int64_t *cursor = NULL;
    int ok = slots && groups && group_of;
    if (ok)
        for (Py_ssize_t i = 0; i < capacity; i++) slots[i] = -1;
    for (Py_ssize_t k = 0; ok && k < n; k++) {
        int64_t id = cols->stat_id[k];
        int8_t kind = cols->kind[k];
        Py_ssize_t at = (Py_ssize_t)(group_hash(id, kind) & (uint64_t)(capacity - 1));
        while (slots[at] >= 0 && !(groups[slots[at]].id == id && groups[slots[at]].kind == kind))
            at = (at + 1) & (capacity - 1);
        if (slots[at] < 0) {
            if (2 * (used + 1) > capacity) { /* grow: rehash every group, then look again */
                Py_ssize_t grown_capacity = 2 * capacity;
                Py_ssize_t *grown = PyMem_RawMalloc(grown_capacity * sizeof(Py_ssize_t));
                Group *more = PyMem_RawRealloc(groups, grown_capacity * sizeof(Group));
                if (!grown || !more) {
                    PyMem_RawFree(grown);
                    if (more) groups = more;
                    ok = 0;
                    break;
                }
                groups = more;
                for (Py_ssize_t i = 0; i < grown_capacity; i++) grown[i] = -1;
                for (Py_ssize_t g = 0; g < used; g++) {
                    Py_ssize_t a = (Py_ssize_t)(group_hash(groups[g].id, (int8_t)groups[g].kind) &
                                                (uint64_t)(grown_capacity - 1));
                    while (grown[a] >= 0) a = (a + 1) & (grown_capacity - 1);
                    grown[a] = g;
                }
                PyMem_RawFree(slots);
                slots = grown;
                capacity = grown_capacity;
                k -= 1; /* this stat again, in the larger table */
                continue;
            }
            slots[at] = used;
            groups[used].id = id;
            groups[used].kind = kind;
            groups[used].count = 0;
            used += 1;
        }
        groups[slots[at]].count += 1;
        group_of[k] = (int32_t)slots[at];
    }
    if (ok) {
        /* each group's first output row, in ascending key order; cursor is indexed by first-seen order */
        Group *sorted = PyMem_RawMalloc((used ? used : 1) * sizeof(Group));
        cursor = PyMem_RawMalloc((used ? used : 1) * sizeof(int64_t));
        ok = sorted && cursor;
        if (ok) {
            for (Py_ssize_t g = 0; g < used; g++) {
                sorted[g] = groups[g];
                sorted[g].count = g; /* remember the first-seen index while sorting */
            }
            qsort(sorted, (size_t)used, sizeof(Group), compare_groups);
            int64_t row = 0;
            for (Py_ssize_t g = 0; g < used; g++) {
                Py_ssize_t first_seen = (Py_ssize_t)sorted[g].count;
                cursor[first_seen] = row;
                sorted[g].count = groups[first_seen].count;
                row += sorted[g].count;
            }
            for (Py_ssize_t k = 0; k < n; k++) {
                int64_t at = cursor[group_of[k]]++;
                owner[at] = cols->owner[k];
                bits[at] = cols->bits[k];
                text_start[at] = cols->text_start[k];
                text_end[at] = cols->text_end[k];
            }
            PyMem_RawFree(groups);
            groups = sorted;
        } else {
            PyMem_RawFree(sorted);
        }
    }
    PyMem_RawFree(cursor);
    PyMem_RawFree(slots);
    PyMem_RawFree(group_of);
    if (!ok) {
        PyMem_RawFree(groups);
        return 0;
    }
    *groups_out = groups;
    *group_count = used;
    return 1;
}

/* fill_block(line, pos, events, stats, stat_limit, metadata_id, offset_ps, duration_ps, row)
 *   -> (groups, owner, bits, text_start, text_end)
 * Decodes the block `frame` found at `pos` (`events` events, `stats` stats): the event fields into
 * rows [row, row + events) of the three writable int64 buffers; the stats grouped by (stat id, value
 * kind), the groups in ascending (id, kind) order as int64 rows (id, kind, count) in `groups`, and
 * per stat, group after group and in file order within one: its event (int32, counted from `row`),
 * its value bits (uint64) and the span of its text value (int64 start and end in `line`). */
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
    char *data[4];
    PyObject *out[4] = {NULL};
    size_t widths[4] = {4, 8, 8, 8};
    for (int i = 0; i < 4; i++) {
        out[i] = column(stats, widths[i], &data[i]);
        if (!out[i]) {
            for (int j = 0; j < i; j++) Py_DECREF(out[j]);
            goto done;
        }
    }
    Py_ssize_t some = stats ? stats : 1;
    Columns cols = {
        .metadata_id = (int64_t *)meta.buf + row,
        .offset_ps = (int64_t *)offset.buf + row,
        .duration_ps = (int64_t *)duration.buf + row,
        .owner = PyMem_RawMalloc(some * sizeof(int32_t)),
        .stat_id = PyMem_RawMalloc(some * sizeof(int64_t)),
        .kind = PyMem_RawMalloc(some),
        .bits = PyMem_RawMalloc(some * sizeof(uint64_t)),
        .text_start = PyMem_RawMalloc(some * sizeof(int64_t)),
        .text_end = PyMem_RawMalloc(some * sizeof(int64_t)),
        .stat_capacity = stats,
    };
    Group *groups = NULL;
    Py_ssize_t group_count = 0, got_events = 0, got_stats = 0, stop = 0;
    int ok = cols.owner && cols.stat_id && cols.kind && cols.bits && cols.text_start && cols.text_end;
    int walked = 0;
    /* one walk: the event count is its limit and the stat columns' capacity is checked before each
     * stat, so a block `frame` did not cut fails here instead of writing past a buffer */
    Py_BEGIN_ALLOW_THREADS
    if (ok) {
        walked = walk((const uint8_t *)view.buf, view.len, pos, events, stat_limit, &cols, &got_events,
                      &got_stats, &stop, 0, 0) && got_events == events && got_stats == stats;
        if (walked) {
            if (row) /* owners count from the line's first event */
                for (Py_ssize_t k = 0; k < stats; k++) cols.owner[k] += (int32_t)row;
            ok = group_stats(&cols, stats, (int32_t *)data[0], (uint64_t *)data[1], (int64_t *)data[2],
                             (int64_t *)data[3], &groups, &group_count);
        }
    }
    Py_END_ALLOW_THREADS
    PyMem_RawFree(cols.owner);
    PyMem_RawFree(cols.stat_id);
    PyMem_RawFree(cols.kind);
    PyMem_RawFree(cols.bits);
    PyMem_RawFree(cols.text_start);
    PyMem_RawFree(cols.text_end);
    if (!ok || !walked) {
        for (int i = 0; i < 4; i++) Py_DECREF(out[i]);
        PyMem_RawFree(groups);
        if (!ok)
            PyErr_NoMemory();
        else
            PyErr_SetString(PyExc_ValueError, "the block is not the one frame() found at this position");
        goto done;
    }
    char *table;
    PyObject *group_rows = column(group_count, 3 * sizeof(int64_t), &table);
    if (group_rows) {
        for (Py_ssize_t g = 0; g < group_count; g++) {
            int64_t *r = (int64_t *)table + 3 * g;
            r[0] = groups[g].id;
            r[1] = groups[g].kind;
            r[2] = groups[g].count;
        }
        result = Py_BuildValue("(NNNNN)", group_rows, out[0], out[1], out[2], out[3]);
    } else {
        for (int i = 0; i < 4; i++) Py_DECREF(out[i]);
    }
    PyMem_RawFree(groups);
done:
    PyBuffer_Release(&view);
    PyBuffer_Release(&meta);
    PyBuffer_Release(&offset);
    PyBuffer_Release(&duration);
    return result;
}

/* One XEventMetadata: its name and display name as [start, end) in `b`, and whether it has stats.
 * 0 for what the runtime must decide: a field of the schema with another wire type, a name or
 * display name given twice (the runtime keeps the last), a group. */
static int metadata_value(const uint8_t *b, Py_ssize_t pos, Py_ssize_t end, Py_ssize_t span[4],
                          int *has_stats) {
    int seen_name = 0, seen_display = 0;
    span[0] = span[1] = span[2] = span[3] = 0;
    *has_stats = 0;
    while (pos < end) {
        uint64_t key;
        if (!read_varint(b, &pos, end, &key)) return 0;
        int number = (int)(key >> 3), wire = (int)(key & 7);
        if (number == 0) return 0;
        if (number == 2 || number == 4 || number == 5) {
            Py_ssize_t length;
            if (wire != 2 || !read_length(b, &pos, end, &length)) return 0;
            if (number == 5) {
                *has_stats = 1;
            } else {
                int *seen = number == 2 ? &seen_name : &seen_display;
                if (*seen) return 0;
                *seen = 1;
                span[number == 2 ? 0 : 2] = pos;
                span[number == 2 ? 1 : 3] = pos + length;
            }
            pos += length;
        } else if ((number == 1 && wire != 0) || (number == 3 && wire != 2) ||
                   (number == 6 && wire != 0 && wire != 2)) {
            return 0;
        } else if (!skip_value(b, &pos, end, wire)) {
            return 0;
        }
    }
    return 1;
}

/* metadata_table(header) -> None | (keys, names, display_names, special)
 * The event metadata map (XPlane field 4) of a plane's serialized non-line fields, entry by entry in
 * file order: keys as bytes of native int64, names and display names as str, and per entry a byte
 * that is 1 where the reader must take the entry from the runtime (it has stats, or its name ends
 * with '#': TraceMe-encoded arguments). None for anything unusual (a malformed field, a key or value
 * given twice, a name that is not UTF-8): the caller then reads every entry from the runtime. */
static PyObject *metadata_table(PyObject *self, PyObject *args) {
    Py_buffer view;
    if (!PyArg_ParseTuple(args, "y*", &view)) return NULL;
    const uint8_t *b = (const uint8_t *)view.buf;
    Py_ssize_t pos = 0, end = view.len;
    PyObject *keys = PyByteArray_FromStringAndSize(NULL, 0);
    PyObject *special = PyByteArray_FromStringAndSize(NULL, 0);
    PyObject *names = PyList_New(0), *displays = PyList_New(0), *result = NULL;
    if (!keys || !special || !names || !displays) goto done;
    while (pos < end) {
        uint64_t key;
        if (!read_varint(b, &pos, end, &key)) goto unusual;
        int number = (int)(key >> 3), wire = (int)(key & 7);
        if (number == 0) goto unusual;
        if (number != 4) {
            if (!skip_value(b, &pos, end, wire)) goto unusual;
            continue;
        }
        Py_ssize_t length;
        if (wire != 2 || !read_length(b, &pos, end, &length)) goto unusual;
        Py_ssize_t entry_end = pos + length, value_start = 0, value_end = 0;
        int64_t entry_key = 0;
        int seen_key = 0, seen_value = 0;
        while (pos < entry_end) {
            uint64_t field, value;
            if (!read_varint(b, &pos, entry_end, &field)) goto unusual;
            int n = (int)(field >> 3), w = (int)(field & 7);
            if (n == 0) goto unusual;
            if (n == 1) {
                if (w != 0 || seen_key || !read_varint(b, &pos, entry_end, &value)) goto unusual;
                entry_key = (int64_t)value;
                seen_key = 1;
            } else if (n == 2) {
                Py_ssize_t value_length;
                if (w != 2 || seen_value || !read_length(b, &pos, entry_end, &value_length)) goto unusual;
                value_start = pos;
                value_end = pos + value_length;
                pos = value_end;
                seen_value = 1;
            } else if (!skip_value(b, &pos, entry_end, w)) {
                goto unusual;
            }
        }
        Py_ssize_t span[4];
        int has_stats = 0;
        if (!metadata_value(b, value_start, value_end, span, &has_stats)) goto unusual;
        PyObject *name = PyUnicode_DecodeUTF8((const char *)b + span[0], span[1] - span[0], NULL);
        if (!name) goto undecodable;
        PyObject *display = PyUnicode_DecodeUTF8((const char *)b + span[2], span[3] - span[2], NULL);
        if (!display) {
            Py_DECREF(name);
            goto undecodable;
        }
        int appended = PyList_Append(names, name) == 0 && PyList_Append(displays, display) == 0;
        Py_DECREF(name);
        Py_DECREF(display);
        if (!appended) goto done;
        char flag = (char)(has_stats || (span[1] > span[0] && b[span[1] - 1] == '#'));
        Py_ssize_t at = PyByteArray_GET_SIZE(keys);
        if (PyByteArray_Resize(keys, at + 8) < 0) goto done;
        memcpy(PyByteArray_AS_STRING(keys) + at, &entry_key, 8);
        if (PyByteArray_Resize(special, at / 8 + 1) < 0) goto done;
        PyByteArray_AS_STRING(special)[at / 8] = flag;
    }
    result = Py_BuildValue("(OOOO)", keys, names, displays, special);
    goto done;
undecodable:
    if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) goto done;
    PyErr_Clear();
unusual:
    Py_INCREF(Py_None);
    result = Py_None;
done:
    Py_XDECREF(keys);
    Py_XDECREF(special);
    Py_XDECREF(names);
    Py_XDECREF(displays);
    PyBuffer_Release(&view);
    return result;
}

/* split_window(window, base, end, split, counted, run_start, n_counted, max_split, max_counted)
 *   -> None | (spans, runs, pos, run_start, n_counted)
 * wire.split_fields over one window of a message's bytes (`window` holds [base, base + len) of the
 * message region [.., end)): the spans of length-delimited field `split` and the runs of the other
 * fields between them, as bytes of native int64 pairs, from `base` until a field header no longer
 * fits in the window (the caller reads the next window from `pos`) or the region ends. `counted` is
 * a bit mask of field numbers (< 64) whose length-delimited values count against `max_counted`.
 * None for anything unusual: the caller then walks the fields again in Python, which says what. */
static PyObject *split_window(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t base, end, run_start, n_counted, max_split, max_counted, n_split = 0;
    long long split;
    unsigned long long counted;
    if (!PyArg_ParseTuple(args, "y*nnLKnnnn", &view, &base, &end, &split, &counted, &run_start,
                          &n_counted, &max_split, &max_counted))
        return NULL;
    const uint8_t *b = (const uint8_t *)view.buf;
    Py_ssize_t length = view.len, pos = base, capacity = 64, n_spans = 0, n_runs = 0;
    int64_t *spans = PyMem_Malloc(2 * capacity * sizeof(int64_t));
    int64_t *runs = PyMem_Malloc(2 * capacity * sizeof(int64_t));
    PyObject *result = NULL;
    if (!spans || !runs) {
        PyErr_NoMemory();
        goto done;
    }
    while (pos < end) {
        Py_ssize_t i = pos - base;
        if (i + 20 > length && base + length < end) break; /* the next window, from pos */
        uint64_t key, value = 0;
        if (!read_varint(b, &i, length, &key)) goto unusual;
        int64_t number = (int64_t)(key >> 3);
        int wire = (int)(key & 7);
        Py_ssize_t start, stop;
        if (number == 0) goto unusual;
        if (wire == 0 || wire == 2) {
            if (!read_varint(b, &i, length, &value)) goto unusual;
            start = base + i;
            if (wire == 2 && value > (uint64_t)(end - start)) goto unusual;
            stop = wire == 2 ? start + (Py_ssize_t)value : start;
        } else if (wire == 1 || wire == 5) {
            start = base + i;
            stop = start + (wire == 1 ? 8 : 4);
        } else {
            goto unusual;
        }
        if (stop > end) goto unusual;
        int64_t *pairs = NULL;
        if (number == split && wire == 2) {
            if (run_start >= 0) {
                pairs = runs + 2 * n_runs++;
                pairs[0] = run_start;
                pairs[1] = pos;
                run_start = -1;
            }
            pairs = spans + 2 * n_spans++;
            pairs[0] = start;
            pairs[1] = stop;
            if (++n_split > max_split) goto unusual;
        } else {
            if (wire != 0 && number < 64 && (counted >> number & 1) && ++n_counted > max_counted) goto unusual;
            if (run_start < 0) run_start = pos;
        }
        pos = stop;
        if (n_spans == capacity || n_runs == capacity) {
            int64_t *grown_spans = PyMem_Realloc(spans, 4 * capacity * sizeof(int64_t));
            if (grown_spans) spans = grown_spans;
            int64_t *grown_runs = grown_spans ? PyMem_Realloc(runs, 4 * capacity * sizeof(int64_t)) : NULL;
            if (grown_runs) runs = grown_runs;
            if (!grown_spans || !grown_runs) {
                PyErr_NoMemory();
                goto done;
            }
            capacity *= 2;
        }
    }
    result = Py_BuildValue("(y#y#nnn)", (const char *)spans, (Py_ssize_t)(n_spans * 2 * sizeof(int64_t)),
                           (const char *)runs, (Py_ssize_t)(n_runs * 2 * sizeof(int64_t)), pos, run_start,
                           n_counted);
    goto done;
unusual:
    Py_INCREF(Py_None);
    result = Py_None;
done:
    PyMem_Free(spans);
    PyMem_Free(runs);
    PyBuffer_Release(&view);
    return result;
}

static PyMethodDef methods[] = {
    {"frame", frame, METH_VARARGS,
     "frame(line, pos, limit, stat_limit, partial=False, shallow=False): the blocks of consecutive "
     "XLine events from byte `pos` (at most `limit` events each, none more once `stat_limit` stats "
     "are in) as (starts, events, stats, stop), or None when anything is unusual; `partial`: stop "
     "before an event the buffer's end cuts; `shallow`: stats not checked inside (fill_block does)."},
    {"fill_block", fill_block, METH_VARARGS,
     "fill_block(line, pos, events, stats, stat_limit, metadata_id, offset_ps, duration_ps, row): "
     "one framed block decoded into the event buffers at `row`; returns its stats grouped by "
     "(stat id, value kind) as (groups, owner, bits, text_start, text_end)."},
    {"split_window", split_window, METH_VARARGS,
     "split_window(window, base, end, split, counted, run_start, n_counted, max_split, max_counted): "
     "wire.split_fields over one window; (spans, runs, pos, run_start, n_counted) or None."},
    {"metadata_table", metadata_table, METH_VARARGS,
     "metadata_table(header): a plane's event metadata entries in file order as (keys, names, "
     "display_names, special), special[i] = 1 where the runtime must read entry i; None when unusual."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_wire", NULL, -1, methods};

PyMODINIT_FUNC PyInit__wire(void) { return PyModule_Create(&module); }
