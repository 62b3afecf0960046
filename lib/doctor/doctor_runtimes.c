/*
 * doctor_runtimes.c - does this machine have what each runner runs?  The
 * doctor's probes of the workers' Python (torch, numpy, Triton, CUDA in
 * torch), the worker file, compilers, OpenCL and the parser compiled in.
 *
 * The Python is found by the torch runner's own rule (locate.h) and run
 * the way a worker runs: the same variables passed through, no user site
 * directory.  So a torch installed only in ~/.local, which the workers
 * would not see, is reported missing here too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "kjudge/fileio.h"
#include "kjudge/validate.h"
#include "doctor/doctor_internal.h"
#include "base/json.h"
#include "base/locate.h"

/* The versions of scripts/third-party.lock, passed by the Makefile. */
#ifndef KJ_TS_VERSIONS
#define KJ_TS_VERSIONS "versions not recorded by this build"
#endif

/* Prints one line "KJ_DOCTOR {json}": imports may print, the line is
 * found by its tag.  Exceptions are reported, never raised. */
static const char py_probe[] =
	"import json, sys\n"
	"r = {'python': sys.version.split()[0], 'executable': sys.executable}\n"
	"for m in ('numpy', 'torch', 'triton'):\n"
	"    try:\n"
	"        r[m] = str(getattr(__import__(m), '__version__', '?'))\n"
	"    except Exception as e:\n"
	"        r[m] = None\n"
	"        r[m + '_error'] = (type(e).__name__ + ': ' + str(e))[:200]\n"
	"t = sys.modules.get('torch')\n"
	"if r['torch'] is not None:\n"
	"    try:\n"
	"        r['cuda_build'] = t.version.cuda\n"
	"        r['cuda'] = bool(t.cuda.is_available())\n"
	"        r['cuda_devices'] = t.cuda.device_count() if r['cuda'] else 0\n"
	"        if r['cuda']:\n"
	"            r['cuda_device'] = t.cuda.get_device_name(0)\n"
	"    except Exception as e:\n"
	"        r['cuda'] = False\n"
	"        r['cuda_error'] = (type(e).__name__ + ': ' + str(e))[:200]\n"
	"print('KJ_DOCTOR ' + json.dumps(r), flush=True)\n";

/* What a worker gets of the environment (lib/torch.c, env_build), and the
 * two settings that make its Python ignore per-user state. */
static const char *const passed_env[] = {
	"PATH", "LD_LIBRARY_PATH", "PYTHONPATH", "CUDA_VISIBLE_DEVICES",
	"CUDA_HOME", "TRITON_INTERPRET", "LANG", "HOME",
};

/* The JSON of the line tagged KJ_DOCTOR in out, or NULL. */
static json_t *tagged_json(const char *out)
{
	const char *p = out, *found = NULL;

	while ((p = strstr(p, "KJ_DOCTOR {")) != NULL) {
		if (p == out || p[-1] == '\n')
			found = p;
		p++;
	}
	if (!found)
		return NULL;
	found += strlen("KJ_DOCTOR ");
	{
		int oom;

		return kj__json_loadb(found, strcspn(found, "\n"), 0, NULL, &oom);
	}
}

static const char *jstr(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* One record per module: its version, or why it did not import. */
static void module_record(struct kj__doctor *d, const json_t *r, const char *mod,
			  enum kj_doctor_status missing, const char *fix,
			  const char *need)
{
	struct kj_doctor_check *c = kj__doctor_check(d, KJ_DOCTOR_RUNTIMES, mod);
	const char *v = jstr(r, mod);
	char key[32];

	snprintf(key, sizeof(key), "%s_error", mod);
	if (v)
		kj__doctor_set(c, KJ_DOCTOR_OK, NULL, "%s %s", mod, v);
	else
		kj__doctor_set(c, missing, fix, "%s does not import (%s); %s", mod,
			       jstr(r, key) ? jstr(r, key) : "?", need);
}

static void cuda_record(struct kj__doctor *d, const json_t *r)
{
	struct kj_doctor_check *c = kj__doctor_check(d, KJ_DOCTOR_RUNTIMES, "torch-cuda");
	const char *build = jstr(r, "cuda_build");
	char smi[4096];

	if (json_is_true(json_object_get(r, "cuda"))) {
		kj__doctor_set(c, KJ_DOCTOR_OK, NULL, "torch sees %lld CUDA device%s "
			       "(%s; CUDA %s)",
			       (long long)json_integer_value(json_object_get(r, "cuda_devices")),
			       json_integer_value(json_object_get(r, "cuda_devices")) == 1 ? "" : "s",
			       jstr(r, "cuda_device") ? jstr(r, "cuda_device") : "?",
			       build ? build : "?");
		return;
	}
	/* No CUDA in torch is expected on a machine without a GPU; on one
	 * with nvidia-smi it means the torch build or the driver is wrong. */
	if (kj__find_in_path("nvidia-smi", kj_config_env(d->o->cfg, "PATH"), smi, sizeof(smi)) == 0)
		kj__doctor_set(c, KJ_DOCTOR_WARN,
			       "install a torch built for this driver's CUDA "
			       "(pip install torch --index-url "
			       "https://download.pytorch.org/whl/cuXYZ) and check nvidia-smi",
			       "torch sees no CUDA device though nvidia-smi is installed "
			       "(torch's CUDA: %s%s%s)", build ? build : "none, a CPU build",
			       jstr(r, "cuda_error") ? "; " : "",
			       jstr(r, "cuda_error") ? jstr(r, "cuda_error") : "");
	else
		kj__doctor_set(c, KJ_DOCTOR_OK, NULL, "no CUDA device: torch runs on "
			       "the CPU (--device cpu; torch's CUDA build: %s)",
			       build ? build : "none");
}

static void probe_python(struct kj__doctor *d)
{
	struct kj_doctor_check *c = kj__doctor_check(d, KJ_DOCTOR_RUNTIMES, "python");
	const char *source = d->o->cfg->python_source, *name = d->o->cfg->python;
	char path[4096], fix[KJ_DOCTOR_FIX_MAX];
	const char *envp[16];
	const char *argv[] = { path, "-c", py_probe, NULL };
	char env_store[sizeof(passed_env) / sizeof(passed_env[0])][4200];
	struct kj__cmd *cmd;
	json_t *r;
	size_t i, n = 0;

	if (kj__find_in_path(name, kj_config_env(d->o->cfg, "PATH"), path, sizeof(path)) < 0) {
		kj__doctor_set(c, KJ_DOCTOR_FAIL, kj__python_fix(NULL, fix, sizeof(fix)),
			       "no Python interpreter '%s' (chosen: %s): verify and "
			       "benchmark cannot run", name, source);
		return;
	}
	for (i = 0; i < sizeof(passed_env) / sizeof(passed_env[0]); i++) {
		const char *v = kj_config_env(d->o->cfg, passed_env[i]);

		if (v && snprintf(env_store[n], sizeof(env_store[n]), "%s=%s",
				  passed_env[i], v) < (int)sizeof(env_store[n])) {
			envp[n] = env_store[n];
			n++;
		}
	}
	envp[n++] = "PYTHONNOUSERSITE=1";
	envp[n++] = "PYTHONDONTWRITEBYTECODE=1";
	envp[n] = NULL;
	cmd = malloc(sizeof(*cmd));
	if (!cmd) {
		d->oom = 1;
		return;
	}
	if (kj__doctor_run_cmd(argv, envp, d->timeout_s, cmd) < 0 || !cmd->started ||
	    cmd->timed_out || !(r = tagged_json(cmd->out))) {
		size_t k = strcspn(cmd->err, "\n");
		char why[400];

		if (!cmd->started)
			snprintf(why, sizeof(why), "it does not start: %s",
				 strerror(cmd->exec_errno ? cmd->exec_errno : errno));
		else if (cmd->timed_out)
			snprintf(why, sizeof(why), "it did not finish a short script "
				 "within %g s", d->timeout_s);
		else
			snprintf(why, sizeof(why), "it does not run a short script: %.*s",
				 (int)(k < 300 ? k : 300),
				 cmd->err_len ? cmd->err : "no answer");
		kj__doctor_set(c, KJ_DOCTOR_FAIL, kj__python_fix(path, fix, sizeof(fix)),
			       "%s (chosen: %s): %s", path, source, why);
		free(cmd);
		return;
	}
	free(cmd);
	kj__doctor_set(c, KJ_DOCTOR_OK, NULL, "Python %s at %s (chosen: %s)",
		       jstr(r, "python") ? jstr(r, "python") : "?", path, source);
	kj__python_fix(path, fix, sizeof(fix));
	module_record(d, r, "torch", KJ_DOCTOR_FAIL, fix,
		      "verify and benchmark cannot run");
	module_record(d, r, "numpy", KJ_DOCTOR_FAIL, fix,
		      "the worker writes outputs with it");
	module_record(d, r, "triton", KJ_DOCTOR_WARN,
		      "pip install triton (into the interpreter above)",
		      "Triton candidates cannot run");
	if (jstr(r, "torch"))
		cuda_record(d, r);
	json_decref(r);
}

static void probe_worker(struct kj__doctor *d)
{
	struct kj_doctor_check *c = kj__doctor_check(d, KJ_DOCTOR_RUNTIMES, "worker");
	char path[4096];

	if (kj__beside_self("kjudge_worker.py", path, sizeof(path)) < 0)
		kj__doctor_set(c, KJ_DOCTOR_FAIL, "run kjudge from its build directory "
			       "(build/kjudge)", "cannot tell where the kjudge binary is "
			       "(/proc/self/exe)");
	else if (access(path, R_OK) != 0)
		kj__doctor_set(c, KJ_DOCTOR_FAIL, "make (it puts "
			       "build/kjudge_worker.py beside build/kjudge), or make "
			       "install (it puts PREFIX/libexec/kjudge/kjudge_worker.py "
			       "with PREFIX/bin/kjudge)",
			       "%s: %s: the torch runner cannot start workers", path,
			       strerror(errno));
	else
		kj__doctor_set(c, KJ_DOCTOR_OK, NULL, "%s", path);
}

/* `prog --version`'s first line, or why there is none. */
static int version_line(const char *prog, double timeout_s, char *line, size_t size)
{
	const char *argv[] = { prog, "--version", NULL };

	return kj__doctor_cmd_line(argv, timeout_s, line, size);
}

static void probe_nvcc(struct kj__doctor *d)
{
	struct kj_doctor_check *c = kj__doctor_check(d, KJ_DOCTOR_RUNTIMES, "nvcc");
	const char *home = kj_config_env(d->o->cfg, "CUDA_HOME");
	char path[4096], alt[4096];
	const char *argv[] = { path, "--version", NULL };
	int on_path = kj__find_in_path("nvcc", kj_config_env(d->o->cfg, "PATH"), path, sizeof(path)) == 0;
	struct kj__cmd *cmd;
	const char *rel;

	if (!on_path) {
		/* The toolkit's usual places, which its installer does not
		 * add to PATH. */
		snprintf(alt, sizeof(alt), "%.4000s/bin/nvcc", home && *home ? home
								      : "/usr/local/cuda");
		if (access(alt, X_OK) != 0) {
			kj__doctor_set(c, KJ_DOCTOR_WARN,
				       "install the CUDA toolkit (NVIDIA's packages, or "
				       "apt-get install nvidia-cuda-toolkit) and put its bin/ "
				       "on PATH",
				       "no nvcc: CUDA C candidates cannot be built");
			return;
		}
		snprintf(path, sizeof(path), "%s", alt);
	}
	cmd = malloc(sizeof(*cmd));
	if (!cmd) {
		d->oom = 1;
		return;
	}
	if (kj__doctor_run_cmd(argv, NULL, d->timeout_s, cmd) < 0 || !cmd->started ||
	    cmd->timed_out || !(rel = strstr(cmd->out, "release "))) {
		kj__doctor_set(c, KJ_DOCTOR_WARN, "reinstall the CUDA toolkit",
			       "%s does not tell its version", path);
	} else if (!on_path) {
		char fix[KJ_DOCTOR_FIX_MAX];

		snprintf(fix, sizeof(fix), "export PATH=%.*s:$PATH",
			 (int)(strrchr(path, '/') - path), path);
		kj__doctor_set(c, KJ_DOCTOR_WARN, fix, "%s, %.*s, is not on PATH", path,
			       (int)strcspn(rel, "\n"), rel);
	} else {
		kj__doctor_set(c, KJ_DOCTOR_OK, NULL, "%s: %.*s", path,
			       (int)strcspn(rel, "\n"), rel);
	}
	free(cmd);
}

/* A C compiler record: the first of `names` found, with its version. */
static void probe_compiler(struct kj__doctor *d, const char *record,
			   const char *const *names, size_t n, const char *fix,
			   const char *need)
{
	struct kj_doctor_check *c = kj__doctor_check(d, KJ_DOCTOR_RUNTIMES, record);
	char path[4096], line[256];
	size_t i;
	char found[KJ_DOCTOR_DETAIL_MAX] = "";
	int broken = 0;

	for (i = 0; i < n; i++) {
		if (kj__find_in_path(names[i], kj_config_env(d->o->cfg, "PATH"), path, sizeof(path)) < 0)
			continue;
		broken |= version_line(path, d->timeout_s, line, sizeof(line)) < 0;
		kj__doctor_append(found, sizeof(found), "%s%s: %s", found[0] ? "; " : "",
				  names[i], line);
	}
	if (!found[0])
		kj__doctor_set(c, KJ_DOCTOR_WARN, fix, "not found: %s", need);
	else if (broken)
		kj__doctor_set(c, KJ_DOCTOR_WARN, fix, "%s: it does not run", found);
	else
		kj__doctor_set(c, KJ_DOCTOR_OK, NULL, "%s", found);
}

/* Where the OpenCL loader may be, besides $LD_LIBRARY_PATH. */
static const char *const lib_dirs[] = {
	"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64",
	"/usr/lib", "/usr/local/lib", "/usr/local/cuda/lib64",
};

static int find_libopencl(const struct kj__doctor *d, char *out, size_t size)
{
	const char *ld = kj_config_env(d->o->cfg, "LD_LIBRARY_PATH");
	size_t i;

	for (i = 0; i < sizeof(lib_dirs) / sizeof(lib_dirs[0]); i++)
		if (snprintf(out, size, "%s/libOpenCL.so.1", lib_dirs[i]) < (int)size &&
		    access(out, R_OK) == 0)
			return 0;
	while (ld && *ld) {
		size_t len = strcspn(ld, ":");

		if (len && snprintf(out, size, "%.*s/libOpenCL.so.1", (int)len, ld) < (int)size &&
		    access(out, R_OK) == 0)
			return 0;
		ld += len + (ld[len] == ':');
	}
	return -1;
}

static int count_lines_with(const char *s, const char *what)
{
	int n = 0;

	while ((s = strstr(s, what)) != NULL) {
		n++;
		s += strlen(what);
	}
	return n;
}

static void probe_opencl(struct kj__doctor *d)
{
	struct kj_doctor_check *c = kj__doctor_check(d, KJ_DOCTOR_RUNTIMES, "opencl");
	static const char fix[] = "apt-get install ocl-icd-libopencl1 "
				  "pocl-opencl-icd clinfo (OpenCL on the CPU through PoCL)";
	char clinfo[4096], lib[1024];
	const char *argv[] = { clinfo, "-l", NULL };
	struct kj__cmd *cmd;

	if (kj__find_in_path("clinfo", kj_config_env(d->o->cfg, "PATH"), clinfo, sizeof(clinfo)) == 0 &&
	    (cmd = malloc(sizeof(*cmd))) != NULL) {
		int platforms = -1, devices = 0;

		if (kj__doctor_run_cmd(argv, NULL, d->timeout_s, cmd) == 0 &&
		    cmd->started && !cmd->timed_out) {
			platforms = count_lines_with(cmd->out, "Platform #");
			devices = count_lines_with(cmd->out, "Device #");
		}
		free(cmd);
		if (platforms > 0) {
			kj__doctor_set(c, KJ_DOCTOR_OK, NULL, "clinfo lists %d platform%s "
				       "and %d device%s", platforms,
				       platforms == 1 ? "" : "s", devices,
				       devices == 1 ? "" : "s");
			return;
		}
		kj__doctor_set(c, KJ_DOCTOR_WARN, fix, "clinfo %s: OpenCL candidates "
			       "cannot run", platforms == 0 ? "lists no platform"
							    : "does not answer");
		return;
	}
	if (find_libopencl(d, lib, sizeof(lib)) == 0)
		kj__doctor_set(c, KJ_DOCTOR_OK, NULL, "%s is there (no clinfo to list "
			       "its platforms)", lib);
	else
		kj__doctor_set(c, KJ_DOCTOR_WARN, fix, "no OpenCL loader (libOpenCL.so.1) "
			       "and no clinfo: OpenCL candidates cannot run");
}

static void probe_tree_sitter(struct kj__doctor *d)
{
	struct kj_doctor_check *c = kj__doctor_check(d, KJ_DOCTOR_RUNTIMES, "tree-sitter");
	struct kj_vrules *rules = NULL;
	struct kj_validator *v = NULL;
	struct kj_error err;

	/* Building a validator loads both grammars into the runtime, which
	 * checks their ABI: the one thing that could be wrong in a binary
	 * that carries its parser. */
	if (kj_vrules_new(&rules, NULL, &err) != KJ_OK ||
	    kj_validator_new(&v, rules, &err) != KJ_OK)
		kj__doctor_set(c, KJ_DOCTOR_FAIL, "rebuild kjudge (make clean all)",
			       "the parser compiled in does not start: %s", err.msg);
	else
		kj__doctor_set(c, KJ_DOCTOR_OK, NULL, "compiled in: %s", KJ_TS_VERSIONS);
	kj_validator_free(v);
	kj_vrules_free(rules);
}

void kj__doctor_runtimes(struct kj__doctor *d)
{
	static const char *const cc[] = { "cc", "gcc" };
	static const char *const clang[] = { "clang" };

	probe_python(d);
	probe_worker(d);
	probe_nvcc(d);
	probe_compiler(d, "cc", cc, 2, "apt-get install gcc",
		       "the native runner builds C and OpenMP kernels with it");
	probe_compiler(d, "clang", clang, 1, "apt-get install clang",
		       "C kernels cannot be built with clang");
	probe_opencl(d);
	probe_tree_sitter(d);
}
