#!/usr/bin/env python3
"""Writes a one-layer docker-archive image (as `docker save` would) holding one static executable as
its entrypoint, without a registry or image builder: the test node's pod sandbox image.

usage: mkimage.py OUT.tar NAME:TAG EXECUTABLE [PATH_IN_IMAGE]
"""
import hashlib
import io
import json
import sys
import tarfile


def main() -> int:
    if len(sys.argv) not in (4, 5):
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    out, ref, exe = sys.argv[1:4]
    target = sys.argv[4] if len(sys.argv) == 5 else "/pause"

    layer = io.BytesIO()
    with tarfile.open(fileobj=layer, mode="w", format=tarfile.PAX_FORMAT) as t:
        info = t.gettarinfo(exe, arcname=target.lstrip("/"))
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        info.mode = 0o755
        info.mtime = 0
        with open(exe, "rb") as f:
            t.addfile(info, f)
    layer_bytes = layer.getvalue()
    diff_id = hashlib.sha256(layer_bytes).hexdigest()

    config = {
        "architecture": "amd64",
        "os": "linux",
        "config": {"Entrypoint": [target], "User": "65535:65535"},
        "rootfs": {"type": "layers", "diff_ids": ["sha256:" + diff_id]},
        "history": [{"created_by": "tests/cluster/node/mkimage.py"}],
    }
    config_bytes = json.dumps(config, sort_keys=True).encode()
    config_name = hashlib.sha256(config_bytes).hexdigest() + ".json"
    manifest = [{"Config": config_name, "RepoTags": [ref], "Layers": [diff_id + "/layer.tar"]}]

    with tarfile.open(out, mode="w", format=tarfile.PAX_FORMAT) as t:
        for name, data in ((diff_id + "/layer.tar", layer_bytes), (config_name, config_bytes),
                           ("manifest.json", json.dumps(manifest).encode())):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            t.addfile(info, io.BytesIO(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
