/*
 * test_doctor.c - kjudge doctor's parsers on fixture text (the /proc and
 * /sys files and nvidia-smi lines of machines other than this one), its
 * children with deadlines, and the promises of a whole report.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kjudge/doctor.h"
#include "doctor/doctor_internal.h"
#include "base/locate.h"
#include "unit.h"

/* This machine's kind: cgroup v1 hierarchies with a cgroup2 beside them. */
static const char mounts_hybrid[] =
	"sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0\n"
	"tmpfs /sys/fs/cgroup tmpfs rw,relatime,mode=755 0 0\n"
	"cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,relatime,cpu,cpuacct 0 0\n"
	"cgroup /sys/fs/cgroup/cpuset cgroup rw,relatime,cpuset 0 0\n"
	"cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0\n"
	"cgroup /sys/fs/cgroup/pids cgroup rw,relatime,pids 0 0\n"
	"cgroup /sys/fs/cgroup/systemd cgroup rw,relatime,name=systemd 0 0\n"
	"cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0\n";

/* The GPU machine's kind: cgroup v2 only. */
static const char mounts_v2[] =
	"proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0\n"
	"cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev,noexec,relatime,nsdelegate 0 0\n"
	"/dev/vda1 / ext4 rw,relatime 0 0";

KJ_TEST(doctor_cgroup_mounts)
{
	char m[256];

	KJ_CHECK_INT(kj__doctor_cgroup_mount(mounts_hybrid, "memory", m, sizeof(m)), 0);
	KJ_CHECK_STR(m, "/sys/fs/cgroup/memory");
	/* "cpu" is one word of "cpu,cpuacct", not a prefix of "cpuset" */
	KJ_CHECK_INT(kj__doctor_cgroup_mount(mounts_hybrid, "cpu", m, sizeof(m)), 0);
	KJ_CHECK_STR(m, "/sys/fs/cgroup/cpu,cpuacct");
	KJ_CHECK_INT(kj__doctor_cgroup_mount(mounts_hybrid, "cpuacct", m, sizeof(m)), 0);
	KJ_CHECK_STR(m, "/sys/fs/cgroup/cpu,cpuacct");
	KJ_CHECK_INT(kj__doctor_cgroup_mount(mounts_hybrid, NULL, m, sizeof(m)), 0);
	KJ_CHECK_STR(m, "/sys/fs/cgroup/unified");
	KJ_CHECK_INT(kj__doctor_cgroup_mount(mounts_hybrid, "hugetlb", m, sizeof(m)), -1);
	/* the systemd hierarchy's name= is not a controller called systemd */
	KJ_CHECK_INT(kj__doctor_cgroup_mount(mounts_hybrid, "systemd", m, sizeof(m)), -1);

	KJ_CHECK_INT(kj__doctor_cgroup_mount(mounts_v2, "memory", m, sizeof(m)), -1);
	KJ_CHECK_INT(kj__doctor_cgroup_mount(mounts_v2, NULL, m, sizeof(m)), 0);
	KJ_CHECK_STR(m, "/sys/fs/cgroup");
	KJ_CHECK_INT(kj__doctor_cgroup_mount("", NULL, m, sizeof(m)), -1);
}

KJ_TEST(doctor_cgroup_mount_escapes_and_limits)
{
	char m[64], tiny[8];

	/* the kernel writes a space in a mount point as \040 */
	KJ_CHECK_INT(kj__doctor_cgroup_mount("cgroup2 /mnt/my\\040cg cgroup2 rw 0 0\n",
					     NULL, m, sizeof(m)), 0);
	KJ_CHECK_STR(m, "/mnt/my cg");
	/* a backslash without three octal digits is kept */
	KJ_CHECK_INT(kj__doctor_cgroup_mount("cgroup2 /a\\9 cgroup2 rw 0 0", NULL, m,
					     sizeof(m)), 0);
	KJ_CHECK_STR(m, "/a\\9");
	KJ_CHECK_INT(kj__doctor_cgroup_mount(mounts_v2, NULL, tiny, sizeof(tiny)), -1);
	/* lines with fewer than four fields are skipped, not misread */
	KJ_CHECK_INT(kj__doctor_cgroup_mount("cgroup2 /x\ncgroup /y cgroup memory\n",
					     "memory", m, sizeof(m)), 0);
	KJ_CHECK_STR(m, "/y");
}

KJ_TEST(doctor_cgroup_paths)
{
	static const char self_v1[] =
		"12:pids:/user.slice/user-0.slice\n"
		"4:memory:/process_api/988101dea117e2ba781451dbff77b75b\n"
		"3:cpu,cpuacct:/\n"
		"1:name=systemd:/init.scope\n"
		"0::/\n";
	char p[128];

	KJ_CHECK_INT(kj__doctor_cgroup_path(self_v1, "memory", p, sizeof(p)), 0);
	KJ_CHECK_STR(p, "/process_api/988101dea117e2ba781451dbff77b75b");
	KJ_CHECK_INT(kj__doctor_cgroup_path(self_v1, "pids", p, sizeof(p)), 0);
	KJ_CHECK_STR(p, "/user.slice/user-0.slice");
	KJ_CHECK_INT(kj__doctor_cgroup_path(self_v1, "cpuacct", p, sizeof(p)), 0);
	KJ_CHECK_STR(p, "/");
	KJ_CHECK_INT(kj__doctor_cgroup_path(self_v1, NULL, p, sizeof(p)), 0);
	KJ_CHECK_STR(p, "/");
	KJ_CHECK_INT(kj__doctor_cgroup_path(self_v1, "blkio", p, sizeof(p)), -1);
	KJ_CHECK_INT(kj__doctor_cgroup_path("0::/system.slice/kjudge.scope", NULL, p,
					    sizeof(p)), 0);
	KJ_CHECK_STR(p, "/system.slice/kjudge.scope");
	/* a path with a colon stays whole: only the first two split */
	KJ_CHECK_INT(kj__doctor_cgroup_path("0::/a:b\n", NULL, p, sizeof(p)), 0);
	KJ_CHECK_STR(p, "/a:b");
	KJ_CHECK_INT(kj__doctor_cgroup_path("garbage\n", NULL, p, sizeof(p)), -1);
}

KJ_TEST(doctor_next_line)
{
	const char *cursor = "a\n\nbc", *line;
	size_t len;

	KJ_CHECK(kj__doctor_next_line(&cursor, &line, &len) && len == 1 && line[0] == 'a');
	KJ_CHECK(kj__doctor_next_line(&cursor, &line, &len) && len == 0);
	KJ_CHECK(kj__doctor_next_line(&cursor, &line, &len) && len == 2 &&
		 !strncmp(line, "bc", 2));
	KJ_CHECK(!kj__doctor_next_line(&cursor, &line, &len));
	cursor = NULL;
	KJ_CHECK(!kj__doctor_next_line(&cursor, &line, &len));
}

KJ_TEST(doctor_has_word)
{
	KJ_CHECK(kj__doctor_has_word("cpuset cpu io memory pids", "memory"));
	KJ_CHECK(kj__doctor_has_word("rw,relatime,cpu,cpuacct", "cpu"));
	KJ_CHECK(!kj__doctor_has_word("rw,relatime,cpuacct", "cpu"));
	KJ_CHECK(!kj__doctor_has_word("rw,memory_recursiveprot", "memory"));
	KJ_CHECK(kj__doctor_has_word("memory", "memory"));
	KJ_CHECK(!kj__doctor_has_word("", "memory"));
	KJ_CHECK(!kj__doctor_has_word("memory", ""));
}

KJ_TEST(doctor_governors)
{
	const char *all[4] = { "performance", "performance", "performance", "performance" };
	const char *mixed[8] = { "powersave", "powersave", "performance", "powersave",
				 "schedutil", "performance", NULL, "powersave" };
	const char *one[1] = { "ondemand" };
	char d[256];

	KJ_CHECK(kj__doctor_governors(all, 4, d, sizeof(d)) == KJ_DOCTOR_OK);
	KJ_CHECK_STR(d, "performance on CPUs 0-3");
	KJ_CHECK(kj__doctor_governors(mixed, 8, d, sizeof(d)) == KJ_DOCTOR_WARN);
	KJ_CHECK_STR(d, "powersave on CPUs 0-1, 3, 7; performance on CPUs 2, 5; "
		     "schedutil on CPU 4; 1 CPU without cpufreq");
	KJ_CHECK(kj__doctor_governors(one, 1, d, sizeof(d)) == KJ_DOCTOR_WARN);
	KJ_CHECK_STR(d, "ondemand on CPU 0");
	/* a line that does not fit says so */
	KJ_CHECK(kj__doctor_governors(mixed, 8, d, 20) == KJ_DOCTOR_WARN);
	KJ_CHECK_INT(strlen(d), 19);
	KJ_CHECK(!strcmp(d + 16, "..."));
}

KJ_TEST(doctor_gpu_lines)
{
	struct kj__gpu g;
	char why[128];

	KJ_CHECK_INT(kj__doctor_parse_gpu("NVIDIA H200, 570.86.15, 345 MHz, 1980 MHz, "
					  "0x0000000000000001, Enabled", &g), 0);
	KJ_CHECK_STR(g.name, "NVIDIA H200");
	KJ_CHECK_STR(g.driver, "570.86.15");
	KJ_CHECK_INT(g.sm_mhz, 345);
	KJ_CHECK_INT(g.max_sm_mhz, 1980);
	KJ_CHECK_INT(g.reasons, 1);
	KJ_CHECK_INT(g.persistence, 1);
	KJ_CHECK_INT(kj__doctor_slowdowns(g.reasons, why, sizeof(why)), 0);
	KJ_CHECK_STR(why, "");

	KJ_CHECK_INT(kj__doctor_parse_gpu("Tesla T4, 535.1, [N/A], [N/A], [N/A], "
					  "Disabled\n", &g), 0);
	KJ_CHECK_INT(g.sm_mhz, -1);
	KJ_CHECK_INT(g.reasons, -1);
	KJ_CHECK_INT(g.persistence, 0);
	KJ_CHECK_INT(kj__doctor_slowdowns(g.reasons, why, sizeof(why)), 0);

	KJ_CHECK_INT(kj__doctor_parse_gpu("A100, 1, 1000 MHz, 1410 MHz, 0x44, "
					  "[Not Supported]", &g), 0);
	KJ_CHECK_INT(g.persistence, -1);
	KJ_CHECK_INT(kj__doctor_slowdowns(g.reasons, why, sizeof(why)), 2);
	KJ_CHECK_STR(why, "software power cap, hardware thermal slowdown");

	KJ_CHECK_INT(kj__doctor_parse_gpu("NVIDIA H200, 570.86.15, 345 MHz", &g), -1);
	KJ_CHECK_INT(kj__doctor_parse_gpu("", &g), -1);
	KJ_CHECK_INT(kj__doctor_parse_gpu(", 1, 2, 3, 4, 5", &g), -1);
}

KJ_TEST(doctor_append_cuts_visibly)
{
	char b[12] = "abc";

	kj__doctor_append(b, sizeof(b), "%s", "defg");
	KJ_CHECK_STR(b, "abcdefg");
	kj__doctor_append(b, sizeof(b), "%s", "hijklmnop");
	KJ_CHECK_STR(b, "abcdefgh...");
	kj__doctor_append(b, sizeof(b), "%s", "more");
	KJ_CHECK_STR(b, "abcdefgh...");
}

KJ_TEST(doctor_read_file)
{
	char b[8];
	FILE *f = fopen(kj_test_path("gov"), "w");

	KJ_CHECK(f != NULL);
	fputs("performance\n", f);
	fclose(f);
	KJ_CHECK_INT(kj__read_text(kj_test_path("gov"), b, sizeof(b)), 7);
	KJ_CHECK_STR(b, "perform");
	KJ_CHECK_INT(kj__read_text(kj_test_path("missing"), b, sizeof(b)), -1);
	KJ_CHECK_INT(errno, ENOENT);
}

KJ_TEST(doctor_cmd_output_and_status)
{
	const char *argv[] = { "/bin/sh", "-c", "echo out; echo err >&2; exit 3", NULL };
	struct kj__cmd *c = malloc(sizeof(*c));

	KJ_CHECK(c != NULL);
	KJ_CHECK_INT(kj__doctor_run_cmd(argv, NULL, 10, c), 0);
	KJ_CHECK(c->started && !c->timed_out);
	KJ_CHECK(WIFEXITED(c->status) && WEXITSTATUS(c->status) == 3);
	KJ_CHECK_STR(c->out, "out\n");
	KJ_CHECK_STR(c->err, "err\n");
	free(c);
}

KJ_TEST(doctor_cmd_gets_no_descriptor_of_the_doctor)
{
	/* Through the spawn core: 0, 1, 2 and nothing else, high ones too. */
	const char *argv[] = { "/bin/sh", "-c",
		"for f in 3 4 1500; do test -e /proc/self/fd/$f && echo $f; done; echo end", NULL };
	struct kj__cmd *c = malloc(sizeof(*c));
	int fd = open("/dev/null", O_RDONLY);

	KJ_CHECK(c != NULL && fd >= 0);
	KJ_CHECK_INT(dup2(fd, 1500), 1500);
	KJ_CHECK_INT(kj__doctor_run_cmd(argv, NULL, 10, c), 0);
	KJ_CHECK_STR(c->out, "end\n");
	close(1500);
	close(fd);
	free(c);
}

KJ_TEST(doctor_cmd_that_does_not_start)
{
	const char *argv[] = { "/nonexistent/kjudge-test", NULL };
	struct kj__cmd *c = malloc(sizeof(*c));
	char line[128];

	KJ_CHECK(c != NULL);
	KJ_CHECK_INT(kj__doctor_run_cmd(argv, NULL, 10, c), 0);
	KJ_CHECK(!c->started);
	KJ_CHECK_INT(c->exec_errno, ENOENT);
	free(c);
	KJ_CHECK_INT(kj__doctor_cmd_line(argv, 10, line, sizeof(line)), -1);
	KJ_CHECK(strstr(line, "No such file") != NULL);
}

KJ_TEST(doctor_cmd_deadline_kills_the_group)
{
	/* The shell's child holds the pipes; both must go at the deadline. */
	const char *argv[] = { "/bin/sh", "-c", "sleep 1000 & sleep 1000; echo never", NULL };
	struct kj__cmd *c = malloc(sizeof(*c));
	double t0 = kj__now_s();

	KJ_CHECK(c != NULL);
	KJ_CHECK_INT(kj__doctor_run_cmd(argv, NULL, 0.3, c), 0);
	KJ_CHECK(c->timed_out);
	KJ_CHECK(kj__now_s() - t0 < 5);
	KJ_CHECK(WIFSIGNALED(c->status) && WTERMSIG(c->status) == SIGKILL);
	KJ_CHECK_STR(c->out, "");
	free(c);
}

KJ_TEST(doctor_cmd_left_daemon_does_not_hold_it)
{
	/* The command is done at once, but leaves a process holding its
	 * stdout: the answer comes without waiting for the deadline, and
	 * the process is killed with the group. */
	const char *argv[] = { "/bin/sh", "-c", "sleep 1000 & echo done", NULL };
	struct kj__cmd *c = malloc(sizeof(*c));
	double t0 = kj__now_s();

	KJ_CHECK(c != NULL);
	KJ_CHECK_INT(kj__doctor_run_cmd(argv, NULL, 20, c), 0);
	KJ_CHECK(!c->timed_out);
	KJ_CHECK(kj__now_s() - t0 < 5);
	KJ_CHECK(WIFEXITED(c->status) && WEXITSTATUS(c->status) == 0);
	KJ_CHECK_STR(c->out, "done\n");
	free(c);
}

KJ_TEST(doctor_cmd_flood_is_bounded)
{
	const char *argv[] = { "/bin/sh", "-c", "head -c 1000000 /dev/zero | tr '\\0' x", NULL };
	struct kj__cmd *c = malloc(sizeof(*c));

	KJ_CHECK(c != NULL);
	KJ_CHECK_INT(kj__doctor_run_cmd(argv, NULL, 20, c), 0);
	KJ_CHECK(c->started && !c->timed_out);
	KJ_CHECK_INT(c->out_len, sizeof(c->out) - 1);
	KJ_CHECK_INT(strlen(c->out), sizeof(c->out) - 1);
	KJ_CHECK(WIFEXITED(c->status) && WEXITSTATUS(c->status) == 0);
	free(c);
}

static int child_answers(void *arg, char *msg, size_t size)
{
	snprintf(msg, size, "pid %s", getpid() != *(pid_t *)arg ? "differs" : "same");
	return 42;
}

static int child_hangs(void *arg, char *msg, size_t size)
{
	(void)arg;
	(void)msg;
	(void)size;
	for (;;)
		pause();
	return 0;
}

static int child_dies(void *arg, char *msg, size_t size)
{
	(void)arg;
	(void)msg;
	(void)size;
	kill(getpid(), SIGKILL);
	return 0;
}

KJ_TEST(doctor_in_child)
{
	pid_t self = getpid();
	char msg[128];
	double t0;

	KJ_CHECK_INT(kj__doctor_in_child(child_answers, &self, 10, msg, sizeof(msg)), 42);
	KJ_CHECK_STR(msg, "pid differs");
	t0 = kj__now_s();
	KJ_CHECK_INT(kj__doctor_in_child(child_hangs, NULL, 0.3, msg, sizeof(msg)), -1);
	KJ_CHECK(strstr(msg, "did not finish") != NULL);
	KJ_CHECK(kj__now_s() - t0 < 5);
	KJ_CHECK_INT(kj__doctor_in_child(child_dies, NULL, 10, msg, sizeof(msg)), -1);
	KJ_CHECK(strstr(msg, "signal 9") != NULL);
}

KJ_TEST(doctor_locate)
{
	char p[4096];

	KJ_CHECK_INT(kj__find_in_path("sh", NULL, p, sizeof(p)), 0);
	KJ_CHECK(p[0] == '/' && strstr(p, "/sh"));
	KJ_CHECK_INT(kj__find_in_path("kjudge-no-such-program", NULL, p, sizeof(p)), -1);
	KJ_CHECK_INT(kj__find_in_path("", NULL, p, sizeof(p)), -1);
	KJ_CHECK_INT(kj__find_in_path("/bin/sh", NULL, p, 4), -1);
	/* The run's PATH, not the judge's: an empty entry is never the
	 * current directory. */
	KJ_CHECK_INT(kj__find_in_path("sh", "/nonexistent::/bin", p, sizeof(p)), 0);
	KJ_CHECK_STR(p, "/bin/sh");
	KJ_CHECK_INT(kj__find_in_path("sh", "/nonexistent", p, sizeof(p)), -1);
	/* a relative path is made absolute without resolving links: a
	 * virtual environment's python is one */
	KJ_CHECK(symlink("/bin/sh", kj_test_path("py")) == 0);
	KJ_CHECK(chdir(kj_test_tmpdir()) == 0);
	KJ_CHECK_INT(kj__find_in_path("./py", NULL, p, sizeof(p)), 0);
	KJ_CHECK(strstr(p, "/./py") != NULL);

	KJ_CHECK_INT(kj__beside_self("kjudge_worker.py", p, sizeof(p)), 0);
	KJ_CHECK(strstr(p, "/kjudge_worker.py") != NULL);
}

KJ_TEST(doctor_names)
{
	KJ_CHECK(kj_doctor_group_from_name("sandbox") == KJ_DOCTOR_SANDBOX);
	KJ_CHECK(kj_doctor_group_from_name("runtimes") == KJ_DOCTOR_RUNTIMES);
	KJ_CHECK(kj_doctor_group_from_name("Timing") == 0);
	KJ_CHECK(kj_doctor_group_from_name(NULL) == 0);
	KJ_CHECK_STR(kj_doctor_group_name(KJ_DOCTOR_TIMING), "timing");
	KJ_CHECK_STR(kj_doctor_status_name(KJ_DOCTOR_WARN), "warn");
}

/* A whole report, with a Python that is not there: its records keep their
 * promises whatever this machine is. */
KJ_TEST(doctor_report_promises)
{
	struct kj_doctor_options o = { 0, NULL, 20 };
	struct kj_config cfg;
	struct kj_doctor_report r;
	struct kj_error err;
	size_t i, total = 0, seen[8] = { 0 };
	json_t *doc;

	kj_config_init(&cfg, NULL);
	cfg.python = "/nonexistent/python";
	cfg.python_source = "--python";
	o.cfg = &cfg;
	kj_doctor_report_init(&r);
	KJ_CHECK_OK(kj_doctor_run(&o, &r, &err), &err);
	KJ_CHECK(r.n > 10);
	for (i = 0; i < r.n; i++) {
		const struct kj_doctor_check *c = &r.checks[i];

		KJ_CHECK(c->name[0] && c->detail[0]);
		KJ_CHECK((c->status == KJ_DOCTOR_OK) == (c->fix[0] == '\0'));
		KJ_CHECK(!strchr(c->detail, '\n') && !strchr(c->fix, '\n'));
		/* groups come in order, each once */
		KJ_CHECK(i == 0 || c->group >= r.checks[i - 1].group);
		seen[c->group] = 1;
		if (!strcmp(c->name, "python"))
			KJ_CHECK(c->status == KJ_DOCTOR_FAIL &&
				 strstr(c->detail, "/nonexistent/python"));
		KJ_CHECK(strcmp(c->name, "torch") != 0);
	}
	KJ_CHECK(seen[KJ_DOCTOR_SANDBOX] && seen[KJ_DOCTOR_TIMING] &&
		 seen[KJ_DOCTOR_RUNTIMES]);
	for (i = 0; i < KJ_DOCTOR_STATUS_COUNT_; i++)
		total += r.count[i];
	KJ_CHECK_INT(total, r.n);
	KJ_CHECK(r.count[KJ_DOCTOR_FAIL] >= 1);
	doc = kj_doctor_report_json(&r);
	KJ_CHECK(doc != NULL);
	KJ_CHECK_INT(json_array_size(json_object_get(doc, "checks")), r.n);
	KJ_CHECK_INT(json_integer_value(json_object_get(json_object_get(doc, "summary"),
							"fail")),
		     r.count[KJ_DOCTOR_FAIL]);
	json_decref(doc);
	kj_doctor_report_release(&r);

	/* one group only */
	o.groups = KJ_DOCTOR_TIMING;
	kj_doctor_report_init(&r);
	KJ_CHECK_OK(kj_doctor_run(&o, &r, &err), &err);
	for (i = 0; i < r.n; i++)
		KJ_CHECK(r.checks[i].group == KJ_DOCTOR_TIMING);
	kj_doctor_report_release(&r);
}
