/*
 * test_fs.c - the opens of files a user, a task or a generations file
 * names (lib/base/fs.c): nothing but a regular file is read, a FIFO is
 * refused at once rather than waited on, a path held under a directory
 * cannot leave it (absolute, "..", a link anywhere on the way), reads are
 * bounded; and a file written relative to a directory descriptor.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kjudge/error.h"
#include "unit.h"
#include "base/fs.h"

static void put(const char *rel, const char *text)
{
	FILE *f = fopen(kj_test_path(rel), "w");

	KJ_CHECK(f != NULL);
	fputs(text, f);
	fclose(f);
}

/* A tree: top/in.txt, top/sub/deep.txt, top/fifo, top/link -> ../out.txt,
 * top/dirlink -> sub, out.txt beside top. */
static void tree(char top[4096])
{
	snprintf(top, 4096, "%s", kj_test_path("top"));
	KJ_CHECK(mkdir(top, 0700) == 0);
	KJ_CHECK(mkdir(kj_test_path("top/sub"), 0700) == 0);
	put("top/in.txt", "inside\n");
	put("top/sub/deep.txt", "deep\n");
	put("out.txt", "outside\n");
	KJ_CHECK(mkfifo(kj_test_path("top/fifo"), 0600) == 0);
	KJ_CHECK(symlink("../out.txt", kj_test_path("top/link")) == 0);
	KJ_CHECK(symlink("sub", kj_test_path("top/dirlink")) == 0);
}

/* kj__open_beneath(top, rel): the code, and the message in msg. */
static int beneath(const char *top, const char *rel, unsigned flags, char *msg, size_t size)
{
	struct kj_error err;
	int fd = kj__open_beneath(top, rel, flags, &err);

	if (fd >= 0) {
		close(fd);
		snprintf(msg, size, "%s", "");
		return KJ_OK;
	}
	snprintf(msg, size, "%s", err.msg);
	return fd;
}

KJ_TEST(fs_open_beneath_holds_the_path_under_its_directory)
{
	char top[4096], msg[KJ_ERROR_MSG_MAX];

	tree(top);
	KJ_CHECK_INT(beneath(top, "in.txt", 0, msg, sizeof(msg)), KJ_OK);
	KJ_CHECK_INT(beneath(top, "sub/deep.txt", 0, msg, sizeof(msg)), KJ_OK);
	KJ_CHECK_INT(beneath(top, "./sub//deep.txt", 0, msg, sizeof(msg)), KJ_OK);
	KJ_CHECK_INT(beneath(top, "sub", KJ_OPEN_DIR, msg, sizeof(msg)), KJ_OK);

	KJ_CHECK_INT(beneath(top, kj_test_path("out.txt"), 0, msg, sizeof(msg)), KJ_EINVAL);
	KJ_CHECK(strstr(msg, "an absolute path") != NULL);
	KJ_CHECK_INT(beneath(top, "../out.txt", 0, msg, sizeof(msg)), KJ_EINVAL);
	KJ_CHECK(strstr(msg, "'..'") != NULL);
	KJ_CHECK_INT(beneath(top, "sub/../in.txt", 0, msg, sizeof(msg)), KJ_EINVAL);
	/* A link, at the end or on the way, even one that stays inside. */
	KJ_CHECK_INT(beneath(top, "link", 0, msg, sizeof(msg)), KJ_EINVAL);
	KJ_CHECK(strstr(msg, "a symbolic link") != NULL);
	KJ_CHECK_INT(beneath(top, "dirlink/deep.txt", 0, msg, sizeof(msg)), KJ_EINVAL);
	KJ_CHECK(strstr(msg, "a symbolic link") != NULL);
	/* Not a regular file: refused, and the FIFO's open did not wait for
	 * a writer (the test's 60-second alarm would say so). */
	KJ_CHECK_INT(beneath(top, "fifo", 0, msg, sizeof(msg)), KJ_EINVAL);
	KJ_CHECK(strstr(msg, "not a regular file (a FIFO)") != NULL);
	KJ_CHECK_INT(beneath(top, "sub", 0, msg, sizeof(msg)), KJ_EINVAL);
	KJ_CHECK(strstr(msg, "a directory") != NULL);
	KJ_CHECK_INT(beneath(top, "in.txt", KJ_OPEN_DIR, msg, sizeof(msg)), KJ_EINVAL);
	KJ_CHECK_INT(beneath(top, "", 0, msg, sizeof(msg)), KJ_EINVAL);
	KJ_CHECK_INT(beneath(top, "nothing.txt", 0, msg, sizeof(msg)), KJ_ENOENT);
}

KJ_TEST(fs_open_regular_and_read_file_refuse_what_could_block)
{
	char top[4096], path[4200];
	struct kj_error err;
	size_t len = 0;
	char *text;
	int fd;

	tree(top);
	snprintf(path, sizeof(path), "%s/fifo", top);
	KJ_CHECK_INT(kj__open_regular(path, 0, &err), KJ_EINVAL);
	KJ_CHECK(strstr(err.msg, "a FIFO") != NULL);
	KJ_CHECK(kj__read_file(path, 100, &len, &err) == NULL);
	KJ_CHECK_INT(err.code, KJ_EINVAL);
	KJ_CHECK(kj__read_file("/dev/null", 100, &len, &err) == NULL);
	KJ_CHECK(strstr(err.msg, "a device") != NULL);
	/* A link the user names is theirs to follow, unless NOFOLLOW. */
	snprintf(path, sizeof(path), "%s/link", top);
	fd = kj__open_regular(path, 0, &err);
	KJ_CHECK(fd >= 0);
	/* O_NONBLOCK is not left on the descriptor. */
	KJ_CHECK((fcntl(fd, F_GETFL) & O_NONBLOCK) == 0);
	close(fd);
	KJ_CHECK_INT(kj__open_regular(path, KJ_OPEN_NOFOLLOW, &err), KJ_EINVAL);
	KJ_CHECK(strstr(err.msg, "a symbolic link") != NULL);
	/* Bounded. */
	snprintf(path, sizeof(path), "%s/in.txt", top);
	text = kj__read_file(path, 7, &len, &err);
	KJ_CHECK(text != NULL && len == 7 && strcmp(text, "inside\n") == 0);
	free(text);
	KJ_CHECK(kj__read_file(path, 6, &len, &err) == NULL);
	KJ_CHECK_INT(err.code, KJ_ELIMIT);
}

KJ_TEST(fs_write_file_at_stays_in_its_directory)
{
	char top[4096], buf[64];
	struct kj_error err;
	struct stat st;
	FILE *f;
	int dfd;

	tree(top);
	dfd = open(top, O_RDONLY | O_DIRECTORY);
	KJ_CHECK(dfd >= 0);
	/* A link at the name is replaced, never written through. */
	KJ_CHECK_OK(kj__write_file_at(dfd, "link", "new\n", 4, 0750, &err), &err);
	KJ_CHECK(lstat(kj_test_path("top/link"), &st) == 0 && S_ISREG(st.st_mode));
	KJ_CHECK_INT(st.st_mode & 0777, 0750);
	f = fopen(kj_test_path("out.txt"), "r");
	KJ_CHECK(f != NULL && fgets(buf, sizeof(buf), f) != NULL);
	fclose(f);
	KJ_CHECK_STR(buf, "outside\n");
	KJ_CHECK_INT(kj__write_file_at(dfd, "sub/x", "y", 1, 0, &err), KJ_EINVAL);
	close(dfd);
}
