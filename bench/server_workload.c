/*
 * mpidht_server_bench: the workloads of mpidht_bench (write, read, mixed;
 * uniform or zipf keys) against a server-based store on loopback, one
 * client connection per MPI rank, as a user of Redis or memcached would
 * run them: synchronous (one request, wait for the reply) or pipelined
 * (--depth requests, then their replies). The servers are started and
 * stopped by bench/run-suite.sh, not by this program.
 *
 * Keys are the drawn integer written as 16 hex digits, padded to
 * --key-size bytes; values are --value-size bytes, the key's hex digits
 * repeated, so that each value read can be checked. Every reply is
 * checked (outside nothing: checking is part of a client's work): a write
 * must be acknowledged as stored, a read must return its key's value or
 * nothing, and every key written in the write phase must be found in the
 * read phase. Anything else ends the run with a message and exit status
 * 1, so that a server's errors are never timed as results.
 *
 * Pipelining is each client library's own: hiredis sends --depth commands
 * and then reads their replies; libmemcached sends a batch's sets from its
 * request buffer and reads their replies only when that buffer purges
 * (here hundreds of sets later), and a batch's reads go out as one
 * multi-get. A phase's time ends after every reply has been read.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>
#include <libmemcached/memcached.h>
#include <mpi.h>

#include "cli.h"
#include "keygen.h"

typedef struct {
    const char *store; /* redis or memcached */
    const char *host;
    int port;
    unsigned depth; /* 1 = synchronous */
    unsigned long ops;
    size_t key_size, value_size;
    bool zipf;
    uint64_t range;
    unsigned read_percent;
    const char *json;
} options_t;

static void usage(FILE *out)
{
    fprintf(out, "usage: mpidht_server_bench --store redis|memcached --port P [options]\n"
                 "  --host H           server address (default 127.0.0.1)\n"
                 "  --depth D          requests in flight per connection (default 1)\n"
                 "  --dist uniform|zipf, --range N, --ops N, --read-percent P,\n"
                 "  --key-size B, --value-size B, --json FILE   as for mpidht_bench\n");
}

static int parse(int argc, char **argv, options_t *o)
{
    *o = (options_t){.store = NULL, .host = "127.0.0.1", .port = 0, .depth = 1,
                     .ops = 20000, .key_size = 80, .value_size = 104, .zipf = false,
                     .range = 712500, .read_percent = 95};
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            return 2;
        if (i + 1 >= argc)
            return 1;
        const char *v = argv[++i];
        unsigned long long whole = 0;
        bool number = bench_cli_whole(v, 0, ULONG_MAX, &whole);
        unsigned long n = (unsigned long)whole;
        if (!strcmp(a, "--store") && (!strcmp(v, "redis") || !strcmp(v, "memcached")))
            o->store = v;
        else if (!strcmp(a, "--host"))
            o->host = v;
        else if (!strcmp(a, "--port") && number && n > 0 && n < 65536)
            o->port = (int)n;
        else if (!strcmp(a, "--depth") && number && n >= 1 && n <= 1024)
            o->depth = (unsigned)n;
        else if (!strcmp(a, "--dist") && (!strcmp(v, "uniform") || !strcmp(v, "zipf")))
            o->zipf = !strcmp(v, "zipf");
        else if (!strcmp(a, "--range") && number && n >= 2)
            o->range = n;
        else if (!strcmp(a, "--ops") && number && n > 0)
            o->ops = n;
        else if (!strcmp(a, "--read-percent") && number && n <= 100)
            o->read_percent = (unsigned)n;
        else if (!strcmp(a, "--key-size") && number && n >= 16 && n <= 250)
            o->key_size = n;
        else if (!strcmp(a, "--value-size") && number && n > 0)
            o->value_size = n;
        else if (!strcmp(a, "--json"))
            o->json = v;
        else
            return 1;
    }
    return o->store && o->port ? 0 : 1;
}

/* One request of a batch: the key, its id, and whether it writes. */
typedef struct {
    char key[256];
    uint64_t id;
    bool write;
} request_t;

typedef struct {
    const options_t *o;
    redisContext *redis;
    memcached_st *mc;
    char *value;
    uint64_t misses;
} client_t;

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "mpidht_server_bench: %s: %s\n", what, detail);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* The value of key id: its 16 hex digits, repeated to len bytes. */
static void make_value(char *value, size_t len, uint64_t id)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < len; ++i)
        value[i] = digits[(id >> (4 * (15 - i % 16))) & 15];
}

/* Dies unless the len bytes at got are the value of request r. */
static void check_value(client_t *c, const request_t *r, const char *got, size_t len)
{
    size_t vlen = c->o->value_size;
    make_value(c->value, vlen, r->id);
    if (len != vlen || memcmp(got, c->value, vlen) != 0) {
        char detail[512];
        snprintf(detail, sizeof detail, "key %.16s: %zu bytes read, not the %zu-byte value "
                                        "written", r->key, len, vlen);
        die("wrong value", detail);
    }
}

static void connect_client(client_t *c)
{
    const options_t *o = c->o;
    if (!strcmp(o->store, "redis")) {
        c->redis = redisConnect(o->host, o->port);
        if (!c->redis || c->redis->err)
            die("redis connect", c->redis ? c->redis->errstr : "no memory");
        return;
    }
    c->mc = memcached_create(NULL);
    if (!c->mc || memcached_server_add(c->mc, o->host, (in_port_t)o->port) != MEMCACHED_SUCCESS)
        die("memcached", "cannot add server");
    memcached_behavior_set(c->mc, MEMCACHED_BEHAVIOR_TCP_NODELAY, 1);
    memcached_behavior_set(c->mc, MEMCACHED_BEHAVIOR_BUFFER_REQUESTS, o->depth > 1);
}

/* Issues a batch of n requests: pipelined for n > 1. */
static void run_batch(client_t *c, request_t *req, unsigned n)
{
    const options_t *o = c->o;
    size_t klen = o->key_size, vlen = o->value_size;
    if (c->redis) {
        for (unsigned i = 0; i < n; ++i) {
            const char *key = req[i].key;
            if (req[i].write)
                make_value(c->value, vlen, req[i].id); /* hiredis copies it */
            int rc = req[i].write
                         ? redisAppendCommand(c->redis, "SET %b %b", key, klen, c->value, vlen)
                         : redisAppendCommand(c->redis, "GET %b", key, klen);
            if (rc != REDIS_OK)
                die("redis", c->redis->errstr);
        }
        for (unsigned i = 0; i < n; ++i) {
            redisReply *reply = NULL;
            if (redisGetReply(c->redis, (void **)&reply) != REDIS_OK || !reply)
                die("redis", c->redis->errstr);
            if (reply->type == REDIS_REPLY_ERROR)
                die(req[i].write ? "redis SET" : "redis GET", reply->str);
            if (req[i].write) {
                if (reply->type != REDIS_REPLY_STATUS || strcmp(reply->str, "OK") != 0)
                    die("redis SET", "a reply other than OK");
            } else if (reply->type == REDIS_REPLY_NIL) {
                c->misses++;
            } else if (reply->type == REDIS_REPLY_STRING) {
                check_value(c, &req[i], reply->str, reply->len);
            } else {
                die("redis GET", "a reply neither a value nor nil");
            }
            freeReplyObject(reply);
        }
        return;
    }
    /* memcached: sets go out buffered when pipelined (set at connect);
     * the gets of a batch as one multi-get. */
    const char *keys[1024];
    size_t lens[1024];
    const request_t *asked[1024];
    unsigned gets = 0;
    for (unsigned i = 0; i < n; ++i) {
        if (req[i].write) {
            make_value(c->value, vlen, req[i].id);
            memcached_return_t rc = memcached_set(c->mc, req[i].key, klen, c->value, vlen, 0, 0);
            if (rc != MEMCACHED_SUCCESS && rc != MEMCACHED_BUFFERED)
                die("memcached set", memcached_strerror(c->mc, rc));
        } else {
            asked[gets] = &req[i];
            keys[gets] = req[i].key;
            lens[gets++] = klen;
        }
    }
    if (n > 1)
        memcached_flush_buffers(c->mc);
    if (!gets)
        return;
    memcached_return_t rc = memcached_mget(c->mc, keys, lens, gets);
    if (rc != MEMCACHED_SUCCESS)
        die("memcached mget", memcached_strerror(c->mc, rc));
    unsigned found = 0;
    memcached_result_st *result;
    while ((result = memcached_fetch_result(c->mc, NULL, &rc)) != NULL) {
        /* which of the keys asked for (a key may be asked for twice) */
        const char *key = memcached_result_key_value(result);
        unsigned k = 0;
        while (k < gets && (memcached_result_key_length(result) != klen ||
                            memcmp(asked[k]->key, key, klen) != 0))
            ++k;
        if (k == gets)
            die("memcached get", "a value for a key not asked for");
        check_value(c, asked[k], memcached_result_value(result), memcached_result_length(result));
        found++;
        memcached_result_free(result);
    }
    if (rc != MEMCACHED_END && rc != MEMCACHED_NOTFOUND && rc != MEMCACHED_SUCCESS)
        die("memcached get", memcached_strerror(c->mc, rc));
    if (found > gets)
        die("memcached get", "more values than keys asked for");
    c->misses += gets - found;
}

/* Reads every reply still owed, so that a phase's time includes them: a
 * multi-get first reads the replies of every set sent before it. Dies
 * if a set was refused. */
static void drain(client_t *c, const request_t *last)
{
    if (!c->mc)
        return; /* hiredis has read every reply of each batch */
    request_t probe = *last;
    probe.write = false;
    unsigned long misses = c->misses;
    run_batch(c, &probe, 1);
    c->misses = misses;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    options_t o;
    int exit_code = 0;
    if (!bench_cli_proceed(parse(argc, argv, &o), usage, &exit_code))
        return exit_code;
    keygen_zipf_t zipf;
    if (o.zipf)
        keygen_zipf_init(&zipf, o.range, 0.99);
    FILE *json = NULL;
    if (!bench_cli_open_output("mpidht_server_bench", o.json, &json)) {
        MPI_Finalize();
        return 1;
    }
    client_t c = {.o = &o, .value = calloc(1, o.value_size)};
    request_t *req = calloc(o.depth, sizeof *req);
    if (!c.value || !req) {
        fprintf(stderr, "mpidht_server_bench: out of memory for a value of %zu bytes and %u "
                        "requests in flight\n", o.value_size, o.depth);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(c.value, 'v', o.value_size);
    connect_client(&c);

    static const char *const phases[] = {"write", "read", "mixed"};
    if (json)
        fprintf(json, "[");
    char label[64];
    snprintf(label, sizeof label, "%s-%s%u", o.store, o.depth > 1 ? "pipe" : "sync", o.depth);
    for (int ph = 0; ph < 3; ++ph) {
        keygen_rng_t keys = {1 + (uint64_t)rank * 7919u}, mix = {31u + (uint64_t)rank + 5};
        c.misses = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (unsigned long done = 0; done < o.ops;) {
            unsigned n = o.ops - done < o.depth ? (unsigned)(o.ops - done) : o.depth;
            for (unsigned i = 0; i < n; ++i) {
                uint64_t id = o.zipf ? keygen_zipf_next(&zipf, &keys)
                                     : 1 + keygen_next(&keys) % o.range;
                snprintf(req[i].key, sizeof req[i].key, "%016" PRIx64 "%0*d", id,
                         (int)(o.key_size - 16), 0);
                req[i].id = id;
                req[i].write = ph == 0 || (ph == 2 && keygen_next(&mix) % 100 >= o.read_percent);
            }
            run_batch(&c, req, n);
            done += n;
        }
        drain(&c, &req[0]);
        double elapsed = MPI_Wtime() - t0, slowest = 0;
        uint64_t misses = 0;
        MPI_Reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Allreduce(&c.misses, &misses, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
        if (rank == 0) {
            double total = (double)o.ops * size, rate = total / slowest;
            /* Time per request on one connection (for a pipeline, the
             * batch's time shared among its requests). */
            double mean_us = slowest / (double)o.ops * 1e6;
            printf("%-16s %-6s %-8s %5d %10.0f %12.0f %9.3f %8" PRIu64 "\n", label,
                   phases[ph], o.zipf ? "zipf" : "uniform", size, total, rate, mean_us, misses);
            if (json)
                fprintf(json,
                        "%s\n  {\"protocol\": \"%s\", \"phase\": \"%s\", \"distribution\": "
                        "\"%s\", \"ranks\": %d, \"ops\": %.0f, \"ops_per_s\": %.0f, "
                        "\"mean_us\": %.4f, \"misses\": %" PRIu64 "}",
                        ph ? "," : "", label, phases[ph], o.zipf ? "zipf" : "uniform", size,
                        total, rate, mean_us, misses);
        }
        if (misses > 0) { /* the read and mixed phases read keys written before */
            if (rank == 0)
                fprintf(stderr, "mpidht_server_bench: %" PRIu64 " reads of keys written in the "
                                "write phase found nothing: the server lost writes; no results "
                                "written\n", misses);
            exit_code = 1;
            break;
        }
    }
    if (json && exit_code != 0) {
        fclose(json);
        remove(o.json);
        json = NULL;
    }
    if (json) {
        fprintf(json, "\n]\n");
        fclose(json);
    }
    if (c.redis)
        redisFree(c.redis);
    if (c.mc)
        memcached_free(c.mc);
    free(req);
    free(c.value);
    MPI_Finalize();
    return exit_code;
}
