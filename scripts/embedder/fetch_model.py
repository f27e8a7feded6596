"""Fetches the model file models.txt names to a path, once: downloaded beside it,
checked against the SHA-256 models.txt gives, then moved into place.

    python fetch_model.py models.txt /path/to/model.jar
"""

import hashlib
import os
import sys
import urllib.request


def main():
    listing, dest = sys.argv[1], sys.argv[2]
    if os.path.exists(dest):
        return
    with open(listing) as f:
        lines = [line.split() for line in f if line.strip() and not line.startswith("#")]
    (url, sha256), = lines
    part = dest + ".part"
    digest = hashlib.sha256()
    with urllib.request.urlopen(url, timeout=120) as r, open(part, "wb") as out:
        while chunk := r.read(1 << 20):
            digest.update(chunk)
            out.write(chunk)
    if digest.hexdigest() != sha256:
        os.remove(part)
        sys.exit(f"fetch_model: {url} has SHA-256 {digest.hexdigest()}, models.txt says {sha256}")
    os.replace(part, dest)


if __name__ == "__main__":
    main()
