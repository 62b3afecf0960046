/*
 * fdsender.c - a worker for tests/unit/test_proc.c that answers one request
 * on fd 3 with a reply carrying N sealed memory files (SCM_RIGHTS), 253 a
 * message as the worker does.
 *
 *   fdsender N          each file holds its index as text ("0", "1", ...)
 *   fdsender N noise    first a line that is not the reply, carrying one
 *                       more file: the judge must fail the request and
 *                       close every descriptor, taking none
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

static int send_with(int sock, const char *buf, size_t len, const int *fds, int n)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(253 * sizeof(int))];
	} ctl;
	struct iovec iov = { (void *)(size_t)buf, len };
	struct msghdr m;

	memset(&m, 0, sizeof(m));
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	if (n) {
		struct cmsghdr *c;

		m.msg_control = ctl.buf;
		m.msg_controllen = CMSG_SPACE((size_t)n * sizeof(int));
		c = CMSG_FIRSTHDR(&m);
		if (!c)
			return -1;
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN((size_t)n * sizeof(int));
		memcpy(CMSG_DATA(c), fds, (size_t)n * sizeof(int));
	}
	return (int)sendmsg(sock, &m, 0);
}

static int memfile(int i)
{
	char text[32];
	int fd = memfd_create("out", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	snprintf(text, sizeof(text), "%d", i);
	if (fd < 0 || write(fd, text, strlen(text)) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) < 0)
		exit(2);
	return fd;
}

int main(int argc, char **argv)
{
	char req[4096], line[256];
	int n = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 1, *fds, i, len, noise;
	size_t off;
	ssize_t got = read(3, req, sizeof(req) - 1);
	const char *p;
	unsigned long long nonce;

	if (got <= 0)
		return 2;
	req[got] = '\0';
	p = strstr(req, "\"nonce\":");
	if (!p || sscanf(p + 8, "%llu", &nonce) != 1)
		return 2;
	fds = calloc((size_t)n + 1, sizeof(int));
	if (!fds)
		return 2;
	if (argc > 2 && !strcmp(argv[2], "noise")) {
		noise = memfile(-1);
		send_with(3, "{\"noise\": 1}\n", 13, &noise, 1);
		close(noise);
	}
	for (i = 0; i < n; i++)
		fds[i] = memfile(i);
	len = snprintf(line, sizeof(line), "{\"nonce\": %llu, \"ok\": true, \"n\": %d}\n", nonce, n);
	/* One byte of the line with each batch but the last, the rest of it
	 * with the last. */
	for (i = 0, off = 0;; i += 253) {
		int k = n - i < 253 ? n - i : 253, last = i + 253 >= n;
		size_t part = last ? (size_t)len - off : 1;

		if (send_with(3, line + off, part, fds + i, k) < 0)
			return 2;
		off += part;
		if (last)
			break;
	}
	for (i = 0; i < n; i++)
		close(fds[i]);
	pause();
	return 0;
}
