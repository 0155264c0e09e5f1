#!/usr/bin/env bash
# The compiled secant (nads.compiled_secant_gradient, the bundle's) has torch.compile write C++ kernels:
# it needs a C++ compiler. Install Debian's g++ when missing and we may (root with apt-get); otherwise say how.
set -euo pipefail
if command -v g++ >/dev/null 2>&1 || command -v c++ >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian's g++ for the compiled secant (torch.compile)" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq g++ >/dev/null
else
  echo "note: the compiled secant needs a C++ compiler (sudo apt-get install g++); its tests are skipped without it" >&2
fi
