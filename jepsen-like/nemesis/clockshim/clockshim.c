/*
 * clockshim: an LD_PRELOAD library that shifts a process's wall clock.
 *
 * CLOCK_REALTIME (and CLOCK_REALTIME_COARSE) of clock_gettime, gettimeofday
 * and time return the real time plus an offset in nanoseconds read from the
 * file named by CLOCKSHIM_FILE (a signed decimal integer), re-read at most
 * every 10 ms of CLOCK_MONOTONIC. Monotonic clocks are untouched.
 *
 * It uses raw system calls only: no dlsym, no malloc, no stdio. libfaketime
 * hangs Debian's redis-server (jemalloc recurses into it during start-up);
 * this shim allocates nothing. The file name is copied in a constructor,
 * because Redis rewrites its environ for the process title.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static char shim_path[4096];
static long long shim_offset_ns;  /* accessed with __atomic builtins */
static long long shim_checked_ns; /* CLOCK_MONOTONIC of the last read */

static long raw_clock_gettime(clockid_t id, struct timespec *ts) {
	return syscall(SYS_clock_gettime, id, ts);
}

__attribute__((constructor)) static void shim_init(void) {
	const char *p = getenv("CLOCKSHIM_FILE");
	size_t i;
	if (p == NULL) return;
	for (i = 0; p[i] != '\0' && i + 1 < sizeof shim_path; i++) shim_path[i] = p[i];
	shim_path[i] = '\0';
}

static void shim_refresh(void) {
	struct timespec mono;
	char buf[64];
	long n, i;
	long long v = 0, sign = 1, now;
	int fd;
	if (shim_path[0] == '\0') return;
	if (raw_clock_gettime(CLOCK_MONOTONIC, &mono) != 0) return;
	now = (long long)mono.tv_sec * 1000000000LL + mono.tv_nsec;
	if (now - __atomic_load_n(&shim_checked_ns, __ATOMIC_RELAXED) < 10000000LL) return;
	__atomic_store_n(&shim_checked_ns, now, __ATOMIC_RELAXED);
	fd = (int)syscall(SYS_openat, AT_FDCWD, shim_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) return;
	n = syscall(SYS_read, fd, buf, sizeof buf - 1);
	syscall(SYS_close, fd);
	if (n <= 0) return;
	i = 0;
	if (buf[0] == '-') { sign = -1; i = 1; }
	for (; i < n && buf[i] >= '0' && buf[i] <= '9'; i++) v = v * 10 + (buf[i] - '0');
	__atomic_store_n(&shim_offset_ns, sign * v, __ATOMIC_RELAXED);
}

static int shifted_realtime(clockid_t id, struct timespec *ts) {
	long long t;
	if (raw_clock_gettime(id, ts) != 0) return -1;
	shim_refresh();
	t = (long long)ts->tv_sec * 1000000000LL + ts->tv_nsec + __atomic_load_n(&shim_offset_ns, __ATOMIC_RELAXED);
	ts->tv_sec = t / 1000000000LL;
	ts->tv_nsec = t % 1000000000LL;
	return 0;
}

int clock_gettime(clockid_t id, struct timespec *ts) {
	if (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE) return shifted_realtime(id, ts);
	return (int)raw_clock_gettime(id, ts);
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
	struct timespec ts;
	struct timeval *volatile out = tv; /* glibc declares tv nonnull; callers may still pass NULL */
	(void)tz;
	if (shifted_realtime(CLOCK_REALTIME, &ts) != 0) return -1;
	if (out != NULL) {
		out->tv_sec = ts.tv_sec;
		out->tv_usec = ts.tv_nsec / 1000;
	}
	return 0;
}

time_t time(time_t *out) {
	struct timespec ts;
	if (shifted_realtime(CLOCK_REALTIME, &ts) != 0) return (time_t)-1;
	if (out != NULL) *out = ts.tv_sec;
	return ts.tv_sec;
}
