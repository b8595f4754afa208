#!/usr/bin/env bash
# Runs each fuzz target for a fixed time (default 120 s each; FUZZ_SECONDS to change):
#   fuzz/run.sh            the Rust engine target (cargo +nightly fuzz) and the Python one
# Needs: a nightly toolchain and cargo-fuzz (cargo install cargo-fuzz) for the Rust target;
# for the Python target, atheris and the package importable (pip install atheris; an install
# of spanchunk, or PYTHONPATH=python with a built python/spanchunk/_core.abi3.so).
# Findings land in fuzz/artifacts/<target>/; the corpora grow in fuzz/corpus/<target>/.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"
seconds="${FUZZ_SECONDS:-120}"
python="${PYTHON:-python3}"

mkdir -p corpus/engine corpus/python_api artifacts/python_api

echo "==> engine (cargo +nightly fuzz run engine, ${seconds} s)"
cargo +nightly fuzz run engine corpus/engine -- -max_total_time="${seconds}" -max_len=4096 \
  -len_control=0

echo "==> python_api (atheris, ${seconds} s)"
# atheris's instrumentation grows the process by about 19 KB an input (flat without it), so
# libFuzzer's default 2 GB limit would end a long run with an out-of-memory that is no finding.
"${python}" python_api.py -max_total_time="${seconds}" -max_len=4096 -rss_limit_mb=16384 \
  -len_control=0 -artifact_prefix=artifacts/python_api/ corpus/python_api
