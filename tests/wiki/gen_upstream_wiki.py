#!/usr/bin/env python3
"""Write a synthetic store in upstream gpu-wiki layout, for `aka wiki import` tests.

usage: gen_upstream_wiki.py OUT_DIR [KERNEL] [SHEETS] [LONG]

KERNEL clean-1.3 kernel records (default 850), SHEETS hw-1.0 spec sheets (default
50), LONG of the kernel ids longer than 128 bytes (default 80; upstream's real
wiki has 78 of 847). Every 10th record links (see_also) to a long id, so that the
import must rewrite related ids too. Everything here is made up; this is not
upstream's content, which a helper session cannot reach.
"""
import json
import os
import sys

VENDORS = [("nvidia", "hopper", "triton"), ("nvidia", "hopper", "cuda"),
           ("amd", "cdna3", "triton"), ("generic", None, None)]
FAMILIES = ["elementwise", "reduction", "norm", "softmax", "gemm", "attention", "moe", "rope"]
WORDS = ["tile", "pipeline", "swizzle", "vector", "register", "shared", "occupancy", "warp",
         "bank", "latency", "fusion", "epilogue"]


def kernel_id(i, long_ids):
    vendor, arch, dsl = VENDORS[i % len(VENDORS)]
    fam = FAMILIES[i % len(FAMILIES)]
    base = f"gen.{vendor}.{arch or 'any'}.{dsl or 'any'}.{fam}.note-{i:04d}"
    if i < long_ids:  # upstream's long ids are long descriptive slugs
        base += "." + "-".join(WORDS[(i + k) % len(WORDS)] for k in range(24))
        assert len(base) > 128, base
    return base


def kernel_record(i, n, long_ids):
    vendor, arch, dsl = VENDORS[i % len(VENDORS)]
    fam = FAMILIES[i % len(FAMILIES)]
    a, b = WORDS[i % 12], WORDS[(i // 12) % 12]
    see = [kernel_id((i * 7) % long_ids, long_ids)] if long_ids and i % 10 == 0 else []
    return {
        "schema": "clean-1.3", "id": kernel_id(i, long_ids),
        "type": ["technique-card", "anti-strategy", "doc"][i % 3],
        "retrieval": {"scope": {"vendor": vendor, "arch": arch, "product": None, "dsl": dsl,
                                "operator_family": fam},
                      "signals": {"symptoms": [f"{a}-bound"]},
                      "technique_tags": [a, b], "links": {"see_also": see}},
        "payload": {"goal": f"Generated {a} {b} note {i} for {fam}",
                    "what": f"Synthetic record {i} about {a} and {b} in {fam} kernels.",
                    "when": "Never: generated for a test."},
        "evidence": {"raw": {"page_path": f"generated/{i}.md"}},
    }


def sheet(i):
    return {
        "schema": "hw-1.0", "id": f"nvidia.hopper.spec-sheet.gen-{i:03d}", "type": "spec-sheet",
        "identity": {"vendor": "nvidia", "arch": "hopper", "product": "h200"},
        "facts": {"summary": f"Generated sheet {i}.",
                  "memory": {"capacity_gb": 100 + i, "bandwidth_tb_s": 4.0 + i / 100},
                  "compute_units": {"sm_count": 100 + i},
                  # One dtype twice, as upstream's real sheets have it (MI300X's fp64 on
                  # the vector units and on the matrix cores): ids must stay unique.
                  "peak_compute": [
                      {"dtype": "fp64", "unit": "TFLOPS", "unit_kind": "cuda-core", "dense": 60.0},
                      {"dtype": "fp64", "unit": "TFLOPS", "unit_kind": "tensor-core",
                       "dense": 120.0},
                      {"dtype": "fp32", "unit": "TFLOPS", "unit_kind": "cuda-core", "dense": 60.0}]},
        "provenance": {"sources": [{"title": "generated", "ref": "https://example.org/gen"}]},
    }


def main():
    out = sys.argv[1]
    kernels = int(sys.argv[2]) if len(sys.argv) > 2 else 850
    sheets = int(sys.argv[3]) if len(sys.argv) > 3 else 50
    long_ids = int(sys.argv[4]) if len(sys.argv) > 4 else 80
    kdir = os.path.join(out, "kernel_wiki/records/generated")
    hdir = os.path.join(out, "hardware_wiki/records/spec-sheet/nvidia/hopper")
    os.makedirs(kdir, exist_ok=True)
    os.makedirs(hdir, exist_ok=True)
    for i in range(kernels):
        with open(os.path.join(kdir, f"k{i:04d}.json"), "w") as f:
            json.dump(kernel_record(i, kernels, long_ids), f)
    for i in range(sheets):
        with open(os.path.join(hdir, f"s{i:03d}.json"), "w") as f:
            json.dump(sheet(i), f)


if __name__ == "__main__":
    main()
