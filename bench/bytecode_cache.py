"""What the compiled-code tables of one repository tree take in the cache: the shards and each
target file's filtered copy (`replicate.jail.bytecode`) against a whole table per target file
(the layout before the shards), computed in the same run from the same full table.

Every module of the tree (or of its folder `--under`) is taken as a target file, as a gen whose
targets span them all.

    python bench/bytecode_cache.py [--tree DIR] [--under FOLDER]   (default: the sample library)
"""

from __future__ import annotations

import argparse
import marshal
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # this checkout's code, whatever else is installed

from replicate.jail.bytecode import bytecode_table, without  # noqa: E402


def folder_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=REPO_ROOT / "corpus" / "samplelib")
    parser.add_argument("--under", default=".", help="the targets' folder in the tree")
    args = parser.parse_args()
    tree = args.tree.resolve()
    found = (tree / args.under).rglob("*.py")
    modules = sorted(str(p.relative_to(tree)) for p in found if ".git" not in p.parts)
    with tempfile.TemporaryDirectory() as name:
        cache = Path(name)
        for module in modules:
            bytecode_table(cache, tree, Path(sys.executable), module)
        (root,) = (cache / "bytecode").iterdir()
        full_path = root / "full.marshal"
        full = marshal.loads(full_path.read_bytes())
        shards = folder_bytes(root / "shards") + folder_bytes(root / "targets")
        whole = sum(len(without(full, str(tree / module))) for module in modules)
        full_bytes = full_path.stat().st_size
    print(f"{tree.name}: {len(modules)} modules, compiled {full_bytes / 1e6:.2f} MB")
    print(f"  a whole table per file  {(whole + full_bytes) / 1e6:7.2f} MB (with the full table)")
    print(f"  shards and copies       {(shards + full_bytes) / 1e6:7.2f} MB (with the full table)")
    print(f"  ratio                   {(whole + full_bytes) / (shards + full_bytes):7.1f}x")


if __name__ == "__main__":
    main()
