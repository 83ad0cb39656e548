#!/usr/bin/env python3
"""Summarises one scenario run: samples.jsonl -> one JSON line (stdout) and a timeline SVG.

Each sample line (written by run.sh): {"t": the load pattern's clock (scenario seconds since the
first pod ran), "load_rps": requests/s the pattern offers (model truth), "served_rps": requests/s
completed (Prometheus, 10 s rate), "queued": requests waiting over all pods (model truth), "replicas": Deployment .spec.replicas, "running": Running pods, "pending": Pending pods,
"ceiling": HPA .spec.maxReplicas, "queue_us": mean queue time over the pods (null: no data),
"latency_us": mean request duration (queue + compute) over the pods,
"reconfigurations": cumulative MIG reconfigurations + device-plugin config changes,
"pods": names of the Running pods, "limited": HPA ScalingLimited is True}; a service scaled by
the harness's planner (sample.py planner()) has "ceiling": the planner's limit (grantedReplicas, or
the partitions it sees with the reconciler off), "static_ceiling", "wanted", "granted", and
"limited": it wants more than static_ceiling. A `services:`
scenario's samples carry the sums over its services and, under "services", each service's own
sample with the same fields.

Definitions (documented in docs/benchmarks/scenarios.md):
  slo_violation_seconds   time with queue_us above the SLO (each sample counts until the next one)
  p50/p95_queue_us        over samples with data
  p50/p95_latency_us      the same for the whole request (queue + compute)
  max_replicas            most Running pods seen
  ceiling_to_capacity_seconds  from the first sample where the HPA is held at its ceiling to the
                          first where more pods Run than the initial ceiling (a planner's: from
                          the first where it wants more than the static ceiling); null if never
  ceiling_lowered_at_seconds  when the HPA's maxReplicas first fell from its peak (the
                          reconciler giving partitions back); null if never
  final_ceiling           maxReplicas in the last sample
  reconfigurations        the last cumulative count minus the first
  pods_disturbed          pod deletions no drop of the Deployment's desired replicas explains (from
                          the timestamped watches --replicas-log/--pods-log; each drop of n allows
                          n deletions), plus container restarts. Without the watches: pods that
                          vanished while the Deployment's replicas did not fall between samples
  max_replicas_changes    with --hpa-log: how often the HPA's maxReplicas changed (its watch from
                          the start); max_replicas_history its successive values (a raise undone
                          by another controller, e.g. KEDA rewriting its HPA, shows as a fall)
  granted_replicas_history  with --request-log (a planner's GPUCapacityRequest, watched from its
                          creation): the successive distinct status.grantedReplicas (0 before the
                          first grant); granted_replicas_changes, granted_max, wanted_max (most
                          spec.replicas asked)
  groups                  with --group-size N > 1 (a LeaderWorkerSet's groups of N pods): running,
                          max_replicas and ceiling_to_capacity_seconds count whole groups
                          (groups_running), max_pods_running the pods; half_placed_max the most
                          groups seen with some pods Running and some not, half_placed_seconds the
                          time any was, half_placed_final those in the last sample
  services                with --services (a `services:` scenario): per service {name,
                          slo_violation_seconds (against the service's SLO), max_replicas,
                          priority, slo_us, p95_queue_us, pods_disturbed}, each from the
                          service's own samples and watches; the top-level pods_disturbed is
                          then their sum
Usage: report.py SAMPLES --scenario NAME --reconciler on|off --slo-us N --svg OUT [--note TEXT]
                 [--replicas-log FILE --pods-log FILE | --services FILE] [--hpa-log FILE]
                 [--group-size N] [--request-log FILE] [--ceiling-label TEXT]
"""
import argparse
import json
import math


def percentile(values, q):
    if not values:
        return None
    s = sorted(values)
    k = (len(s) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def read_watches(replicas_log, pods_log, group_size=1):
    """[(time, "scale-in", n)] for each drop of the desired replicas (n pods: group_size per
    replica) and [(time, "delete", pod)] for the first deletionTimestamp seen per pod, in time
    order."""
    out, previous = [], None
    for line in open(replicas_log):
        parts = line.split()
        if len(parts) != 2:
            continue
        t, replicas = float(parts[0]), int(parts[1])
        if previous is not None and replicas < previous:
            out.append((t, "scale-in", (previous - replicas) * group_size))
        previous = replicas
    deleted = set()
    for line in open(pods_log):
        parts = line.split()
        if len(parts) == 3 and parts[1] not in deleted:
            deleted.add(parts[1])
            out.append((float(parts[0]), "delete", parts[1]))
    return sorted(out, key=lambda e: (e[0], e[1] != "scale-in"))


def unexplained_deletions(timeline, slack=2.0):
    """Pod deletions not matched by a scale-in before them (or within `slack` s after: the two
    watches see the same change at slightly different times)."""
    scale_ins = [[t, n] for t, kind, n in timeline if kind == "scale-in"]
    unexplained = []
    for t, kind, pod in timeline:
        if kind != "delete":
            continue
        source = next((s for s in scale_ins if s[0] <= t + slack and s[1] > 0), None)
        if source is None:
            unexplained.append(pod)
        else:
            source[1] -= 1
    return unexplained


def max_replicas_history(hpa_log):
    """The successive distinct maxReplicas of the HPA's timestamped watch (first field of each
    line after the time)."""
    history = []
    for line in open(hpa_log):
        parts = line.split()
        if len(parts) >= 2 and parts[1].isdigit() and (not history or history[-1] != int(parts[1])):
            history.append(int(parts[1]))
    return history


def request_history(request_log):
    """Of a GPUCapacityRequest's timestamped watch ("TIME WANTED [GRANTED]" lines, GRANTED absent
    before the reconciler's first status write): the successive distinct grantedReplicas and the
    most replicas asked."""
    history, wanted = [], 0
    for line in open(request_log):
        parts = line.split()
        if len(parts) < 2 or not all(p.isdigit() for p in parts[1:3]):
            continue
        wanted = max(wanted, int(parts[1]))
        granted = int(parts[2]) if len(parts) > 2 else 0
        if not history or history[-1] != granted:
            history.append(granted)
    return {"granted_replicas_changes": max(len(history) - 1, 0),
            "granted_replicas_history": history, "granted_max": max(history, default=0),
            "wanted_max": wanted}


def in_groups(samples):
    """Counts whole groups as replicas (running := groups_running); returns the group summary."""
    pods = [s["running"] for s in samples]
    for s in samples:
        s["running"] = s.get("groups_running", 0)
    partial = [s.get("groups_partial", 0) for s in samples]
    seconds = sum(b["t"] - a["t"] for a, b in zip(samples, samples[1:]) if a.get("groups_partial"))
    return {"max_pods_running": max(pods, default=0), "half_placed_max": max(partial, default=0),
            "half_placed_seconds": round(seconds, 1),
            "half_placed_final": partial[-1] if partial else 0}


def summarise(samples, args, deletions=None):
    out = {"scenario": args.scenario, "reconciler": args.reconciler, "slo_us": args.slo_us}
    violation = 0.0
    for a, b in zip(samples, samples[1:]):
        if a.get("queue_us") is not None and a["queue_us"] > args.slo_us:
            violation += b["t"] - a["t"]
    queues = [s["queue_us"] for s in samples if s.get("queue_us") is not None]
    out["slo_violation_seconds"] = round(violation, 1)
    p50, p95 = percentile(queues, 0.5), percentile(queues, 0.95)
    out["p50_queue_us"] = None if p50 is None else round(p50)
    out["p95_queue_us"] = None if p95 is None else round(p95)
    latencies = [s["latency_us"] for s in samples if s.get("latency_us") is not None]
    l50, l95 = percentile(latencies, 0.5), percentile(latencies, 0.95)
    out["p50_latency_us"] = None if l50 is None else round(l50)
    out["p95_latency_us"] = None if l95 is None else round(l95)
    out["max_replicas"] = max((s["running"] for s in samples), default=0)
    initial_ceiling = samples[0].get("static_ceiling", samples[0]["ceiling"]) if samples else None
    held = next((s["t"] for s in samples if s.get("limited")), None)
    beyond = None
    if held is not None and initial_ceiling is not None:
        beyond = next((s["t"] for s in samples if s["t"] >= held and s["running"] > initial_ceiling),
                      None)
    out["ceiling_to_capacity_seconds"] = None if beyond is None else round(beyond - held, 1)
    # Give-back: when the ceiling first came down from its peak, and where it ended.
    peak = max((s["ceiling"] for s in samples), default=None)
    at_peak = next((i for i, s in enumerate(samples) if s["ceiling"] == peak), None)
    lowered = None if at_peak is None else next(
        (s["t"] for s in samples[at_peak:] if s["ceiling"] < peak), None)
    out["ceiling_lowered_at_seconds"] = lowered
    out["final_ceiling"] = samples[-1]["ceiling"] if samples else None
    counts = [s["reconfigurations"] for s in samples if s.get("reconfigurations") is not None]
    out["reconfigurations"] = (counts[-1] - counts[0]) if counts else 0
    disturbed = 0
    if deletions is not None:
        disturbed = len(unexplained_deletions(deletions)) + max(
            (s.get("restarts", 0) for s in samples), default=0)
    else:
        for a, b in zip(samples, samples[1:]):
            gone = set(a.get("pods", [])) - set(b.get("pods", []))
            if gone and b["replicas"] >= a["replicas"]:
                disturbed += len(gone)
    out["pods_disturbed"] = disturbed
    out["samples"] = len(samples)
    out["duration_seconds"] = round(samples[-1]["t"] - samples[0]["t"], 1) if samples else 0
    if args.note:
        out["note"] = args.note
    return out


def summarise_services(samples, args, services):
    """Per service of services.json (run.sh): its summary from its own samples and watches, and its
    chart beside the overall one (timeline-SERVICE.svg for timeline.svg)."""
    out = []
    for sv in services:
        own = [s["services"][sv["name"]] for s in samples if sv["name"] in s.get("services", {})]
        deletions = read_watches(sv["replicas_log"], sv["pods_log"])
        own_args = argparse.Namespace(scenario="%s/%s" % (args.scenario, sv["name"]),
                                      reconciler=args.reconciler, slo_us=sv["slo_us"], note="")
        summary = summarise(own, own_args, deletions)
        if own:
            base, dot, ext = args.svg.rpartition(".")
            with open("%s-%s.%s" % (base, sv["name"], ext) if dot else args.svg + "-" + sv["name"],
                      "w") as f:
                f.write(svg(own, summary, own_args))
        out.append({"name": sv["name"], "slo_violation_seconds": summary["slo_violation_seconds"],
                    "max_replicas": summary["max_replicas"], "priority": sv["priority"],
                    "slo_us": sv["slo_us"], "p95_queue_us": summary["p95_queue_us"],
                    "pods_disturbed": summary["pods_disturbed"]})
    return out


def polyline(points, color, width=2, dash=None):
    if len(points) < 2:
        return ""
    d = " ".join("%.1f,%.1f" % p for p in points)
    extra = ' stroke-dasharray="%s"' % dash if dash else ""
    return ('<polyline fill="none" stroke="%s" stroke-width="%s"%s points="%s"/>'
            % (color, width, extra, d))


def svg(samples, summary, args):
    w, h, left, right = 900, 520, 60, 60
    top_plot = (40, 250)    # replicas, ceiling, load (scaled)
    bottom_plot = (290, 470)  # queue time, SLO
    t0 = samples[0]["t"] if samples else 0
    t1 = max(samples[-1]["t"] if samples else 1, t0 + 1)

    def x(t):
        return left + (t - t0) / (t1 - t0) * (w - left - right)

    def y(v, vmax, plot):
        return plot[1] - (v / vmax if vmax else 0) * (plot[1] - plot[0])

    rmax = max([s["ceiling"] for s in samples] + [s["replicas"] for s in samples]
               + [s.get("wanted") or 0 for s in samples] + [1]) * 1.15
    lmax = max([s.get("load_rps") or 0 for s in samples] + [1]) * 1.15
    queues = [s["queue_us"] for s in samples if s.get("queue_us") is not None]
    qmax = max(queues + [args.slo_us * 2]) * 1.1
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
             'font-family="sans-serif" font-size="12">' % (w, h),
             '<rect width="100%" height="100%" fill="white"/>',
             '<text x="%d" y="20" font-size="15">%s, reconciler %s: SLO violation %ss, p95 queue '
             '%s µs, max replicas %s, reconfigurations %s</text>'
             % (left, args.scenario, args.reconciler, summary["slo_violation_seconds"],
                summary["p95_queue_us"], summary["max_replicas"], summary["reconfigurations"])]
    for plot in (top_plot, bottom_plot):
        parts.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>'
                     % (left, plot[0], w - left - right, plot[1] - plot[0]))
    step = max(1, int(rmax / 6))
    for r in range(0, int(rmax) + 1, step):
        parts.append('<text x="%d" y="%.1f" text-anchor="end">%d</text>'
                     % (left - 5, y(r, rmax, top_plot) + 4, r))
    parts.append('<text x="%d" y="%d" text-anchor="end" fill="#777">%.0f rps</text>'
                 % (w - 5, top_plot[0] + 12, lmax))
    parts.append('<text x="%d" y="%d" text-anchor="end">%.0f µs</text>'
                 % (left - 5, bottom_plot[0] + 12, qmax))
    for frac in (0, 0.25, 0.5, 0.75, 1):
        t = t0 + frac * (t1 - t0)
        parts.append('<text x="%.1f" y="%d" text-anchor="middle">%.0fs</text>'
                     % (x(t), bottom_plot[1] + 16, t))
    parts.append(polyline([(x(s["t"]), y(s.get("load_rps") or 0, lmax, top_plot))
                           for s in samples], "#bbbbbb", 2))
    parts.append(polyline([(x(s["t"]), y(s.get("served_rps") or 0, lmax, top_plot))
                           for s in samples if s.get("served_rps") is not None], "#777777", 1,
                          "3,3"))
    parts.append(polyline([(x(s["t"]), y(s["ceiling"], rmax, top_plot)) for s in samples],
                          "#d62728", 2, "6,4"))
    parts.append(polyline([(x(s["t"]), y(s["replicas"], rmax, top_plot)) for s in samples],
                          "#1f77b4", 1, "2,2"))
    parts.append(polyline([(x(s["t"]), y(s["wanted"], rmax, top_plot)) for s in samples
                           if s.get("wanted") is not None], "#ff7f0e", 1.5, "4,2"))
    parts.append(polyline([(x(s["t"]), y(s["running"], rmax, top_plot)) for s in samples],
                          "#1f77b4", 2.5))
    slo_y = y(args.slo_us, qmax, bottom_plot)
    parts.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#d62728" stroke-dasharray="6,4"/>'
                 % (left, w - right, slo_y, slo_y))
    segment = []
    for s in samples:
        if s.get("queue_us") is None:
            parts.append(polyline(segment, "#2ca02c", 2))
            segment = []
        else:
            segment.append((x(s["t"]), y(s["queue_us"], qmax, bottom_plot)))
    parts.append(polyline(segment, "#2ca02c", 2))
    previous = samples[0].get("reconfigurations") if samples else None
    for s in samples:
        count = s.get("reconfigurations")
        if count is not None and previous is not None and count > previous:
            parts.append('<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#9467bd" '
                         'stroke-width="2"/>' % (x(s["t"]), x(s["t"]), top_plot[0], bottom_plot[1]))
        if count is not None:
            previous = count
    unit = "groups" if getattr(args, "group_size", 1) > 1 else "pods"
    legend = [("#1f77b4", "Running %s (dotted: desired)" % unit),
              ("#d62728", getattr(args, "ceiling_label", "HPA ceiling") + " / SLO"),
              ("#bbbbbb", "load offered (dotted: served)"), ("#2ca02c", "mean queue time (µs)"),
              ("#9467bd", "reconfiguration")]
    if any(s.get("wanted") is not None for s in samples):
        legend.append(("#ff7f0e", "planner wants"))
    for i, (color, text) in enumerate(legend):  # five a row
        lx, ly = left + (i % 5) * 165, h - 28 + (i // 5) * 15
        parts.append('<rect x="%d" y="%d" width="12" height="12" fill="%s"/>'
                     '<text x="%d" y="%d">%s</text>' % (lx, ly, color, lx + 16, ly + 10, text))
    parts.append("</svg>")
    return "\n".join(p for p in parts if p) + "\n"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("samples")
    parser.add_argument("--scenario", required=True)
    parser.add_argument("--reconciler", required=True)
    parser.add_argument("--slo-us", type=float, required=True)
    parser.add_argument("--svg", required=True)
    parser.add_argument("--note", default="")
    parser.add_argument("--replicas-log", help="timestamped watch of the Deployment's .spec.replicas")
    parser.add_argument("--pods-log", help="timestamped watch: pod name, deletionTimestamp")
    parser.add_argument("--services", help="services.json of a `services:` scenario (run.sh)")
    parser.add_argument("--hpa-log", help="timestamped watch of the HPA: maxReplicas first")
    parser.add_argument("--group-size", type=int, default=1, help="pods per replica")
    parser.add_argument("--request-log", help="timestamped watch of a GPUCapacityRequest: "
                        "spec.replicas, status.grantedReplicas")
    parser.add_argument("--ceiling-label", default="HPA ceiling", help="the chart's ceiling line")
    args = parser.parse_args()
    with open(args.samples) as f:
        samples = [json.loads(line) for line in f if line.strip()]
    deletions = None
    group_summary = in_groups(samples) if args.group_size > 1 else {}
    if args.replicas_log and args.pods_log:
        deletions = read_watches(args.replicas_log, args.pods_log, args.group_size)
    summary = summarise(samples, args, deletions)
    if args.hpa_log:
        history = max_replicas_history(args.hpa_log)
        summary["max_replicas_changes"] = max(len(history) - 1, 0)
        summary["max_replicas_history"] = history
    if args.request_log:
        summary.update(request_history(args.request_log))
    if args.group_size > 1:
        summary["group_size"] = args.group_size
        summary.update(group_summary)
    if args.services:
        with open(args.services) as f:
            summary["services"] = summarise_services(samples, args, json.load(f))
        summary["pods_disturbed"] = sum(s["pods_disturbed"] for s in summary["services"])
    with open(args.svg, "w") as f:
        f.write(svg(samples, summary, args) if samples else "<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
