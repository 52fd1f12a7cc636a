/*
 * trace_read.c — reading a trace from a file or from memory, told apart
 * by content: an Nsight Systems SQLite export (plain or gzip'd) goes to
 * trace_nsys.c; anything else is Chrome-trace JSON (PyTorch / Kineto,
 * JAX / XLA, generic), plain or gzip'd, streamed.
 *
 * The file is read through zlib in 64 KiB pieces (gzread reads a plain
 * file as it is). A small scanner walks the top-level object; each value
 * other than traceEvents, and each event of traceEvents, is cut out on
 * its own (brackets and strings tracked, at most SB_TRACE_MAX_EVENT
 * bytes) and parsed by jansson, then reduced to a 64-byte sb_tr_event
 * (trace_chrome.c). Memory is the events kept plus one event's text,
 * whatever the file's size.
 */
#include <ctype.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "solbench/fileio.h"
#include "trace/trace_int.h"

/* ---- the byte source ----------------------------------------------------- */

#define SRC_BUF (64u << 10)

typedef struct sb_trace_src {
    gzFile gz;                /* a file */
    const unsigned char *mem; /* or memory */
    size_t mlen, mpos;
    z_stream zs; /* memory that is gzip'd */
    bool zmem, zdone;
    unsigned char buf[SRC_BUF];
    size_t pos, len;
    unsigned long long off; /* bytes taken (uncompressed) */
    bool eof;
    const char *label;
    sb_err *err;
    int failed; /* an error was reported */
} src;

static int src_fail(src *s, const char *fmt, const char *detail)
{
    /* zlib names the stream "<fd:N>: " in its messages: the file is named
     * already */
    if (detail && strncmp(detail, "<fd:", 4) == 0 && strstr(detail, ">: "))
        detail = strstr(detail, ">: ") + 3;
    if (!s->failed)
        sb_fail(s->err, SB_EINVAL, "%s: byte %llu: %s%s", s->label, s->off, fmt,
                detail ? detail : "");
    s->failed = 1;
    s->eof = true;
    return -1;
}

static void src_fill(src *s)
{
    s->pos = s->len = 0;
    if (s->eof)
        return;
    if (s->off >= SB_TRACE_MAX_TEXT) {
        src_fail(s,
                 "over 8 GiB of trace text (unpacked): split the trace "
                 "or profile fewer steps",
                 NULL);
        return;
    }
    if (s->gz) {
        int n = gzread(s->gz, s->buf, SRC_BUF);
        if (n < 0) {
            int zerr;
            const char *m = gzerror(s->gz, &zerr);
            src_fail(s, "cannot be read: ", m);
            return;
        }
        if (n == 0) {
            int zerr;
            const char *m = gzerror(s->gz, &zerr);
            if (zerr != Z_OK && zerr != Z_STREAM_END)
                src_fail(s, "the gzip data is cut short or corrupt: ", m);
            s->eof = true;
        }
        s->len = (size_t)n;
        return;
    }
    if (!s->zmem) {
        size_t n = s->mlen - s->mpos;
        if (n > SRC_BUF)
            n = SRC_BUF;
        memcpy(s->buf, s->mem + s->mpos, n);
        s->mpos += n;
        s->len = n;
        s->eof = n == 0;
        return;
    }
    if (s->zdone) {
        s->eof = true;
        return;
    }
    s->zs.next_out = s->buf;
    s->zs.avail_out = SRC_BUF;
    while (s->zs.avail_out == SRC_BUF) {
        int rc = inflate(&s->zs, Z_NO_FLUSH);
        if (rc == Z_STREAM_END) {
            /* another gzip member may follow (gzip of parts, cat) */
            if (s->zs.avail_in >= 2 && s->zs.next_in[0] == 0x1f &&
                s->zs.next_in[1] == 0x8b && inflateReset(&s->zs) == Z_OK) {
                if (s->zs.avail_out < SRC_BUF)
                    break;
                continue;
            }
            s->zdone = true;
            break;
        }
        if (rc == Z_BUF_ERROR && s->zs.avail_in == 0) {
            src_fail(s, "the gzip data is cut short", NULL);
            return;
        }
        if (rc != Z_OK) {
            src_fail(s, "the gzip data is corrupt: ",
                     s->zs.msg ? s->zs.msg : "inflate failed");
            return;
        }
        if (s->zs.avail_in == 0 && s->zs.avail_out == SRC_BUF) {
            src_fail(s, "the gzip data is cut short", NULL);
            return;
        }
    }
    s->len = SRC_BUF - s->zs.avail_out;
    if (s->len == 0)
        s->eof = true;
}

/* The next byte without taking it; -1 at the end. */
static inline int src_peek(src *s)
{
    if (s->pos == s->len) {
        src_fill(s);
        if (s->len == 0)
            return -1;
    }
    return s->buf[s->pos];
}

static inline int src_get(src *s)
{
    int c = src_peek(s);
    if (c >= 0) {
        s->pos++;
        s->off++;
    }
    return c;
}

static int skip_ws(src *s)
{
    int c;
    size_t run = 0;
    while ((c = src_peek(s)) == ' ' || c == '\n' || c == '\r' || c == '\t') {
        src_get(s);
        if (++run > SB_TRACE_MAX_BLANK)
            return src_fail(s,
                            "over 16 MiB of blank space in a row: not a "
                            "trace a profiler wrote",
                            NULL);
    }
    return c;
}

/* ---- cutting one value out ----------------------------------------------- */

typedef struct text {
    char *b;
    size_t n, cap;
} text;

static int text_put(text *x, int c)
{
    if (x->n + 1 >= x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 4096;
        if (cap > SB_TRACE_MAX_EVENT + 2)
            cap = SB_TRACE_MAX_EVENT + 2;
        if (x->n + 1 >= cap)
            return -1;
        char *p = realloc(x->b, cap);
        if (!p)
            return -1;
        x->b = p;
        x->cap = cap;
    }
    x->b[x->n++] = (char)c;
    return 0;
}

/* Cuts the next JSON value into x (not checked: jansson parses it). */
static int cut_value(src *s, text *x)
{
    x->n = 0;
    int c = skip_ws(s);
    if (c < 0)
        return src_fail(s,
                        "the file ends where a value was expected (is "
                        "it cut short?)",
                        NULL);
    int depth = 0;
    bool str = false, esc = false;
    do {
        c = src_get(s);
        if (c < 0)
            return src_fail(s,
                            "the file ends inside a value (is it cut "
                            "short?)",
                            NULL);
        if (text_put(x, c))
            return src_fail(s, "one event is larger than 16 MiB", NULL);
        if (str) {
            if (esc)
                esc = false;
            else if (c == '\\')
                esc = true;
            else if (c == '"')
                str = false;
        } else if (c == '"') {
            str = true;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            depth--;
        }
        if (depth == 0 && !str) {
            int p = src_peek(s);
            /* a scalar ends at a delimiter; a container or a string at
             * its own close */
            if (c == '}' || c == ']' || c == '"' || p < 0 || p == ',' ||
                p == '}' || p == ']' || p == ' ' || p == '\n' || p == '\r' ||
                p == '\t')
                break;
        }
        if (depth < 0)
            return src_fail(s, "unbalanced bracket", NULL);
    } while (1);
    x->b[x->n] = '\0';
    return 0;
}

static int events_array(sb_trace_reader *r, text *x)
{
    src *s = r->s;
    if (skip_ws(s) == ']') {
        src_get(s);
        return 0;
    }
    for (;;) {
        if (cut_value(s, x))
            return SB_EINVAL;
        json_error_t je;
        json_t *e = json_loadb(x->b, x->n, JSON_DECODE_ANY, &je);
        size_t idx = r->t->n_total++;
        if (!e)
            return sb_fail(s->err, SB_EINVAL,
                           "%s: event %zu (ending at byte %llu): not valid "
                           "JSON: %s",
                           r->t->label, idx, s->off, je.text);
        int rc = sb_trace_chrome_event(r, e, idx);
        json_decref(e);
        if (rc == SB_ENOMEM)
            return sb_fail(s->err, SB_ENOMEM, "%s: out of memory at event %zu",
                           r->t->label, idx);
        if (rc)
            return rc;
        int c = skip_ws(s);
        src_get(s);
        if (c == ']')
            return 0;
        if (c != ',')
            return c < 0 ? src_fail(s,
                                    "the file ends inside traceEvents (is "
                                    "it cut short?)",
                                    NULL)
                         : src_fail(s, "expected ',' or ']' after an event",
                                    NULL);
    }
}

static int read_key(src *s, char *key, size_t len)
{
    size_t n = 0;
    bool esc = false;
    for (;;) {
        int c = src_get(s);
        if (c < 0)
            return src_fail(s, "the file ends inside a key", NULL);
        if (!esc && c == '"')
            break;
        esc = !esc && c == '\\';
        if (n + 1 < len)
            key[n++] = (char)c;
    }
    key[n] = '\0';
    return 0;
}

static int parse_top(sb_trace_reader *r)
{
    src *s = r->s;
    text x = {0};
    int rc = 0;
    int c = skip_ws(s);
    if (c == '[') {
        src_get(s);
        rc = events_array(r, &x);
        goto out;
    }
    if (c != '{') {
        rc = c < 0 ? src_fail(s, "empty file: not a trace", NULL)
                   : src_fail(s,
                              "not a Chrome trace (JSON object with "
                              "traceEvents, or an array of events)",
                              NULL);
        goto out;
    }
    src_get(s);
    bool have_events = false;
    for (;;) {
        c = skip_ws(s);
        src_get(s);
        if (c == '}')
            break;
        if (c != '"') {
            rc = src_fail(s,
                          c < 0 ? "the file ends inside the top-level "
                                  "object (is it cut short?)"
                                : "expected a key in the top-level object",
                          NULL);
            goto out;
        }
        char key[128];
        if ((rc = read_key(s, key, sizeof key)))
            goto out;
        if (skip_ws(s) != ':') {
            rc = src_fail(s, "expected ':' after a key", NULL);
            goto out;
        }
        src_get(s);
        if (strcmp(key, "traceEvents") == 0) {
            if (have_events) {
                rc = src_fail(s,
                              "traceEvents given twice (which one is the "
                              "trace?)",
                              NULL);
                goto out;
            }
            if (skip_ws(s) != '[') {
                rc = src_fail(s, "traceEvents is not an array", NULL);
                goto out;
            }
            src_get(s);
            if ((rc = events_array(r, &x)))
                goto out;
            have_events = true;
        } else {
            if ((rc = cut_value(s, &x)))
                goto out;
            json_error_t je;
            json_t *v = json_loadb(x.b, x.n, JSON_DECODE_ANY, &je);
            if (!v) {
                rc = sb_fail(s->err, SB_EINVAL,
                             "%s: byte %llu: the value of '%s' is not valid "
                             "JSON: %s",
                             r->t->label, s->off, key, je.text);
                goto out;
            }
            sb_trace_chrome_top(r, key, v);
            json_decref(v);
        }
        c = skip_ws(s);
        src_get(s);
        if (c == '}')
            break;
        if (c != ',') {
            rc = src_fail(s,
                          c < 0 ? "the file ends inside the top-level "
                                  "object (is it cut short?)"
                                : "expected ',' or '}' in the top-level "
                                  "object",
                          NULL);
            goto out;
        }
    }
    if (!have_events)
        rc = sb_fail(s->err, SB_EINVAL,
                     "%s: no traceEvents: not a Chrome trace", r->t->label);
out:
    free(x.b);
    if (!rc && !s->failed) {
        c = skip_ws(s);
        if (c >= 0)
            rc = src_fail(s, "data after the end of the trace", NULL);
    }
    if (!rc && s->failed)
        rc = SB_EINVAL;
    return rc;
}

static int run_reader(sb_trace *t, src *s)
{
    sb_trace_reader r = {.t = t, .s = s, .err = s->err, .off = &s->off};
    int rc = parse_top(&r);
    if (!rc)
        sb_trace_chrome_finish(&r);
    free(r.pn);
    return rc;
}

static const char sqlite_magic[16] = "SQLite format 3";

static int read_sqlite(sqlite3 *db, const char *label, sb_trace *t, sb_err *err)
{
    sb_trace_init(t);
    snprintf(t->label, sizeof t->label, "%s", label);
    int rc = sb_trace_read_nsys_db(db, label, t, err);
    if (!rc)
        sb_trace_mark_devices(t);
    else
        sb_trace_free(t);
    return rc;
}

/* An SQLite file held in memory (sqlite3_malloc'ed; SQLite frees it,
 * whatever happens). */
static int read_sqlite_bytes(unsigned char *db_bytes, size_t db_len,
                             const char *label, sb_trace *t, sb_err *err)
{
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(":memory:", &db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY,
                        NULL) != SQLITE_OK) {
        sqlite3_free(db_bytes); /* not handed to SQLite */
        sqlite3_close(db);
        return sb_fail(err, SB_ENOMEM, "%s: out of memory", label);
    }
    if (sqlite3_deserialize(db, "main", db_bytes, (sqlite3_int64)db_len,
                            (sqlite3_int64)db_len,
                            SQLITE_DESERIALIZE_FREEONCLOSE |
                                SQLITE_DESERIALIZE_READONLY) != SQLITE_OK) {
        sqlite3_close(db);
        return sb_fail(err, SB_EINVAL, "%s: cannot be read as SQLite", label);
    }
    int rc = read_sqlite(db, label, t, err);
    sqlite3_close(db);
    return rc;
}

/* A gzip'd file unpacked into memory, for an SQLite file (at most 4 GiB):
 * *out is sqlite3_malloc'ed. */
static int gz_slurp(gzFile gz, const char *path, unsigned char **out,
                    size_t *olen, sb_err *err)
{
    size_t cap = 1u << 20, n = 0;
    unsigned char *o = sqlite3_malloc64(cap);
    if (!o)
        return sb_fail(err, SB_ENOMEM, "%s: out of memory", path);
    for (;;) {
        if (n == cap) {
            if (cap >= (1ull << 32)) {
                sqlite3_free(o);
                return sb_fail(err, SB_EINVAL, "%s: over 4 GiB unpacked", path);
            }
            unsigned char *p = sqlite3_realloc64(o, cap * 2);
            if (!p) {
                sqlite3_free(o);
                return sb_fail(err, SB_ENOMEM, "%s: out of memory", path);
            }
            o = p;
            cap *= 2;
        }
        size_t want = cap - n > (1u << 30) ? (1u << 30) : cap - n;
        int got = gzread(gz, o + n, (unsigned)want);
        if (got < 0) {
            int zerr;
            const char *m = gzerror(gz, &zerr);
            sqlite3_free(o);
            return sb_fail(err, SB_EINVAL, "%s: the gzip data is corrupt: %s",
                           path, m);
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    *out = o;
    *olen = n;
    return 0;
}

int sb_trace_read(const char *path, sb_trace *t, sb_err *err)
{
    int fd;
    int rc = sb_file_open(path, O_RDONLY, &fd, err);
    if (rc)
        return rc;
    /* an SQLite file: Nsight Systems' export */
    char head[16] = {0};
    ssize_t hn = read(fd, head, sizeof head);
    if (hn == (ssize_t)sizeof head && memcmp(head, sqlite_magic, 16) == 0) {
        close(fd);
        sqlite3 *db = NULL;
        if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) !=
            SQLITE_OK) {
            rc = sb_fail(err, SB_EINVAL, "%s: cannot be opened as SQLite: %s",
                         path, db ? sqlite3_errmsg(db) : "out of memory");
            sqlite3_close(db);
            return rc;
        }
        rc = read_sqlite(db, path, t, err);
        sqlite3_close(db);
        return rc;
    }
    if (lseek(fd, 0, SEEK_SET) != 0) {
        close(fd);
        return sb_fail(err, SB_EINVAL,
                       "%s: cannot be read again from its "
                       "start",
                       path);
    }
    gzFile gz = gzdopen(fd, "rb");
    if (!gz) {
        close(fd);
        return sb_fail(err, SB_ENOMEM, "%s: cannot be read (zlib)", path);
    }
    gzbuffer(gz, 256u << 10);
    if (hn >= 2 && (unsigned char)head[0] == 0x1f &&
        (unsigned char)head[1] == 0x8b) {
        /* gzip'd: an Nsight Systems export stored packed is SQLite */
        unsigned char zh[16];
        int zn = gzread(gz, zh, sizeof zh);
        if (zn == (int)sizeof zh && memcmp(zh, sqlite_magic, 16) == 0) {
            unsigned char *db_bytes = NULL;
            size_t db_len = 0;
            if (gzrewind(gz) != 0 ||
                (rc = gz_slurp(gz, path, &db_bytes, &db_len, err)) != 0) {
                gzclose(gz);
                return rc ? rc
                          : sb_fail(err, SB_EINVAL,
                                    "%s: cannot be read again from its start",
                                    path);
            }
            gzclose(gz);
            return read_sqlite_bytes(db_bytes, db_len, path, t, err);
        }
        if (gzrewind(gz) != 0) {
            gzclose(gz);
            return sb_fail(err, SB_EINVAL,
                           "%s: cannot be read again from its start", path);
        }
    }
    src *s = calloc(1, sizeof *s);
    if (!s) {
        gzclose(gz);
        return sb_fail(err, SB_ENOMEM, "out of memory");
    }
    s->gz = gz;
    s->label = path;
    s->err = err;
    sb_trace_init(t);
    snprintf(t->label, sizeof t->label, "%s", path);
    rc = run_reader(t, s);
    gzclose(gz);
    free(s);
    if (rc)
        sb_trace_free(t);
    return rc;
}

/* The whole of gzip'd data in memory, when it is an SQLite file (a stored
 * Nsight Systems export): *out is sqlite3_malloc'ed. 1: not SQLite; 0:
 * *out set; < 0: an error. */
static int inflate_sqlite(const unsigned char *b, size_t len, const char *label,
                          unsigned char **out, size_t *olen, sb_err *err)
{
    z_stream zs = {0};
    if (inflateInit2(&zs, 15 + 16) != Z_OK)
        return sb_fail(err, SB_ENOMEM, "out of memory (zlib)");
    zs.next_in = (unsigned char *)(uintptr_t)b;
    zs.avail_in = (uInt)(len > 0xffffffffu ? 0xffffffffu : len);
    size_t cap = 1u << 20, n = 0;
    unsigned char *o = sqlite3_malloc64(cap);
    int rc = o ? 0 : SB_ENOMEM;
    while (!rc) {
        if (n == cap) {
            if (cap >= (1ull << 32)) {
                rc = sb_fail(err, SB_EINVAL, "%s: over 4 GiB unpacked", label);
                break;
            }
            unsigned char *p = sqlite3_realloc64(o, cap * 2);
            if (!p) {
                rc = SB_ENOMEM;
                break;
            }
            o = p;
            cap *= 2;
        }
        zs.next_out = o + n;
        zs.avail_out = (uInt)(cap - n);
        int z = inflate(&zs, Z_NO_FLUSH);
        n = cap - zs.avail_out;
        if (n >= 16 && memcmp(o, sqlite_magic, 16) != 0) {
            rc = 1; /* not SQLite: the JSON reader streams it */
            break;
        }
        if (z == Z_STREAM_END)
            break;
        if (z != Z_OK) {
            rc = sb_fail(err, SB_EINVAL, "%s: the gzip data is corrupt", label);
            break;
        }
    }
    inflateEnd(&zs);
    if (rc == SB_ENOMEM)
        rc = sb_fail(err, SB_ENOMEM, "%s: out of memory", label);
    if (rc == 0 && n < 16)
        rc = 1;
    if (rc) {
        sqlite3_free(o);
        return rc;
    }
    *out = o;
    *olen = n;
    return 0;
}

int sb_trace_read_mem(const void *buf, size_t len, const char *label,
                      sb_trace *t, sb_err *err)
{
    const unsigned char *b0 = buf;
    unsigned char *db_bytes = NULL;
    size_t db_len = 0;
    if (len >= 16 && memcmp(b0, sqlite_magic, 16) == 0) {
        db_bytes = sqlite3_malloc64(len);
        if (!db_bytes)
            return sb_fail(err, SB_ENOMEM, "out of memory");
        memcpy(db_bytes, b0, len);
        db_len = len;
    } else if (len >= 2 && b0[0] == 0x1f && b0[1] == 0x8b) {
        int r = inflate_sqlite(b0, len, label, &db_bytes, &db_len, err);
        if (r < 0)
            return r;
    }
    if (db_bytes)
        return read_sqlite_bytes(db_bytes, db_len, label, t, err);
    src *s = calloc(1, sizeof *s);
    if (!s)
        return sb_fail(err, SB_ENOMEM, "out of memory");
    s->mem = buf;
    s->mlen = len;
    s->label = label;
    s->err = err;
    const unsigned char *b = buf;
    if (len >= 2 && b[0] == 0x1f && b[1] == 0x8b) {
        s->zmem = true;
        if (inflateInit2(&s->zs, 15 + 16) != Z_OK) {
            free(s);
            return sb_fail(err, SB_ENOMEM, "out of memory (zlib)");
        }
        s->zs.next_in = (unsigned char *)(uintptr_t)buf;
        s->zs.avail_in = (uInt)(len > 0xffffffffu ? 0xffffffffu : len);
    }
    sb_trace_init(t);
    snprintf(t->label, sizeof t->label, "%s", label);
    int rc = run_reader(t, s);
    if (s->zmem)
        inflateEnd(&s->zs);
    free(s);
    if (rc)
        sb_trace_free(t);
    return rc;
}

void sb_trace_default_name(const char *path, char *out, size_t len)
{
    if (!len)
        return;
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t n = 0;
    /* a letter first, then letters, digits, '_', '-' up to the first '.'
     * (the store's name rule), at most 64 */
    if (!isalpha((unsigned char)*b) && len > 2)
        out[n++] = 't';
    for (; *b && *b != '.' && n + 1 < len && n < 64; b++)
        out[n++] =
            (isalnum((unsigned char)*b) || *b == '_' || *b == '-') ? *b : '_';
    out[n] = '\0';
}
