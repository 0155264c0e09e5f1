#!/usr/bin/env bash
# Fashion-MNIST, the harder offline stand-in of Chapters 4 and 5, comes from Debian's dataset-fashion-mnist
# (/usr/share/datasets/fashion-mnist, no download). Install it when missing and we may (root with apt-get);
# otherwise say how.
set -euo pipefail
dir=/usr/share/datasets/fashion-mnist
have=1
for f in train-images-idx3 train-labels-idx1 t10k-images-idx3 t10k-labels-idx1; do
  [ -f "$dir/$f-ubyte.gz" ] || have=0
done
if [ "$have" = 1 ]; then exit 0; fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian's dataset-fashion-mnist for the Fashion-MNIST tests" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq dataset-fashion-mnist >/dev/null
else
  echo "note: the Fashion-MNIST tests need Debian's dataset-fashion-mnist in $dir (sudo apt-get install dataset-fashion-mnist); they are skipped without it" >&2
fi
