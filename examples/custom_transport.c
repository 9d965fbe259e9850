/* custom_transport.c - what it shows: writing your own transport. redcoll's
   schedules only see the redcoll_transport vtable, so a few dozen lines over
   Unix socketpairs between forked processes run exactly the schedules the
   simulator, the threads transport and MPI run. Each of p processes gets a
   socket to every other one; send/recv move a small header (tag, size) and
   the payload; sendrecv drives both directions at once with poll(), so two
   processes exchanging large vectors never block each other however small
   the kernel's socket buffers are. abort shuts every socket down, so peers
   blocked in a read see end-of-file and are released with an error.

   Build: cc -std=c11 -I.. custom_transport.c -o custom_transport
   Run:   ./custom_transport [processes]                                      */
#define _POSIX_C_SOURCE 200809L
#define REDCOLL_IMPLEMENTATION
#include "redcoll.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- the transport ------------------------------------------------------------ */

typedef struct sock_transport {
    redcoll_transport t;
    int              *fd; /* fd[peer]: the socket to peer (-1 for oneself) */
    int               aborted;
} sock_transport;

typedef struct header { int32_t tag, pad; uint64_t bytes; } header;

/* One direction of one message: the header, then the payload. */
typedef struct stream {
    int     fd, active;
    header  hdr;       /* sent, or received and then checked against `want` */
    header  want;
    char   *buf;
    size_t  bytes, off; /* off counts header + payload bytes done */
} stream;

static void stream_init(stream *s, int fd, void *buf, size_t bytes, int tag) {
    memset(s, 0, sizeof *s);
    s->fd = fd; s->active = 1; s->buf = (char *)buf; s->bytes = bytes;
    s->hdr.tag = tag; s->hdr.bytes = bytes;
    s->want = s->hdr;
}

/* Moves as many bytes as the socket takes now. Returns an error, or OK. */
static redcoll_result stream_step(stream *s, int is_send) {
    size_t hsz = sizeof s->hdr, total = hsz + s->bytes;
    while (s->active && s->off < total) {
        char *p = s->off < hsz ? (char *)&s->hdr + s->off : s->buf + (s->off - hsz);
        size_t want = s->off < hsz ? hsz - s->off : total - s->off;
        ssize_t n = is_send ? send(s->fd, p, want, MSG_NOSIGNAL) : recv(s->fd, p, want, 0);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return REDCOLL_OK;
        if (n < 0) return REDCOLL_ERR_TRANSPORT;
        if (n == 0) return REDCOLL_ERR_ABORTED; /* the peer shut its sockets: abort */
        s->off += (size_t)n;
        if (!is_send && s->off == hsz && s->off - (size_t)n < hsz &&
            (s->hdr.tag != s->want.tag || s->hdr.bytes != s->want.bytes))
            return REDCOLL_ERR_TRANSPORT; /* not the message this receive expects */
    }
    if (s->off == total) s->active = 0;
    return REDCOLL_OK;
}

/* Drives an outgoing and an incoming stream (either may be NULL) to the end. */
static redcoll_result drive(sock_transport *st, stream *out, stream *in) {
    while ((out && out->active) || (in && in->active)) {
        struct pollfd pf[2];
        int n = 0;
        redcoll_result r;
        if (st->aborted) return REDCOLL_ERR_ABORTED;
        if (out && out->active) { pf[n].fd = out->fd; pf[n].events = POLLOUT; pf[n].revents = 0; ++n; }
        if (in && in->active) { pf[n].fd = in->fd; pf[n].events = POLLIN; pf[n].revents = 0; ++n; }
        if (poll(pf, (nfds_t)n, -1) < 0 && errno != EINTR) return REDCOLL_ERR_TRANSPORT;
        if (out && out->active && (r = stream_step(out, 1)) != REDCOLL_OK) return r;
        if (in && in->active && (r = stream_step(in, 0)) != REDCOLL_OK) return r;
    }
    return REDCOLL_OK;
}

static int peer_fd(sock_transport *st, int peer) {
    return peer >= 0 && peer < st->t.size ? st->fd[peer] : -1;
}

static redcoll_result sock_send(void *user, int dst, const void *buf, size_t bytes, int tag) {
    sock_transport *st = (sock_transport *)user;
    stream s;
    if (peer_fd(st, dst) < 0) return REDCOLL_ERR_TRANSPORT;
    stream_init(&s, st->fd[dst], (void *)buf, bytes, tag);
    return drive(st, &s, NULL);
}

static redcoll_result sock_recv(void *user, int src, void *buf, size_t bytes, int tag) {
    sock_transport *st = (sock_transport *)user;
    stream s;
    if (peer_fd(st, src) < 0) return REDCOLL_ERR_TRANSPORT;
    stream_init(&s, st->fd[src], buf, bytes, tag);
    return drive(st, NULL, &s);
}

static redcoll_result sock_sendrecv(void *user, int dst, const void *sbuf, size_t sbytes, int src,
                                    void *rbuf, size_t rbytes, int tag) {
    sock_transport *st = (sock_transport *)user;
    stream o, i;
    if (dst == st->t.rank && src == st->t.rank) { /* with oneself: a copy */
        if (sbytes != rbytes) return REDCOLL_ERR_TRANSPORT;
        if (sbytes) memmove(rbuf, sbuf, sbytes);
        return REDCOLL_OK;
    }
    if (peer_fd(st, dst) < 0 || peer_fd(st, src) < 0) return REDCOLL_ERR_TRANSPORT;
    stream_init(&o, st->fd[dst], (void *)sbuf, sbytes, tag);
    stream_init(&i, st->fd[src], rbuf, rbytes, tag);
    return drive(st, &o, &i);
}

/* Releases the peers: a shut-down socket reads as end-of-file over there. */
static void sock_abort(void *user, redcoll_result why) {
    sock_transport *st = (sock_transport *)user;
    int i;
    (void)why;
    st->aborted = 1;
    for (i = 0; i < st->t.size; ++i)
        if (st->fd[i] >= 0) shutdown(st->fd[i], SHUT_RDWR);
}

/* Fills the vtable; the optional entries left NULL are documented in
   redcoll.h (no isend/irecv: the library uses sendrecv steps instead). */
static void sock_transport_init(sock_transport *st, int rank, int size, int *fds) {
    memset(st, 0, sizeof *st);
    st->fd = fds;
    st->t.user = st;
    st->t.rank = rank;
    st->t.size = size;
    st->t.send = sock_send;
    st->t.recv = sock_recv;
    st->t.sendrecv = sock_sendrecv;
    st->t.abort = sock_abort;
}

/* ---- the program: every allreduce, reduce and bcast schedule ----------------- */

#define N 50000 /* int64 elements: 400 KB, larger than a socket buffer */
#define STRIDE ((int64_t)1000003) /* rank r sends r * STRIDE + i: every rank's data differs */

static int run_rank(const redcoll_transport *t) {
    int64_t *x = (int64_t *)malloc(N * sizeof *x), *y = (int64_t *)malloc(N * sizeof *y);
    int p = t->size, a, c, i, bad = 0;
    static const redcoll_coll colls[3] = { REDCOLL_COLL_ALLREDUCE, REDCOLL_COLL_REDUCE,
                                           REDCOLL_COLL_BCAST };
    if (!x || !y) return 1;
    for (c = 0; c < 3; ++c) {
        for (a = 1; a < REDCOLL_ALGO_COUNT; ++a) {
            redcoll_options o;
            redcoll_result r;
            int root = p - 1, wrong = 0;
            if (!redcoll_algo_supported(colls[c], (redcoll_algo)a)) continue;
            memset(&o, 0, sizeof o);
            o.algo = (redcoll_algo)a;
            for (i = 0; i < N; ++i) x[i] = t->rank * STRIDE + i;
            memset(y, 0, N * sizeof *y);
            if (colls[c] == REDCOLL_COLL_BCAST) {
                if (t->rank == root) memcpy(y, x, N * sizeof *y);
                r = redcoll_bcast(t, y, N, REDCOLL_INT64, root, &o);
                for (i = 0; r == REDCOLL_OK && i < N; ++i) wrong += y[i] != root * STRIDE + i;
            } else {
                r = colls[c] == REDCOLL_COLL_ALLREDUCE
                        ? redcoll_allreduce(t, x, y, N, REDCOLL_INT64, REDCOLL_SUM, &o)
                        : redcoll_reduce(t, x, y, N, REDCOLL_INT64, REDCOLL_SUM, root, &o);
                if (colls[c] == REDCOLL_COLL_ALLREDUCE || t->rank == root)
                    for (i = 0; r == REDCOLL_OK && i < N; ++i)
                        wrong += y[i] != (int64_t)p * (p - 1) / 2 * STRIDE + (int64_t)p * i;
            }
            if (r != REDCOLL_OK || wrong) {
                fprintf(stderr, "process %d: %s/%s: %s, %d wrong\n", t->rank,
                        redcoll_coll_name(colls[c]), redcoll_algo_name((redcoll_algo)a),
                        redcoll_result_string(r), wrong);
                bad = 1;
            } else if (t->rank == 0) {
                printf("%-10s %-24s ok on %d processes over socketpairs\n",
                       redcoll_coll_name(colls[c]), redcoll_algo_name((redcoll_algo)a), p);
            }
            fflush(stdout);
        }
    }
    free(x);
    free(y);
    return bad;
}

int main(int argc, char **argv) {
    int p = argc > 1 ? atoi(argv[1]) : 5, i, j, bad = 0;
    int *fds; /* fds[i * p + j]: process i's socket to process j */
    pid_t *pids;
    if (p < 1 || p > 64) { fprintf(stderr, "usage: %s [processes 1..64]\n", argv[0]); return 2; }
    fds = (int *)malloc(sizeof *fds * (size_t)p * (size_t)p);
    pids = (pid_t *)malloc(sizeof *pids * (size_t)p);
    if (!fds || !pids) return 1;
    for (i = 0; i < p; ++i) fds[i * p + i] = -1;
    for (i = 0; i < p; ++i)
        for (j = i + 1; j < p; ++j) {
            int sv[2];
            if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) { perror("socketpair"); return 1; }
            fds[i * p + j] = sv[0];
            fds[j * p + i] = sv[1];
        }
    fflush(stdout);
    for (i = 0; i < p; ++i) {
        pids[i] = fork();
        if (pids[i] < 0) { perror("fork"); return 1; }
        if (pids[i] == 0) { /* process i: keep its own sockets, close the rest */
            sock_transport st;
            int k, rc;
            for (k = 0; k < p * p; ++k)
                if (k / p != i && fds[k] >= 0) close(fds[k]);
            for (k = 0; k < p; ++k) /* non-blocking: drive() waits in poll() */
                if (fds[i * p + k] >= 0) {
                    int fl = fcntl(fds[i * p + k], F_GETFL);
                    fcntl(fds[i * p + k], F_SETFL, fl | O_NONBLOCK);
                }
            sock_transport_init(&st, i, p, &fds[i * p]);
            rc = run_rank(&st.t);
            _exit(rc);
        }
    }
    for (i = 0; i < p * p; ++i)
        if (fds[i] >= 0) close(fds[i]);
    for (i = 0; i < p; ++i) {
        int status = 0;
        waitpid(pids[i], &status, 0);
        bad |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    }
    printf("%s\n", bad ? "FAILED" : "every schedule gave the right result in every process");
    free(fds);
    free(pids);
    return bad;
}
