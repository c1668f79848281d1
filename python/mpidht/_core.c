/*
 * mpidht._core: the C library as a Python type. Thin on purpose: it checks
 * buffer sizes and turns statuses into exceptions; shapes, dtypes, enums
 * and documentation live in the Python layer (table.py).
 *
 * A Table is never freed by the garbage collector: freeing is collective,
 * and collection order differs between processes. close() frees it; a
 * Table dropped while open leaks its window and warns (ResourceWarning).
 *
 * The communicator arrives as its MPI handle, an integer (mpi4py's
 * Comm.handle), so that the extension needs no mpi4py headers at build
 * time and works with whichever mpi4py is installed, as long as it uses
 * the same MPI library (the Python layer checks that at import).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "mpidht.h"
#include "collective_check.h"
#include "_interp.h"
#include "_rows.h"

static PyObject *core_error; /* mpidht._core.Error(message, status) */

static PyObject *raise_status(mpidht_status_t st)
{
    PyObject *args = Py_BuildValue("(si)", mpidht_strerror(st), (int)st);
    if (args) {
        PyErr_SetObject(core_error, args);
        Py_DECREF(args);
    }
    return NULL;
}

/* raise_status, with ": " and the error detail after the library's
 * message where the detail is not empty. */
static PyObject *raise_detailed(mpidht_status_t st, const char *detail)
{
    if (!detail || !*detail || !strcmp(detail, mpidht_strerror(st)))
        return raise_status(st);
    PyObject *text = PyUnicode_DecodeUTF8(detail, (Py_ssize_t)strlen(detail), "replace");
    PyObject *message = text ? PyUnicode_FromFormat("%s: %U", mpidht_strerror(st), text) : NULL;
    PyObject *args = message ? Py_BuildValue("(Oi)", message, (int)st) : NULL;
    if (args)
        PyErr_SetObject(core_error, args);
    Py_XDECREF(args);
    Py_XDECREF(message);
    Py_XDECREF(text);
    return NULL;
}

typedef struct {
    PyObject_HEAD
    mpidht_t *table;
    size_t key_size;
    size_t value_size;
    int busy; /* a call is running with the GIL released */
    /* The user's hash function, or NULL for the library's; the first
     * exception it or an update function raised during a call, re-raised
     * when the call returns. */
    PyObject *hash;
    PyObject *hash_error[3]; /* type, value, traceback */
    int hash_raised;         /* the hash function raised during this call */
    int stop_updates;        /* a BaseException (Ctrl-C): no more update calls */
    /* During update calls: the Python function and the object it returns
     * to keep a key as it is. */
    PyObject *update_fn;
    PyObject *keep;
} TableObject;

/* mpidht_hash_fn calling the Python hash function of the table in
 * user_data; it may run with or without the GIL held. An exception (or a
 * result that is not an int) is kept for the caller and counts as 0. */
static uint64_t python_hash(const void *key, size_t key_size, void *user_data)
{
    TableObject *self = user_data;
    PyGILState_STATE gil = PyGILState_Ensure();
    uint64_t hash = 0;
    if (!self->hash_raised) {
        PyObject *r = PyObject_CallFunction(self->hash, "y#", (const char *)key,
                                            (Py_ssize_t)key_size);
        if (r && PyLong_Check(r))
            hash = (uint64_t)PyLong_AsUnsignedLongLongMask(r);
        else if (r)
            PyErr_Format(PyExc_TypeError, "the hash function must return an int, not %.100s",
                         Py_TYPE(r)->tp_name);
        Py_XDECREF(r);
        if (PyErr_Occurred()) {
            /* Raised instead of an update function's: what the call did
             * is unspecified now. */
            for (int i = 0; i < 3; ++i)
                Py_CLEAR(self->hash_error[i]);
            PyErr_Fetch(&self->hash_error[0], &self->hash_error[1], &self->hash_error[2]);
            self->hash_raised = 1;
        }
    }
    PyGILState_Release(gil);
    return hash;
}

/* What a buffer's struct format holds that is no plain data (outside the
 * :names: of fields): "Python objects" (code 'O': pointers, meaningless in
 * another process or after the objects are gone), "str" (NumPy's 'w',
 * UCS-4 text padded to the longest in its array, so the bytes of one text
 * depend on the others); NULL where it holds neither. */
static const char *not_plain(const char *format)
{
    int in_name = 0;
    for (const char *c = format; c && *c; ++c) {
        in_name ^= *c == ':';
        if (!in_name && *c == 'O')
            return "Python objects";
        if (!in_name && *c == 'w')
            return "str (encode each text to bytes of the size)";
    }
    return NULL;
}

/* A bytes object with the bytes of a buffer that is not contiguous (a
 * strided memoryview), in C order; NULL with an exception if it holds
 * Python objects (TypeError) or cannot be read. */
static PyObject *contiguous_copy(PyObject *obj, const char *what)
{
    Py_buffer strided;
    if (PyObject_GetBuffer(obj, &strided, PyBUF_FULL_RO) != 0)
        return NULL;
    PyObject *copy = NULL;
    const char *refused = not_plain(strided.format);
    if (refused)
        PyErr_Format(PyExc_TypeError, "%s must hold plain numbers or bytes, not %s", what,
                     refused);
    else if ((copy = PyBytes_FromStringAndSize(NULL, strided.len)) &&
             PyBuffer_ToContiguous(PyBytes_AS_STRING(copy), &strided, strided.len, 'C') != 0)
        Py_CLEAR(copy);
    PyBuffer_Release(&strided);
    return copy;
}

/* Gets a buffer of obj with the given flags, refusing (TypeError) one
 * whose items are not plain data (not_plain). A buffer to be read that
 * is not contiguous where flags ask for it (a strided memoryview or NumPy
 * array) is read
 * through a contiguous copy; one to be written raises TypeError. */
static int get_plain(PyObject *obj, Py_buffer *view, int flags, const char *what)
{
    if (PyObject_GetBuffer(obj, view, flags | PyBUF_FORMAT) != 0) {
        /* Not contiguous: a memoryview raises BufferError, NumPy
         * ValueError. */
        if (!PyErr_ExceptionMatches(PyExc_BufferError) &&
            !PyErr_ExceptionMatches(PyExc_ValueError))
            return -1;
        if (flags & PyBUF_WRITABLE) {
            PyObject *type, *value, *trace;
            PyErr_Fetch(&type, &value, &trace);
            PyErr_Format(PyExc_TypeError, "%s must be a writable C-contiguous buffer: %S", what,
                         value ? value : Py_None);
            Py_XDECREF(type);
            Py_XDECREF(value);
            Py_XDECREF(trace);
            return -1;
        }
        PyErr_Clear();
        PyObject *copy = contiguous_copy(obj, what);
        if (!copy)
            return -1;
        int rc = PyObject_GetBuffer(copy, view, flags | PyBUF_FORMAT);
        Py_DECREF(copy); /* the view holds its own reference */
        return rc;
    }
    const char *refused = not_plain(view->format);
    if (refused) {
        PyErr_Format(PyExc_TypeError, "%s must hold plain numbers or bytes, not %s", what,
                     refused);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* mpidht_update_fn calling the Python update function of the table in
 * user_data as fn(index, value or None) with the GIL held: a bytes-like
 * result of value_size bytes is stored, None deletes the key, the table's
 * keep object keeps it. Anything else, or an Exception, keeps the key;
 * the rows after it are still called, as mpidht_update_batch finishes
 * them, and the first exception is raised when the call returns. A
 * BaseException that is no Exception (KeyboardInterrupt, SystemExit)
 * replaces it and stops the calls. Not called once the hash function
 * raised: the keys were placed by a failed hash. */
static mpidht_update_action_t python_update(size_t index, const void *key, void *value,
                                            int present, void *user_data)
{
    TableObject *self = user_data;
    (void)key;
    PyGILState_STATE gil = PyGILState_Ensure();
    mpidht_update_action_t action = MPIDHT_KEEP;
    if (!self->hash_raised && !self->stop_updates) {
        PyObject *old = present ? PyBytes_FromStringAndSize(value, (Py_ssize_t)self->value_size)
                                : Py_NewRef(Py_None);
        PyObject *r = old ? PyObject_CallFunction(self->update_fn, "nO", (Py_ssize_t)index,
                                                  old)
                          : NULL;
        Py_XDECREF(old);
        Py_buffer view;
        if (r == Py_None) {
            action = MPIDHT_DELETE;
        } else if (r && r != self->keep) {
            if (get_plain(r, &view, PyBUF_C_CONTIGUOUS, "the update function's result") == 0) {
                if ((size_t)view.len == self->value_size) {
                    memcpy(value, view.buf, self->value_size);
                    action = MPIDHT_STORE;
                } else {
                    PyErr_Format(PyExc_ValueError,
                                 "the update function must return %zu bytes, got %zd",
                                 self->value_size, view.len);
                }
                PyBuffer_Release(&view);
            }
        }
        Py_XDECREF(r);
        if (PyErr_Occurred()) {
            if (!PyErr_ExceptionMatches(PyExc_Exception)) {
                /* Ctrl-C and the like: raised in place of any other, and
                 * the rows left are not called. */
                for (int i = 0; i < 3; ++i)
                    Py_CLEAR(self->hash_error[i]);
                self->stop_updates = 1;
            }
            if (self->hash_error[0])
                PyErr_Clear(); /* the first is raised */
            else
                PyErr_Fetch(&self->hash_error[0], &self->hash_error[1], &self->hash_error[2]);
        }
    }
    PyGILState_Release(gil);
    return action;
}

/* Re-raises what the hash or update function raised during the last call:
 * -1 if it did, 0 if not. */
static int take_hash_error(TableObject *self)
{
    if (!self->hash_error[0])
        return 0;
    PyErr_Restore(self->hash_error[0], self->hash_error[1], self->hash_error[2]);
    self->hash_error[0] = self->hash_error[1] = self->hash_error[2] = NULL;
    self->hash_raised = self->stop_updates = 0;
    return -1;
}

/* The result of a call that returned st: NULL with an exception if the
 * hash function raised or st is an error, else success (a new reference
 * to Py_None). */
static PyObject *finish(TableObject *self, mpidht_status_t st)
{
    if (take_hash_error(self) != 0)
        return NULL;
    if (st != MPIDHT_OK && st != MPIDHT_NOT_FOUND)
        return raise_status(st);
    Py_RETURN_NONE;
}

/* finish() for a collective call on table: an error's message ends with
 * what the call failed on (mpidht_error_detail). */
static PyObject *finish_collective(TableObject *self, const mpidht_t *table,
                                   mpidht_status_t st)
{
    if (take_hash_error(self) != 0)
        return NULL;
    if (st != MPIDHT_OK)
        return raise_detailed(st, mpidht_error_detail(table));
    Py_RETURN_NONE;
}

/* The table, or NULL with an exception if it is closed or in use. */
static mpidht_t *usable(TableObject *self)
{
    if (!self->table) {
        raise_status(MPIDHT_ERR_INVALID_HANDLE);
        return NULL;
    }
    if (self->busy) {
        /* Status ERR_CONCURRENT_USE, with a message of its own: the call
         * is refused before it reaches the library, and the table stays
         * usable. */
        PyObject *args = Py_BuildValue(
            "(si)",
            "the table is in use by a call in progress (this call came from inside "
            "an update or hash function of that call, or from another thread); a "
            "table must not be used from its update or hash function, nor by two "
            "threads at the same time",
            (int)MPIDHT_ERR_CONCURRENT_USE);
        if (args) {
            PyErr_SetObject(core_error, args);
            Py_DECREF(args);
        }
        return NULL;
    }
    return self->table;
}

/* usable(), and marks the table busy for a call that releases the GIL. */
static mpidht_t *claim(TableObject *self)
{
    mpidht_t *table = usable(self);
    if (table)
        self->busy = 1;
    return table;
}

static void release(TableObject *self)
{
    self->busy = 0;
}

/* The MPI_Comm whose handle value is handle: an int in MPICH's ABI, a
 * pointer in Open MPI's. */
static MPI_Comm comm_from_handle(PyObject *handle, int *ok)
{
    unsigned long long raw = PyLong_AsUnsignedLongLongMask(handle);
    MPI_Comm comm;
    *ok = !(raw == (unsigned long long)-1 && PyErr_Occurred());
    if (sizeof comm == sizeof(unsigned int)) {
        unsigned int v = (unsigned int)raw;
        memcpy(&comm, &v, sizeof comm);
    } else {
        uintptr_t v = (uintptr_t)raw;
        memcpy(&comm, &v, sizeof comm < sizeof v ? sizeof comm : sizeof v);
    }
    return comm;
}

/* Converters ("O&") for the integers that the "I" and "K" formats would
 * cut to their low bits without a word. */

/* A count of candidates for the C API's unsigned. One beyond UINT_MAX is
 * passed as UINT_MAX, which mpidht_create refuses as it refuses any count
 * above MPIDHT_MAX_CANDIDATES (ERR_CANDIDATES, on every process), rather
 * than as its low bits, which may be a valid count; a negative one raises
 * OverflowError. */
static int candidates_converter(PyObject *obj, void *out)
{
    _Static_assert(MPIDHT_MAX_CANDIDATES < UINT_MAX, "UINT_MAX must be a refused count");
    PyObject *index = PyNumber_Index(obj);
    if (!index)
        return 0;
    int overflow = 0;
    long long value = PyLong_AsLongLongAndOverflow(index, &overflow);
    Py_DECREF(index);
    if (value == -1 && PyErr_Occurred())
        return 0;
    if (overflow < 0 || (overflow == 0 && value < 0)) {
        PyErr_SetString(PyExc_OverflowError, "candidates must not be negative");
        return 0;
    }
    *(unsigned *)out = overflow > 0 || (unsigned long long)value > UINT_MAX ? UINT_MAX
                                                                         : (unsigned)value;
    return 1;
}

/* A uint64_t; OverflowError outside 0 .. 2**64 - 1. */
static int uint64_converter(PyObject *obj, void *out)
{
    PyObject *index = PyNumber_Index(obj);
    if (!index)
        return 0;
    unsigned long long value = PyLong_AsUnsignedLongLong(index);
    Py_DECREF(index);
    if (value == (unsigned long long)-1 && PyErr_Occurred())
        return 0;
#if ULLONG_MAX > UINT64_MAX
    if (value > UINT64_MAX) {
        PyErr_SetString(PyExc_OverflowError, "int too big to convert to a 64-bit unsigned");
        return 0;
    }
#endif
    *(uint64_t *)out = (uint64_t)value;
    return 1;
}

static int Table_init(TableObject *self, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"comm_handle", "key_size", "value_size", "memory_per_process",
                            "protocol", "window", "candidates", "eviction", "timeout",
                            "hash", NULL};
    PyObject *comm_obj, *hash = Py_None;
    Py_ssize_t key_size, value_size, memory;
    int protocol, window, eviction;
    unsigned int candidates;
    double timeout;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OnnniiO&id|O", names, &comm_obj,
                                     &key_size, &value_size, &memory, &protocol, &window,
                                     candidates_converter, &candidates, &eviction, &timeout,
                                     &hash))
        return -1;
    if (hash != Py_None && !PyCallable_Check(hash)) {
        PyErr_SetString(PyExc_TypeError, "hash must be callable or None");
        return -1;
    }
    if (self->table) {
        PyErr_SetString(PyExc_RuntimeError, "the table is already created");
        return -1;
    }
    if (key_size < 0 || value_size < 0 || memory < 0) {
        PyErr_SetString(PyExc_ValueError, "sizes must not be negative");
        return -1;
    }
    int ok = 0;
    MPI_Comm comm = comm_from_handle(comm_obj, &ok);
    if (!ok)
        return -1;
    mpidht_params_t params;
    mpidht_params_init(&params);
    params.key_size = (size_t)key_size;
    params.value_size = (size_t)value_size;
    params.memory_per_process = (size_t)memory;
    params.protocol = (mpidht_protocol_t)protocol;
    params.window = (mpidht_window_kind_t)window;
    params.candidates = candidates;
    params.eviction = (mpidht_eviction_t)eviction;
    params.timeout = timeout;
    if (hash != Py_None) {
        Py_INCREF(hash);
        Py_XSETREF(self->hash, hash);
        params.hash = python_hash;
        params.hash_user_data = self;
    }
    char detail[1024] = "";
    params.error_detail = detail;
    params.error_detail_size = sizeof detail;
    mpidht_status_t st;
    mpidht_t *table = NULL;
    Py_BEGIN_ALLOW_THREADS
    st = mpidht_create(comm, &params, &table);
    Py_END_ALLOW_THREADS
    /* A hash that raised here was checked on every process beforehand
     * (table.py), so it is erratic: the table, if any, stays usable but
     * unreachable, and the exception is raised. */
    self->table = table;
    if (take_hash_error(self) != 0)
        return -1;
    if (st != MPIDHT_OK) {
        raise_detailed(st, detail);
        return -1;
    }
    self->key_size = (size_t)key_size;
    self->value_size = (size_t)value_size;
    return 0;
}

/* The Python objects the table holds, for the garbage collector: a table
 * referred to by its own hash function is collected too. */
static int Table_traverse(TableObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->hash);
    Py_VISIT(self->update_fn);
    Py_VISIT(self->keep);
    for (int i = 0; i < 3; ++i)
        Py_VISIT(self->hash_error[i]);
    return 0;
}

static int Table_clear_refs(TableObject *self)
{
    Py_CLEAR(self->hash);
    Py_CLEAR(self->update_fn);
    Py_CLEAR(self->keep);
    for (int i = 0; i < 3; ++i)
        Py_CLEAR(self->hash_error[i]);
    return 0;
}

/* A table dropped while open warns (freeing it is collective, so it stays
 * until MPI_Finalize). Runs with the object whole, and leaves any
 * exception in flight as it was; a warning turned into an error is
 * reported as unraisable, not left set. */
static void Table_finalize(TableObject *self)
{
    if (!self->table)
        return;
    PyObject *type, *value, *trace;
    PyErr_Fetch(&type, &value, &trace);
    if (PyErr_ResourceWarning((PyObject *)self, 1,
                              "mpidht table garbage-collected while open; its memory is "
                              "leaked (close() it, or use it as a context manager)") != 0)
        PyErr_WriteUnraisable((PyObject *)self);
    PyErr_Restore(type, value, trace);
}

static void Table_dealloc(TableObject *self)
{
    if (PyObject_CallFinalizerFromDealloc((PyObject *)self) != 0)
        return; /* resurrected by the warning's handler */
    PyObject_GC_UnTrack(self);
    Table_clear_refs(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Table_close(TableObject *self, PyObject *unused)
{
    (void)unused;
    if (!self->table)
        Py_RETURN_NONE;
    if (!claim(self))
        return NULL;
    mpidht_status_t st;
    Py_BEGIN_ALLOW_THREADS
    st = mpidht_free(&self->table);
    Py_END_ALLOW_THREADS
    release(self);
    if (!self->table)
        Py_CLEAR(self->hash); /* no call will hash again */
    return finish_collective(self, self->table, st); /* not freed on failure */
}

static PyObject *Table_closed(TableObject *self, void *unused)
{
    (void)unused;
    return PyBool_FromLong(self->table == NULL);
}

/* Gets a contiguous buffer of exactly size bytes of plain data, or raises
 * ValueError (TypeError: see get_plain). */
static int get_exact(PyObject *obj, Py_buffer *view, size_t size, const char *what,
                     int writable)
{
    if (get_plain(obj, view, writable ? PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS
                                      : PyBUF_C_CONTIGUOUS, what) != 0)
        return -1;
    if ((size_t)view->len != size) {
        PyErr_Format(PyExc_ValueError, "%s must be %zu bytes, got %zd", what, size,
                     view->len);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static PyObject *Table_read(TableObject *self, PyObject *key_obj)
{
    Py_buffer key;
    if (!usable(self))
        return NULL;
    if (get_exact(key_obj, &key, self->key_size, "key", 0) != 0)
        return NULL;
    PyObject *value = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)self->value_size);
    /* Busy while the library runs: a hash function that uses the table is
     * refused. The GIL stays held through the call, but getting the key's
     * buffer may have let another thread in since usable(): claim()
     * checks again. */
    mpidht_t *table = value ? claim(self) : NULL;
    mpidht_status_t st = MPIDHT_OK;
    if (table) {
        st = mpidht_read(table, key.buf, PyBytes_AS_STRING(value));
        release(self);
    }
    PyBuffer_Release(&key);
    if (!table) {
        Py_XDECREF(value);
        return NULL;
    }
    PyObject *done = finish(self, st);
    if (done && st == MPIDHT_OK) {
        Py_DECREF(done);
        return value;
    }
    Py_DECREF(value);
    return done; /* None on a miss, NULL on an error */
}

static PyObject *Table_write(TableObject *self, PyObject *args)
{
    PyObject *key_obj, *value_obj;
    Py_buffer key, value;
    if (!PyArg_ParseTuple(args, "OO", &key_obj, &value_obj) || !usable(self))
        return NULL;
    if (get_exact(key_obj, &key, self->key_size, "key", 0) != 0)
        return NULL;
    if (get_exact(value_obj, &value, self->value_size, "value", 0) != 0) {
        PyBuffer_Release(&key);
        return NULL;
    }
    mpidht_write_outcome_t outcome = MPIDHT_WRITE_INSERTED;
    mpidht_t *table = claim(self); /* as in Table_read */
    mpidht_status_t st = MPIDHT_OK;
    if (table) {
        st = mpidht_write(table, key.buf, value.buf, &outcome);
        release(self);
    }
    PyBuffer_Release(&key);
    PyBuffer_Release(&value);
    if (!table)
        return NULL;
    PyObject *done = finish(self, st);
    if (!done)
        return NULL;
    Py_DECREF(done);
    return PyLong_FromLong((long)outcome);
}

static PyObject *Table_remove(TableObject *self, PyObject *key_obj)
{
    Py_buffer key;
    if (!usable(self))
        return NULL;
    if (get_exact(key_obj, &key, self->key_size, "key", 0) != 0)
        return NULL;
    mpidht_t *table = claim(self); /* as in Table_read */
    mpidht_status_t st = MPIDHT_OK;
    if (table) {
        st = mpidht_remove(table, key.buf);
        release(self);
    }
    PyBuffer_Release(&key);
    if (!table)
        return NULL;
    PyObject *done = finish(self, st);
    if (!done)
        return NULL;
    Py_DECREF(done);
    return PyBool_FromLong(st == MPIDHT_OK);
}

/* The arguments of a batched call: (n, keys, values, flags), as buffers
 * of n*key_size, n*value_size and n bytes; flags is always writable,
 * values only for a read. */
typedef struct {
    size_t n;
    Py_buffer keys, values, flags;
} batch_args_t;

/* Parses and checks args into *b; 0, or -1 with an exception (and nothing
 * held). */
static int get_batch_args(TableObject *self, PyObject *args, int values_writable,
                          const char *flags_name, batch_args_t *b)
{
    Py_ssize_t n;
    PyObject *keys_obj, *values_obj, *flags_obj;
    if (!PyArg_ParseTuple(args, "nOOO", &n, &keys_obj, &values_obj, &flags_obj))
        return -1;
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "the batch size must not be negative");
        return -1;
    }
    if (!usable(self))
        return -1;
    b->n = (size_t)n;
    if (b->n > SIZE_MAX / self->key_size || b->n > SIZE_MAX / self->value_size ||
        b->n > SIZE_MAX / sizeof(mpidht_write_outcome_t)) {
        raise_status(MPIDHT_ERR_BATCH_SIZE);
        return -1;
    }
    if (get_exact(keys_obj, &b->keys, b->n * self->key_size, "keys", 0) != 0)
        return -1;
    if (get_exact(values_obj, &b->values, b->n * self->value_size, "values",
                  values_writable) != 0) {
        PyBuffer_Release(&b->keys);
        return -1;
    }
    if (get_exact(flags_obj, &b->flags, b->n, flags_name, 1) != 0) {
        PyBuffer_Release(&b->keys);
        PyBuffer_Release(&b->values);
        return -1;
    }
    return 0;
}

static void release_batch_args(batch_args_t *b)
{
    PyBuffer_Release(&b->keys);
    PyBuffer_Release(&b->values);
    PyBuffer_Release(&b->flags);
}

/* read_batch(n, keys, values, found): fills values and found. */
static PyObject *Table_read_batch(TableObject *self, PyObject *args)
{
    batch_args_t b;
    if (get_batch_args(self, args, 1, "found", &b) != 0)
        return NULL;
    mpidht_t *table = claim(self); /* again: getting the buffers may have let
                                     * another thread in since usable() */
    if (!table) {
        release_batch_args(&b);
        return NULL;
    }
    mpidht_status_t st;
    Py_BEGIN_ALLOW_THREADS
    st = mpidht_read_batch(table, b.n, b.keys.buf, b.values.buf, b.flags.buf);
    Py_END_ALLOW_THREADS
    release(self);
    release_batch_args(&b);
    return finish(self, st);
}

/* write_batch(n, keys, values, outcomes): fills outcomes, one byte each. */
static PyObject *Table_write_batch(TableObject *self, PyObject *args)
{
    batch_args_t b;
    if (get_batch_args(self, args, 0, "outcomes", &b) != 0)
        return NULL;
    mpidht_write_outcome_t *each = PyMem_RawMalloc(b.n > 0 ? b.n * sizeof *each : 1);
    if (!each) {
        release_batch_args(&b);
        return PyErr_NoMemory();
    }
    mpidht_t *table = claim(self); /* as in Table_read_batch */
    if (!table) {
        PyMem_RawFree(each);
        release_batch_args(&b);
        return NULL;
    }
    mpidht_status_t st;
    Py_BEGIN_ALLOW_THREADS
    st = mpidht_write_batch(table, b.n, b.keys.buf, b.values.buf, each);
    Py_END_ALLOW_THREADS
    release(self);
    unsigned char *out = b.flags.buf;
    for (size_t i = 0; st == MPIDHT_OK && i < b.n; ++i)
        out[i] = (unsigned char)each[i];
    PyMem_RawFree(each);
    release_batch_args(&b);
    return finish(self, st);
}

/* 0 if fn can be an update function, else -1 with TypeError. */
static int check_update_fn(PyObject *fn)
{
    if (PyCallable_Check(fn))
        return 0;
    PyErr_SetString(PyExc_TypeError, "the update function must be callable");
    return -1;
}

/* Holds fn and keep (NULL: none) for the update call of the thread that
 * claimed the table, which lets go of them (drop_update) once the call is
 * done: the table keeps no reference to them between calls. */
static void hold_update(TableObject *self, PyObject *fn, PyObject *keep)
{
    Py_XINCREF(fn);
    Py_XSETREF(self->update_fn, fn);
    Py_XINCREF(keep);
    Py_XSETREF(self->keep, keep);
}

static void drop_update(TableObject *self)
{
    Py_CLEAR(self->update_fn);
    Py_CLEAR(self->keep);
}

/* update(key, fn, keep) -> outcome: fn(0, value or None). */
static PyObject *Table_update(TableObject *self, PyObject *args)
{
    PyObject *key_obj, *fn, *keep;
    Py_buffer key;
    if (!PyArg_ParseTuple(args, "OOO", &key_obj, &fn, &keep) || !usable(self) ||
        check_update_fn(fn) != 0)
        return NULL;
    if (get_exact(key_obj, &key, self->key_size, "key", 0) != 0)
        return NULL;
    /* Claimed before fn is held: a call in progress in another thread
     * keeps its own function. */
    mpidht_t *table = claim(self);
    if (!table) {
        PyBuffer_Release(&key);
        return NULL;
    }
    hold_update(self, fn, keep);
    mpidht_update_outcome_t outcome = MPIDHT_UPDATE_KEPT;
    mpidht_status_t st;
    Py_BEGIN_ALLOW_THREADS
    st = mpidht_update(table, key.buf, python_update, self, &outcome);
    Py_END_ALLOW_THREADS
    release(self);
    PyBuffer_Release(&key);
    drop_update(self);
    PyObject *done = finish(self, st);
    if (!done)
        return NULL;
    Py_DECREF(done);
    return PyLong_FromLong((long)outcome);
}

/* mpidht_update_batch of n key rows with fn, without the GIL, holding
 * py_fn and py_keep (NULL for a C update function) for python_update; the
 * outcomes into out, one byte each, and the status into *st. 0, or -1
 * with an exception (MemoryError, or the table closed or in use; nothing
 * run). */
static int update_rows(TableObject *self, size_t n, const void *keys, mpidht_update_fn fn,
                       void *user_data, PyObject *py_fn, PyObject *py_keep,
                       unsigned char *out, mpidht_status_t *st)
{
    mpidht_update_outcome_t *each = PyMem_RawMalloc(n > 0 ? n * sizeof *each : 1);
    if (!each) {
        PyErr_NoMemory();
        return -1;
    }
    mpidht_t *table = claim(self); /* as in Table_update */
    if (!table) {
        PyMem_RawFree(each);
        return -1;
    }
    hold_update(self, py_fn, py_keep);
    Py_BEGIN_ALLOW_THREADS
    *st = mpidht_update_batch(table, n, keys, fn, user_data, each);
    Py_END_ALLOW_THREADS
    release(self);
    drop_update(self);
    for (size_t i = 0; *st == MPIDHT_OK && i < n; ++i)
        out[i] = (unsigned char)each[i];
    PyMem_RawFree(each);
    return 0;
}

/* update_batch(n, keys, fn, keep, outcomes): fn(i, value or None) per row;
 * fills outcomes, one byte each. */
static PyObject *Table_update_batch(TableObject *self, PyObject *args)
{
    Py_ssize_t n;
    PyObject *keys_obj, *fn, *keep, *outcomes_obj;
    if (!PyArg_ParseTuple(args, "nOOOO", &n, &keys_obj, &fn, &keep, &outcomes_obj))
        return NULL;
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "the batch size must not be negative");
        return NULL;
    }
    if (!usable(self) || check_update_fn(fn) != 0)
        return NULL;
    if ((size_t)n > SIZE_MAX / self->key_size ||
        (size_t)n > SIZE_MAX / sizeof(mpidht_update_outcome_t))
        return raise_status(MPIDHT_ERR_BATCH_SIZE);
    Py_buffer keys, flags;
    if (get_exact(keys_obj, &keys, (size_t)n * self->key_size, "keys", 0) != 0)
        return NULL;
    if (get_exact(outcomes_obj, &flags, (size_t)n, "outcomes", 1) != 0) {
        PyBuffer_Release(&keys);
        return NULL;
    }
    mpidht_status_t st = MPIDHT_OK;
    int made = update_rows(self, (size_t)n, keys.buf, python_update, self, fn, keep, flags.buf,
                           &st);
    PyBuffer_Release(&keys);
    PyBuffer_Release(&flags);
    return made == 0 ? finish(self, st) : NULL;
}

/* interp_append as an update function (user_data: the interp_append_t). */
static mpidht_update_action_t append_update(size_t index, const void *key, void *value,
                                            int present, void *user_data)
{
    (void)key;
    (void)present; /* an absent class's value is zeroes: no samples */
    return interp_append(user_data, index, value) ? MPIDHT_STORE : MPIDHT_KEEP;
}

/* append_samples(n, keys, slots, d, rows, start, outcomes): mpidht.interp's
 * publish, one update per class (_interp.h, interp_append): keys n class
 * keys; rows start[n] x 2 d doubles, grouped by class; start n + 1 int64,
 * ascending from 0; fills outcomes, one byte each. The table's values
 * must be classes of `slots` samples of 2 d doubles after two header
 * doubles. */
static PyObject *Table_append_samples(TableObject *self, PyObject *args)
{
    Py_ssize_t n, slots, d;
    PyObject *keys_obj, *rows_obj, *start_obj, *outcomes_obj;
    if (!PyArg_ParseTuple(args, "nOnnOOO", &n, &keys_obj, &slots, &d, &rows_obj, &start_obj,
                          &outcomes_obj) ||
        !usable(self))
        return NULL;
    if (n < 0 || slots < 1 || d < 1 || (size_t)d > SIZE_MAX / 16 / (size_t)slots - 1 ||
        (size_t)n > SIZE_MAX / self->key_size ||
        self->value_size != (2 + 2 * (size_t)slots * (size_t)d) * sizeof(double))
        return PyErr_Format(PyExc_ValueError,
                            "bad sizes: n %zd, slots %zd, d %zd for values of %zu bytes", n,
                            slots, d, self->value_size);
    Py_buffer keys, start, rows, flags;
    if (get_exact(start_obj, &start, ((size_t)n + 1) * sizeof(int64_t), "start", 0) != 0)
        return NULL;
    const int64_t *first = start.buf;
    for (Py_ssize_t i = 0; i <= n && !PyErr_Occurred(); ++i)
        if ((i == 0 && first[0] != 0) || (i > 0 && first[i] < first[i - 1]) ||
            (uint64_t)first[i] > SIZE_MAX / 16 / (size_t)d)
            PyErr_Format(PyExc_ValueError, "start must ascend from 0, got start[%zd] = %lld",
                         i, (long long)first[i]);
    if (PyErr_Occurred()) {
        PyBuffer_Release(&start);
        return NULL;
    }
    size_t total = (size_t)first[n];
    if (get_exact(keys_obj, &keys, (size_t)n * self->key_size, "keys", 0) != 0) {
        PyBuffer_Release(&start);
        return NULL;
    }
    if (get_exact(rows_obj, &rows, total * 2 * (size_t)d * sizeof(double), "rows", 0) != 0) {
        PyBuffer_Release(&start);
        PyBuffer_Release(&keys);
        return NULL;
    }
    if (get_exact(outcomes_obj, &flags, (size_t)n, "outcomes", 1) != 0) {
        PyBuffer_Release(&start);
        PyBuffer_Release(&keys);
        PyBuffer_Release(&rows);
        return NULL;
    }
    interp_append_t append = {(size_t)slots, (size_t)d, rows.buf, first};
    mpidht_status_t st = MPIDHT_OK;
    int made = update_rows(self, (size_t)n, keys.buf, append_update, &append, NULL, NULL,
                           flags.buf, &st);
    PyBuffer_Release(&start);
    PyBuffer_Release(&keys);
    PyBuffer_Release(&rows);
    PyBuffer_Release(&flags);
    return made == 0 ? finish(self, st) : NULL;
}

/* clear(): collective. */
static PyObject *Table_clear(TableObject *self, PyObject *unused)
{
    (void)unused;
    mpidht_t *table = claim(self);
    if (!table)
        return NULL;
    mpidht_status_t st;
    Py_BEGIN_ALLOW_THREADS
    st = mpidht_clear(table);
    Py_END_ALLOW_THREADS
    release(self);
    return finish_collective(self, table, st);
}

/* local_next(cursor, max_entries, keys, values) -> (cursor, count): fills
 * rows of the writable buffers keys and values (max_entries rows each). */
static PyObject *Table_local_next(TableObject *self, PyObject *args)
{
    uint64_t cursor;
    Py_ssize_t max_entries;
    PyObject *keys_obj, *values_obj;
    if (!PyArg_ParseTuple(args, "O&nOO", uint64_converter, &cursor, &max_entries, &keys_obj,
                          &values_obj))
        return NULL;
    if (max_entries < 1) {
        PyErr_SetString(PyExc_ValueError, "max_entries must be at least 1");
        return NULL;
    }
    if (!usable(self))
        return NULL;
    size_t n = (size_t)max_entries;
    if (n > SIZE_MAX / self->key_size || n > SIZE_MAX / self->value_size)
        return raise_status(MPIDHT_ERR_BATCH_SIZE);
    Py_buffer keys, values;
    if (get_exact(keys_obj, &keys, n * self->key_size, "keys", 1) != 0)
        return NULL;
    if (get_exact(values_obj, &values, n * self->value_size, "values", 1) != 0) {
        PyBuffer_Release(&keys);
        return NULL;
    }
    mpidht_t *table = claim(self); /* as in Table_read_batch */
    if (!table) {
        PyBuffer_Release(&keys);
        PyBuffer_Release(&values);
        return NULL;
    }
    uint64_t at = cursor;
    size_t count = 0;
    mpidht_status_t st;
    Py_BEGIN_ALLOW_THREADS
    st = mpidht_local_next(table, &at, n, keys.buf, values.buf, &count);
    Py_END_ALLOW_THREADS
    release(self);
    PyBuffer_Release(&keys);
    PyBuffer_Release(&values);
    if (st != MPIDHT_OK)
        return raise_status(st);
    return Py_BuildValue("(Kn)", (unsigned long long)at, (Py_ssize_t)count);
}

/* dump(path) or, with report, restore(path): collective. path is a file
 * system path (str, bytes or os.PathLike). One that is not (TypeError, or
 * ValueError for an embedded NUL) still takes part in the call, as a NULL
 * path, which the library refuses there and reports to the other
 * processes as MPIDHT_ERR_PEER instead of leaving them waiting; its
 * exception is then raised here. */
static PyObject *file_call(TableObject *self, PyObject *args, mpidht_restore_report_t *report)
{
    PyObject *path = NULL, *type = NULL, *value = NULL, *trace = NULL;
    if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path))
        PyErr_Fetch(&type, &value, &trace);
    mpidht_t *table = claim(self);
    if (!table) {
        Py_XDECREF(path);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(trace);
        return NULL;
    }
    const char *name = path ? PyBytes_AS_STRING(path) : NULL;
    mpidht_status_t st;
    Py_BEGIN_ALLOW_THREADS
    st = report ? mpidht_restore(table, name, report) : mpidht_dump(table, name);
    Py_END_ALLOW_THREADS
    release(self);
    Py_XDECREF(path);
    if (type) {
        PyErr_Restore(type, value, trace);
        return NULL;
    }
    return finish_collective(self, table, st);
}

/* dump(path): collective. */
static PyObject *Table_dump(TableObject *self, PyObject *args)
{
    return file_call(self, args, NULL);
}

/* restore(path) -> (entries, inserted, updated, evicted): collective. */
static PyObject *Table_restore(TableObject *self, PyObject *args)
{
    mpidht_restore_report_t r = MPIDHT_RESTORE_REPORT_INIT;
    PyObject *done = file_call(self, args, &r);
    if (!done)
        return NULL;
    Py_DECREF(done);
    return Py_BuildValue("(KKKK)", (unsigned long long)r.entries,
                         (unsigned long long)r.inserted, (unsigned long long)r.updated,
                         (unsigned long long)r.evicted);
}

static PyObject *stats_dict(const mpidht_stats_t *stats)
{
    PyObject *d = PyDict_New();
    for (int i = 0; d && i < MPIDHT_STATS_COUNT; ++i) {
        PyObject *v = PyLong_FromUnsignedLongLong(mpidht_stats_value(stats, i));
        if (!v || PyDict_SetItemString(d, mpidht_stats_name(i), v) != 0) {
            Py_XDECREF(v);
            Py_DECREF(d);
            return NULL;
        }
        Py_DECREF(v);
    }
    return d;
}

static PyObject *Table_stats(TableObject *self, PyObject *args)
{
    int global = 0;
    if (!PyArg_ParseTuple(args, "p", &global))
        return NULL;
    mpidht_t *table = claim(self);
    if (!table)
        return NULL;
    mpidht_stats_t stats = MPIDHT_STATS_INIT;
    mpidht_status_t st;
    Py_BEGIN_ALLOW_THREADS
    st = global ? mpidht_stats_global(table, &stats) : mpidht_stats_local(table, &stats);
    Py_END_ALLOW_THREADS
    release(self);
    if (st != MPIDHT_OK)
        return global ? raise_detailed(st, mpidht_error_detail(table)) : raise_status(st);
    return stats_dict(&stats);
}

static PyObject *Table_reset_stats(TableObject *self, PyObject *unused)
{
    (void)unused;
    mpidht_t *table = claim(self);
    if (!table)
        return NULL;
    mpidht_status_t st = mpidht_stats_reset(table);
    release(self);
    if (st != MPIDHT_OK)
        return raise_status(st);
    Py_RETURN_NONE;
}

/* progress(): mpidht_progress, without the GIL (it may wait inside MPI). */
static PyObject *Table_progress(TableObject *self, PyObject *unused)
{
    (void)unused;
    mpidht_t *table = claim(self);
    if (!table)
        return NULL;
    mpidht_status_t st;
    Py_BEGIN_ALLOW_THREADS
    st = mpidht_progress(table);
    Py_END_ALLOW_THREADS
    release(self);
    return finish(self, st);
}

static PyObject *Table_error_detail(TableObject *self, PyObject *unused)
{
    (void)unused;
    mpidht_t *table = usable(self);
    if (!table)
        return NULL;
    const char *detail = mpidht_error_detail(table);
    return PyUnicode_DecodeUTF8(detail, (Py_ssize_t)strlen(detail), "replace");
}

static PyObject *Table_info(TableObject *self, PyObject *unused)
{
    (void)unused;
    mpidht_t *table = claim(self);
    if (!table)
        return NULL;
    mpidht_info_t info = MPIDHT_INFO_INIT;
    mpidht_status_t st = mpidht_get_info(table, &info);
    release(self);
    if (st != MPIDHT_OK)
        return raise_status(st);
    return Py_BuildValue("{s:n,s:n,s:n,s:K,s:K,s:i,s:i,s:I,s:s,s:s,s:s,s:d,s:O}", "key_size",
                         (Py_ssize_t)info.key_size, "value_size",
                         (Py_ssize_t)info.value_size, "bucket_size",
                         (Py_ssize_t)info.bucket_size, "local_buckets",
                         (unsigned long long)info.local_buckets, "total_buckets",
                         (unsigned long long)info.total_buckets, "hosting_processes",
                         info.hosting_processes, "comm_size", info.comm_size,
                         "candidates", info.candidates, "protocol",
                         mpidht_protocol_name(info.protocol), "window",
                         mpidht_window_name(info.window), "eviction",
                         mpidht_eviction_name(info.eviction), "timeout", info.timeout,
                         "direct", info.direct ? Py_True : Py_False);
}

static PyMethodDef Table_methods[] = {
    {"close", (PyCFunction)Table_close, METH_NOARGS, "Collective: free the table."},
    {"read", (PyCFunction)Table_read, METH_O, "read(key) -> bytes | None"},
    {"write", (PyCFunction)Table_write, METH_VARARGS, "write(key, value) -> outcome"},
    {"remove", (PyCFunction)Table_remove, METH_O, "remove(key) -> bool"},
    {"read_batch", (PyCFunction)Table_read_batch, METH_VARARGS,
     "read_batch(n, keys, values, found)"},
    {"write_batch", (PyCFunction)Table_write_batch, METH_VARARGS,
     "write_batch(n, keys, values, outcomes)"},
    {"update", (PyCFunction)Table_update, METH_VARARGS, "update(key, fn, keep) -> outcome"},
    {"update_batch", (PyCFunction)Table_update_batch, METH_VARARGS,
     "update_batch(n, keys, fn, keep, outcomes)"},
    {"append_samples", (PyCFunction)Table_append_samples, METH_VARARGS,
     "append_samples(n, keys, slots, d, rows, start, outcomes): mpidht.interp's publish"},
    {"clear", (PyCFunction)Table_clear, METH_NOARGS, "Collective: empty the table."},
    {"local_next", (PyCFunction)Table_local_next, METH_VARARGS,
     "local_next(cursor, max_entries, keys, values) -> (cursor, count)"},
    {"dump", (PyCFunction)Table_dump, METH_VARARGS, "Collective: dump(path)."},
    {"restore", (PyCFunction)Table_restore, METH_VARARGS,
     "Collective: restore(path) -> (entries, inserted, updated, evicted)"},
    {"stats", (PyCFunction)Table_stats, METH_VARARGS, "stats(global) -> dict"},
    {"reset_stats", (PyCFunction)Table_reset_stats, METH_NOARGS, "Zero local counters."},
    {"info", (PyCFunction)Table_info, METH_NOARGS, "info() -> dict"},
    {"progress", (PyCFunction)Table_progress, METH_NOARGS,
     "progress(): mpidht_progress"},
    {"error_detail", (PyCFunction)Table_error_detail, METH_NOARGS,
     "error_detail() -> str: what the last failed collective call failed on"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Table_getset[] = {
    {"closed", (getter)Table_closed, NULL, "True once closed.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject TableType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "mpidht._core.Table",
    .tp_basicsize = sizeof(TableObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A distributed hash table (low level; see mpidht.Table).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Table_init,
    .tp_dealloc = (destructor)Table_dealloc,
    .tp_traverse = (traverseproc)Table_traverse,
    .tp_clear = (inquiry)Table_clear_refs,
    .tp_finalize = (destructor)Table_finalize,
    .tp_methods = Table_methods,
    .tp_getset = Table_getset,
};

static PyObject *core_strerror(PyObject *module, PyObject *arg)
{
    (void)module;
    long status = PyLong_AsLong(arg);
    if (status == -1 && PyErr_Occurred())
        return NULL;
    if (status < INT_MIN || status > INT_MAX) /* not the message of its low bits */
        return PyErr_Format(PyExc_OverflowError, "status %ld does not fit in a C int", status);
    return PyUnicode_FromString(mpidht_strerror((mpidht_status_t)status));
}

/* MPIDHT_DEBUG_COLLECTIVES as mpidht_create reads it: (status, seconds),
 * seconds 0 where the mode is off. */
static PyObject *core_debug_setting(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    double seconds = 0;
    mpidht_status_t st = mpidht_debug_setting(&seconds);
    return Py_BuildValue("(id)", (int)st, seconds);
}

static PyObject *core_mpi_library_version(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    /* Room for any MPI's string: the call may reach another MPI than the
     * mpi.h this was compiled with (mpi4py's, the mismatch this helps to
     * find), and MPICH's takes up to 8192 bytes, Open MPI's mpi.h
     * allowing 256. */
    enum { ANY_VERSION_STRING = 16384 };
    _Static_assert(MPI_MAX_LIBRARY_VERSION_STRING <= ANY_VERSION_STRING, "room");
    char version[ANY_VERSION_STRING];
    int len = 0;
    if (MPI_Get_library_version(version, &len) != MPI_SUCCESS)
        return raise_status(MPIDHT_ERR_MPI);
    while (len > 0 && version[len - 1] == '\0') /* some count the NUL */
        --len;
    return PyUnicode_DecodeLatin1(version, len, "replace");
}

/* key_encode(spec, rows, values, out): spec a sequence of (rounding,
 * digits, log, floor) tuples; values a C-contiguous buffer of rows x
 * len(spec) doubles; out a writable C-contiguous buffer of rows x len(spec)
 * x MPIDHT_KEY_ELEMENT_SIZE bytes. */
static PyObject *core_key_encode(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *spec_obj, *values_obj, *out_obj;
    Py_ssize_t rows;
    if (!PyArg_ParseTuple(args, "OnOO", &spec_obj, &rows, &values_obj, &out_obj))
        return NULL;
    if (rows < 0)
        return PyErr_Format(PyExc_ValueError, "rows must be 0 or more, got %zd", rows);
    PyObject *spec_seq = PySequence_Fast(spec_obj, "spec must be a sequence");
    if (!spec_seq)
        return NULL;
    Py_ssize_t columns = PySequence_Fast_GET_SIZE(spec_seq);
    mpidht_key_column_t *spec = PyMem_Calloc(columns > 0 ? (size_t)columns : 1, sizeof *spec);
    if (!spec) {
        Py_DECREF(spec_seq);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t c = 0; c < columns; ++c) {
        int rounding, digits, log;
        double floor;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(spec_seq, c), "iipd;a key column is "
                              "(rounding, digits, log, floor)", &rounding, &digits, &log,
                              &floor)) {
            PyMem_Free(spec);
            Py_DECREF(spec_seq);
            return NULL;
        }
        spec[c] = (mpidht_key_column_t){(mpidht_key_rounding_t)rounding, digits, log, floor};
    }
    Py_DECREF(spec_seq);
    if (columns > 0 && rows > PY_SSIZE_T_MAX / columns / MPIDHT_KEY_ELEMENT_SIZE) {
        PyMem_Free(spec);
        return PyErr_Format(PyExc_ValueError, "%zd rows of %zd columns do not fit in memory",
                            rows, columns);
    }
    Py_buffer values, out;
    size_t n = (size_t)rows * (size_t)columns;
    if (get_exact(values_obj, &values, n * sizeof(double), "values", 0) != 0) {
        PyMem_Free(spec);
        return NULL;
    }
    if (get_exact(out_obj, &out, n * MPIDHT_KEY_ELEMENT_SIZE, "out", 1) != 0) {
        PyBuffer_Release(&values);
        PyMem_Free(spec);
        return NULL;
    }
    mpidht_status_t st;
    Py_BEGIN_ALLOW_THREADS
    st = mpidht_key_encode((size_t)columns, spec, (size_t)rows, values.buf, out.buf);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&values);
    PyBuffer_Release(&out);
    PyMem_Free(spec);
    if (st != MPIDHT_OK)
        return raise_status(st);
    Py_RETURN_NONE;
}

/* distinct(rows, n, width, first, number): the distinct rows among n rows
 * of width bytes (a C-contiguous buffer of n x width bytes), numbered in
 * the order they first appear (_rows.h): first and number writable
 * C-contiguous buffers of n int64 each. Returns how many distinct rows
 * there are (the first that many entries of first are set). */
static PyObject *core_distinct(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *rows_obj, *first_obj, *number_obj;
    Py_ssize_t n, width;
    if (!PyArg_ParseTuple(args, "OnnOO", &rows_obj, &n, &width, &first_obj, &number_obj))
        return NULL;
    /* The table of rows_table_size(n) <= 4 n int64 slots must be
     * addressable, and so must n rows of width bytes. */
    if (n < 0 || width < 0 || n > PY_SSIZE_T_MAX / 32 ||
        (width > 0 && n > PY_SSIZE_T_MAX / width))
        return PyErr_Format(PyExc_ValueError, "n (%zd) and width (%zd) must be 0 or more, and "
                            "n rows of width bytes must fit in memory", n, width);
    size_t un = (size_t)n;
    Py_buffer rows, first, number;
    if (get_exact(rows_obj, &rows, un * (size_t)width, "rows", 0) != 0)
        return NULL;
    if (get_exact(first_obj, &first, un * sizeof(int64_t), "first", 1) != 0) {
        PyBuffer_Release(&rows);
        return NULL;
    }
    if (get_exact(number_obj, &number, un * sizeof(int64_t), "number", 1) != 0) {
        PyBuffer_Release(&first);
        PyBuffer_Release(&rows);
        return NULL;
    }
    int64_t *table = PyMem_Malloc(rows_table_size(un) * sizeof *table);
    size_t distinct = 0;
    if (table) {
        Py_BEGIN_ALLOW_THREADS
        distinct = rows_distinct(rows.buf, un, (size_t)width, first.buf, number.buf, table);
        Py_END_ALLOW_THREADS
        PyMem_Free(table);
    }
    PyBuffer_Release(&number);
    PyBuffer_Release(&first);
    PyBuffer_Release(&rows);
    if (!table)
        return PyErr_NoMemory();
    return PyLong_FromSize_t(distinct);
}

/* predict(n, m, slots, d, stride, need, width, radius, extrapolation,
 * method, estimate, interval, ridge, rtol, atol, q, p, tolerance, ignored,
 * nonnegative, conserved, log, floor, scale, presence, samples, count, x,
 * cls, check, values, estimates, used): mpidht.interp's prediction in C
 * (_interp.h). Buffers, C-contiguous: tolerance, floor and scale d
 * doubles; ignored, nonnegative and log d bytes; conserved q x d doubles;
 * presence p int64 (columns); samples (m - 1) stride + 2 slots d doubles
 * (class k's slot j: input then result at k stride + 2 j d); count m int64; x n x d
 * doubles; cls n int64 (each in 0..m-1); writable: check n bytes, values
 * and estimates n x d doubles, used n int64. interp.Settings has checked
 * the numbers; the sizes, columns and classes are checked here. */
static PyObject *core_predict(PyObject *module, PyObject *args)
{
    (void)module;
    Py_ssize_t n, m, slots, d, stride, need, width, q, p;
    int method, estimate;
    interp_settings_t set;
    enum { ARGS = 16 };
    PyObject *obj[ARGS];
    if (!PyArg_ParseTuple(args, "nnnnnnnddiidddd" "nn" "OOOOOOOOOOOOOOOO", &n, &m, &slots,
                          &d, &stride, &need, &width, &set.radius, &set.extrapolation,
                          &method, &estimate, &set.interval, &set.ridge, &set.rtol, &set.atol,
                          &q, &p, &obj[0], &obj[1], &obj[2], &obj[3], &obj[4], &obj[5],
                          &obj[6], &obj[7], &obj[8], &obj[9], &obj[10], &obj[11], &obj[12],
                          &obj[13], &obj[14], &obj[15]))
        return NULL;
    if (n < 0 || m < 0 || slots < 1 || d < 1 || q < 0 || p < 0 || p > 64 || need < 1 ||
        width < 1 || width > slots || stride / 2 / d < slots || (m == 0 && n > 0))
        return PyErr_Format(PyExc_ValueError,
                            "bad sizes: n %zd, m %zd, slots %zd, d %zd, stride %zd, need %zd, "
                            "width %zd, q %zd, p %zd", n, m, slots, d, stride, need, width, q,
                            p);
    if ((method != INTERP_IDW && method != INTERP_LINEAR) ||
        (estimate != INTERP_LEAVE_ONE_OUT && estimate != INTERP_STANDARD_ERROR) ||
        (estimate == INTERP_STANDARD_ERROR && method != INTERP_LINEAR))
        return PyErr_Format(PyExc_ValueError, "bad method %d or estimate %d", method,
                            estimate);
    size_t un = (size_t)n, um = (size_t)m, uslots = (size_t)slots, ud = (size_t)d;
    const struct { size_t size; const char *what; int writable; } arg[ARGS] = {
        {ud * sizeof(double), "tolerance", 0},
        {ud, "ignored", 0},
        {ud, "nonnegative", 0},
        {(size_t)q * ud * sizeof(double), "conserved", 0},
        {ud, "log", 0},
        {ud * sizeof(double), "floor", 0},
        {ud * sizeof(double), "scale", 0},
        {(size_t)p * sizeof(int64_t), "presence", 0},
        {um ? ((um - 1) * (size_t)stride + 2 * uslots * ud) * sizeof(double) : 0, "samples",
         0},
        {um * sizeof(int64_t), "count", 0},
        {un * ud * sizeof(double), "x", 0},
        {un * sizeof(int64_t), "cls", 0},
        {un, "check", 1},
        {un * ud * sizeof(double), "values", 1},
        {un * ud * sizeof(double), "estimates", 1},
        {un * sizeof(int64_t), "used", 1},
    };
    Py_buffer view[ARGS];
    int got = 0;
    for (; got < ARGS; ++got)
        if (get_exact(obj[got], &view[got], arg[got].size, arg[got].what,
                      arg[got].writable) != 0)
            break;
    if (got == ARGS) {
        const int64_t *presence = view[7].buf, *cls = view[11].buf;
        for (Py_ssize_t i = 0; i < p && !PyErr_Occurred(); ++i)
            if (presence[i] < 0 || presence[i] >= d)
                PyErr_Format(PyExc_ValueError, "presence[%zd] = %lld is not a column in 0..%zd",
                             i, (long long)presence[i], d - 1);
        for (size_t i = 0; i < un && !PyErr_Occurred(); ++i)
            if (cls[i] < 0 || (size_t)cls[i] >= um)
                PyErr_Format(PyExc_ValueError, "cls[%zu] = %lld is not a class in 0..%zd", i,
                             (long long)cls[i], m - 1);
    }
    void *work = NULL;
    if (got == ARGS && !PyErr_Occurred()) {
        set.need = (size_t)need;
        set.width = (size_t)width;
        set.method = (interp_method_t)method;
        set.estimate = (interp_estimate_t)estimate;
        set.tolerance = view[0].buf;
        set.ignored = view[1].buf;
        set.nonnegative = view[2].buf;
        set.conserved_rows = (size_t)q;
        set.conserved = view[3].buf;
        set.log = view[4].buf;
        set.floor = view[5].buf;
        set.scale = view[6].buf;
        set.presence_count = (size_t)p;
        set.presence = view[7].buf;
        interp_classes_t classes = {um, uslots, ud, view[8].buf, (size_t)stride, view[9].buf};
        work = PyMem_Malloc(interp_work(&set, &classes));
        if (work) {
            Py_BEGIN_ALLOW_THREADS
            interp_predict(&set, &classes, un, view[10].buf, view[11].buf, view[12].buf,
                           view[13].buf, view[14].buf, view[15].buf, work);
            Py_END_ALLOW_THREADS
        } else {
            PyErr_NoMemory();
        }
    }
    PyMem_Free(work);
    for (int i = 0; i < got; ++i)
        PyBuffer_Release(&view[i]);
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef core_methods[] = {
    {"strerror", core_strerror, METH_O, "The library's message for a status."},
    {"key_encode", core_key_encode, METH_VARARGS,
     "mpidht_key_encode: rows of doubles into approximate keys."},
    {"distinct", core_distinct, METH_VARARGS,
     "The distinct rows of a byte matrix, numbered in the order they first appear."},
    {"predict", core_predict, METH_VARARGS,
     "mpidht.interp's neighbours, checks and prediction, per query."},
    {"debug_setting", core_debug_setting, METH_NOARGS,
     "MPIDHT_DEBUG_COLLECTIVES as create reads it: (status, seconds; 0 = off)."},
    {"mpi_library_version", core_mpi_library_version, METH_NOARGS,
     "MPI_Get_library_version of the MPI this module was linked with."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT, "mpidht._core", "The mpidht C library.", -1, core_methods,
    NULL, NULL, NULL, NULL,
};

/* "MAJOR.MINOR.PATCH" from the header's version macros: mpidht.__version__
 * is the version this extension was compiled from. */
#define CORE_STRINGIFY_(x) #x
#define CORE_STRINGIFY(x) CORE_STRINGIFY_(x)
#define CORE_VERSION                                                           \
    CORE_STRINGIFY(MPIDHT_VERSION_MAJOR)                                       \
    "." CORE_STRINGIFY(MPIDHT_VERSION_MINOR) "." CORE_STRINGIFY(MPIDHT_VERSION_PATCH)

/* Adds the status names (MPIDHT_OK ...) as integer constants. */
static int add_status_constants(PyObject *m)
{
#define MPIDHT_STATUS_CONSTANT_(name, number, message)                         \
    if (PyModule_AddIntConstant(m, #name, name) != 0)                          \
        return -1;
    MPIDHT_STATUS_LIST(MPIDHT_STATUS_CONSTANT_)
#undef MPIDHT_STATUS_CONSTANT_
    return 0;
}

/* Adds the outcomes of mpidht.interp's checks (CHECK_ACCEPTED ...), its
 * methods and estimates (METHOD_..., ESTIMATE_...). */
static int add_check_constants(PyObject *m)
{
#define INTERP_CHECK_CONSTANT_(name)                                           \
    if (PyModule_AddIntConstant(m, "CHECK_" #name, INTERP_##name) != 0)        \
        return -1;
    INTERP_CHECK_LIST(INTERP_CHECK_CONSTANT_)
#undef INTERP_CHECK_CONSTANT_
    if (PyModule_AddIntConstant(m, "METHOD_IDW", INTERP_IDW) != 0 ||
        PyModule_AddIntConstant(m, "METHOD_LINEAR", INTERP_LINEAR) != 0 ||
        PyModule_AddIntConstant(m, "ESTIMATE_LEAVE_ONE_OUT", INTERP_LEAVE_ONE_OUT) != 0 ||
        PyModule_AddIntConstant(m, "ESTIMATE_STANDARD_ERROR", INTERP_STANDARD_ERROR) != 0)
        return -1;
    return 0;
}

PyMODINIT_FUNC PyInit__core(void)
{
    if (PyType_Ready(&TableType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&core_module);
    if (!m)
        return NULL;
    core_error = PyErr_NewExceptionWithDoc(
        "mpidht._core.Error", "A status other than success from the C library.",
        PyExc_RuntimeError, NULL);
    Py_INCREF(&TableType);
    if (!core_error || PyModule_AddObject(m, "Error", core_error) != 0 ||
        PyModule_AddObject(m, "Table", (PyObject *)&TableType) != 0 ||
        add_status_constants(m) != 0 || add_check_constants(m) != 0 ||
        PyModule_AddIntConstant(m, "STATS_COUNT", MPIDHT_STATS_COUNT) != 0 ||
        PyModule_AddStringConstant(m, "VERSION", CORE_VERSION) != 0) {
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(core_error);
    return m;
}
