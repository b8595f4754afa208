#!/usr/bin/env bash
# Runs the Rust tests under the sanitizers, over the core's `unsafe` code (SIMD scans, the
# popcount build, prefetches):
#   fuzz/sanitize.sh            Miri twice (scalar fallbacks; AVX2 and POPCNT compiled in),
#                               then the whole suite under AddressSanitizer
#   fuzz/sanitize.sh miri       the Miri runs only
#   fuzz/sanitize.sh asan       the AddressSanitizer run only
# Needs: a nightly toolchain with the miri and rust-src components
# (rustup +nightly component add miri rust-src). Miri runs the tests of the modules that hold
# `unsafe` code (MIRI_TESTS to change the filters); the AddressSanitizer run reads the shared
# corpus like `cargo test` (SPANCHUNK_CORPUS). Each run has its own target folder under
# target/, so the ordinary build is left alone.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
what="${1:-all}"
read -r -a filters <<<"${MIRI_TESTS:-text::lines text::chars sizing::char_index sizing::word_index}"
host="$(rustc +nightly -vV | sed -n 's/^host: //p')"

if [[ "${what}" == all || "${what}" == miri ]]; then
  echo "==> miri, scalar and POPCNT-free paths (cargo +nightly miri test)"
  cargo +nightly miri test --lib -- "${filters[@]}"

  echo "==> miri, AVX2, POPCNT and SSE4.2 compiled in"
  RUSTFLAGS="-C target-feature=+avx2,+popcnt,+sse4.2" \
    cargo +nightly miri test --lib --target-dir target/miri-avx2 -- "${filters[@]}"
fi

if [[ "${what}" == all || "${what}" == asan ]]; then
  echo "==> AddressSanitizer, every Rust test (cargo +nightly test -Zsanitizer=address)"
  RUSTFLAGS="-Zsanitizer=address" RUSTDOCFLAGS="-Zsanitizer=address" \
    cargo +nightly test --target "${host}" --target-dir target/asan
fi
