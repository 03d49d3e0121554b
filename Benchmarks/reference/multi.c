// The reference for `make bench`: what libcurl's multi interface allows on this machine.
// N transfers at a time, 512 KiB receive buffers, write(2) straight from the callback.
//
//   multi N MODE OUTDIR < urls
//
// MODE: file   write each file, no flush (what curl does)
//       null   write nothing (the network path alone)
//       fsync  fsync each file as it completes, then its folder once at the end
//       group  fsync finished files in batches (group commit), one folder fsync per batch
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum mode { MODE_FILE, MODE_NULL, MODE_FSYNC, MODE_GROUP };

struct job {
    char url[2048];
    char path[4096];
    int fd;
};

static enum mode mode;
static int dirfd_out = -1;
static int pending_fds[64];
static int pending_count = 0;

static size_t on_body(char *data, size_t size, size_t count, void *user) {
    struct job *job = user;
    size_t length = size * count;
    if (mode == MODE_NULL) return length;
    size_t written = 0;
    while (written < length) {
        ssize_t result = write(job->fd, data + written, length - written);
        if (result < 0) {
            if (errno == EINTR) continue;
            return 0;
        }
        written += (size_t)result;
    }
    return length;
}

static void flush_group(void) {
    for (int i = 0; i < pending_count; i++) {
        fsync(pending_fds[i]);
        close(pending_fds[i]);
    }
    if (pending_count > 0 && dirfd_out >= 0) fsync(dirfd_out);
    pending_count = 0;
}

static void finish_file(struct job *job) {
    if (job->fd < 0) return;
    switch (mode) {
    case MODE_FSYNC:
        fsync(job->fd);
        close(job->fd);
        break;
    case MODE_GROUP:
        pending_fds[pending_count++] = job->fd;
        if (pending_count == (int)(sizeof pending_fds / sizeof pending_fds[0])) flush_group();
        break;
    default:
        close(job->fd);
    }
    job->fd = -1;
}

static CURL *start(CURLM *multi, struct job *job, const char *outdir, int index) {
    const char *name = strrchr(job->url, '/');
    snprintf(job->path, sizeof job->path, "%s/%s", outdir, name ? name + 1 : "download");
    (void)index;
    job->fd = mode == MODE_NULL ? -1 : open(job->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (mode != MODE_NULL && job->fd < 0) {
        perror(job->path);
        exit(1);
    }
    CURL *easy = curl_easy_init();
    curl_easy_setopt(easy, CURLOPT_URL, job->url);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, job);
    curl_easy_setopt(easy, CURLOPT_PRIVATE, job);
    curl_easy_setopt(easy, CURLOPT_BUFFERSIZE, 512L * 1024);
    curl_easy_setopt(easy, CURLOPT_FAILONERROR, 1L);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_multi_add_handle(multi, easy);
    return easy;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: multi N file|null|fsync|group OUTDIR < urls\n");
        return 2;
    }
    int parallel = atoi(argv[1]);
    mode = !strcmp(argv[2], "null") ? MODE_NULL : !strcmp(argv[2], "fsync") ? MODE_FSYNC : !strcmp(argv[2], "group") ? MODE_GROUP : MODE_FILE;
    const char *outdir = argv[3];
    if (mode != MODE_NULL) dirfd_out = open(outdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    size_t capacity = 1024, total = 0;
    struct job *jobs = malloc(capacity * sizeof *jobs);
    char line[2048];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n")] = 0;
        if (!*line) continue;
        if (total == capacity) jobs = realloc(jobs, (capacity *= 2) * sizeof *jobs);
        snprintf(jobs[total].url, sizeof jobs[total].url, "%s", line);
        jobs[total].fd = -1;
        total++;
    }

    curl_global_init(CURL_GLOBAL_DEFAULT);
    CURLM *multi = curl_multi_init();
    size_t next = 0, running_jobs = 0, failed = 0;
    while (next < total && running_jobs < (size_t)parallel) { start(multi, &jobs[next], outdir, (int)next); next++; running_jobs++; }
    int still = 0;
    do {
        curl_multi_perform(multi, &still);
        CURLMsg *message;
        int left;
        while ((message = curl_multi_info_read(multi, &left))) {
            if (message->msg != CURLMSG_DONE) continue;
            CURL *easy = message->easy_handle;
            struct job *job;
            curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&job);
            if (message->data.result != CURLE_OK) {
                fprintf(stderr, "%s: %s\n", job->url, curl_easy_strerror(message->data.result));
                failed++;
            }
            finish_file(job);
            curl_multi_remove_handle(multi, easy);
            curl_easy_cleanup(easy);
            running_jobs--;
            if (next < total) { start(multi, &jobs[next], outdir, (int)next); next++; running_jobs++; }
        }
        if (running_jobs > 0) curl_multi_poll(multi, NULL, 0, 1000, NULL);
    } while (running_jobs > 0);
    if (mode == MODE_GROUP) flush_group();
    if (mode == MODE_FSYNC && dirfd_out >= 0) fsync(dirfd_out);
    curl_multi_cleanup(multi);
    curl_global_cleanup();
    return failed ? 1 : 0;
}
