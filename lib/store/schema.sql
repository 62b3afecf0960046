-- The results store of kjudge eval, schema version 5 (docs/store.md).
-- Times are UTC, ISO 8601 ('2026-12-01T21:30:00Z'); JSON columns hold
-- one JSON text; hashes are lowercase hex SHA-256.

-- What the file is: schema, schema_version, created_by (judge version).
CREATE TABLE meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
);

-- One row per `kjudge eval` invocation (a resume is a new run).
CREATE TABLE runs (
	run_id        INTEGER PRIMARY KEY,
	started_at    TEXT NOT NULL,
	finished_at   TEXT,                 -- NULL: killed or still running
	judge_version TEXT NOT NULL,
	command       TEXT NOT NULL,        -- the command line, JSON array
	suite         TEXT NOT NULL,        -- the suite's directory
	candidates    TEXT NOT NULL,        -- the candidates' directory or JSONL
	settings      TEXT NOT NULL,        -- JSON: every setting that changes a verdict
	env           TEXT,                 -- JSON: machine, device, versions, and
	                                    -- "skipped": what of the suite and the
	                                    -- candidates it left out and why
	origin        TEXT                  -- NULL: a run of this store; else the run
	                                    -- of another store merged in (kjudge
	                                    -- merge): the key it is known by
);
CREATE UNIQUE INDEX runs_by_origin ON runs (origin);

-- The suite's tasks (operators), by name, path and content.
CREATE TABLE tasks (
	task_key     TEXT PRIMARY KEY,      -- sha256 of name, path and the content key,
	                                    -- sha256(task_sha256 ':' cases_sha256)
	name         TEXT NOT NULL,         -- '19_ReLU' (KernelBench stem), 'softmax' (op)
	path         TEXT NOT NULL,         -- relative to the suite: 'level1/19_ReLU.py'
	level        INTEGER,               -- KernelBench's level, else NULL
	problem      INTEGER,               -- KernelBench's problem id, else NULL
	task_sha256  TEXT NOT NULL,
	cases_sha256 TEXT,                  -- the sidecar cases file, NULL when none
	source       TEXT NOT NULL,
	cases_json   TEXT                   -- the sidecar's text, NULL when none
);

-- Which tasks each run's suite held: the operators every metric counts,
-- those with no attempt included.
CREATE TABLE suite_tasks (
	run_id   INTEGER NOT NULL REFERENCES runs(run_id),
	task_key TEXT NOT NULL REFERENCES tasks(task_key),
	PRIMARY KEY (run_id, task_key)
);

-- Candidates' sources, by content.
CREATE TABLE candidates (
	cand_sha256 TEXT PRIMARY KEY,
	source      TEXT NOT NULL
);

-- One row per attempt: a model's candidate judged on a task.
CREATE TABLE attempts (
	attempt_key       TEXT PRIMARY KEY,  -- sha256 of task_key, cand_sha256, model,
	                                     -- attempt, device, judge version, settings
	run_id            INTEGER NOT NULL REFERENCES runs(run_id),  -- the run that judged it last
	task_key          TEXT NOT NULL REFERENCES tasks(task_key),
	task              TEXT NOT NULL,     -- tasks.name, repeated for readers
	model             TEXT NOT NULL,
	attempt           TEXT NOT NULL,     -- the attempt's label ('0', 'sample_3')
	round             INTEGER,           -- the generation round, NULL when not given
	cand_sha256       TEXT NOT NULL REFERENCES candidates(cand_sha256),
	origin            TEXT NOT NULL,     -- where it came from: a path, or 'FILE:LINE'
	prompt_tokens     INTEGER,
	completion_tokens INTEGER,
	generation_s      REAL,
	device            TEXT NOT NULL,     -- 'cuda:0', 'cpu'
	state             TEXT NOT NULL CHECK (state IN ('running', 'done')),
	-- The verdict (NULL while running):
	status            TEXT CHECK (status IN ('pass', 'fail', 'task_error', 'judge_error')),
	                                     -- pass: every case of verify and of
	                                     -- benchmark passed (clean or not);
	                                     -- task_error / judge_error: nothing
	                                     -- charged to the candidate
	clean             INTEGER,           -- 1: pass and every anti-cheat layer passed
	error_type        TEXT,              -- the first failing case's type name
	                                     -- ('AccuracyError'), or the layer's
	                                     -- ('StaticCheck', 'KernelsNotUsed', 'NoOwnKernel')
	category          TEXT,              -- its category: build, runtime, accuracy,
	                                     -- timeout, limit, timing, task, judge (a
	                                     -- failing case's, kjudge/verdict.h), or
	                                     -- static / anticheat for a pass that is
	                                     -- not clean; NULL for a clean pass
	charged           TEXT,              -- candidate, task, judge
	message           TEXT,              -- one line for the user
	cases_total       INTEGER,
	cases_passed      INTEGER,
	-- The anti-cheat layers: 1 passed, 0 failed, NULL not run or not
	-- applicable (profile on a CPU); *_msg says why.
	static_ok         INTEGER, static_msg   TEXT,
	disabled_ok       INTEGER, disabled_msg TEXT,   -- its kernels disabled, it must fail
	profile_ok        INTEGER, profile_msg  TEXT,   -- the profiler saw one of its kernels
	speedup           REAL,              -- geometric mean over the cases of
	                                     -- ref_ms / impl_ms; NULL unless benchmarked
	judge_s           REAL,              -- the judge's wall time on this attempt
	started_at        TEXT NOT NULL,
	finished_at       TEXT,
	env               TEXT               -- JSON: the environment of its figures
);
CREATE INDEX attempts_by_model ON attempts (model, task_key);

-- One row per case of each phase of an attempt.
CREATE TABLE case_results (
	attempt_key TEXT NOT NULL REFERENCES attempts(attempt_key),
	phase       TEXT NOT NULL CHECK (phase IN ('verify', 'benchmark', 'disabled')),
	case_idx    INTEGER NOT NULL,        -- 1-based, as in verify_result.json
	params      TEXT,                    -- JSON: the case's axes, NULL when none
	status      TEXT NOT NULL CHECK (status IN ('pass', 'fail', 'task_error', 'judge_error')),
	error_type  TEXT,                    -- '' when it passed
	category    TEXT,
	charged     TEXT,
	message     TEXT,
	record      TEXT,                    -- JSON: the case as verify_result.json has it
	PRIMARY KEY (attempt_key, phase, case_idx)
);

-- One row per timed case (benchmark).
CREATE TABLE timings (
	attempt_key TEXT NOT NULL REFERENCES attempts(attempt_key),
	case_idx    INTEGER NOT NULL,
	impl_ms     REAL,                    -- the candidate's median
	ref_ms      REAL,                    -- the baseline's (framework) median
	speedup     REAL,                    -- ref_ms / impl_ms, within the judge's
	                                     -- interval (docs/cli.md)
	impl_samples INTEGER,
	ref_samples  INTEGER,
	record      TEXT,                    -- JSON: the perf JSON's case
	sol_ms      REAL,                    -- the case's speed of light, NULL
	                                     -- when none was established (v5)
	PRIMARY KEY (attempt_key, case_idx)
);

-- schema 4: each task's audit (docs/AUDIT.md), run by eval before the
-- task's candidates.  One row per audit of a task, by the task's key and
-- the audit's cache key (of the judge's version, the task's content, the
-- canaries' module, the device and the audit's options): an audit kept is
-- not run again.
CREATE TABLE IF NOT EXISTS task_audits (
	task_key   TEXT NOT NULL REFERENCES tasks(task_key),
	audit_key  TEXT NOT NULL,
	run_id     INTEGER REFERENCES runs(run_id),  -- the run that recorded it
	verdict    TEXT NOT NULL CHECK (verdict IN ('weak', 'strong', 'not_proven')),
	                                    -- weak: a canary passed; strong: every
	                                    -- canary that applies was rejected;
	                                    -- not_proven: the audit could not be
	                                    -- established (a canary not judged)
	device     TEXT,                    -- where the canaries ran, NULL when none did
	reasons    TEXT NOT NULL,           -- JSON array of sentences: why weak, why
	                                    -- not proven
	audited_at TEXT NOT NULL,
	PRIMARY KEY (task_key, audit_key)
);

-- Each canary's end in an audit.
CREATE TABLE IF NOT EXISTS audit_canaries (
	task_key  TEXT NOT NULL,
	audit_key TEXT NOT NULL,
	canary    TEXT NOT NULL,            -- 'zeros', 'input', 'lowp_float16', ...
	outcome   TEXT NOT NULL CHECK (outcome IN ('fail', 'pass', 'n/a', 'error', 'skipped')),
	PRIMARY KEY (task_key, audit_key, canary),
	FOREIGN KEY (task_key, audit_key) REFERENCES task_audits (task_key, audit_key)
);
