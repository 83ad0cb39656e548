"""Checks the Dockerfile offline, against the repository and a build tree.

What the image build relies on and this machine checks without building: the stages and their
bases, the setup script and its switches, that every file a COPY or RUN takes from the build
context exists and is not excluded by .dockerignore, that the CMake targets it builds exist and land
where it installs them from, that each program's target and its -prebuilt twin ship the same
files, that the entrypoints are what the build installs, that the images run as a numeric non-root
user the Deployments agree with, that the CMD's flags are flags the binary knows, that the paths the
adapter writes (--cert-dir) are volumes in its Deployment (read-only root), and that EXPOSE matches
the containers' ports. The images themselves are built and run by images_test.sh."""
import fnmatch
import os
import re
import shlex
import subprocess
import sys

import yaml

src, build = sys.argv[1], sys.argv[2]
failures = []
PROGRAMS = ("adapter", "reconciler", "sim")


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def instructions(text):
    """(keyword, argument) pairs, continuation lines joined, comments dropped."""
    out, pending = [], ""
    for line in text.splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        full = (pending + line).strip()
        pending = ""
        keyword, _, argument = full.partition(" ")
        out.append((keyword.upper(), argument.strip()))
    return out


docker = instructions(open(f"{src}/Dockerfile").read())
ignored = [l.strip().rstrip("/") for l in open(f"{src}/.dockerignore")
           if l.strip() and not l.startswith("#")]

# Stages: name -> (base, [instructions]).
stages = {}
order = []
for keyword, argument in docker:
    if keyword == "FROM":
        words = argument.split()
        name = words[2] if len(words) >= 3 and words[1].upper() == "AS" else f"#{len(order)}"
        stages[name] = (words[0], [])
        order.append(name)
    elif order:
        stages[order[-1]][1].append((keyword, argument))


def chain(name):
    """The stage and the stages it is built FROM, nearest first."""
    out = []
    while name in stages:
        out.append(name)
        name = stages[name][0]
    return out


def steps(name, keyword):
    return [a for stage in chain(name) for k, a in stages[stage][1] if k == keyword]


check(stages.get("build", ("",))[0] == "debian:bookworm", "the build stage is debian:bookworm")
check(stages.get("runtime", ("",))[0] == "debian:bookworm-slim",
      "the runtime stage is debian:bookworm-slim")
check(order[-1] == "adapter", "the default (last) target is the adapter built from source")
build_steps = stages.get("build", ("", []))[1]
env = " ".join(a for k, a in build_steps if k == "ENV")
runs = [a for k, a in build_steps if k == "RUN"]
check("GPUSCALE_SKIP_CLUSTER_BUILD=1" in env, "ENV GPUSCALE_SKIP_CLUSTER_BUILD=1 in the build stage")
check("GPUSCALE_SETUP=build" in env, "ENV GPUSCALE_SETUP=build in the build stage")
check(any(r.startswith("scripts/setup.sh") for r in runs), "the build stage runs scripts/setup.sh")


def excluded(path):
    return any(fnmatch.fnmatch(path, p) or path.startswith(p + "/") or
               fnmatch.fnmatch(path.split("/")[0], p) for p in ignored)


for keyword, argument in build_steps:
    if keyword != "COPY" or argument.startswith("--from"):
        continue
    for source in shlex.split(argument)[:-1]:
        check(os.path.exists(f"{src}/{source}") and (source == "." or not excluded(source)),
              f"COPY {source} exists in the build context")
build_text = " ".join(runs)
targets = re.findall(r"--target((?:\s+gpuscale-[a-z]+)+)", build_text)
targets = targets[0].split() if targets else []
installs = re.findall(r"install\s+-D\s+(?:-s\s+)?-m\s+\d+\s+(\S+)\s+(\S+)", build_text)
cmake_text = ""
for root, _, files in os.walk(src):
    if "/build" in root[len(src):] or "/.git" in root[len(src):]:
        continue
    for f in files:
        if f == "CMakeLists.txt":
            cmake_text += open(os.path.join(root, f)).read()
for source, _ in installs:
    if not source.startswith("build/"):
        check(os.path.isfile(f"{src}/{source}") and not excluded(source),
              f"installed file {source} exists")
prebuilt_files = {
    "adapter": ["usr/local/bin/gpuscale-adapter", "etc/adapter/config.yaml"],
    "reconciler": ["usr/local/bin/gpuscale-reconciler"],
    "sim": ["usr/local/bin/gpuscale-sim"],
}
staged = open(f"{src}/scripts/build-images.sh").read()
for program in PROGRAMS:
    binary = f"gpuscale-{program}"
    check(binary in targets, f"the build stage builds {binary}")
    check(re.search(r"add_executable\(\s*" + re.escape(binary) + r"\b", cmake_text) is not None,
          f"{binary} is an executable of the CMake build")
    check(os.access(f"{build}/bin/{binary}", os.X_OK), f"{binary} builds into <build>/bin")
    shipped = sorted(d.split(f"/out/{program}/", 1)[1] for _, d in installs
                     if d.startswith(f"/out/{program}/"))
    check(shipped == sorted(prebuilt_files[program]),
          f"the build installs {prebuilt_files[program]} for {program}")
    for path in prebuilt_files[program]:
        check(f"prebuilt/{program}/{path}" in staged.replace("$program", program),
              f"build-images.sh --prebuilt stages {path} for {program}")
    check(f"--from=build /out/{program}/ /" in steps(program, "COPY"),
          f"target {program} copies the build's /out/{program}/")
    check(f"prebuilt/{program}/ /" in steps(f"{program}-prebuilt", "COPY"),
          f"target {program}-prebuilt copies prebuilt/{program}/")
    check(chain(program)[1:] == chain(f"{program}-prebuilt")[1:],
          f"{program} and {program}-prebuilt share their runtime stages")
    entry = steps(program, "ENTRYPOINT")
    check(bool(entry) and yaml.safe_load(entry[0])[0] == f"/usr/local/bin/{binary}",
          f"the entrypoint of {program} is the installed {binary}")
    user = steps(program, "USER")
    check(bool(user) and user[0].split(":")[0].isdigit() and user[0].split(":")[0] != "0",
          f"{program} runs as a numeric non-root user")
    labels = " ".join(steps(program, "LABEL"))
    for label in ("title", "version", "source", "licenses"):
        check(f"org.opencontainers.image.{label}=" in labels, f"{program} has the OCI {label} label")


def deployment_of(program):
    return next(d for d in yaml.safe_load_all(open(f"{src}/manifests/{program}/deployment.yaml"))
                if d and d.get("kind") == "Deployment")


for program in ("adapter", "reconciler"):
    pod = deployment_of(program)["spec"]["template"]["spec"]
    container = pod["containers"][0]
    uid = steps(program, "USER")[0].split(":")[0]
    check(str(pod.get("securityContext", {}).get("runAsUser")) == uid,
          f"the {program} Deployment runs as the image's USER")
    check(container.get("securityContext", {}).get("readOnlyRootFilesystem") is True,
          f"the {program} Deployment's root filesystem is read-only")
    exposed = sorted(int(p) for a in steps(program, "EXPOSE") for p in a.split())
    ports = sorted(p["containerPort"] for p in container.get("ports", []))
    check(exposed == ports, f"EXPOSE {exposed} of {program} matches the Deployment's ports {ports}")

# The adapter's CMD: the default subcommand (serve), whose usage lists every flag it accepts.
container = deployment_of("adapter")["spec"]["template"]["spec"]["containers"][0]
mounts = [m["mountPath"] for m in container.get("volumeMounts", [])]
cmd = steps("adapter", "CMD")
args = yaml.safe_load(cmd[0]) if cmd else []
usage = subprocess.run([f"{build}/bin/gpuscale-adapter", "serve", "--help"], capture_output=True,
                       text=True).stdout
for arg in args:
    flag = arg.split("=")[0]
    check(flag in usage, f"CMD flag {flag} is a flag of gpuscale-adapter")
    value = arg.partition("=")[2]
    if flag == "--cert-dir":
        check(value in mounts, f"--cert-dir {value} is a volume (written at run time)")
    if flag == "--config":
        check(os.path.dirname(value) in mounts, f"--config {value} is in a mounted volume")
        check(value.lstrip("/") in prebuilt_files["adapter"], f"the image ships a default {value}")

if failures:
    print(f"{len(failures)} Dockerfile check(s) failed")
    sys.exit(1)
print("Dockerfile checks passed")
