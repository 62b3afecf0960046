/*
 * kjudge.c - the command-line entry point: one table of commands, each
 * implemented in its own src/cmd_*.c file.
 */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "kjudge/proc.h"
#include "cli.h"
#include "interrupt.h"
#include "base/banned.h"

static const struct kj_cli_command commands[] = {
	{
		.name = "audit",
		.run = kj_cmd_audit,
		.summary = "Prove that every task of a suite rejects cheap answers: built-in "
			   "canary candidates, each judged as any candidate, must all fail.",
		.usage = "SUITE [options] | --op_name OP --verify_dir DIR [options]",
		.description =
			"For every task (eval's discovery of SUITE, or one task of the verify\n"
			"layout), canary candidates are written as candidates (a ModelNew\n"
			"around the task's Model) and judged as kjudge verify judges any:\n"
			"zeros, ones, empty (an uninitialised tensor), constant (the golden's\n"
			"mean), input (an input returned as the output; n/a when no input has\n"
			"the output's size), lowp_float16 and lowp_bfloat16 (the reference\n"
			"computed in that precision and cast back; float32 tasks), noise (the\n"
			"golden plus noise at twice the threshold), stale (the golden of\n"
			"another input set) and partial (the golden on the first half of the\n"
			"elements, zeros after).  Each must fail; one that passes a case makes\n"
			"the task weak, with the figures that explain it (the share of the\n"
			"golden's elements within the threshold, MERE and MARE against their\n"
			"limits).  For float32 tasks the line says how much of the thresholds\n"
			"the float16 and bfloat16 references use (the tolerance headroom).\n"
			"docs/AUDIT.md has the theory and the JSON.\n",
		.options = kj_audit_options,
		.environment = kj_cli_torch_env,
		.min_operands = 0,
		.max_operands = 1,
		.operands = "SUITE",
		.exit_codes = "  0  no task is weak and every canary was judged\n"
			      "  1  a task is weak\n"
			      "  2  bad input, or a task or canary the audit could not judge\n",
	},
	{
		.name = "validate",
		.run = kj_cmd_validate,
		.summary = "Check statically that a candidate is really a kernel "
			   "(no GPU, no torch).",
		.usage = "[options] FILE|DIR...",
		.description =
			"triton-op-verifier's validate_triton_impl.py on a real parser\n"
			"(tree-sitter), for Triton candidates (.py) and CUDA ones (.cu, or\n"
			"Python building a torch.utils.cpp_extension).  A degraded candidate\n"
			"gets the regression type of the first failing check:\n"
			"  1  no kernel: no @triton.jit function using triton.language, no\n"
			"     __global__ function, or a file that does not parse\n"
			"  2  ModelNew.forward launches no kernel in code that runs (through\n"
			"     wrappers, methods, aliases and extension modules of any depth)\n"
			"  3  computation outside the kernel: torch / F / nn layers on\n"
			"     forward's path or anywhere for the module-wide bans, cuBLAS,\n"
			"     cuDNN or ATen compute in CUDA host code, exec / eval /\n"
			"     __import__ / getattr evasion, host math, host syncs that feed a\n"
			"     launch, a try/except falling back to PyTorch\n"
			"  4  every launched kernel only loads, stores or fills\n"
			"What is forbidden is data: rules/validate-default.json, compiled in,\n"
			"which --rules FILE extends (docs/validate.md).  A directory operand\n"
			"stands for the .py, .cu and .cuh files under it; one that holds\n"
			"none is a usage error.\n",
		.options = kj_validate_options,
		/* At least one, checked by the command: --print-rules needs none. */
		.max_operands = -1,
		.exit_codes = "  0  every candidate is valid\n"
			      "  1  some candidate is degraded, or cannot be read (its record says why)\n"
			      "  2  bad flags, a bad rule file or a directory without a\n"
			      "     candidate file: nothing was judged\n",
	},
	{
		.name = "compare",
		.run = kj_cmd_compare,
		.summary = "Compare an actual output tensor with the golden one "
			   "(MERE/MARE rule).",
		.usage = "[options] GOLDEN.npy ACTUAL.npy",
		.description =
			"Applies the accuracy rule of triton-op-verifier: shapes equal,\n"
			"NaN positions equal, Inf positions and signs equal, bool exact,\n"
			"then over the finite elements, with the actual cast to the golden\n"
			"dtype and both promoted to float32:\n"
			"  rel = |actual - golden| / max(|golden|, t)\n"
			"  pass iff MERE = mean(rel) < t and MARE = max(rel) < 10 t\n"
			"where t is 2^-10 for float16, 2^-7 bfloat16, 2^-13 float32,\n"
			"2^-11 hifloat32, 2^-3 float8_e4m3fn, 2^-2 float8_e5m2 and 2^-13\n"
			"for anything else, integers included.\n"
			"\n"
			"--int-rule exact compares integer goldens exactly instead (every\n"
			"element equal after the cast, int64 and uint64 included);\n"
			"--float64-rule float64 computes rel of float64 goldens in float64\n"
			"instead of float32.  The defaults are the seed's rules; the record\n"
			"says which rules were applied.\n"
			"\n"
			"numpy has no bfloat16 or float8: such tensors are stored as uint16\n"
			"or uint8 and their logical dtype is given with --dtype (or\n"
			"--golden-dtype / --actual-dtype when the two differ).  hifloat32\n"
			"data is float32; --dtype hifloat32 selects its threshold.\n",
		.options = kj_compare_options,
		.min_operands = 2,
		.max_operands = 2,
		.operands = "GOLDEN.npy and ACTUAL.npy",
		.exit_codes = "  0  the actual output matches\n"
			      "  1  it does not (the reason and figures are printed)\n"
			      "  2  bad input: a missing or malformed file, an unknown dtype, a bad flag\n",
	},
	{
		.name = "verify",
		.run = kj_cmd_verify,
		.summary = "Check a candidate (ModelNew) against the reference (Model) "
			   "on every case.",
		.usage = "--op_name NAME [options]",
		.description =
			"A drop-in for triton-op-verifier's verify.py.  The reference\n"
			"{NAME}_torch.py and the candidate {NAME}_{IMPL}.py run in two\n"
			"separate worker processes; each case is run on input sets made\n"
			"from seeds the candidate cannot know, and every output is compared\n"
			"with the MERE/MARE rule (see 'kjudge compare --help').  A case that\n"
			"raises, crashes, hangs or disagrees is listed in failures[] of\n"
			"verify_result.json with its error_type, error_msg, seed and, for\n"
			"accuracy failures, the comparator's figures; it never stops the\n"
			"other cases.\n",
		.options = kj_verify_options,
		.environment = kj_cli_torch_env,
		.exit_codes = "  0  every case passed\n"
			      "  1  some case failed or timed out (\"验证超时\" on stderr)\n"
			      "  2  nothing could be judged: bad flags, no task file, no Python;\n"
			      "     or the judge failed (a full disk: \"no space left on MOUNT\")\n",
	},
	{
		.name = "benchmark",
		.run = kj_cmd_benchmark,
		.summary = "Time a verified candidate against the reference on every case.",
		.usage = "--op_name NAME [options]",
		.description =
			"A drop-in for triton-op-verifier's benchmark.py.  The L1 verify\n"
			"gate reads verify_result.json (verify_result_<x>.json for\n"
			"--triton_impl_name triton_<x> or <x>) and refuses unless every case\n"
			"passed.  Then, per case and on an input set verify never used:\n"
			"warm-up outside the timed region, a cache flush before every timed\n"
			"call, CUDA events and a device-wide synchronize (work left on other\n"
			"streams is counted), the outputs of every timed call checked\n"
			"against the golden ones, and the inputs hashed around the loop.\n"
			"The perf JSON has benchmark.py's fields: per-case latency, peak\n"
			"memory, speedup and status, the none/nan/inf/negative/zero indices\n"
			"and the geometric-mean speedup_vs_torch; kjudge adds each case's\n"
			"median, stdev, min, max and the time that escaped the events.\n",
		.options = kj_benchmark_options,
		.environment = kj_cli_torch_env,
		.exit_codes = "  0  the benchmark ran (per-case pass/fail is in the JSON)\n"
			      "  1  it could not run (no Python, a worker that does not start)\n"
			      "     or the judge failed (out of memory, a full disk)\n"
			      "  2  the L1 verify gate refused, or bad flags\n",
		.judge_exit = KJ_EXIT_FAIL,
	},
	{
		.name = "check",
		.run = kj_cmd_check,
		.summary = "Judge one task file and one kernel file as eval judges an "
			   "attempt, on one screen.",
		.usage = "TASK.py KERNEL.py [options]",
		.description =
			"KernelBench's run_and_check.py habit: TASK.py holds Model,\n"
			"get_inputs() and get_init_inputs(), KERNEL.py holds ModelNew.  Both\n"
			"are copied into a private directory and judged there: the static\n"
			"check, verify on secret seeds, the benchmark against the eager\n"
			"reference (with --baseline compile or both, against\n"
			"torch.compile(Model) too), and the run with the kernel's Triton\n"
			"launches made no-ops, which must fail.  One screen says the\n"
			"verdict, why, and the speedups (medians); --json prints\n"
			"KernelBench's result fields (compiled, correctness, metadata,\n"
			"runtime, runtime_stats, ref_runtime, ref_runtime_stats, in\n"
			"milliseconds as KernelBench's) with clean, speedup,\n"
			"speedup_compile and kjudge's records.\n",
		.options = kj_check_options,
		.environment = kj_cli_torch_env,
		.min_operands = 2,
		.max_operands = 2,
		.operands = "TASK.py and KERNEL.py",
		.exit_codes = "  0  a clean pass: every case passed and every layer with it\n"
			      "  1  the kernel failed, or passed without being clean\n"
			      "  2  bad input or nothing judged: a missing file, a task that\n"
			      "     does not load, bad flags; or the judge failed\n",
	},
	{
		.name = "eval",
		.run = kj_cmd_eval,
		.summary = "Judge every candidate of a study on its task; every verdict "
			   "goes into a results store.",
		.usage = "SUITE CANDIDATES --db FILE [options]",
		.description =
			"SUITE is a directory of tasks, found recursively: KernelBench's\n"
			"layout (level1/19_ReLU.py, the task named 19_ReLU) or the verify\n"
			"directory's ({op}_torch.py, the task named op), each with an optional\n"
			"sidecar of cases (19_ReLU.cases.json, {op}_cases.json).  CANDIDATES\n"
			"is a directory in KernelBench's generation layout\n"
			"(level_L_problem_P_sample_S_kernel.py, the model the directory's\n"
			"name), or MODEL/TASK/ATTEMPT.py or MODEL/levelL/TASK/ATTEMPT.py,\n"
			"or a JSONL file of generations\n"
			"({\"task\", \"model\", \"attempt\", \"round\", \"source\" or \"path\",\n"
			"\"prompt_tokens\", \"completion_tokens\", \"generation_s\"}); a bad line\n"
			"is named and skipped.  Each attempt is validated, verified,\n"
			"benchmarked when every case passed, and run again with its Triton\n"
			"launches made no-ops (it must then fail); on a GPU the profiler must\n"
			"see one of its own kernels.  Every case result is committed to the\n"
			"store (SQLite, WAL) before it is reported: the same command after a\n"
			"crash or a kill goes on where it stopped, with nothing lost and\n"
			"nothing counted twice.  'kjudge report DB' turns the store into\n"
			"the study's tables (docs/store.md, docs/metrics.md).\n"
			"\n"
			"On a Slurm cluster, --slurm writes a plan of shards (the attempts\n"
			"each holds, by their content keys) and submits one sbatch --array\n"
			"job; each array task runs --shard I/K into a store on its node's\n"
			"local disk, published atomically to the shared directory, and\n"
			"--wait follows the job, submits again the shards the machine lost\n"
			"and merges them as they finish (docs/slurm.md).\n",
		.options = kj_eval_options,
		.environment = kj_cli_torch_env,
		.min_operands = 2,
		.max_operands = 2,
		.operands = "SUITE and CANDIDATES",
		.exit_codes = "  0  every attempt has its verdict in the store (pass or fail)\n"
			      "  1  some attempt ended as a judge error, or could not be recorded\n"
			      "     (see --retry-failed); a full disk (\"no space left on MOUNT\")\n"
			      "  2  bad input: no suite, no candidates, a store that is not one or\n"
			      "     is locked, a bad flag\n",
		.judge_exit = KJ_EXIT_FAIL,
	},
	{
		.name = "merge",
		.run = kj_cmd_merge,
		.summary = "Fold results stores (the shards of a cluster run) into one.",
		.usage = "SHARD.db... --db FILE",
		.description =
			"Merges the finished attempts of each SHARD.db (any kjudge store)\n"
			"into FILE, with their case results, timings, runs, tasks and\n"
			"candidates, each source in one transaction.  Idempotent: a store\n"
			"merged twice, or a requeued shard's second result of an attempt,\n"
			"changes no verdict (the first is kept; a judge error gives way to\n"
			"a verdict); attempts a source holds as running (a shard killed\n"
			"mid-case) are left out.  Every source is checked before anything\n"
			"is written.  'kjudge report FILE' reads it while it is merged.\n",
		.options = kj_merge_options,
		.min_operands = 1,
		.max_operands = -1,
		.operands = "one or more SHARD.db",
		.exit_codes = "  0  every store merged\n"
			      "  1  the judge failed (a full disk: \"no space left on MOUNT\";\n"
			      "     out of memory); nothing of that source written\n"
			      "  2  bad input: a source that is not a kjudge store, is corrupt\n"
			      "     or of a newer schema, a target that is not one; nothing\n"
			      "     of that source written\n",
		.judge_exit = KJ_EXIT_FAIL,
	},
	{
		.name = "doctor",
		.run = kj_cmd_doctor,
		.summary = "Say whether this machine can sandbox, time well and run "
			   "each runner, and how to fix what it cannot.",
		.usage = "[options]",
		.description =
			"Runs probes in three groups, each in a child process with a\n"
			"deadline, and prints one line per probe (ok, WARN or FAIL) with\n"
			"the command or setting that fixes each problem:\n"
			"  sandbox   user and other namespaces (tried with unshare), the\n"
			"            user namespace sysctls, a seccomp filter (installed in a\n"
			"            child), cgroups v1 or v2 with the memory and pids\n"
			"            controllers (a group made and removed), a private tmpfs\n"
			"            with huge pages in a new mount namespace\n"
			"  timing    CPU frequency governors, SMT, turbo/boost, NVIDIA GPU\n"
			"            clocks, slowdowns and persistence mode (nvidia-smi; no\n"
			"            nvidia-smi means no GPU, which is not a problem)\n"
			"  runtimes  the workers' Python (which one, and why) with\n"
			"            torch, numpy, Triton and CUDA in torch, the worker file\n"
			"            beside kjudge, nvcc, cc, clang, OpenCL, the tree-sitter\n"
			"            grammars compiled in\n"
			"A warning means kjudge works, less well (noisier timings, a runner\n"
			"that cannot run); a failure means something it needs is missing.\n",
		.options = kj_doctor_options,
		.environment = kj_doctor_env,
		.exit_codes = "  0  no probe failed (warnings allowed)\n"
			      "  1  some probe failed\n"
			      "  2  bad flags\n",
	},
	{
		.name = "skill",
		.run = kj_cmd_skill,
		.summary = "Make a triton-op-verifier skill directory run kjudge.",
		.usage = "[options] DIR",
		.description =
			"Writes DIR/scripts/verify.py, benchmark.py and\n"
			"validate_triton_impl.py (making scripts/ when it is missing): each\n"
			"a few lines of Python that exec kjudge verify, kjudge benchmark or\n"
			"kjudge validate with the script's own arguments, so that an agent\n"
			"whose prompt says 'python3 DIR/scripts/verify.py --op_name ...'\n"
			"runs kjudge without a word of the prompt changed, and gets kjudge's\n"
			"exit codes.  The scripts run this kjudge (its real path), or the\n"
			"kjudge on PATH once that one is gone, and set KJ_PYTHON to the\n"
			"Python that runs them when KJ_PYTHON is not set and that Python\n"
			"has torch and numpy (else kjudge's own is used).  An original\n"
			"script is kept once, as NAME.py.orig; running skill again rewrites\n"
			"kjudge's own scripts and never touches an .orig.\n",
		.options = kj_skill_options,
		.min_operands = 1,
		.max_operands = 1,
		.operands = "one DIR, the skill directory",
		.exit_codes = "  0  the three scripts are written\n"
			      "  1  a full disk (\"no space left on MOUNT\"): the script that\n"
			      "     failed is as it was, those before it are written\n"
			      "  2  bad flags, DIR is not a directory, a script cannot be\n"
			      "     written, or one is not kjudge's and its .orig exists\n"
			      "     (see --force): nothing was changed\n",
		.judge_exit = KJ_EXIT_FAIL,
	},
	{
		.name = "report",
		.run = kj_cmd_report,
		.summary = "Compute the metrics of a results store (kjudge eval's) and write "
			   "them as Markdown, HTML and JSON.",
		.usage = "[options] DB",
		.description =
			"Reads the store DB read-only (an eval may be writing it) and\n"
			"computes, per model, over the operators of the latest run's suite\n"
			"(docs/metrics.md): accuracy (an operator with a passing attempt)\n"
			"and the clean pass rate (a pass that every anti-cheat layer\n"
			"passed), each with its Wilson 95 % interval; pass@k for each k of\n"
			"--k (the unbiased estimator over clean passes, averaged over the\n"
			"operators with at least k attempts; - where none has k); fast_p\n"
			"for each p of --p (the share of operators whose best clean speedup\n"
			"is above p); the geometric-mean speedup; tokens, tokens per clean\n"
			"success, generation and judge time; the failures by category; and\n"
			"each attempt's verdict, error type and message.  It warns when the\n"
			"figures mix runs of different settings, naming them.\n"
			"--md writes the tables as Markdown, --html one self-contained page\n"
			"(inline CSS, plots as inline SVG: the fast_p curve, the speedup\n"
			"distribution, the pass rates with their intervals, each operator's\n"
			"attempts and cases), --json the metrics that both print.  Every\n"
			"figure that is not a count has three significant digits.  With\n"
			"none of the three, the Markdown goes to stdout.\n"
			"--kernelbench writes one model's attempts at one level in\n"
			"KernelBench's eval_results.json format (--model, --level choose).\n",
		.options = kj_report_options,
		.min_operands = 1,
		.max_operands = 1,
		.operands = "one DB, the results store",
		.exit_codes = "  0  the report is written\n"
			      "  1  the judge failed (a full disk: \"no space left on MOUNT\";\n"
			      "     out of memory): the file that failed is as it was\n"
			      "  2  bad flags, a store that is missing, not a kjudge store,\n"
			      "     of a newer schema, corrupt or locked, a file that cannot\n"
			      "     be written or must not be replaced (a database): nothing\n"
			      "     was written\n",
		.judge_exit = KJ_EXIT_FAIL,
	},
	{
		.name = "spec",
		.run = kj_cmd_spec,
		.summary = "ParBench-style suites: a spec's prompt, and its program built, "
			   "run and verified in the sandbox; specs, manifests, pairs and argc "
			   "checked.",
		.usage = "prompt SPEC [--root DIR] | verify SPEC [options] | verify --all "
			 "[--api LIST] | validate (--spec F... | --all | --manifest F) | pairs "
			 "[--contracts FILE] | argc (--spec F... | --all)",
		.description =
			"SPEC is a ParBench spec (JSON: identity, provenance, files, build,\n"
			"run, verification).  Every path it names must stay inside the project\n"
			"tree (--root, or config/paths.json's downloads_root under it): no\n"
			"'..' above it, no absolute path outside, no symbolic link out.\n"
			"\n"
			"spec prompt prints files.prompt_payload, each file as a line\n"
			"'==> NAME (N bytes) <==', its N bytes and a newline; never a support\n"
			"or verification-only file.\n"
			"\n"
			"spec verify copies the source tree (without verification_only files,\n"
			"expected outputs and reference files), overlays --candidate's\n"
			"files.translation_targets, builds it (clean, configure, build under\n"
			"/bin/sh -c, ${VAR} from build.variables, each command in the sandbox\n"
			"with --build-timeout; cached by content in the cache directory), runs\n"
			"the configuration's arguments (argv[0] the spec's executable, no\n"
			"shell, run.timeout_seconds, the sandbox's limits of memory, processes,\n"
			"output and written bytes), then evaluates every strategy (a\n"
			"conjunction, all of them reported).  Statuses: PASS, BUILD_FAIL,\n"
			"RUN_FAIL, VERIFY_FAIL, TIMEOUT, ERROR (a strategy unknown or\n"
			"malformed), SKIP (no strategy).  --time times the run command on the\n"
			"judge's clock after a pass; with --baseline the pristine reference too,\n"
			"interleaved, and the speedup.  docs/spec.md has the JSON.\n"
			"\n"
			"spec verify --all verifies the pristine reference of every spec that\n"
			"ROOT/manifest.jsonl names (--api: only those APIs), one table row\n"
			"(or, with --json, one record) each, and exits 0 only when all pass.\n"
			"\n"
			"spec validate checks specs (--spec), a manifest (--manifest) or the\n"
			"whole suite (--all: the root's manifest.jsonl, every spec, manifest\n"
			"and specs agreeing, the pairing census, the oracle-strength audit)\n"
			"against the compiled-in schemas and ParBench's validator's rules;\n"
			"each problem with its file and JSON path.  spec pairs lists the\n"
			"translation pairs of the manifest (one suite and kernel, different\n"
			"APIs, both directions) and, with --contracts, whether a contract\n"
			"resolves each.  spec argc compares each spec's correctness arguments\n"
			"with the literal argc checks of its prompt_payload sources.\n",
		.options = kj_spec_options,
		.environment = kj_spec_env,
		.min_operands = 1,
		.max_operands = -1,
		.operands = "a subcommand (prompt, verify, validate, pairs or argc) and its SPEC files",
		.exit_codes = "  0  prompt: printed; verify: PASS (--all: every reference);\n"
			      "     validate: valid (warnings allowed); pairs: listed (with\n"
			      "     --contracts: every pair resolved);\n"
			      "     argc: no MISMATCH or SPEC-MISSING\n"
			      "  1  verify: any other status (BUILD_FAIL, RUN_FAIL, VERIFY_FAIL,\n"
			      "     TIMEOUT, ERROR, SKIP; --all: some reference, or a spec of the\n"
			      "     manifest that does not load); validate: errors; pairs: a pair without a\n"
			      "     resolved contract; argc: a MISMATCH or SPEC-MISSING\n"
			      "  2  bad input: bad flags, a spec that does not load, an unknown\n"
			      "     configuration, a path that leaves the tree, a missing file or\n"
			      "     candidate target, or a sandbox that cannot be set up; pairs: a\n"
			      "     contract file refused; argc: a spec that is not JSON\n",
	},
	{
		.name = "serve",
		.run = kj_cmd_serve,
		.summary = "Answer evaluations over HTTP, each judged as eval judges an "
			   "attempt, into a results store.",
		.usage = "--db FILE [--listen HOST:PORT | --socket PATH] [options]",
		.description =
			"The judge as a service for RL loops and agents (docs/serve.md):\n"
			"POST /v1/evaluations with a task (its source, or the name of a\n"
			"task of --suite) and a candidate answers 202 with an id once the\n"
			"request is committed to the store; GET /v1/evaluations/ID?wait=S\n"
			"answers its verdict (eval's attempt: validate, verify on secret\n"
			"seeds, benchmark, the anti-cheat layers), judged in a child\n"
			"process of its own.  The first line on stdout is exactly\n"
			"'listening on http://HOST:PORT' (or 'listening on unix:PATH').\n"
			"SIGTERM drains: new work gets 503, the running evaluations\n"
			"finish, the queued ones stay in the store for the next start.\n"
			"A server killed at any moment and started again with the same\n"
			"--db judges every accepted evaluation to exactly one result;\n"
			"'kjudge report DB' reads the store.\n",
		.options = kj_serve_options,
		.environment = kj_cli_torch_env,
		.exit_codes = "  0  drained after SIGTERM or SIGINT\n"
			      "  1  the judge failed (the store, the machine)\n"
			      "  2  bad input: bad flags, an address in use, a non-loopback\n"
			      "     --listen without --token-file, a suite that does not load\n",
	},
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

/* What kjudge is, for `kjudge --help` and kjudge(1). */
static const char intro[] =
	"kjudge judges generated compute kernels: is it really a kernel,\n"
	"is it correct on every case, and how much faster is it.\n";

static void usage(FILE *out)
{
	size_t i;

	fprintf(out, "usage: kjudge [--version] [--help] COMMAND [ARGS]\n\n%s\n"
		     "commands:\n", intro);
	for (i = 0; i < N_COMMANDS; i++)
		fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\nOptions and operands may come in any order; --opt=value and\n"
		     "--opt value are the same; -- ends the options.  'kjudge COMMAND\n"
		     "--help' tells more about a command, 'man kjudge' about the rules.\n");
}

static const struct kj_cli_command *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < N_COMMANDS; i++)
		if (!strcmp(name, commands[i].name))
			return &commands[i];
	return NULL;
}

/*
 * `kjudge help [CMD]`, and two forms for the build and for scripts that
 * --help does not list: `kjudge help --man [CMD]` prints the man page
 * (kjudge.1, or kjudge-CMD.1) and `kjudge help --commands` the command
 * names, one per line.
 */
static int help(int argc, char **argv)
{
	const struct kj_cli_command *c;
	int man = argc > 1 && !strcmp(argv[1], "--man");
	size_t i;

	if (argc > 1 && !strcmp(argv[1], "--commands") && argc == 2) {
		for (i = 0; i < N_COMMANDS; i++)
			printf("%s\n", commands[i].name);
	} else if (argc == 1 + man) {
		if (man)
			kj_cli_print_man_main(stdout, intro, commands, N_COMMANDS);
		else
			usage(stdout);
	} else if (argc == 2 + man) {
		if (!(c = find_command(argv[1 + man])))
			return kj_cli_error(NULL, "'%s' is not a kjudge command",
					    argv[1 + man]);
		if (man)
			kj_cli_print_man(stdout, c, commands, N_COMMANDS);
		else
			kj_cli_print_help(stdout, c);
	} else {
		return kj_cli_error(NULL, "help wants at most one command, got '%s'",
				    argv[argc - 1]);
	}
	if (fflush(stdout) != 0)
		return kj_cli_error(NULL, "cannot write to standard output");
	return KJ_EXIT_OK;
}

int main(int argc, char **argv)
{
	const struct kj_cli_command *c;

	if (argc < 2) {
		usage(stderr);
		return KJ_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "help"))
		return help(argc - 1, argv + 1);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return help(1, argv + 1);
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("kjudge %s\n", KJ_VERSION);
		return KJ_EXIT_OK;
	}
	if ((c = find_command(argv[1])) != NULL) {
		struct rlimit rl;
		int rc;

		/* A candidate's outputs come as descriptors, up to
		 * KJ_PROC_FDS_MAX in one reply: the judge may hold them all
		 * (a soft limit of 1024 is common).  Spawned workers get the
		 * sandbox's own limit. */
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 &&
		    rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max < 65536 ? rl.rlim_max : 65536;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
		rc = c->run(c, argc - 1, argv + 1);
		/* The worker templates go now, not with the process: reaped,
		 * their CPU time is the run's. */
		kj_proc_templates_release();

		/* A signal the guard caught, even after the run was done, is
		 * what the caller must see. */
		return kj_proc_interrupted() ? kj_cli_interrupted(c) : rc;
	}
	if (argv[1][0] == '-')
		kj_cli_error(NULL, "unknown option '%s' (see 'kjudge --help')", argv[1]);
	else
		kj_cli_error(NULL, "'%s' is not a kjudge command (see 'kjudge --help')",
			     argv[1]);
	return KJ_EXIT_USAGE;
}
