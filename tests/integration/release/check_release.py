"""Checks a release folder made by scripts/release.sh, offline: its files, the images' OCI archives
(their names and version labels), the chart package, the tarball's layout, and the SBOM against all of
them. Prints one line per check; exits 1 if any failed.

usage: check_release.py DIR VERSION REVISION NOTICE"""
import hashlib
import io
import json
import os
import sys
import tarfile

import yaml

folder, version, revision, notice_path = sys.argv[1:5]
failures = []
programs = ("adapter", "reconciler", "sim")
name = f"gpuscale-{version}-linux-amd64"
expected = {f"gpuscale-{p}-{version}.oci.tar" for p in programs} | {
    f"gpuscale-{version}.tgz", f"{name}.tar.gz", f"gpuscale-{version}.spdx.json", "SHA256SUMS"}


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


files = set(os.listdir(folder))
check(files == expected, f"the folder holds exactly {sorted(expected)} (has {sorted(files)})")
sums = dict(reversed(line.split()) for line in open(os.path.join(folder, "SHA256SUMS")) if line.strip())
check(set(sums) == expected - {"SHA256SUMS"}, "SHA256SUMS lists every other file")
check(all(sha256(os.path.join(folder, f)) == h for f, h in sums.items() if f in files),
      "every checksum in SHA256SUMS matches")

# The images: OCI layouts named localhost/gpuscale-<program>:VERSION, labelled with the version.
for p in programs:
    with tarfile.open(os.path.join(folder, f"gpuscale-{p}-{version}.oci.tar")) as t:
        def blob(digest):
            return t.extractfile("blobs/" + digest.replace(":", "/")).read()
        index = json.load(t.extractfile("index.json"))
        check("oci-layout" in t.getnames(), f"gpuscale-{p}: an OCI image layout")
        manifest_desc = index["manifests"][0]
        ref = manifest_desc.get("annotations", {}).get("org.opencontainers.image.ref.name")
        check(ref == f"localhost/gpuscale-{p}:{version}", f"gpuscale-{p}: named {ref}")
        manifest = json.loads(blob(manifest_desc["digest"]))
        config = json.loads(blob(manifest["config"]["digest"]))
        labels = config.get("config", {}).get("Labels", {})
        want = {"org.opencontainers.image.version": version,
                "org.opencontainers.image.revision": revision.removesuffix("-dirty"),
                "org.opencontainers.image.licenses": "Apache-2.0",
                "org.opencontainers.image.title": f"gpuscale-{p}"}
        for key, value in want.items():
            check(labels.get(key) == value, f"gpuscale-{p}: {key}={labels.get(key)} (want {value})")
        check(config.get("config", {}).get("User") == "65532:65532", f"gpuscale-{p}: user 65532")

# The chart package.
with tarfile.open(os.path.join(folder, f"gpuscale-{version}.tgz")) as t:
    chart = yaml.safe_load(t.extractfile("gpuscale/Chart.yaml"))
    names = set(t.getnames())
check(chart["version"] == version and str(chart["appVersion"]) == version,
      f"the chart package: version and appVersion {version}")
check({"gpuscale/values.schema.json", "gpuscale/templates/NOTES.txt", "gpuscale/values.yaml"} <= names,
      "the chart package has its schema, NOTES.txt and values")

# The tarball.
with tarfile.open(os.path.join(folder, f"{name}.tar.gz")) as t:
    members = {m.name: m for m in t.getmembers()}
    libs = sorted(os.path.basename(n) for n in members if n.startswith(f"{name}/lib/"))
    licenses = sorted({n.split("/")[2] for n in members if n.startswith(f"{name}/licenses/")
                       and n.count("/") >= 3})
    readme = t.extractfile(f"{name}/README").read().decode()
for f in ("bin/gpuscale-adapter", "bin/gpuscale-reconciler", "LICENSE", "NOTICE", "README",
          "rules/triton.yaml"):
    check(f"{name}/{f}" in members, f"the tarball has {f}")
check(all(members[f"{name}/bin/gpuscale-{p}"].mode & 0o111 for p in ("adapter", "reconciler")),
      "the tarball's programs are executable")
check(all(m.uid == 0 and m.gid == 0 for m in members.values()), "the tarball's files belong to root")
glibc = ("libc.so", "libm.so", "ld-linux", "libpthread.so", "libdl.so", "librt.so")
check(libs and not any(l.startswith(g) for l in libs for g in glibc),
      f"the tarball bundles {len(libs)} libraries, none of the C library's")
for wanted in ("libcpprest", "libssl", "libcrypto", "libyaml-cpp", "libre2", "libspdlog", "libfmt",
               "libstdc++"):
    check(any(l.startswith(wanted) for l in libs), f"the tarball bundles {wanted}")
check("glibc 2." in readme and version in readme, "the tarball's README names the version and glibc")
notice = open(notice_path).read()
missing = [p for p in licenses if p not in notice]
check(not missing, f"NOTICE names every bundled package ({len(licenses)}; missing: {missing})")

# The SBOM.
sbom = json.load(open(os.path.join(folder, f"gpuscale-{version}.spdx.json")))
check(sbom.get("spdxVersion") == "SPDX-2.3" and sbom.get("dataLicense") == "CC0-1.0",
      "the SBOM is SPDX 2.3")
by_id = {p["SPDXID"]: p for p in sbom["packages"]}
described = [r["relatedSpdxElement"] for r in sbom["relationships"]
             if r["spdxElementId"] == "SPDXRef-DOCUMENT" and r["relationshipType"] == "DESCRIBES"]
artifacts = {by_id[d]["name"]: by_id[d] for d in described}
check(set(artifacts) == expected - {"SHA256SUMS", f"gpuscale-{version}.tgz",
                                    f"gpuscale-{version}.spdx.json"},
      f"the SBOM describes the images and the tarball ({sorted(artifacts)})")
check(all(a["checksums"][0]["checksumValue"] == sums.get(n) for n, a in artifacts.items()),
      "the SBOM's checksums are the artifacts'")


def contents(artifact):
    ref = artifacts[artifact]["SPDXID"]
    return {by_id[r["relatedSpdxElement"]]["name"] for r in sbom["relationships"]
            if r["spdxElementId"] == ref and r["relationshipType"] == "CONTAINS"}


tarball = contents(f"{name}.tar.gz")
check(set(licenses) | {"gpuscale"} == tarball,
      f"the SBOM lists the tarball's packages exactly ({len(tarball) - 1})")
for p in programs:
    inside = contents(f"gpuscale-{p}-{version}.oci.tar")
    check({"gpuscale", "libcpprest2.10", "libssl3", "libc6", "base-files"} <= inside,
          f"the SBOM lists gpuscale-{p}'s packages ({len(inside) - 1} Debian packages)")
debian = [p for p in sbom["packages"] if p.get("supplier") == "Organization: Debian"]
check(all(p["externalRefs"][0]["referenceLocator"].startswith("pkg:deb/debian/") for p in debian),
      "every Debian package has its package URL")
declared = [p for p in debian if p["licenseDeclared"] != "NOASSERTION"]
check(len(declared) >= 0.8 * len(debian),
      f"licences declared for {len(declared)} of {len(debian)} Debian packages")
refs = {l["licenseId"] for l in sbom.get("hasExtractedLicensingInfos", [])}
used = {w.strip("()") for p in sbom["packages"] for w in p["licenseDeclared"].split()
        if w.strip("()").startswith("LicenseRef-")}
check(used <= refs, "every LicenseRef the SBOM uses is defined in it")

print(f"{len(failures)} release check(s) failed" if failures else "release checks passed")
sys.exit(1 if failures else 0)
