"""Writes the SPDX 2.3 (JSON) software bill of materials of a gpuscale release (scripts/release.sh).

The document describes each artifact (an image archive or the programs' tarball, with its SHA-256)
and what it contains: gpuscale itself (Apache-2.0) and every Debian package whose files it ships,
named by version and package URL (pkg:deb/debian/NAME@VERSION?arch=...&distro=debian-12), with the
licences its copyright file declares (Debian's machine-readable format; the short names mapped to
SPDX identifiers, others kept as LicenseRef-*; a free-form file gives NOASSERTION).

usage: sbom.py --version V --revision R --out FILE
               (--artifact FILE --packages LIST)...   LIST: "package version architecture" lines
               (--copyright-dir DIR)...               where <package>/copyright is looked up, in order
"""
import argparse
import datetime
import hashlib
import json
import os
import re
import sys
import urllib.parse
import uuid

# Debian short licence names (lower case) and their SPDX identifiers.
SPDX = {
    "apache-2.0": "Apache-2.0", "apache-2": "Apache-2.0", "apache": "Apache-2.0",
    "expat": "MIT", "mit": "MIT", "x11": "X11", "isc": "ISC", "0bsd": "0BSD",
    "bsl-1.0": "BSL-1.0", "bsl": "BSL-1.0", "boost": "BSL-1.0",
    "bsd-2-clause": "BSD-2-Clause", "bsd-3-clause": "BSD-3-Clause", "bsd-4-clause": "BSD-4-Clause",
    "zlib": "Zlib", "cc0-1.0": "CC0-1.0", "cc0": "CC0-1.0",
    "mpl-1.1": "MPL-1.1", "mpl-2.0": "MPL-2.0", "artistic": "Artistic-1.0-Perl",
    "artistic-2.0": "Artistic-2.0", "ms-pl": "MS-PL", "python": "Python-2.0",
    "curl": "curl", "openssl": "OpenSSL", "ssleay": "OpenSSL", "unicode-dfs-2016": "Unicode-DFS-2016",
    "gpl-1": "GPL-1.0-only", "gpl-1+": "GPL-1.0-or-later", "gpl": "GPL-1.0-or-later",
    "gpl-2": "GPL-2.0-only", "gpl-2.0": "GPL-2.0-only", "gpl-2+": "GPL-2.0-or-later",
    "gpl-2.0+": "GPL-2.0-or-later", "gpl-2.0-or-later": "GPL-2.0-or-later",
    "gpl-3": "GPL-3.0-only", "gpl-3.0": "GPL-3.0-only", "gpl-3+": "GPL-3.0-or-later",
    "gpl-3.0+": "GPL-3.0-or-later", "gpl-3.0-or-later": "GPL-3.0-or-later",
    "lgpl-2": "LGPL-2.0-only", "lgpl-2+": "LGPL-2.0-or-later", "lgpl-2.0+": "LGPL-2.0-or-later",
    "lgpl-2.1": "LGPL-2.1-only", "lgpl-2.1+": "LGPL-2.1-or-later", "lgpl-3": "LGPL-3.0-only",
    "lgpl-3+": "LGPL-3.0-or-later", "lgpl-3.0+": "LGPL-3.0-or-later",
    "gfdl-1.2+": "GFDL-1.2-or-later", "gfdl-1.3+": "GFDL-1.3-or-later",
}
# Runtime libraries whose copyright files are free text: what those files state.
NOT_MACHINE_READABLE = {
    "libstdc++6": "GPL-3.0-or-later WITH GCC-exception-3.1",
    "libgcc-s1": "GPL-3.0-or-later WITH GCC-exception-3.1",
    "libc6": "LGPL-2.1-or-later",
}
EXCEPTIONS = {"llvm": "LLVM-exception", "gcc": "GCC-exception-3.1",
              "autoconf": "Autoconf-exception-3.0", "bison": "Bison-exception-2.2"}


def args():
    p = argparse.ArgumentParser()
    p.add_argument("--version", required=True)
    p.add_argument("--revision", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--artifact", action="append", default=[])
    p.add_argument("--packages", action="append", default=[])
    p.add_argument("--copyright-dir", action="append", default=[])
    a = p.parse_args()
    if len(a.artifact) != len(a.packages):
        p.error("one --packages per --artifact")
    return a


def spdx_id(text):
    return re.sub(r"[^A-Za-z0-9.-]", "-", text)


class Licences:
    """Maps the License: lines of Debian copyright files to SPDX expressions."""

    def __init__(self, dirs):
        self.dirs = dirs
        self.refs = {}  # LicenseRef id -> the Debian name

    def atom(self, name):
        name = name.strip().strip("()")
        m = re.fullmatch(r"(.+?)\s+with\s+(\S+)\s+exception", name, re.I)
        if m and m.group(2).lower() in EXCEPTIONS and m.group(1).lower() in SPDX:
            return f"{SPDX[m.group(1).lower()]} WITH {EXCEPTIONS[m.group(2).lower()]}"
        if name.lower() in SPDX:
            return SPDX[name.lower()]
        ref = "LicenseRef-" + spdx_id(name)
        self.refs[ref] = name
        return ref

    def conjuncts(self, short):
        """One License: line (e.g. "GPL-2+ or Artistic, and BSD") as the SPDX terms that all
        apply: atoms, or parenthesised OR choices."""
        out = []
        for part in re.split(r",?\s+and\s+|,\s*", short, flags=re.I):
            ors = [self.atom(o) for o in re.split(r"\s+or\s+", part, flags=re.I) if o.strip()]
            if ors:
                out.append(ors[0] if len(ors) == 1 else "(" + " OR ".join(ors) + ")")
        return out

    def declared(self, package):
        if package in NOT_MACHINE_READABLE:
            return NOT_MACHINE_READABLE[package]
        for d in self.dirs:
            path = os.path.join(d, package, "copyright")
            if os.path.isfile(path):
                break
        else:
            return "NOASSERTION"
        text = open(path, encoding="utf-8", errors="replace").read()
        if not text.startswith("Format:"):
            return "NOASSERTION"  # not the machine-readable format
        found = []
        # Files paragraphs declare licences; stand-alone License paragraphs only give their texts.
        for paragraph in re.split(r"\n\s*\n", text):
            lines = paragraph.splitlines()
            if not any(l.startswith("Files:") for l in lines):
                continue
            for line in lines:
                if line.startswith("License:"):
                    for term in self.conjuncts(line[len("License:"):].strip()):
                        if term not in found:
                            found.append(term)
        if not found:
            return "NOASSERTION"
        return found[0] if len(found) == 1 else " AND ".join(found)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def main():
    a = args()
    licences = Licences(a.copyright_dir)
    packages, relationships = [], []
    gpuscale = {
        "SPDXID": "SPDXRef-gpuscale", "name": "gpuscale", "versionInfo": a.version,
        "supplier": "Organization: gpuscale", "downloadLocation": "NOASSERTION",
        "filesAnalyzed": False, "licenseConcluded": "Apache-2.0", "licenseDeclared": "Apache-2.0",
        "copyrightText": "NOASSERTION", "sourceInfo": f"git revision {a.revision}",
        "primaryPackagePurpose": "APPLICATION",
    }
    packages.append(gpuscale)
    debian = {}
    checksums = []
    for artifact, listing in zip(a.artifact, a.packages):
        digest = sha256(artifact)
        checksums.append(digest)
        name = os.path.basename(artifact)
        ref = "SPDXRef-artifact-" + spdx_id(name)
        packages.append({
            "SPDXID": ref, "name": name, "versionInfo": a.version, "packageFileName": name,
            "supplier": "Organization: gpuscale", "downloadLocation": "NOASSERTION",
            "filesAnalyzed": False, "checksums": [{"algorithm": "SHA256", "checksumValue": digest}],
            "licenseConcluded": "NOASSERTION", "licenseDeclared": "NOASSERTION",
            "copyrightText": "NOASSERTION",
            "primaryPackagePurpose": "CONTAINER" if name.endswith(".oci.tar") else "ARCHIVE",
        })
        relationships.append({"spdxElementId": "SPDXRef-DOCUMENT", "relationshipType": "DESCRIBES",
                              "relatedSpdxElement": ref})
        relationships.append({"spdxElementId": ref, "relationshipType": "CONTAINS",
                              "relatedSpdxElement": "SPDXRef-gpuscale"})
        for line in open(listing):
            fields = line.split()
            if len(fields) != 3:
                continue
            pkg, version, arch = fields[0].split(":")[0], fields[1], fields[2]
            key = (pkg, version, arch)
            if key not in debian:
                debian[key] = {
                    "SPDXID": "SPDXRef-deb-" + spdx_id(f"{pkg}-{version}-{arch}"),
                    "name": pkg, "versionInfo": version, "supplier": "Organization: Debian",
                    "downloadLocation": "NOASSERTION", "filesAnalyzed": False,
                    "licenseConcluded": "NOASSERTION", "licenseDeclared": licences.declared(pkg),
                    "copyrightText": "NOASSERTION",
                    "externalRefs": [{
                        "referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl",
                        "referenceLocator": "pkg:deb/debian/%s@%s?arch=%s&distro=debian-12" % (
                            pkg, urllib.parse.quote(version, safe=""), arch)}],
                }
            relationships.append({"spdxElementId": ref, "relationshipType": "CONTAINS",
                                  "relatedSpdxElement": debian[key]["SPDXID"]})
    packages += [debian[k] for k in sorted(debian)]
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    created = (datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc) if epoch
               else datetime.datetime.now(datetime.timezone.utc))
    namespace = uuid.uuid5(uuid.NAMESPACE_URL, "gpuscale/%s/%s/%s" % (
        a.version, a.revision, ",".join(checksums)))
    document = {
        "spdxVersion": "SPDX-2.3", "dataLicense": "CC0-1.0", "SPDXID": "SPDXRef-DOCUMENT",
        "name": f"gpuscale-{a.version}",
        "documentNamespace": f"https://spdx.org/spdxdocs/gpuscale-{a.version}-{namespace}",
        "creationInfo": {"created": created.strftime("%Y-%m-%dT%H:%M:%SZ"),
                         "creators": ["Tool: gpuscale-release-sbom"]},
        "packages": packages,
        "relationships": relationships,
    }
    if licences.refs:
        document["hasExtractedLicensingInfos"] = [
            {"licenseId": ref, "name": name,
             "extractedText": f"The licence Debian's copyright files call \"{name}\": see "
                              "/usr/share/doc/<package>/copyright of the package that names it."}
            for ref, name in sorted(licences.refs.items())]
    with open(a.out, "w") as f:
        json.dump(document, f, indent=1, sort_keys=False)
        f.write("\n")
    print(f"sbom: {len(a.artifact)} artifacts, {len(debian)} Debian packages -> {a.out}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
