/* The structural check of a batch's records, in C: see record_check.py.
 *
 * check_records(data, count, require_keys) -> (problem, record_index)
 *
 * Walks the varints of `count` records in `data` (the uncompressed records of
 * one batch) and returns the same answer as record_check.check_records_py:
 * (0, -1) when every record is sound, else the first problem's code (the
 * Problem enum there) and the index of the record it is in. Nothing is
 * allocated per record and no Python object is created but the result.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

enum {
    OK = 0,
    TRUNCATED = 1,
    BAD_VARINT = 2,
    BAD_LENGTH = 3,
    LENGTH_MISMATCH = 4,
    OFFSET_DELTA = 5,
    NEGATIVE_SIZE = 6,
    NULL_KEY = 7,
    NULL_HEADER_KEY = 8,
    TRAILING_BYTES = 9,
};

/* Read a zigzag varint of at most max_bytes from [*pos, end) into *value.
 * Returns OK, `short_problem` when it runs past `end`, or BAD_VARINT. */
static int read_varint(const uint8_t *data, Py_ssize_t *pos, Py_ssize_t end, int max_bytes,
                       int short_problem, int64_t *value) {
    uint64_t raw = 0;
    Py_ssize_t p = *pos;
    uint8_t top = max_bytes == 5 ? 0x0F : 0x01;
    for (int i = 0; i < max_bytes; i++) {
        if (p >= end)
            return short_problem;
        uint8_t byte = data[p++];
        if (i == max_bytes - 1 && byte > top)
            return BAD_VARINT;
        raw |= (uint64_t)(byte & 0x7F) << (7 * i);
        if (byte < 0x80) {
            *value = (int64_t)(raw >> 1) ^ -(int64_t)(raw & 1);
            *pos = p;
            return OK;
        }
    }
    return BAD_VARINT; /* unreachable: the last byte was checked */
}

/* Skip a length-prefixed field of `size` bytes (-1: null). */
static int skip(Py_ssize_t *pos, int64_t size, Py_ssize_t end) {
    if (size < -1)
        return NEGATIVE_SIZE;
    if (size > 0) {
        if (size > end - *pos)
            return LENGTH_MISMATCH;
        *pos += (Py_ssize_t)size;
    }
    return OK;
}

#define TRY(call)          \
    do {                   \
        int problem_ = (call); \
        if (problem_)      \
            return problem_; \
    } while (0)

/* The fields of one record after its length: [pos, end). */
static int check_body(const uint8_t *data, Py_ssize_t pos, Py_ssize_t end, int64_t index,
                      int require_keys) {
    int64_t value;
    if (pos + 1 > end)
        return LENGTH_MISMATCH;
    pos += 1; /* attributes */
    TRY(read_varint(data, &pos, end, 10, LENGTH_MISMATCH, &value)); /* timestampDelta */
    TRY(read_varint(data, &pos, end, 5, LENGTH_MISMATCH, &value));  /* offsetDelta */
    if (value != index)
        return OFFSET_DELTA;
    TRY(read_varint(data, &pos, end, 5, LENGTH_MISMATCH, &value)); /* key */
    if (value == -1 && require_keys)
        return NULL_KEY;
    TRY(skip(&pos, value, end));
    TRY(read_varint(data, &pos, end, 5, LENGTH_MISMATCH, &value)); /* value */
    TRY(skip(&pos, value, end));
    int64_t headers;
    TRY(read_varint(data, &pos, end, 5, LENGTH_MISMATCH, &headers));
    if (headers < 0)
        return NEGATIVE_SIZE;
    for (int64_t h = 0; h < headers; h++) {
        TRY(read_varint(data, &pos, end, 5, LENGTH_MISMATCH, &value));
        if (value == -1)
            return NULL_HEADER_KEY;
        TRY(skip(&pos, value, end));
        TRY(read_varint(data, &pos, end, 5, LENGTH_MISMATCH, &value));
        TRY(skip(&pos, value, end));
    }
    return pos == end ? OK : LENGTH_MISMATCH;
}

static int walk(const uint8_t *data, Py_ssize_t n, Py_ssize_t count, int require_keys,
                Py_ssize_t *index) {
    Py_ssize_t pos = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        int64_t length;
        *index = i;
        TRY(read_varint(data, &pos, n, 5, TRUNCATED, &length));
        if (length < 0 || length > n - pos)
            return BAD_LENGTH;
        Py_ssize_t end = pos + (Py_ssize_t)length;
        TRY(check_body(data, pos, end, i, require_keys));
        pos = end;
    }
    if (pos != n) {
        *index = count;
        return TRAILING_BYTES;
    }
    *index = -1;
    return OK;
}

static PyObject *check_records(PyObject *module, PyObject *args) {
    Py_buffer buffer;
    Py_ssize_t count;
    int require_keys;
    (void)module;
    if (!PyArg_ParseTuple(args, "y*np:check_records", &buffer, &count, &require_keys))
        return NULL;
    if (count < 0) {
        PyBuffer_Release(&buffer);
        PyErr_SetString(PyExc_ValueError, "record count must not be negative");
        return NULL;
    }
    /* The GIL is kept: a walk takes microseconds, less than releasing it would. */
    Py_ssize_t index = -1;
    int problem = walk((const uint8_t *)buffer.buf, buffer.len, count, require_keys, &index);
    PyBuffer_Release(&buffer);
    return Py_BuildValue("(in)", problem, index);
}

static PyMethodDef methods[] = {
    {"check_records", check_records, METH_VARARGS,
     "check_records(data, count, require_keys) -> (problem, record_index)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_record_check",
    .m_doc = "The structural check of a batch's records.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__record_check(void) { return PyModule_Create(&module); }
