/*
 * wsload: a WebSocket load generator in C, for benchmarks whose clients share the server's CPUs.
 *
 * A Python client spends 0.6 to 1.3 ms of CPU on a ten-call session; on a two-CPU machine that
 * is taken from the server being measured. This one plays the same frames for the kernel's
 * share alone. It knows nothing of Seahaven: it reads a plan of sessions, each a list of text
 * frames to send one after another (each waiting for its answer), plays them all at once over
 * loopback TCP, and writes down every frame it sent, every answer and every round trip. The
 * Python side (serving_load.py) writes the plan from the same scripts its own clients play, and
 * checks every answer with them afterwards, so a session counts only when its answers are right.
 *
 * A frame may name a value of an earlier answer: "@@reply<N>.id@@" is replaced, before the frame
 * is sent, by the string value of the first "id" key in the answer to frame N (0-based) of the
 * same session; a frame that creates a row and a later one that reads it by its new id.
 *
 * Plan (stdin): a line "<host> <port> <path> <sessions>", then per session a line "<frames>" and
 * that many lines, each one frame's text (JSON has no raw newline). After its frames a session
 * sends the text "{\"type\": \"close\"}" and a close frame, and closes.
 *
 * Output (the file named by argv[1]): per session, per frame: "<session> <frame> <seconds>
 * <sent length> <answer length>\n", the sent bytes, "\n", the answer bytes, "\n". On stdout, one
 * line: "<wall seconds> <user seconds> <system seconds> <failed sessions>". A session that fails
 * (refused, closed, timed out) is reported on stderr and counted; the run goes on.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CLOSE_TEXT "{\"type\": \"close\"}"
#define MARK "@@reply"
#define TIMEOUT_SECONDS 300.0

typedef struct {
    char *data;
    size_t len, cap;
} Buf;

typedef struct {
    int fd;
    int upgraded, done, failed;
    int nframes, next;          /* frames in the plan; the frame whose answer is awaited */
    char **plan;                /* the frames as planned, markers unreplaced */
    Buf *sent, *answers;        /* per frame: what was sent, and its answer */
    double *seconds;            /* per frame: the round trip */
    double sent_at;
    Buf out;                    /* bytes waiting to be written */
    size_t out_done;
    Buf in;                     /* bytes read and not yet parsed */
    Buf message;                /* the text message being reassembled */
} Session;

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void die(const char *what) {
    perror(what);
    exit(2);
}

static void reserve(Buf *b, size_t more) {
    if (b->len + more <= b->cap) return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + more) cap *= 2;
    b->data = realloc(b->data, cap);
    if (!b->data) die("realloc");
    b->cap = cap;
}

static void append(Buf *b, const void *data, size_t len) {
    reserve(b, len);
    memcpy(b->data + b->len, data, len);
    b->len += len;
}

static uint32_t mask_key(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

/* One masked, unfragmented client frame of `opcode` carrying `payload`, onto `out`. */
static void put_frame(Buf *out, int opcode, const char *payload, size_t len) {
    unsigned char head[14];
    size_t n = 0;
    head[n++] = 0x80 | opcode;
    if (len < 126) {
        head[n++] = 0x80 | len;
    } else if (len < 65536) {
        head[n++] = 0x80 | 126;
        head[n++] = len >> 8;
        head[n++] = len & 0xff;
    } else {
        head[n++] = 0x80 | 127;
        for (int i = 7; i >= 0; i--) head[n++] = (len >> (8 * i)) & 0xff;
    }
    uint32_t key = mask_key();
    unsigned char k[4] = {key >> 24, key >> 16, key >> 8, key};
    memcpy(head + n, k, 4);
    n += 4;
    append(out, head, n);
    reserve(out, len);
    unsigned char *dst = (unsigned char *)out->data + out->len;
    for (size_t i = 0; i < len; i++) dst[i] = payload[i] ^ k[i & 3];
    out->len += len;
}

/* The string value of the first "id" key in `answer`, as a pointer and length; 0 if none. */
static int find_id(const Buf *answer, const char **start, size_t *len) {
    const char *p = answer->data, *end = answer->data + answer->len;
    while (p && p < end) {
        p = memmem(p, end - p, "\"id\"", 4);
        if (!p) return 0;
        p += 4;
        while (p < end && (*p == ' ' || *p == ':')) p++;
        if (p < end && *p == '"') {
            const char *q = memchr(p + 1, '"', end - p - 1);
            if (!q) return 0;
            *start = p + 1;
            *len = q - p - 1;
            return 1;
        }
    }
    return 0;
}

/* The frame `index` of `s` with its markers replaced, into `s->sent[index]`. */
static int render(Session *s, int index) {
    const char *p = s->plan[index];
    Buf *b = &s->sent[index];
    for (;;) {
        const char *m = strstr(p, MARK);
        if (!m) {
            append(b, p, strlen(p));
            return 1;
        }
        append(b, p, m - p);
        char *after;
        long n = strtol(m + strlen(MARK), &after, 10);
        if (strncmp(after, ".id@@", 5) != 0 || n < 0 || n >= index) return 0;
        const char *id;
        size_t len;
        if (!find_id(&s->answers[n], &id, &len)) return 0;
        append(b, id, len);
        p = after + 5;
    }
}

static void want_write(Session *s, int epoll, int writing) {
    struct epoll_event ev = {.events = EPOLLIN | (writing ? EPOLLOUT : 0), .data.ptr = s};
    epoll_ctl(epoll, EPOLL_CTL_MOD, s->fd, &ev);
}

static int flush(Session *s, int epoll) {
    while (s->out_done < s->out.len) {
        ssize_t n = write(s->fd, s->out.data + s->out_done, s->out.len - s->out_done);
        if (n < 0) {
            if (errno == EAGAIN) {
                want_write(s, epoll, 1);
                return 1;
            }
            return 0;
        }
        s->out_done += n;
    }
    s->out.len = s->out_done = 0;
    want_write(s, epoll, 0);
    return 1;
}

static int send_next(Session *s, int epoll) {
    if (s->next == s->nframes) {
        put_frame(&s->out, 0x1, CLOSE_TEXT, strlen(CLOSE_TEXT));
        put_frame(&s->out, 0x8, "\x03\xe8", 2);
        flush(s, epoll);
        s->done = 1;
        epoll_ctl(epoll, EPOLL_CTL_DEL, s->fd, NULL);
        close(s->fd);
        return 1;
    }
    if (!render(s, s->next)) return 0;
    Buf *frame = &s->sent[s->next];
    put_frame(&s->out, 0x1, frame->data, frame->len);
    s->sent_at = now();
    return flush(s, epoll);
}

/* Parse what has arrived; answer pings; take each whole text message as the awaited answer. */
static int take_input(Session *s, int epoll) {
    if (!s->upgraded) {
        char *end = memmem(s->in.data, s->in.len, "\r\n\r\n", 4);
        if (!end) return 1;
        if (s->in.len < 12 || memcmp(s->in.data, "HTTP/1.1 101", 12) != 0) return 0;
        size_t used = end + 4 - s->in.data;
        memmove(s->in.data, s->in.data + used, s->in.len - used);
        s->in.len -= used;
        s->upgraded = 1;
        if (!send_next(s, epoll)) return 0;
    }
    for (;;) {
        unsigned char *d = (unsigned char *)s->in.data;
        if (s->in.len < 2) return 1;
        int fin = d[0] & 0x80, opcode = d[0] & 0x0f;
        uint64_t len = d[1] & 0x7f;
        size_t off = 2;
        if (len == 126) {
            if (s->in.len < 4) return 1;
            len = ((uint64_t)d[2] << 8) | d[3];
            off = 4;
        } else if (len == 127) {
            if (s->in.len < 10) return 1;
            len = 0;
            for (int i = 0; i < 8; i++) len = (len << 8) | d[2 + i];
            off = 10;
        }
        if (s->in.len < off + len) return 1;
        if (opcode == 0x9) {
            put_frame(&s->out, 0xA, (char *)d + off, len);
            if (!flush(s, epoll)) return 0;
        } else if (opcode == 0x8) {
            return 0;
        } else if (opcode == 0x1 || opcode == 0x0) {
            append(&s->message, d + off, len);
        }
        memmove(s->in.data, s->in.data + off + len, s->in.len - off - len);
        s->in.len -= off + len;
        if (fin && (opcode == 0x1 || opcode == 0x0)) {
            s->seconds[s->next] = now() - s->sent_at;
            append(&s->answers[s->next], s->message.data, s->message.len);
            s->message.len = 0;
            s->next++;
            if (!send_next(s, epoll)) return 0;
            if (s->done) return 1;
        }
    }
}

static char *read_line(void) {
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = getline(&line, &cap, stdin);
    if (n < 0) {
        fprintf(stderr, "wsload: the plan ended early\n");
        exit(2);
    }
    if (n && line[n - 1] == '\n') line[n - 1] = 0;
    return line;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: wsload OUTPUT < PLAN\n");
        return 2;
    }
    char host[256], path[1024];
    int port, count;
    char *first = read_line();
    if (sscanf(first, "%255s %d %1023s %d", host, &port, path, &count) != 4 || count < 1) {
        fprintf(stderr, "wsload: the plan's first line is not '<host> <port> <path> <sessions>'\n");
        return 2;
    }
    Session *sessions = calloc(count, sizeof(Session));
    for (int i = 0; i < count; i++) {
        Session *s = &sessions[i];
        s->nframes = atoi(read_line());
        s->plan = calloc(s->nframes, sizeof(char *));
        s->sent = calloc(s->nframes, sizeof(Buf));
        s->answers = calloc(s->nframes, sizeof(Buf));
        s->seconds = calloc(s->nframes, sizeof(double));
        for (int f = 0; f < s->nframes; f++) s->plan[f] = read_line();
    }
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(port)};
    if (inet_pton(AF_INET, host, &address.sin_addr) != 1) {
        fprintf(stderr, "wsload: %s is not an IPv4 address\n", host);
        return 2;
    }
    char opening[2048];
    int opening_len = snprintf(opening, sizeof opening,
                               "GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\n"
                               "Connection: Upgrade\r\nSec-WebSocket-Key: c2VhaGF2ZW4tbG9hZC0wMQ==\r\n"
                               "Sec-WebSocket-Version: 13\r\n\r\n",
                               path, host, port);
    int epoll = epoll_create1(0);
    if (epoll < 0) die("epoll_create1");
    struct rusage before;
    getrusage(RUSAGE_SELF, &before);
    double started = now();
    for (int i = 0; i < count; i++) {
        Session *s = &sessions[i];
        s->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        if (s->fd < 0) die("socket");
        int one = 1;
        setsockopt(s->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (connect(s->fd, (struct sockaddr *)&address, sizeof address) < 0 && errno != EINPROGRESS)
            die("connect");
        append(&s->out, opening, opening_len);
        struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.ptr = s};
        epoll_ctl(epoll, EPOLL_CTL_ADD, s->fd, &ev);
    }
    int open = count;
    struct epoll_event events[256];
    char chunk[65536];
    while (open > 0) {
        if (now() - started > TIMEOUT_SECONDS) {
            fprintf(stderr, "wsload: %d sessions unfinished after %.0f s\n", open, TIMEOUT_SECONDS);
            break;
        }
        int n = epoll_wait(epoll, events, 256, 1000);
        for (int e = 0; e < n; e++) {
            Session *s = events[e].data.ptr;
            if (s->done || s->failed) continue;
            int ok = 1;
            if (events[e].events & EPOLLOUT) ok = flush(s, epoll);
            if (ok && events[e].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
                ssize_t got = read(s->fd, chunk, sizeof chunk);
                if (got > 0) {
                    append(&s->in, chunk, got);
                    ok = take_input(s, epoll);
                } else if (got == 0 || errno != EAGAIN) {
                    ok = 0;
                }
            }
            if (!ok) {
                fprintf(stderr, "wsload: session %d failed at frame %d\n", (int)(s - sessions),
                        s->next);
                s->failed = 1;
                epoll_ctl(epoll, EPOLL_CTL_DEL, s->fd, NULL);
                close(s->fd);
            }
            if (s->done || s->failed) open--;
        }
    }
    double wall = now() - started;
    struct rusage after;
    getrusage(RUSAGE_SELF, &after);
    FILE *out = fopen(argv[1], "wb");
    if (!out) die(argv[1]);
    int failed = 0;
    for (int i = 0; i < count; i++) {
        Session *s = &sessions[i];
        if (!s->done) failed++;
        for (int f = 0; f < s->next; f++) {
            fprintf(out, "%d %d %.9f %zu %zu\n", i, f, s->seconds[f], s->sent[f].len,
                    s->answers[f].len);
            fwrite(s->sent[f].data, 1, s->sent[f].len, out);
            fputc('\n', out);
            fwrite(s->answers[f].data, 1, s->answers[f].len, out);
            fputc('\n', out);
        }
    }
    fclose(out);
    double user = (after.ru_utime.tv_sec - before.ru_utime.tv_sec) +
                  (after.ru_utime.tv_usec - before.ru_utime.tv_usec) / 1e6;
    double sys = (after.ru_stime.tv_sec - before.ru_stime.tv_sec) +
                 (after.ru_stime.tv_usec - before.ru_stime.tv_usec) / 1e6;
    printf("%.6f %.6f %.6f %d\n", wall, user, sys, failed);
    return 0;
}
