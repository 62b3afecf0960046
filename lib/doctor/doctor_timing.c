/*
 * doctor_timing.c - can this machine time kernels well?  The doctor's
 * probes of CPU frequency governors, SMT, turbo/boost and NVIDIA GPU
 * clocks (docs: the timing research, "what makes timing trustworthy").
 *
 * A CPU that changes frequency with load, a sibling hyperthread sharing
 * the core, boost that depends on temperature, or a GPU that idles at a
 * fifth of its clock between runs each add noise to a figure.  None of
 * them stops kjudge: they are warnings with the setting that removes
 * them.  GPU clocks are read, not changed: kjudge records the clock with
 * every figure, and locking it is the administrator's choice.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "doctor/doctor_internal.h"
#include "base/locate.h"

#define SYS_CPU "/sys/devices/system/cpu"
#define MAX_CPUS 1024

/* 1 when /proc/cpuinfo has the "hypervisor" flag (a virtual machine). */
static int in_vm(void)
{
	char *buf = malloc(1 << 20);
	int vm = 0;

	if (!buf)
		return 0;
	if (kj__read_text("/proc/cpuinfo", buf, 1 << 20) > 0)
		vm = strstr(buf, " hypervisor") != NULL;
	free(buf);
	return vm;
}

static void probe_governor(struct kj__doctor *d)
{
	struct kj_doctor_check *c = kj__doctor_check(d, KJ_DOCTOR_TIMING, "cpu-governor");
	char names[MAX_CPUS][24];
	const char *gov[MAX_CPUS];
	char detail[KJ_DOCTOR_DETAIL_MAX];
	enum kj_doctor_status s;
	int n = 0, have = 0, i;
	struct dirent *e;
	DIR *dir = opendir(SYS_CPU);

	for (i = 0; i < MAX_CPUS; i++)
		gov[i] = NULL;
	while (dir && (e = readdir(dir)) != NULL) {
		char path[512], *end;
		long cpu;

		if (strncmp(e->d_name, "cpu", 3) || e->d_name[3] < '0' || e->d_name[3] > '9')
			continue;
		cpu = strtol(e->d_name + 3, &end, 10);
		if (*end || cpu < 0 || cpu >= MAX_CPUS)
			continue;
		if (cpu + 1 > n)
			n = (int)cpu + 1;
		snprintf(path, sizeof(path), SYS_CPU "/%s/cpufreq/scaling_governor",
			 e->d_name);
		if (kj__read_text(path, names[cpu], sizeof(names[cpu])) > 0) {
			gov[cpu] = names[cpu];
			have++;
		}
	}
	if (dir)
		closedir(dir);
	if (!have) {
		if (in_vm())
			kj__doctor_set(c, KJ_DOCTOR_OK, NULL, "no cpufreq in this virtual "
				       "machine: the host sets the CPU frequency (CPU "
				       "figures vary with what else the host runs)");
		else
			kj__doctor_set(c, KJ_DOCTOR_WARN,
				       "load a cpufreq driver (modprobe acpi-cpufreq) or set "
				       "the firmware to maximum performance",
				       "no cpufreq: the CPU frequency policy cannot be read");
		return;
	}
	s = kj__doctor_governors(gov, n, detail, sizeof(detail));
	kj__doctor_set(c, s, s == KJ_DOCTOR_OK ? NULL
			     : "cpupower frequency-set -g performance",
		       "%s", detail);
}

static void probe_smt(struct kj__doctor *d)
{
	struct kj_doctor_check *c = kj__doctor_check(d, KJ_DOCTOR_TIMING, "smt");
	char active[16], control[32];

	if (kj__read_text(SYS_CPU "/smt/control", control, sizeof(control)) < 0)
		control[0] = '\0';
	if (kj__read_text(SYS_CPU "/smt/active", active, sizeof(active)) < 0) {
		kj__doctor_set(c, KJ_DOCTOR_OK, NULL, "this kernel does not report SMT");
		return;
	}
	if (!strcmp(active, "1"))
		kj__doctor_set(c, KJ_DOCTOR_WARN,
			       "echo off > " SYS_CPU "/smt/control (or nosmt on the "
			       "kernel command line)",
			       "SMT is on (control: %s): a sibling hyperthread shares "
			       "the core a timed kernel runs on", control);
	else
		kj__doctor_set(c, KJ_DOCTOR_OK, NULL, "SMT is off (control: %s)",
			       control[0] ? control : "?");
}

static void probe_boost(struct kj__doctor *d)
{
	/* acpi-cpufreq and amd-pstate say "boost"; intel_pstate says the
	 * opposite, "no_turbo". */
	static const struct {
		const char *path, *off, *what, *fix;
	} switches[] = {
		{ SYS_CPU "/cpufreq/boost", "0", "boost",
		  "echo 0 > " SYS_CPU "/cpufreq/boost" },
		{ SYS_CPU "/intel_pstate/no_turbo", "1", "turbo (intel_pstate)",
		  "echo 1 > " SYS_CPU "/intel_pstate/no_turbo" },
	};
	struct kj_doctor_check *c = kj__doctor_check(d, KJ_DOCTOR_TIMING, "cpu-boost");
	size_t i;
	char v[16];

	for (i = 0; i < sizeof(switches) / sizeof(switches[0]); i++) {
		if (kj__read_text(switches[i].path, v, sizeof(v)) < 0)
			continue;
		if (!strcmp(v, switches[i].off))
			kj__doctor_set(c, KJ_DOCTOR_OK, NULL, "%s is off", switches[i].what);
		else
			kj__doctor_set(c, KJ_DOCTOR_WARN, switches[i].fix, "%s is on: the "
				       "clock follows temperature and load",
				       switches[i].what);
		return;
	}
	kj__doctor_set(c, KJ_DOCTOR_OK, NULL, "no boost or turbo switch is exposed");
}

/* --- NVIDIA GPUs --------------------------------------------------------------------------- */

#define GPU_MAX 64

/* Run nvidia-smi's query; older drivers call the reasons field
 * clocks_throttle_reasons, newer ones prefer clocks_event_reasons. */
static int query_gpus(const char *smi, double timeout_s, struct kj__cmd *cmd,
		      const char **query_used)
{
	static const char *const queries[] = {
		"--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,"
		"clocks_throttle_reasons.active,persistence_mode",
		"--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,"
		"clocks_event_reasons.active,persistence_mode",
	};
	size_t i;

	for (i = 0; i < sizeof(queries) / sizeof(queries[0]); i++) {
		const char *argv[] = { smi, queries[i], "--format=csv,noheader", NULL };

		*query_used = queries[i];
		if (kj__doctor_run_cmd(argv, NULL, timeout_s, cmd) < 0)
			return -1;
		if (!cmd->started || cmd->timed_out)
			return 0;
		if (WIFEXITED(cmd->status) && WEXITSTATUS(cmd->status) == 0)
			return 0;
	}
	return 0;
}

static void probe_gpus(struct kj__doctor *d)
{
	struct kj_doctor_check *c = kj__doctor_check(d, KJ_DOCTOR_TIMING, "gpu");
	struct kj__gpu g[GPU_MAX];
	char smi[4096], why[256], clocks[KJ_DOCTOR_DETAIL_MAX - 128];
	const char *q, *cursor, *line;
	struct kj__cmd *cmd;
	size_t len;
	int n = 0, i, slow = 0, unpersistent = 0;

	if (kj__find_in_path("nvidia-smi", kj_config_env(d->o->cfg, "PATH"), smi, sizeof(smi)) < 0) {
		kj__doctor_set(c, KJ_DOCTOR_OK, NULL, "no GPU: nvidia-smi is not in "
			       "PATH (torch runs use --device cpu)");
		return;
	}
	cmd = malloc(sizeof(*cmd));
	if (!cmd || query_gpus(smi, d->timeout_s, cmd, &q) < 0) {
		kj__doctor_set(c, KJ_DOCTOR_WARN, "run kjudge doctor again",
			       "cannot start nvidia-smi: %s",
			       cmd ? strerror(errno) : "out of memory");
		free(cmd);
		return;
	}
	if (!cmd->started || cmd->timed_out ||
	    !WIFEXITED(cmd->status) || WEXITSTATUS(cmd->status) != 0) {
		size_t k = strcspn(cmd->err_len ? cmd->err : cmd->out, "\n");

		if (!cmd->started)
			snprintf(why, sizeof(why), "cannot run it: %s",
				 strerror(cmd->exec_errno));
		else if (cmd->timed_out)
			snprintf(why, sizeof(why), "it did not answer within %g s "
				 "(a wedged driver?)", d->timeout_s);
		else
			snprintf(why, sizeof(why), "it failed: %.*s", (int)(k < 200 ? k : 200),
				 cmd->err_len ? cmd->err : cmd->out);
		kj__doctor_set(c, KJ_DOCTOR_WARN,
			       "load the NVIDIA driver so that nvidia-smi lists the GPUs "
			       "(nvidia-smi -L); until then runs use --device cpu",
			       "%s is installed but %s", smi, why);
		free(cmd);
		return;
	}
	cursor = cmd->out;
	while (n < GPU_MAX && kj__doctor_next_line(&cursor, &line, &len)) {
		char one[512];

		snprintf(one, sizeof(one), "%.*s", (int)len, line);
		if (kj__doctor_parse_gpu(one, &g[n]) == 0)
			n++;
	}
	free(cmd);
	if (n == 0) {
		kj__doctor_set(c, KJ_DOCTOR_OK, NULL, "no GPU: nvidia-smi lists none");
		return;
	}
	kj__doctor_set(c, KJ_DOCTOR_OK, NULL, "%d GPU%s, driver %s:", n,
		       n == 1 ? "" : "s", g[0].driver);
	for (i = 0; i < n; i++)
		kj__doctor_append(c->detail, sizeof(c->detail), "%s %d: %s", i ? "," : "",
				  i, g[i].name);

	c = kj__doctor_check(d, KJ_DOCTOR_TIMING, "gpu-persistence");
	why[0] = '\0';
	for (i = 0; i < n; i++)
		if (g[i].persistence == 0) {
			kj__doctor_append(why, sizeof(why), "%s%d", unpersistent ? ", " : "", i);
			unpersistent++;
		}
	if (unpersistent)
		kj__doctor_set(c, KJ_DOCTOR_WARN, "nvidia-smi -pm 1",
			       "persistence mode is off on GPU %s: the driver unloads "
			       "between runs, and each run pays its start-up", why);
	else
		kj__doctor_set(c, KJ_DOCTOR_OK, NULL, "persistence mode is on (or not "
			       "reported) on every GPU");

	c = kj__doctor_check(d, KJ_DOCTOR_TIMING, "gpu-clocks");
	clocks[0] = '\0';
	for (i = 0; i < n; i++) {
		char reasons[160];

		if (kj__doctor_slowdowns(g[i].reasons, reasons, sizeof(reasons)))
			slow++;
		kj__doctor_append(clocks, sizeof(clocks), "%sGPU %d: SM %d of %d MHz%s%s%s",
				  i ? "; " : "", i, g[i].sm_mhz, g[i].max_sm_mhz,
				  reasons[0] ? " (" : g[i].reasons == 1 ? " (idle)" : "",
				  reasons, reasons[0] ? ")" : "");
	}
	if (slow) {
		char fix[KJ_DOCTOR_FIX_MAX];

		snprintf(fix, sizeof(fix), "cool or power the GPU (nvidia-smi -q -d "
			 "PERFORMANCE says why it slows), or lock its clocks below the "
			 "limit: nvidia-smi --lock-gpu-clocks=%d,%d",
			 g[0].max_sm_mhz > 0 ? g[0].max_sm_mhz * 3 / 4 : 1000,
			 g[0].max_sm_mhz > 0 ? g[0].max_sm_mhz * 3 / 4 : 1000);
		kj__doctor_set(c, KJ_DOCTOR_WARN, fix, "%s: power or thermal limits "
			       "slow a timed kernel down", clocks);
	} else {
		/* Idle clocks are normal: kjudge warms up before timing and
		 * records the clock with every figure. */
		kj__doctor_set(c, KJ_DOCTOR_OK, NULL, "%s; no power or thermal "
			       "slowdown (steadier figures with locked clocks: "
			       "nvidia-smi --lock-gpu-clocks=MIN,MAX)", clocks);
	}
}

void kj__doctor_timing(struct kj__doctor *d)
{
	probe_governor(d);
	probe_smt(d);
	probe_boost(d);
	probe_gpus(d);
}
