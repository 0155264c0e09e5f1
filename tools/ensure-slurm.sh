#!/usr/bin/env bash
# The SLURM test starts a single-node cluster (munged, slurmctld, slurmd) from Debian's packages.
# Install them when missing and we may (root with apt-get); otherwise say how.
set -euo pipefail
if command -v sbatch >/dev/null 2>&1 && command -v slurmctld >/dev/null 2>&1 && command -v slurmd >/dev/null 2>&1 \
   && command -v munged >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian's slurmctld, slurmd, slurm-client and munge for the SLURM test" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurmctld slurmd slurm-client munge >/dev/null
else
  echo "note: the SLURM test needs root and Debian's slurmctld slurmd slurm-client munge; it is skipped without them" >&2
fi
