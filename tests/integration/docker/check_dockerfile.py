"""Checks the Dockerfile offline, against the repository and a build tree (no Docker engine here).

What an image build would find out and this machine can check without one: the stages, the setup
script and its switch, that every file a COPY or RUN takes from the build context exists and is
not excluded by .dockerignore, that the CMake targets it builds exist and land where it installs
them from, that the entrypoint is what the build stage installs, that the image runs as a non-root
user the Deployment agrees with, that the CMD's flags are flags the binary knows, that the paths
it writes (--cert-dir) are volumes in the Deployment (read-only root), that EXPOSE matches the
container ports, and that the runtime stage's packages provide every shared library the built
binary needs. Not checked: that the image builds and starts (needs an engine)."""
import fnmatch
import os
import re
import shlex
import subprocess
import sys

import yaml

src, build = sys.argv[1], sys.argv[2]
failures = []


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

# Stages.
stages = []  # [(base, name, [instructions])]
for keyword, argument in docker:
    if keyword == "FROM":
        words = argument.split()
        name = words[2] if len(words) >= 3 and words[1].upper() == "AS" else None
        stages.append((words[0], name, []))
    elif stages:
        stages[-1][2].append((keyword, argument))
check(len(stages) >= 2, "multi-stage build")
check(all(base.startswith("debian:bookworm") for base, _, _ in stages), "every stage is bookworm")
check(stages[-1][0] == "debian:bookworm-slim", "the runtime stage is bookworm-slim")
build_stage = [s for s in stages if s[1] == "build"]
check(len(build_stage) == 1, "one stage named build")
build_steps = build_stage[0][2] if build_stage else []

# The setup script, with the cluster build switched off (no Go toolchain in the image).
env = " ".join(a for k, a in build_steps if k == "ENV")
runs = [a for k, a in build_steps if k == "RUN"]
check("GPUSCALE_SKIP_CLUSTER_BUILD=1" in env, "ENV GPUSCALE_SKIP_CLUSTER_BUILD=1 in the build stage")
check(any(r.startswith("scripts/setup.sh") for r in runs), "the build stage runs scripts/setup.sh")


def excluded(path):
    return any(fnmatch.fnmatch(path, p) or path.startswith(p + "/") or
               fnmatch.fnmatch(path.split("/")[0], p) for p in ignored)


# Files taken from the build context.
for keyword, argument in build_steps:
    if keyword != "COPY" or argument.startswith("--from"):
        continue
    sources = shlex.split(argument)[:-1]
    for source in sources:
        check(os.path.exists(f"{src}/{source}") and (source == "." or not excluded(source)),
              f"COPY {source} exists in the build context")
targets = []
for run in runs:
    targets += re.findall(r"--target\s+(\S+)", run)
    for source in re.findall(r"install\s+-D\s+-m\s+\d+\s+(\S+)\s+\S+", run):
        if source.startswith("build/"):
            continue
        check(os.path.isfile(f"{src}/{source}") and not excluded(source),
              f"installed file {source} exists")
cmake_text = ""
for root, _, files in os.walk(src):
    if "/build" in root[len(src):] or "/.git" in root[len(src):]:
        continue
    for f in files:
        if f == "CMakeLists.txt":
            cmake_text += open(os.path.join(root, f)).read()
check(bool(targets), "the build stage builds named CMake targets")
for target in targets:
    check(re.search(r"add_executable\(\s*" + re.escape(target) + r"\b", cmake_text) is not None,
          f"target {target} is an executable of the CMake build")
    check(any(f"build/bin/{target}" in r for r in runs), f"{target} is installed from build/bin")
    check(os.access(f"{build}/bin/{target}", os.X_OK), f"{target} builds into <build>/bin")

# The runtime stage.
runtime = stages[-1][2]
copies = [a for k, a in runtime if k == "COPY"]
check(any(a.startswith("--from=build /out/") for a in copies), "runtime copies the build's /out")
entry = [a for k, a in runtime if k == "ENTRYPOINT"]
binary = yaml.safe_load(entry[0])[0] if entry else ""
check(any(f"/out{binary}" in r for r in runs), f"ENTRYPOINT {binary} is installed by the build")
user = [a for k, a in runtime if k == "USER"]
uid = user[-1].split(":")[0] if user else "root"
check(uid.isdigit() and uid != "0", f"USER {uid} is a numeric non-root user")

deployment = next(d for d in yaml.safe_load_all(open(f"{src}/manifests/adapter/deployment.yaml"))
                  if d and d.get("kind") == "Deployment")
pod = deployment["spec"]["template"]["spec"]
container = pod["containers"][0]
check(str(pod.get("securityContext", {}).get("runAsUser")) == uid,
      "the Deployment runs as the image's USER")
check(container.get("securityContext", {}).get("readOnlyRootFilesystem") is True,
      "the Deployment's root filesystem is read-only")
mounts = [m["mountPath"] for m in container.get("volumeMounts", [])]

cmd = [a for k, a in runtime if k == "CMD"]
args = yaml.safe_load(cmd[0]) if cmd else []
# The image runs the default subcommand (serve); its usage lists every flag it accepts.
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
    if flag == "--config" and value:
        check(any(f"/out{value}" in r for r in runs), f"the image ships a default {value}")
exposed = sorted(int(p) for k, a in runtime if k == "EXPOSE" for p in a.split())
ports = sorted(p["containerPort"] for p in container.get("ports", []))
check(exposed == ports, f"EXPOSE {exposed} matches the Deployment's ports {ports}")

# Runtime libraries: each one the built binary loads comes from a package the stage installs,
# from one of their dependencies, or from the slim base image.
installs = " ".join(a for k, a in runtime if k == "RUN")
listed = re.findall(r"\b(lib[a-z0-9.+-]+|ca-certificates)\b", installs.split("install", 1)[-1])
if subprocess.run(["sh", "-c", "command -v dpkg && command -v apt-cache"],
                  capture_output=True).returncode != 0:
    print("skip runtime library check: no dpkg/apt-cache on this machine")
else:
    closure = set(listed)
    depends = subprocess.run(
        ["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts",
         "--no-breaks", "--no-replaces", "--no-enhances", *listed],
        capture_output=True, text=True).stdout
    closure |= {l.strip() for l in depends.splitlines() if l and not l.startswith(" ")}
    closure |= {l.split(":", 1)[1].strip().strip("<>") for l in depends.splitlines()
                if "Depends:" in l}
    base = {"libc6", "libgcc-s1", "libstdc++6", "zlib1g"}
    libraries = re.findall(r"=>\s+(\S+)", subprocess.run(
        ["ldd", f"{build}/bin/gpuscale-adapter"], capture_output=True, text=True).stdout)
    for library in libraries:
        package = "?"
        # usrmerge: dpkg may know the file under /lib or /usr/lib; only an exact path counts.
        real = os.path.realpath(library)
        for path in (library, real, real.replace("/usr/lib/", "/lib/", 1)):
            found = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True).stdout
            owners = [l.split(":")[0] for l in found.splitlines() if l.endswith(": " + path)]
            if owners:
                package = owners[0]
                break
        check(package in closure or package in base,
              f"{os.path.basename(library)} ({package}) is in the runtime stage")

if failures:
    print(f"{len(failures)} Dockerfile check(s) failed")
    sys.exit(1)
print("Dockerfile checks passed (the image itself is not built here: no Docker engine)")
