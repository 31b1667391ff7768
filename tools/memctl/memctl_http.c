/* memctl metrics --listen: Prometheus scrapes over HTTP, served by libmicrohttpd (one
 * internal thread). Each GET /metrics takes a fresh snapshot over one memd connection
 * kept open between scrapes (reconnected when the daemon restarted). `--listen systemd`
 * serves the TCP socket memd-metrics.socket passes (socket activation). */
#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "activation.h"
#include "memctl_service.h"

typedef struct http_ctx {
    const memctl_globals *g;
    memclient *c;              /* NULL until the first scrape, or after a failure */
} http_ctx;

/* The metrics text, malloc'd in *body; or an error text and a 5xx status. */
static unsigned scrape(http_ctx *h, char **body, size_t *len)
{
    memclient_snapshot *s = NULL;
    int r = -ENOTCONN;
    for (int attempt = 0; attempt < 2 && r < 0; attempt++) {
        if (!h->c && memclient_connect(h->g->socket_path, &h->c) < 0) {
            h->c = NULL;
            break;
        }
        r = memclient_dump(h->c, MEMCLIENT_ALL_DEVICES, MEMCTL_METRICS_DUMP,
                           &s);
        if (r < 0) { /* a restarted daemon: connect again once */
            memclient_disconnect(h->c);
            h->c = NULL;
        }
    }
    FILE *f = open_memstream(body, len);
    if (!f)
        return MHD_HTTP_INTERNAL_SERVER_ERROR;
    unsigned status = MHD_HTTP_OK;
    if (r < 0) {
        memclient_error e;
        memclient_last_error(&e);
        fprintf(f, "memd is not answering: %s\n", e.message);
        status = MHD_HTTP_SERVICE_UNAVAILABLE;
    } else {
        memctl_metrics_write(f, s);
    }
    memclient_snapshot_free(s);
    if (fclose(f) != 0)
        return MHD_HTTP_INTERNAL_SERVER_ERROR;
    return status;
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, char *body,
                             size_t len, const char *type)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    enum MHD_Result r = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return r;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload, size_t *upload_len, void **state)
{
    (void)version;
    (void)upload;
    (void)state;
    if (*upload_len)
        return MHD_NO; /* no request here has a body */
    if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
        return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, strdup("GET only\n"), 9, "text/plain");
    if (!strcmp(url, "/")) {
        static const char page[] = "<html><body><a href=\"/metrics\">memd metrics</a></body></html>\n";
        return reply(conn, MHD_HTTP_OK, strdup(page), sizeof page - 1, "text/html");
    }
    if (strcmp(url, "/metrics"))
        return reply(conn, MHD_HTTP_NOT_FOUND, strdup("not found: try /metrics\n"), 24,
                     "text/plain");
    char *body = NULL;
    size_t len = 0;
    unsigned status = scrape(cls, &body, &len);
    if (!body)
        return MHD_NO;
    return reply(conn, status, body, len, "text/plain; version=0.0.4; charset=utf-8");
}

/* "HOST:PORT", "[V6]:PORT" or ":PORT" -> a socket address. */
static int parse_addr(const char *spec, struct sockaddr_storage *out, socklen_t *outlen)
{
    char host[256];
    const char *colon = strrchr(spec, ':');
    if (!colon || !colon[1])
        return -EINVAL;
    size_t hl = (size_t)(colon - spec);
    if (hl >= sizeof host)
        return -EINVAL;
    memcpy(host, spec, hl);
    host[hl] = '\0';
    char *h = host;
    if (h[0] == '[') {
        if (hl < 2 || h[hl - 1] != ']')
            return -EINVAL;
        h[hl - 1] = '\0';
        h++;
    }
    uint32_t port;
    if (memctl_parse_u32(colon + 1, &port) < 0 || port > 65535)
        return -EINVAL;
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE};
    struct addrinfo *res;
    if (getaddrinfo(*h ? h : NULL, colon + 1, &hints, &res) != 0)
        return -EINVAL;
    memcpy(out, res->ai_addr, res->ai_addrlen);
    *outlen = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

/* The listening TCP socket a socket unit passed, or -1 (said on stderr). */
static int passed_socket(void)
{
    int n = memd_listen_fds(), type = 0, acc = 0;
    struct sockaddr_storage sa;
    socklen_t len = sizeof type, salen = sizeof sa;
    if (n <= 0) {
        fprintf(stderr, "memctl metrics: --listen systemd: %s\n", n < 0
                ? "LISTEN_FDS is not a socket count"
                : "no socket was passed (run it from memd-metrics.socket)");
        return -1;
    }
    int fd = MEMD_LISTEN_FDS_START;
    for (int i = 1; i < n; i++)
        close(fd + i); /* memd-metrics.socket passes one */
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &salen) < 0 || type != SOCK_STREAM ||
        (sa.ss_family != AF_INET && sa.ss_family != AF_INET6) ||
        getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &(socklen_t){sizeof acc}) < 0 || !acc) {
        fprintf(stderr, "memctl metrics: --listen systemd: fd %d is not a listening TCP "
                        "socket\n", fd);
        return -1;
    }
    return fd;
}

int memctl_metrics_serve(const memctl_globals *g, const char *addr)
{
    struct sockaddr_storage sa = {0};
    socklen_t salen;
    int passed = -1;
    if (!strcmp(addr, "systemd")) {
        if ((passed = passed_socket()) < 0)
            return MEMCTL_EXIT_FAIL;
        salen = sizeof sa;
        getsockname(passed, (struct sockaddr *)&sa, &salen);
    } else if (parse_addr(addr, &sa, &salen) < 0)
        return memctl_bad_value("metrics", "--listen", addr,
                                "ADDR:PORT with a numeric address, e.g. 127.0.0.1:9109, "
                                "[::1]:9109 or :9109");
    (void)salen;
    /* Block the signals before MHD starts its thread, so only sigwait below sees them. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    http_ctx ctx = {.g = g};
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
    if (sa.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    struct MHD_Daemon *d =
        passed >= 0
            ? MHD_start_daemon(flags, 0, NULL, NULL, on_request, &ctx,
                               MHD_OPTION_LISTEN_SOCKET, (MHD_socket)passed,
                               MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_END)
            : MHD_start_daemon(flags, 0, NULL, NULL, on_request, &ctx,
                               MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                               MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "memctl metrics: cannot listen on %s: %s\n", addr,
                errno ? strerror(errno) : "libmicrohttpd refused the address");
        return MEMCTL_EXIT_FAIL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    char host[64] = "";
    const char *colon = strrchr(addr, ':');
    if (colon)
        snprintf(host, sizeof host, "%.*s", (int)(colon - addr), addr);
    printf("memctl metrics: serving http://%s:%u/metrics%s\n", *host ? host : "0.0.0.0",
           info ? (unsigned)info->port : 0u, passed >= 0 ? " (socket from systemd)" : "");
    fflush(stdout);
    int sig = 0;
    sigwait(&set, &sig);
    MHD_stop_daemon(d);
    if (ctx.c)
        memclient_disconnect(ctx.c);
    return 0;
}
