"""What the scenario end-to-end tests share.

bench/scenario/run.sh leaves its records in its --out directory: samples.jsonl (one sample every
2 s), result.json (report.py's summary), events.json, pods-final.json, nodes-final.json,
configmaps-final.json (lists at the end) and hpa.log (the HPA watch). `Run` loads them, `check`
prints one verdict and remembers failures, `finish` exits with the verdict, and the check_*
functions are the checks more than one test makes. A test feeds its own checks to check_scenario (in
run_scenario.sh), which runs them with this module importable and the --out directory as argv[1].
"""

import json
import os
import sys

_failures = []


def check(ok, what):
    """Prints `ok   what` or `FAIL what`, remembers a failure, and returns ok."""
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        _failures.append(what)
    return ok


def finish():
    """Exits 1 when a check failed, else 0."""
    sys.exit(1 if _failures else 0)


class Run:
    """The records of one scenario run."""

    def __init__(self, out):
        self.out = out
        with open(os.path.join(out, "samples.jsonl")) as f:
            self.samples = [json.loads(line) for line in f if line.strip()]
        self.result = self.load("result.json")
        self.events = self.load("events.json")["items"]
        self.final_pods = self.load("pods-final.json")["items"]

    def load(self, name):
        """The JSON document OUT/name."""
        with open(os.path.join(self.out, name)) as f:
            return json.load(f)

    def hpa_watch(self):
        """The HPA watch, one list of fields a line: time maxReplicas desiredReplicas
        ScalingLimited-status reason (the later fields may be missing)."""
        with open(os.path.join(self.out, "hpa.log")) as f:
            return [line.split() for line in f]

    def first(self, predicate, start=0):
        """The index of the first sample at or after `start` for which predicate(sample) holds,
        or None (also when start is None)."""
        if start is None:
            return None
        return next((i for i, s in enumerate(self.samples) if i >= start and predicate(s)), None)

    def changes(self, value):
        """How often value(sample) differs from one sample to the next."""
        return sum(1 for a, b in zip(self.samples, self.samples[1:]) if value(a) != value(b))

    def event_count(self, reason_prefix, name):
        """How many Events (counting repeats) with a reason starting with reason_prefix (a string
        or a tuple of them) were recorded on an object called name."""
        return sum(e.get("count") or 1 for e in self.events
                   if e["reason"].startswith(reason_prefix) and e["involvedObject"]["name"] == name)


def check_undisturbed(run, acted=None, later=None):
    """No pod was disturbed: the pods Running at sample `acted` (when the reconciler acted) still
    run with the same UIDs at sample `later` (when both are given), no container restarted in any
    sample nor at the end, and the report counts 0 pods disturbed."""
    if acted is not None and later is not None:
        before = set(zip(run.samples[acted]["pods"], run.samples[acted]["uids"]))
        after = set(zip(run.samples[later]["pods"], run.samples[later]["uids"]))
        check(before <= after, "the %d pods Running when the reconciler acted still run, same UIDs"
              % len(before))
    check(all(s["restarts"] == 0 for s in run.samples), "no container restarted")
    check(all(c.get("restartCount", 0) == 0 for p in run.final_pods
              for c in p["status"].get("containerStatuses", [])), "no restarts at the end either")
    check(run.result["pods_disturbed"] == 0, "the report counts 0 pods disturbed")


def check_raised_past(run, ceiling):
    """The HPA starts at its static `ceiling`, the reconciler raises maxReplicas above it, and then
    more than `ceiling` pods Run. Returns the indexes of the first sample with the raised ceiling
    and of the first one after it with more pods, each None when there is none."""
    initial = run.samples[0]["ceiling"]
    check(initial == ceiling, "the static ceiling is %d (%s)" % (ceiling, initial))
    raised = run.first(lambda s: s["ceiling"] > ceiling)
    check(raised is not None, "the reconciler raised maxReplicas (max seen %d)"
          % max(s["ceiling"] for s in run.samples))
    past = run.first(lambda s: s["running"] > ceiling, raised)
    check(past is not None, "more than %d pods Run after the raise (max %d)"
          % (ceiling, run.result["max_replicas"]))
    return raised, past
